"""The reactloop command starts its eval's forkserver early (issue 40): as soon as the suite is
read, with the rungs' adapters and SDKs in its preload, so that it imports them on another core
while the driver checks the models, instead of after; a script driving ``run_eval`` keeps the
preload of what it has loaded."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import types

import pytest

from helpers import AS_THE_COMMAND
from reactloop.eval.run import forkserver
from reactloop.models import registry
from reactloop.models.roster import ROSTER


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The preloads ``start_early`` started a forkserver with (none is started here)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform (Windows spawns)")
    preloads: list[list[str]] = []
    context = multiprocessing.get_context("forkserver")
    monkeypatch.setattr(context, "set_forkserver_preload", preloads.append)
    monkeypatch.setattr(forkserver.forkserver, "ensure_running", lambda: preloads.append([]))
    return preloads


WATCHED_START = (
    AS_THE_COMMAND
    + """
import importlib, json, multiprocessing
from reactloop.eval.run import forkserver
events = []  # the preload set, then "started"; none is started
context = multiprocessing.get_context("forkserver")
context.set_forkserver_preload = lambda names: events.append(sorted(names))
forkserver.forkserver.ensure_running = lambda: events.append("started")
"""
)
FRESH_DRIVER = (
    WATCHED_START
    + """
loaded = sorted(n for n in sys.modules if n.startswith(("openai", "reactloop.models.")))
answer = forkserver.start_early(["vllm:qwen", "anthropic:claude-haiku-4-5", "nonsense:x"])
print(json.dumps({"answer": answer, "events": events, "loaded_before": loaded}))
"""
)


def test_the_command_s_forkserver_starts_with_the_rungs_adapters_and_sdks() -> None:
    """In a fresh driver, as the reactloop command is before its check of the models."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform (Windows spawns)")
    done = subprocess.run(
        [sys.executable, "-c", FRESH_DRIVER], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert found["answer"] is True
    preload, started = found["events"]
    assert started == "started", "started once its preload was set"
    assert not {"openai", "reactloop.models.openai.model"} & set(found["loaded_before"])
    assert {"openai", "anthropic", "httpx2"} <= set(preload)
    assert {"reactloop.models.openai.model", "reactloop.models.anthropic.model"} <= set(preload)
    assert {"reactloop.eval.run.process_worker", "reactloop.loop.run_loop"} <= set(preload)
    assert not any(name.startswith("openai.") or "__main__" in name for name in preload)


def test_a_script_driving_run_eval_keeps_the_preload_of_what_it_loaded(
    monkeypatch: pytest.MonkeyPatch, started: list[list[str]]
) -> None:
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    assert not forkserver.start_early(["vllm:qwen"])
    assert started == []


def test_each_sdk_adapter_names_the_sdk_its_client_is_made_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reactloop.models.base import ModelSettings
    from reactloop.models.registry import resolve_model

    for row in ROSTER.values():
        if row.key_env:
            monkeypatch.setenv(row.key_env, "sk-test")
        if not row.sdk:
            continue
        model = resolve_model(f"{row.name}:m", ModelSettings(base_url="http://127.0.0.1:9/v1"))
        assert model.line.sdk.__name__ == row.sdk, row.name  # type: ignore[attr-defined]


def test_an_adapter_that_cannot_be_imported_is_left_to_the_check(
    monkeypatch: pytest.MonkeyPatch, started: list[list[str]]
) -> None:
    """The check of the models says why in one line; the early start does not fail first."""
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name="reactloop.__main__")  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)
    broken = {**registry.PROVIDERS, "vllm": "reactloop.models.nowhere:from_spec"}
    monkeypatch.setattr(registry, "PROVIDERS", broken)
    assert forkserver.start_early(["vllm:qwen"])
    preload, _ = started
    assert "openai" in preload and "reactloop.models.nowhere" not in preload


FIRST_EPISODE = (
    WATCHED_START
    + """
forkserver.start_early(["vllm:fake"])
from reactloop.testing import FakeOpenAIServer, completion, tool_call
for name in events[0]:
    importlib.import_module(name)
before = set(sys.modules)
from reactloop import Agent, Limits
from reactloop.models.base import ModelSettings
from reactloop.models.registry import resolve_model
from reactloop.tools.families.calculator import calculator_tool
replies = [completion(tool_calls=[tool_call("calculator", {"expression": "17 * 23"})]),
           completion("391")]
with FakeOpenAIServer(replies) as server:
    model = resolve_model("vllm:fake", ModelSettings(base_url=server.base_url))
    answer = Agent(model, [calculator_tool()], limits=Limits()).run("17 * 23?").answer
print(json.dumps({"answer": answer, "new": sorted(set(sys.modules) - before)}))
"""
)


def test_a_worker_s_first_episode_imports_nothing_its_forkserver_did_not() -> None:
    """What the early preload names is all a worker's first episode imports: before the HTTP
    stack was in it (``HTTP_STACK``: the transport and TLS modules a client imports when the
    first one is made), each worker imported about 130 modules (``trio``'s running
    ``ldconfig -p``) before its first request."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform (Windows spawns)")
    done = subprocess.run(
        [sys.executable, "-c", FIRST_EPISODE], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert found["answer"] == "391"
    assert found["new"] == []
