"""The loop and its internals: one run of ask the model → check its calls → run them → append
the results → repeat, until a named stop. ``Agent.run`` builds a ``RunSettings`` and runs one
``RunLoop``; nothing here sees the ``Agent``.

The files, by job, in reading order:

- ``run_loop.py``          ``RunLoop``: the loop itself; every way out is a named ``Stop``
- ``turn_reactions.py``    what the loop does with a turn: stop, run its calls, or say what
                           was wrong; the last word before the loop guard's stop
- ``run_parts.py``         what a run is made of at its start, and its ``stop`` event and
                           ``RunResult`` at its end
- ``settings.py``          ``RunSettings``: what one run needs from its agent, a frozen value
- ``model_call.py``        one model call: the request, the adapter's turn, every failure
- ``tool_calls.py``        ``CallRunner``: which of a turn's calls run, in order, and their results
- ``approval_asked.py``    a call's approval asked of the approver, under the run's deadline
- ``deferrals.py``         ``Deferrals``: a turn's calls that wait for a person's decision
- ``call_ids.py``          ``CallIds``: every call of a run gets an id of its own
- ``runtime/``             the call runtime: where and when an admitted call runs, under the
                           run's time limit (``ToolExecutor``, custody, workers, async tools)
- ``budget.py``            ``Budget``: the run's spending against its ``Limits``, and its notices
- ``tree_budget.py``       ``TreeBudget``: a sub-agent's spending, counted in every ancestor's
- ``loop_guard.py``        repeated calls, ping-pong and cycles (judged in a ``GuardState``)
- ``near_repeat.py``       one tool again and again with arguments that barely differ
- ``guard_legacy.py``      the guard of a resumed journal written before ``effects``
- ``compaction.py``        keeping a long run within its context budget
- ``silent_truncation.py`` a server that silently cuts a long history
- ``typed_answers.py``     ``AnswerGate``: typed answers (``output_type``) judged
- ``completion_checks.py`` checks a final answer must pass (``verify``, checklists)
- ``command_check.py``     ``CommandCheck``: a command as a completion check
- ``notices.py``           every text the harness itself puts before the model
- ``async_runner.py``      ``arun`` and ``astream``: the same loop run from ``asyncio``

``RunLoop`` is importable from here; it loads with the first run (the package itself loads
nothing, so that importing one of its files does not load the whole loop).
"""

from typing import TYPE_CHECKING

from reactloop.support import lazy_names

if TYPE_CHECKING:
    from reactloop.loop.run_loop import RunLoop

__getattr__ = lazy_names.lazy_getattr(__name__, {"RunLoop": "reactloop.loop.run_loop"})

__all__ = ["RunLoop"]
