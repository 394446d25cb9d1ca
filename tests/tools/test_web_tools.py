"""The ``web`` family against local fake HTTP servers on 127.0.0.1: the real paths and
parameters, an unknown city or currency, a server that hangs past the limit, a refused
connection, answers that are not what the APIs send."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, Journal, ScriptedModel, Toolbox, ToolCall, read_journal
from reactloop.errors import ToolError
from reactloop.eval.tasks.bet_tools import bet_tools
from reactloop.tools.context import ToolContext
from reactloop.tools.families import web
from reactloop.tools.registry import build_tools

PLACES = {"athens": (37.98, 23.72), "oslo": (59.91, 10.75)}


class FakeApis(ThreadingHTTPServer):
    """Open-Meteo's geocoding and forecast, and Frankfurter's rates, from fixed tables."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.precipitation = 3.2
        self.mode = "normal"  # or "hang", "html", "bad gateway"
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakeApis

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.server.requests.append((parts.path, query))
        if self.server.mode == "hang":
            self.server.release.wait(30)
            return
        if self.server.mode == "html":
            return self.reply(200, "<html>Welcome to the captive portal</html>", "text/html")
        if self.server.mode == "bad gateway":
            return self.reply(502, "<html>Bad gateway</html>", "text/html")
        status, body = self.answer(parts.path, query)
        self.reply(status, json.dumps(body), "application/json")

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if path == "/v1/search":
            place = PLACES.get(query["name"][0].lower())
            if place is None:
                return 200, {"generationtime_ms": 0.2}  # what Open-Meteo sends for no match
            return 200, {"results": [{"latitude": place[0], "longitude": place[1]}]}
        if path == "/v1/forecast":
            celsius = query.get("temperature_unit") != ["fahrenheit"]
            current = {"temperature_2m": 17.4 if celsius else 63.3}
            return 200, {"current": {**current, "precipitation": self.server.precipitation}}
        if path == "/v2/rate/EUR/USD":
            return 200, {"base": "EUR", "quote": "USD", "rate": 1.085, "date": "2026-12-01"}
        return 404, {"message": "not found"}

    def reply(self, status: int, text: str, kind: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApis]:
    server = FakeApis()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    for name in ("REACTLOOP_GEOCODING_URL", "REACTLOOP_WEATHER_URL", "REACTLOOP_CURRENCY_URL"):
        monkeypatch.setenv(name, server.url)
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def run(name: str, read: float = 5.0, **arguments: Any) -> Any:
    box = Toolbox(web.web_tools(read=read))
    return box.execute(ToolCall(id="1", name=name, arguments=json.dumps(arguments)))


def test_the_schemas_are_those_of_the_offline_twins() -> None:
    twins = {tool.name: tool.spec for tool in bet_tools()}
    assert {tool.name: tool.spec for tool in web.web_tools()} == twins


def test_the_web_family_is_registered() -> None:
    names = [tool.name for tool in build_tools(("web",), ToolContext())]
    assert names == ["get_current_weather", "convert_currency"]


def test_weather_geocodes_then_reads_the_current_weather(fake: FakeApis) -> None:
    result = run("get_current_weather", city="Athens")
    assert result.ok
    assert result.output == {
        "city": "Athens",
        "temperature": 17.4,
        "precipitation_mm": 3.2,
        "unit": "celsius",
    }
    (search, search_query), (forecast, forecast_query) = fake.requests
    assert (search, search_query) == ("/v1/search", {"name": ["Athens"], "count": ["1"]})
    assert forecast == "/v1/forecast"
    assert forecast_query["latitude"] == ["37.98"] and forecast_query["longitude"] == ["23.72"]
    assert forecast_query["current"] == ["temperature_2m,precipitation"]


def test_fahrenheit_is_asked_of_the_api(fake: FakeApis) -> None:
    result = run("get_current_weather", city="Oslo", unit="Fahrenheit")
    assert result.output["temperature"] == 63.3 and result.output["unit"] == "fahrenheit"
    assert fake.requests[1][1]["temperature_unit"] == ["fahrenheit"]


