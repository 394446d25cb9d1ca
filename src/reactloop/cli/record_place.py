"""Where a run's record may live: out of reach of the run's own tools.

The journal and its ``-outputs`` folder are what ``resume``, ``approve``, ``replay`` and the
viewer read back; a model whose tools could write there could rewrite its own record. So the
default folder is a per-user state folder, outside any workspace the user is likely to give
(``$XDG_STATE_HOME/reactloop/runs``, else ``~/.local/state/reactloop/runs``), and a journal
that would lie beneath the workspace of a run whose tools write there (``files`` or ``bash``
without ``--read-only``) is refused in one line. A sandboxed ``bash`` cannot write outside
its workspace (bwrap: ``/`` read-only, ``/tmp`` private; ``weak+landlock``: Landlock), so
the record is beyond it. The plain weak mode confines nothing on disk: a ``bash`` that
``--sandbox auto`` would run in it (no bubblewrap, no Landlock here) is refused for a journaled
run, unless the user asks for that mode with ``--sandbox weak`` (docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from reactloop.errors import ToolError, UsageError

RUNS_DIR_ENV = "REACTLOOP_RUNS_DIR"
WRITING_FAMILIES = ("files", "bash")  # the tool families that write in the workspace


def runs_dir() -> Path:
    """``$REACTLOOP_RUNS_DIR``, else ``$XDG_STATE_HOME/reactloop/runs``, else
    ``~/.local/state/reactloop/runs``."""
    given = os.environ.get(RUNS_DIR_ENV)
    if given:
        return Path(given)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "reactloop" / "runs"


def check_out_of_reach(
    trace: Path,
    workspace: Path,
    families: Iterable[str],
    *,
    read_only: bool,
    default: bool = False,
) -> None:
    """Refuse a journal beneath the workspace when the run's tools can write there."""
    writers = [name for name in families if name in WRITING_FAMILIES]
    if read_only or not writers:
        return
    place = Path(os.path.realpath(trace))
    if not place.is_relative_to(os.path.realpath(workspace)):
        return
    how = f"set ${RUNS_DIR_ENV} outside it" if default else "give --trace FILE outside it"
    raise UsageError(
        f"the journal {trace} would be inside the workspace {workspace}, where the model's "
        f"{' and '.join(writers)} tools can rewrite it: {how}, or use --read-only"
    )


def check_sandbox_keeps_record(families: Iterable[str], sandbox: str) -> None:
    """Refuse ``bash`` under ``--sandbox auto`` where auto means the plain weak mode, in
    which a command can write every file the user can, its own journal included."""
    if "bash" not in families or sandbox != "auto":
        return
    from reactloop.sandbox.command import sandbox_mode  # probes bwrap: only for bash

    try:
        mode = sandbox_mode("auto")
    except ToolError:  # no mode works here: the bash tool says so at its first call
        return
    if mode == "weak":
        raise UsageError(
            "no sandbox here keeps bash from rewriting its journal (no bubblewrap, no "
            "Landlock: the plain weak mode confines nothing on disk): install bubblewrap, or "
            "give --sandbox weak to run it unconfined anyway"
        )
