"""The memory of a process that runs episodes: the heap they freed given back to the system,
so that a long eval's RSS stays flat, and a garbage collector that runs less often.

An episode's threads allocate and free megabytes (HTTP bodies, journal lines, records); glibc's
malloc keeps what is freed inside each thread's arena, where a few live blocks keep the pages
around them resident, so the driver's RSS crept up by about 1 KB an episode with nothing
alive to show for it (tracemalloc saw Python's own memory flat). ``malloc_trim(0)`` returns
the free pages of every arena; it costs a few milliseconds. Where there is no glibc (musl,
macOS, Windows) this does nothing: those allocators return memory their own way.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Return the freed heap's pages to the system; False where that cannot be done."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


GC_THRESHOLDS = (50_000, 20, 100)
"""A young collection every 50,000 allocations instead of 700. A process running episodes holds
hundreds at once, and at the default thresholds its collector took about a tenth of its CPU
(``perf``: 7-10 % of a worker's samples at C = 512; 17 % by the collector's own callbacks at
C = 256, 5 % with these; docs/benchmarks.md, issue 40)."""


def collect_less() -> None:
    """This process's collector: what it has imported so far moved out of its reach
    (``gc.freeze``: never scanned again, and a forked worker's pages stay shared), then
    ``GC_THRESHOLDS``. For the processes reactloop owns (an eval's workers, its command), not a
    program that calls ``run_eval``."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
