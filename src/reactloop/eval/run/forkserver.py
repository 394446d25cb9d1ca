"""The forkserver that forks an eval's worker processes: what it imports once for every
worker, and its start while the driver is still busy.

The forkserver imports what every worker needs (``preload``): the worker and the loop, the model
SDKs and their HTTP stack and the rungs' adapters the driver has imported (resolved by its check
of the models), and, when the driver's main module is not reactloop's own command, every
reactloop module the driver has (each worker imports that main module again). It starts with
the first workers of a process and serves its later evals too, or sooner: for reactloop's own
command, whose preload does not depend on what the driver loads later, ``start_early`` starts
it once the suite is read, with the rungs' adapters and SDKs, so that its imports (about 1 s of
CPU) run on another core while the driver checks the models and prepares the run, instead of
after them (issue 40: the time to the first model call).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
from collections.abc import Iterable
from multiprocessing import forkserver
from typing import Any

from reactloop.errors import UsageError
from reactloop.models.registry import adapter_of, split_spec
from reactloop.models.roster import ROSTER

HTTP_STACK = ("httpx2", "httpcore2", "truststore")
"""What the SDKs' clients import when the first one is made, not when the SDK is: the transport
(``httpcore2``, which imports ``h11``, ``anyio`` and ``trio`` when installed; ``trio``'s import
runs ``ldconfig -p``) and the TLS context's ``truststore``. Without them in the preload each
worker imported about 130 modules on its first episode (0.3 s before its first request)."""
SDK_PACKAGES = frozenset({"openai", "anthropic", "httpx", "httpcore", "h11", *HTTP_STACK})
"""The model SDKs and their HTTP stack: those the driver has imported (its rungs' adapters'),
the forkserver imports too (each package's top module, which imports what its SDK needs)."""
WORKER_MODULES = (
    "reactloop.eval.run.process_worker",
    "reactloop.loop.run_loop",
    "reactloop.loop.runtime.custody",
    "reactloop.tools.families.calculator",
    "concurrent.futures.thread",
    "encodings.idna",
)
"""What every worker imports: ``serve`` and the episodes it runs (the modules an episode's
first run imports, which the driver, running none, has not: the loop, the calculator of most
suites, the thread pool)."""


def worker_context() -> Any:
    """The forkserver, its preload set while it is not yet running; else spawn (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload())  # no effect once it runs: it keeps its first
    return context


def preload() -> list[str]:
    """What the forkserver imports once for every worker: ``WORKER_MODULES``, the SDKs of
    ``SDK_PACKAGES`` and the reactloop adapters (``reactloop.models``) the driver has loaded,
    and what a worker would import again of the driver's main module.

    A worker runs the driver's main script again (multiprocessing does, so that a
    ``Rung.factory`` defined there unpickles), and with it what the script imports. The
    ``reactloop`` command's own needs nothing more: run as ``python -m reactloop`` it is not
    run again; as the console script, that imports ``reactloop.cli``. For any other main
    module (a script calling ``run_eval``, a test session) every reactloop module the driver
    has loaded is imported, as the script may import any of them. ``"__main__"`` itself is
    never preloaded: it would run a command in the forkserver (and Python 3.11's forkserver
    finds no main path to import it from anyway).

    The names go on the forkserver's command line, one argument of at most 128 KiB (Linux's
    ``MAX_ARG_STRLEN``): a driver that had loaded some 4,000 modules (a test session) got no
    forkserver at all, its workers never started; so of the SDKs only the top package."""
    own = reactloop_main()
    loaded = set(WORKER_MODULES) | ({"reactloop.cli"} if own == "script" else set())
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        if not getattr(module, "__file__", None) or name.endswith("__main__"):
            continue  # made at run time by its package, or a main module
        if top in SDK_PACKAGES:
            loaded.add(top)
        elif top == "reactloop" and (own is None or name.startswith("reactloop.models.")):
            loaded.add(name)
    return sorted(loaded)


def reactloop_main() -> str | None:
    """``"module"`` when the driver's main module is ``python -m reactloop``, ``"script"``
    when it is the ``reactloop`` console script (whose ``main`` is ``reactloop.cli.main``),
    else None."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(spec, "name", None) == "reactloop.__main__":
        return "module"
    cli = sys.modules.get("reactloop.cli")
    entry = getattr(main, "main", None)
    if cli is not None and entry is not None and entry is getattr(cli, "main", None):
        return "script"
    return None


def start_early(specs: Iterable[str]) -> bool:
    """Start the forkserver now, with the adapters and SDKs of the model ``specs``
    (``PROVIDER:NAME``) in its preload, when the driver is reactloop's own command (its
    preload then is what ``preload`` would give once the driver has checked the models) and
    the forkserver is not running yet. Whether it was asked to start."""
    if reactloop_main() is None or "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    rows = [ROSTER[p] for p, _ in map(split_spec, specs) if p in ROSTER]
    for row in rows:  # the adapter's own modules, as the driver's check of the models loads them
        with contextlib.suppress(ImportError, AttributeError, UsageError):  # the check says why
            adapter_of(row.name)
    sdks = {row.sdk for row in rows if row.sdk}
    sdks |= set(HTTP_STACK) if sdks else set()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(sorted(set(preload()) | sdks))
    forkserver.ensure_running()
    return True
