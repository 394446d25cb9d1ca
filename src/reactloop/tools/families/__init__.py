"""The built-in tool families, each a module with ``tools(context) -> list[Tool]``, by the
name ``--tools`` takes (``tools/registry.py``), imported only when asked for:

- ``calculator.py``: ``calculator``, arithmetic parsed, never evaluated as Python
- ``lookup.py``: ``lookup`` in a notes file
- ``files.py``: read, list, write, edit beneath a workspace (``sandbox/paths.py``)
- ``file_search.py``: ``search_files`` (+ ``regex_process.py``, a killable worker running
  ``regex_worker.py``, so that a hostile pattern ends at its time limit)
- ``bash.py``: sandboxed commands (``sandbox/``)
- ``web.py``: the weather and currency tools of seed 002
"""
