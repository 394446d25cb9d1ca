"""Resume: a run continued from its journal, in the same journal (``Agent.resume``,
``reactloop resume``, ``reactloop approve``).

The files, in reading order:

- ``journal_file.py``  the journal as found, checked without changing it (a live writer's
                       lock, damage, version); its torn last line set aside to ``TRACE.torn``
- ``run_state.py``     ``rebuild``: the run's history as the model saw it, its counts, and
                       the last turn's calls (done, uncertain, not started)
- ``resumed_loop.py``  ``ResumedLoop``: a ``RunLoop`` that starts from that state; the
                       approver that applies the decisions given
- ``resume_run.py``    ``resume_run``: the checks (model, tools, workspace), then the run
- ``decisions.py``     ``record_decisions``: ``reactloop approve`` writes a person's decisions
- ``one_run.py``       ``as_one_run``: a resumed journal read as the one run it makes (replay)
"""
