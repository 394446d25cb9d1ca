"""The package's version, in a module of its own: nothing needs to import ``reactloop`` for it."""

__version__ = "0.1.0"
