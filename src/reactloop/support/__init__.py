"""Helpers every layer uses, and the few speed tricks, in one place.

- ``json_decode.py``  decoding JSON anyone may have written, safely (depth and number limits)
- ``json_encode.py``  encoding: the journal's lines, canonical arguments, values made writable
- ``fast_init.py``    ``fast_init``: a faster ``__init__`` for the frozen values made every step
- ``lazy_names.py``   ``lazy_getattr``: a package's names imported on first use
- ``own_files.py``    the files the harness writes itself, opened without following links
- ``pipe_messages.py`` pickled messages between processes, with no buffer left exported
- ``cancel_event.py`` ``CancelEvent``: a run's cancel that wakes whoever waits on the run
- ``text.py``         ``text_problem``: a task that UTF-8 cannot encode, said in one line

The speed tricks kept, each for a gain measured against the plain code it stands in for
(``python benchmarks/speed_tricks.py``, CPU time, medians, three invocations at load 3-9;
``docs/benchmarks.md`` has the table). A trick worth under about 1 µs a step is not worth a
second copy of its code, and was folded back (the list there too).

- ``fast_init`` (``messages/``' values): 0.2-1.3 µs a value, 1.2-3.4 µs a step.
- ``ToolResult.to_content`` spells an ``int`` or ``str`` output itself: 1.2-2.8 µs a result.
- ``journal.events.micros``: ``round(t, 6)`` without its decimal path, 0.2-0.3 µs an event.
- the journal and the loop guard encode with orjson (ten times ``json`` on these records),
  checked where a value could be NaN (``json_encode.py``); arguments are decoded with one call
  of the C scanner (``json_decode.py``).
- ``tools/plain.py``: the built-in tools' schemas written out, so that a run needs no pydantic
  model before an odd call: 67-85 ms less CPU at start-up.
- ``loop.model_call.checked_turn``'s quick check of a well-formed turn: 0.4-0.7 µs a step,
  kept because the A/B without it was unsure (1.02-1.16 against 0.91-0.95 with it);
  ``tests/test_speed_tricks.py`` pins that it judges every turn as the full check does.
"""
