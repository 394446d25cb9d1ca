"""A real ``reactloop chat`` journal: the command run in a process of its own, its questions
typed on stdin, its model a script (``--model scripted:FILE``). Three turns, each with its own
question, tokens and stop; the second is wound down (``--max-steps 2``) and its answer forced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

QUESTIONS = ("What is 2 + 3?", "And that times 4?", "Say done.")
ANSWERS = ("5", "20", "done")
# input tokens of each model call, turn by turn: turn 2's second call is its wind-down
INPUTS = ((400,), (450, 520), (560,))


def _turn(content: str | None, input_tokens: int, expression: str | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"usage": {"input_tokens": input_tokens, "output_tokens": 7}}
    if content is not None:
        turn["content"] = content
    if expression is not None:
        turn["tool_calls"] = [{"name": "calculator", "arguments": {"expression": expression}}]
    return turn


SCRIPT = [
    _turn("5", 400),
    _turn(None, 450, "5*4"),
    _turn("20", 520),
    _turn("done", 560),
]


def chat_journal(folder: Path, *, usage: bool = True) -> Path:
    """Run ``reactloop chat`` on the three questions; the journal's path. Without ``usage``
    the model reports no tokens (the accounting estimates them from the journal's text)."""
    script = folder / "script.json"
    turns = SCRIPT if usage else [{k: v for k, v in t.items() if k != "usage"} for t in SCRIPT]
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = folder / "chat.jsonl"
    src = str(Path(__file__).parents[1] / "src")  # this checkout's package, as the tests'
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "chat", "--model", f"scripted:{script}",
         "--tools", "calculator", "--max-steps", "2", "--trace", str(trace)],
        input="\n".join(QUESTIONS) + "\n",
        capture_output=True, text=True, timeout=120, cwd=folder, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return trace