def test_an_unknown_city_is_an_error_observation(fake: FakeApis) -> None:
    result = run("get_current_weather", city="Atlantis")
    assert not result.ok and result.executed
    assert result.error == (
        "unknown city 'Atlantis': the geocoding service found no place by that name"
    )
    assert len(fake.requests) == 1  # no forecast asked for


def test_a_bad_unit_is_refused_before_any_request(fake: FakeApis) -> None:
    assert run("get_current_weather", city="Athens", unit="kelvin").error == (
        "unit must be celsius or fahrenheit"
    )
    assert fake.requests == []


def test_currency_conversion_uses_frankfurters_rate(fake: FakeApis) -> None:
    result = run("convert_currency", amount=100, from_currency="eur", to_currency="USD")
    assert result.output == {
        "amount": 100.0,
        "from_currency": "EUR",
        "to_currency": "USD",
        "converted_amount": 108.5,
        "rate": 1.085,
    }
    assert fake.requests == [("/v2/rate/EUR/USD", {})]


def test_unknown_currencies_are_error_observations(fake: FakeApis) -> None:
    assert run("convert_currency", amount=1, from_currency="EURO", to_currency="USD").error == (
        "unknown currency 'EURO': use a three-letter code such as EUR or USD"
    )
    unknown = run("convert_currency", amount=1, from_currency="EUR", to_currency="XYZ")
    assert unknown.error == f"unknown currency pair EUR/XYZ: {fake.url[7:]} has no such rate"


def test_a_server_that_hangs_past_the_read_limit(fake: FakeApis) -> None:
    fake.mode = "hang"
    started = time.monotonic()
    result = run("convert_currency", read=0.3, amount=1, from_currency="EUR", to_currency="USD")
    assert time.monotonic() - started < 2
    assert result.error == f"{fake.url[7:]} did not answer within 0.3 s; try again later"


def test_a_refused_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("REACTLOOP_GEOCODING_URL", f"http://127.0.0.1:{port}")
    result = run("get_current_weather", city="Athens")
    assert result.error == (
        f"cannot reach 127.0.0.1:{port} (connection refused); is the network up?"
    )


def test_an_answer_that_is_not_json(fake: FakeApis) -> None:
    fake.mode = "html"
    result = run("get_current_weather", city="Athens")
    assert result.error == f"{fake.url[7:]} answered something that is not JSON"


def test_a_server_error_status(fake: FakeApis) -> None:
    fake.mode = "bad gateway"
    result = run("convert_currency", amount=1, from_currency="EUR", to_currency="USD")
    assert result.error == f"{fake.url[7:]} answered HTTP 502"


def test_the_journal_records_the_error_as_ok_false(tmp_path: Path, fake: FakeApis) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "get_current_weather", "arguments": {"city": "Atlantis"}}]},
            {"content": "no such city"},
        ]
    )
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        Agent(model, web.web_tools(), journal=journal).run("weather in Atlantis?")
    (result,) = [e["result"] for e in read_journal(path) if e["type"] == "tool_result"]
    assert result["ok"] is False and result["error"].startswith("unknown city 'Atlantis'")


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=60,
)
DEEP = st.integers(min_value=1, max_value=5000).map(lambda n: "[" * n + "]" * n)


@settings(max_examples=150, deadline=None)
@given(st.one_of(JSON.map(lambda v: {"current": v}), JSON, DEEP))
def test_any_forecast_body_is_a_result_or_a_tool_error(body: Any) -> None:
    text = body if isinstance(body, str) and body.startswith("[") else json.dumps(body)
    response = httpx.Response(200, text=text, request=httpx.Request("GET", "http://fake"))
    try:
        values = web.current_weather(response)
    except ToolError as exc:
        assert str(exc).startswith("fake ")
        return
    assert all(isinstance(value, float) and math.isfinite(value) for value in values)
    current = body["current"]
    assert values == (float(current["temperature_2m"]), float(current["precipitation"]))


def test_the_bet_example_converts_only_when_it_rained() -> None:
    script = Path(__file__).resolve().parents[2] / "examples" / "bet" / "bet.py"
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    rain, dry = done.stdout.split("--- dry ---")
    assert "Act     convert_currency(" in rain and "tool calls: 2" in rain
    assert "100 EUR is 108.50 USD." in rain
    assert "convert_currency" not in dry and "tool calls: 1" in dry
    assert "you lost the bet" in dry
