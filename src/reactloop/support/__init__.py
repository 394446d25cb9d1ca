"""Helpers every layer uses, and the few speed tricks, in one place.

- ``json_decode.py``  decoding JSON anyone may have written, safely (depth and number limits)
- ``json_encode.py``  encoding: the journal's lines, canonical arguments, values made writable
- ``fast_init.py``    ``fast_init``: a faster ``__init__`` for the frozen values made every step
- ``lazy_names.py``   ``lazy_getattr``: a package's names imported on first use
"""
