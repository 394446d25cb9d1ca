"""The exit code of ``reactloop run``: what a script may trust without reading the answer.

0: a clean answer (the model answered on its own, and every check passed); 1: no answer;
2: a usage error (``usage_errors.py``); 3: an answer not to trust as it is: forced (the
model was told to answer now: its last allowed call, a detected loop), refused by
``--verify``, or from a run that stopped for another reason than ``final_answer``; 130:
interrupted (Ctrl-C). ``chat`` exits by its own rule (``chat.py``).
"""

from __future__ import annotations

from reactloop.limits import StopReason
from reactloop.result import RunResult

CLEAN_ANSWER = 0
NO_ANSWER = 1
USAGE_ERROR = 2
UNTRUSTED_ANSWER = 3
INTERRUPTED = 130  # the shell's convention for a run ended by Ctrl-C (128 + SIGINT)


def run_exit_code(result: RunResult, *, zero_on_forced: bool = False) -> int:
    """The exit code of one run; ``zero_on_forced``: any answer exits 0 (the old behaviour)."""
    if result.stop_reason == StopReason.CANCELLED:
        return INTERRUPTED
    if result.answer is None:
        return NO_ANSWER
    if zero_on_forced or is_clean(result):
        return CLEAN_ANSWER
    return UNTRUSTED_ANSWER


def is_clean(result: RunResult) -> bool:
    """An answer the model gave on its own that passed every check of the run."""
    return (
        result.answer is not None
        and result.stop_reason == StopReason.FINAL_ANSWER
        and not result.forced
        and result.error is None
    )
