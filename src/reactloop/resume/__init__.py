"""Resume: a run continued from its journal, in the same journal (``Agent.resume``,
``reactloop resume``). The journal is checked, its last run folded to the point it goes on
from (``journal/resume_point.py``), and a loop started from that state.

The files, in reading order:

- ``checks.py``        the checks before resuming: the journal (a live writer's lock, damage),
                       its last run's stop, the agent the one that recorded it
- ``resumed_loop.py``  ``ResumedLoop``: a ``RunLoop`` handed the folded state, which
                       settles the last turn's calls (done, uncertain, not started)
- ``resume_run.py``    ``resume_run``: the checks, the last run folded (``rebuild``), then
                       the loop run from it (its torn last line set aside first)
"""
