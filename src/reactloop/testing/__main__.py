"""``python -m reactloop.testing openai|anthropic|responses [--port N] [--script FILE]``: one
of the fake servers, from the shell, until Ctrl-C.

It prints the URL a client takes as its base URL (the first line of stdout), then serves: each
request gets the script's next reply (a JSON array: a string is a reply with that text, an
object that JSON body, as in Python), and after the script, or without one, ``--reply``'s text
(without ``--reply`` after a script: HTTP 500, so a client that calls once too often fails
loudly). Ctrl-C or SIGTERM stops it; exit 0, 2 on a usage error, 1 when it cannot listen.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from reactloop.testing.fake_anthropic import FakeAnthropicServer
from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest
from reactloop.testing.fake_responses import FakeResponsesServer
from reactloop.testing.openai_replies import Reply, as_reply

SERVERS: dict[str, type[FakeOpenAIServer]] = {
    "openai": FakeOpenAIServer,
    "anthropic": FakeAnthropicServer,
    "responses": FakeResponsesServer,
}
# How to point reactloop at each, said on stderr once it listens.
HINTS = {
    "openai": 'reactloop run "…" --model openai:any --base-url {url}',
    "anthropic": 'ANTHROPIC_API_KEY=x reactloop run "…" --model anthropic:any --base-url {url}',
    "responses": 'reactloop run "…" --model responses:any --base-url {url}',
}
DEFAULT_REPLY = "This is a fake reply."
USAGE_ERROR = 2


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    script = _script(options.script) if options.script else []
    reply = options.reply if options.reply is not None or script else DEFAULT_REPLY
    server = _server(options.kind, script, reply, options.port)
    try:
        server.start()
    except OSError as exc:
        where = f"127.0.0.1:{options.port}"
        print(f"python -m reactloop.testing: cannot listen on {where}: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a shell's `&` ignores it
        _stop_on(signum, stop)
    try:
        print(server.base_url, flush=True)
        hint = HINTS[options.kind].format(url=server.base_url)
        print(f"fake {options.kind} server; try: {hint}; Ctrl-C stops it", file=sys.stderr)
        stop.wait()
    finally:
        server.stop()
    print(f"stopped after {len(server.requests)} requests", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m reactloop.testing",
        description="Run one of reactloop's fake servers on 127.0.0.1 until Ctrl-C. Exit 0, "
        "2 on a usage error, 1 when it cannot listen.",
    )
    parser.add_argument("kind", choices=list(SERVERS), help="the wire protocol it speaks")
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument(
        "--script",
        type=Path,
        help="a JSON array of replies, in order: a string is a text reply, an object a body",
    )
    parser.add_argument(
        "--reply",
        help=f"the text of every reply after the script (default without --script: "
        f"{DEFAULT_REPLY!r}; with one: none, HTTP 500)",
    )
    return parser


def _script(path: Path) -> list[Any]:
    try:
        items: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _usage_error(f"cannot read the script {path}: {exc}")
    if not isinstance(items, list) or not all(isinstance(i, str | dict) for i in items):
        _usage_error(f"the script {path} is not a JSON array of strings and objects")
    return list(items)


def _usage_error(message: str) -> Any:
    print(f"python -m reactloop.testing: error: {message}", file=sys.stderr)
    raise SystemExit(USAGE_ERROR)


def _server(kind: str, script: list[Any], reply: str | None, port: int) -> FakeOpenAIServer:
    if kind == "openai":
        fixed = None if reply is None else as_reply(reply)

        def answer(request: RecordedRequest) -> Reply | None:
            return fixed

        return FakeOpenAIServer(script, responder=answer, port=port)
    server_class: Any = SERVERS[kind]
    responder = None if reply is None else (lambda request: reply)
    server: FakeOpenAIServer = server_class(script, responder=responder, port=port)
    return server


def _stop_on(signum: int, stop: threading.Event) -> None:
    def handler(number: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
