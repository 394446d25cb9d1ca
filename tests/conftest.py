"""Shared fixtures: the tea example's tools (lookup and calculator) and a scripted agent factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Limits, ScriptedModel, Tool
from reactloop.tools.calculator import calculator_tool
from reactloop.tools.lookup import lookup_tool

SEED_NOTES = {"цена_чая": "35", "число_гостей": "12"}


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
    """Headless Chromium driven over its DevTools pipe (``test_viewer.DevTools``)."""
    from test_viewer import DevTools  # a test module's helper, for the viewer tests only

    devtools = DevTools(tmp_path / "profile")
    try:
        yield devtools
    finally:
        devtools.close()
