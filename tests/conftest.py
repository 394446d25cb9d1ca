"""Shared fixtures: the tea example's tools (lookup and calculator) and a scripted agent
factory; every test's default journal folder (``$REACTLOOP_RUNS_DIR``) is a temporary one, and
the suite fails if the checkout's own ``runs/`` gets a new file (tests write only under
temporary folders)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from helpers import CHECKOUT_RUNS, new_in_checkout_runs
from reactloop import Agent, Limits, ScriptedModel, Tool
from reactloop.tools.families.calculator import calculator_tool
from reactloop.tools.families.lookup import lookup_tool

SEED_NOTES = {"цена_чая": "35", "число_гостей": "12"}


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C is Ctrl-C in every test process and the processes they start: a shell without
    job control starts a background command (and so pytest and its xdist workers) with SIGINT
    ignored, which every child would inherit, and the Ctrl-C tests would test nothing."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def ctrl_c_left_as_found() -> Iterator[None]:
    """A test leaves this process's Ctrl-C as it found it: a SIGINT handler or a run's guard
    left behind would make every later Ctrl-C test in the process test nothing. Put back, and
    the test that left it fails, named."""
    from reactloop.support import interrupts

    before = signal.getsignal(signal.SIGINT)
    yield
    after, guard = signal.getsignal(signal.SIGINT), interrupts._active
    if after is before and guard is None:
        return
    signal.signal(signal.SIGINT, before)
    interrupts._active = None
    pytest.fail(f"the test left SIGINT's handler {after!r} (was {before!r}), run guard {guard!r}")


@pytest.fixture(autouse=True)
def runs_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Journals written without ``--trace`` go to a temporary folder, for subprocesses too
    (they inherit the environment); a test about the default folder itself unsets the variable."""
    folder = tmp_path_factory.mktemp("runs", numbered=True)
    monkeypatch.setenv("REACTLOOP_RUNS_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def mcp_eras(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The MCP servers' remembered eras (``tools/mcp/eras.py``) in a file of the test's own, for
    subprocesses too: no test starts a server the way an earlier one left it remembered."""
    path = tmp_path_factory.mktemp("eras", numbered=True) / "mcp-eras.json"
    monkeypatch.setenv("REACTLOOP_MCP_ERAS", str(path))
    return path


@pytest.fixture(autouse=True)
def mcp_tokens(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MCP servers' OAuth tokens (``tools/mcp/token_store.py``) in a folder of the test's own,
    for subprocesses too: no test reads or writes the user's config folder."""
    folder = tmp_path_factory.mktemp("mcp-tokens", numbered=True)
    monkeypatch.setenv("REACTLOOP_MCP_TOKENS", str(folder))
    return folder


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    added = new_in_checkout_runs()
    if added:
        shown = ", ".join(sorted(added)[:5])
        print(f"\nFAIL: tests wrote {len(added)} file(s) into {CHECKOUT_RUNS}: {shown}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(params=[True, False], ids=["openat2", "fallback"])
def use_openat2(request: pytest.FixtureRequest) -> bool:
    """File-tool tests run on both paths: openat2(RESOLVE_BENEATH), and the O_NOFOLLOW walk."""
    from reactloop.sandbox.paths import openat2_available

    if request.param and not openat2_available():
        pytest.skip("kernel has no openat2")
    return bool(request.param)


@pytest.fixture
def seed_tools() -> list[Tool]:
    return [calculator_tool(), lookup_tool(SEED_NOTES)]


@pytest.fixture
def make_agent(seed_tools: list[Tool]) -> Callable[..., tuple[Agent, ScriptedModel]]:
    def build(
        turns: Sequence[Any],
        *,
        tools: Sequence[Tool] | None = None,
        protocol: str = "auto",
        **limits: Any,
    ) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(turns)
        agent = Agent(
            model,
            tools if tools is not None else seed_tools,
            limits=Limits(**limits),
            protocol=protocol,  # type: ignore[arg-type]
        )
        return agent, model

    return build


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """Headless Chromium driven over its DevTools pipe (``browser.DevTools``)."""
    from browser import DevTools  # loaded by the tests that use a browser, only

    devtools = DevTools(tmp_path / "profile")
    try:
        yield devtools
    finally:
        devtools.close()
