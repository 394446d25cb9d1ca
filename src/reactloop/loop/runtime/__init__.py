"""The call runtime: where and when the calls ``CallRunner`` admitted run, under the run's time
limit. The toolbox (``tools/``) gives each call prepared and turns it into its result; the
runtime only places it (inline, on a worker thread, on an event loop) and waits for it.

The files, in reading order:

- ``executor.py``    ``ToolExecutor``: one call inline, a read-only turn concurrently
- ``unfinished.py``  the results of calls given up on, interrupted or never started
- ``custody.py``     a run with a time limit on a thread of its own, given up on at the limit
- ``workers.py``     the daemon threads of sync calls (and of runs), and the wait for them
- ``async_calls.py`` async tools on an event loop the waiting thread runs itself

The package itself loads nothing.
"""
