"""Makes the local model's process crash for real (SIGSEGV in native code) at a chosen step.

Put this folder on PYTHONPATH with REACTLOOP_TEST_CRASH_AT_STEP=N: in the model process only,
the N-th step reads address 0 through ctypes, as a crashing llama.cpp kernel would.
"""

import os
import sys

_STEP = os.environ.get("REACTLOOP_TEST_CRASH_AT_STEP")
if _STEP and "reactloop.models.local.worker" in sys.orig_argv:
    import ctypes

    from reactloop.models.local import session

    _complete = session.Session.complete

    def _crashing(self, request):  # type: ignore[no-untyped-def]
        if request.step >= int(_STEP):
            ctypes.string_at(0)
        return _complete(self, request)

    session.Session.complete = _crashing
