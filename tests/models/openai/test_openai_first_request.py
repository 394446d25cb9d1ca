"""The first request of a fresh process does no one-time work a later one does not (issue 40):
the openai SDK works out its ``X-Stainless-OS`` header on the first request with
``platform.platform()``, which on Linux runs ``uname -p`` in a subprocess; ``make_client``
tells the client its platform when it makes it."""

from __future__ import annotations

import json
import subprocess
import sys

_FIRST_REQUEST = """
import json, sys
started = None  # a list while the run goes

def audit(event, args):
    if event == "subprocess.Popen" and started is not None:
        started.append(args[1])

sys.addaudithook(audit)
from reactloop import Agent
from reactloop.models import ModelSettings, resolve_model
from reactloop.testing import FakeOpenAIServer
with FakeOpenAIServer(["five"]) as server:
    model = resolve_model("vllm:m", ModelSettings(base_url=server.base_url, api_key="k"))
    agent = Agent(model, [])  # (the SDK's import may start one: trio's finds libc with ldconfig)
    started = []
    answer = agent.run("2+3?").answer
    header = server.requests[0].headers.get("x-stainless-os")
from openai._base_client import get_platform
print(json.dumps([answer, [list(map(str, a)) for a in started], header, str(get_platform())]))
"""


def test_the_first_request_starts_no_process_and_names_the_platform_as_the_sdk_does() -> None:
    out = subprocess.run(  # a fresh process: ``platform`` caches what it found out
        [sys.executable, "-c", _FIRST_REQUEST], capture_output=True, text=True, check=True
    ).stdout
    answer, started, header, sdk_says = json.loads(out)
    assert answer == "five"
    assert started == []  # ``uname -p`` was not run for the request
    assert header == sdk_says
