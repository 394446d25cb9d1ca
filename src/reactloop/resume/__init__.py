"""Resume: a run continued from its journal, in the same journal (``Agent.resume``,
``reactloop resume``). The journal is checked, its last run folded to the point it goes on
from (``journal/resume_point.py``), and a loop started from that state.

The files, in reading order:

- ``journal_file.py``  the journal as found, checked without changing it (a live writer's
                       lock, damage, version); its torn last line set aside to ``TRACE.torn``
- ``run_state.py``     ``rebuild``: the last run checked resumable (its stop), and folded
- ``resumed_loop.py``  ``ResumedLoop``: a ``RunLoop`` handed that state, which
                       settles the last turn's calls (done, uncertain, not started)
- ``resume_run.py``    ``resume_run``: the checks (model, tools, workspace), then the run
"""
