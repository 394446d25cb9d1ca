"""Local stand-ins for Open-Meteo (geocoding, forecast) and Frankfurter, on 127.0.0.1.

    python examples/bet/fake_apis.py --precipitation 3.2 --port 8765

serves them until Ctrl-C; ``serve(precipitation)`` does the same in a thread, for a script.
They answer the paths the ``web`` tools call, as the real APIs do: the weather of Athens is
17.4 °C with ``precipitation`` mm of rain, 1 EUR is 1.085 USD.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

URL_VARIABLES = ("REACTLOOP_GEOCODING_URL", "REACTLOOP_WEATHER_URL", "REACTLOOP_CURRENCY_URL")
PLACES = {"athens": (37.98, 23.72)}
RATES = {("EUR", "USD"): 1.085}


class Handler(BaseHTTPRequestHandler):
    precipitation = 0.0

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        status, body = self.answer(parts.path, parse_qs(parts.query))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if path == "/v1/search":
            place = PLACES.get(query.get("name", [""])[0].strip().lower())
            if place is None:
                return 200, {"generationtime_ms": 0.1}
            return 200, {"results": [{"latitude": place[0], "longitude": place[1]}]}
        if path == "/v1/forecast":
            return 200, {"current": {"temperature_2m": 17.4, "precipitation": self.precipitation}}
        if path.startswith("/v2/rate/"):
            pair = tuple(path.removeprefix("/v2/rate/").split("/"))
            if pair in RATES:
                return 200, {"base": pair[0], "quote": pair[1], "rate": RATES[pair]}  # type: ignore[index]
        return 404, {"message": "not found"}

    def log_message(self, format: str, *args: Any) -> None:
        pass


def make_server(precipitation: float, port: int = 0) -> ThreadingHTTPServer:
    handler = type("BetHandler", (Handler,), {"precipitation": precipitation})
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


@contextlib.contextmanager
def serve(precipitation: float) -> Iterator[str]:
    """Serve the fakes in a thread and point the web tools at them while the block runs."""
    server = make_server(precipitation)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    saved = {name: os.environ.get(name) for name in URL_VARIABLES}
    os.environ.update(dict.fromkeys(URL_VARIABLES, url))
    try:
        yield url
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precipitation", type=float, default=3.2)
    parser.add_argument("--port", type=int, default=8765)
    options = parser.parse_args()
    server = make_server(options.precipitation, options.port)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(" ".join(f"{name}={url}" for name in URL_VARIABLES), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
