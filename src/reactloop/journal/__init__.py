"""The record of a run.

- ``events.py``        the events the loop emits as observers get them (``Event``), ``Observer``
- ``event_value.py``   ``JournalEvent``: what every typed event is, its line, how it is read
- ``event_init.py``    ``keep_given``: an event made in code keeps the fields it is given
- ``schema.py``        the events as values: one frozen dataclass per event type, its dict form
                       the journal's line exactly (``warning_kinds.py``: ``WarningKind``)
- ``emitter.py``       ``Emitter``: takes the loop's typed events, sends them to the journal
                       (kept apart from the other observers) and the observers; the warnings
- ``field_checks.py``  how a typed event's fields are checked when its line is read
- ``writer.py``        ``Journal``: one JSON line per event, flushed as it happens; the lines
                       read back (``read_journal``, ``iter_lines``)
- ``reader.py``        the journal read as typed events, each line checked once
- ``legacy.py``        the one place that reads prose: the error texts of journals written
                       before ``ToolResult.not_run`` existed (a compatibility path)
- ``run_counts.py``    ``RunCounts``: a run's counters, the one value the live loop keeps
                       them in and the fold computes; the moves both make on it
- ``guard_state.py``   ``GuardState``: the loop guard's memory, the one value the live guard
                       judges in and the fold computes; the moves both make on it
                       (``near_streak.py``: its near-repeat streak)
- ``run_state.py``     ``RunState``: a run's state as its events leave it (its counts in it)
- ``guard_fold.py``    ``GuardFold``: the loop guard's part of it, as the events move it
- ``fold.py``          ``advance``: the one function that moves it on by an event (a
                       journal's, on resume); ``waiting.py``: what waits for a person
                       (decisions, questions)
- ``recorded.py``      a journal as found on disk (its torn last line, set aside on resume)
- ``resume_point.py``  a journal's last run folded to the point a resume goes on from
- ``one_run.py``       a resumed journal read as the one run it makes (replay)
- ``otel.py``          ``OTelObserver``: the events as OpenTelemetry spans, with
                       ``otel_content.py`` (messages as the GenAI conventions shape them) and
                       ``otel_metrics.py`` (their metrics)
"""
