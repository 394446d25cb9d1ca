"""The process ``test_resume_kill.py`` kills: a 30-step run (or its resume) whose tools count
their executions in a file, SIGKILLed at a chosen moment by itself.

    python resume_kill_child.py run|resume TRACE COUNTER KILL FSYNC PROVIDER BASE_URL OUT

KILL is ``none``, ``event:K`` (right after the K-th event of this process is journaled),
``tool:K:before`` / ``tool:K:after`` (in the K-th tool run of this process, before or after
its side effect) or ``write:K`` (halfway through writing the K-th journal line: a torn line).
OUT gets the final history as JSON when the run ends with a stop.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, tool
from reactloop.journal import writer
from reactloop.journal.events import Event

STEPS = 30
LIMITS = Limits(max_model_calls=40, max_tool_calls=40, max_seconds=None)


def step_call(i: int) -> tuple[str, dict[str, Any]]:
    return ("bump", {"n": i}) if i % 2 == 0 else ("put", {"key": f"k{i}"})


def script() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for i in range(STEPS):
        name, arguments = step_call(i)
        turns.append(
            {"content": f"step {i}", "tool_calls": [{"name": name, "arguments": arguments}]}
        )
    return [*turns, {"content": "done"}]


class Killer:
    def __init__(self, spec: str) -> None:
        kind, _, rest = spec.partition(":")
        self.kind = kind
        number, _, self.where = rest.partition(":")
        self.at = int(number) if number else 0
        self.events = self.tools = self.writes = 0

    def __call__(self, event: Event) -> None:
        self.events += 1
        if self.kind == "event" and self.events == self.at:
            die()

    def tool(self, before: bool) -> None:
        if self.kind == "tool" and self.tools == self.at and (self.where == "before") == before:
            die()

    def patch_writes(self) -> None:
        if self.kind != "write":
            return
        killer = self

        def tear(file: Any, line: bytes) -> None:
            killer.writes += 1
            if killer.writes == killer.at:
                file.write(line[: max(1, len(line) // 2)])
                die()

        watch_journal_lines(before=tear)


class _JournalFile:
    """A journal's raw file whose writes (a line each) are watched: ``before(file, line)``
    may write part of the line and die; ``after()`` runs once the line is written."""

    def __init__(self, real: Any, before: Any, after: Any) -> None:
        self.real, self.before, self.after = real, before, after

    def write(self, line: bytes) -> int:
        self.before(self.real, line)
        written: int = self.real.write(line)
        self.after()
        return written

    def fileno(self) -> int:
        fileno: int = self.real.fileno()
        return fileno

    def close(self) -> None:
        self.real.close()


def watch_journal_lines(before: Any = lambda file, line: None, after: Any = lambda: None) -> None:
    """Every journal this process opens from now on has its writes watched (``_JournalFile``):
    the journal writes each line with one write of its raw file."""
    opened = writer.open_own_file
    writer.open_own_file = lambda path, mode: _JournalFile(opened(path, mode), before, after)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def tools(counter: Path, killer: Killer) -> list[Any]:
    def count(line: str) -> None:
        killer.tools += 1
        killer.tool(before=True)
        with counter.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())
        killer.tool(before=False)

    @tool
    def bump(n: int) -> int:
        """Add one to n (a side effect, counted).

        Args:
            n: a number
        """
        count(f"bump {n}")
        return n + 1

    @tool(idempotent=True)
    def put(key: str) -> str:
        """Store a key (idempotent, counted).

        Args:
            key: a key
        """
        count(f"put {key}")
        return key

    return [bump, put]


def model(provider: str, base_url: str) -> Any:
    if provider == "openai":
        from reactloop.models.openai import OpenAIChatModel

        return OpenAIChatModel(model="fake", base_url=base_url, max_retries=0)
    if provider == "anthropic":
        from reactloop.models.anthropic import AnthropicModel

        return AnthropicModel(
            model="fake-claude", base_url=base_url, max_retries=0, thinking_budget=2048
        )
    return ScriptedModel(script())


def main(argv: list[str]) -> None:
    mode, trace, counter, spec, fsync, provider, base_url, out = argv
    killer = Killer(spec)
    killer.patch_writes()
    agent_tools = tools(Path(counter), killer)
    chosen = model(provider, base_url)
    if mode == "run":
        with Journal(trace, fsync=fsync == "1") as journal:
            agent = Agent(chosen, agent_tools, journal=journal, observers=[killer], limits=LIMITS)
            result = agent.run("count to thirty")
    else:
        agent = Agent(chosen, agent_tools, observers=[killer])
        result = agent.resume(trace, fsync=fsync == "1")
    history = [message.to_dict() for message in result.history]
    Path(out).write_text(json.dumps({"stop": str(result.stop_reason), "history": history}))


if __name__ == "__main__":
    main(sys.argv[1:])
