"""The ``web`` family: the weather bet's two tools on real web APIs, on httpx with time limits.

``get_current_weather(city, unit)`` geocodes the city with Open-Meteo, then reads its current
temperature and precipitation; ``convert_currency(amount, from_currency, to_currency)`` asks
Frankfurter for the rate. Names, arguments and result fields are those of the offline twins in
``reactloop.eval.tasks.bet_tools``. Every failure (an unknown city or currency, no network, a slow
or broken server) is a ``ToolError``: an ``{"ok": false, "error": …}`` observation.

Each base URL (a scheme, a host and a port) can be changed, for a local fake in tests:
``REACTLOOP_GEOCODING_URL``, ``REACTLOOP_WEATHER_URL``, ``REACTLOOP_CURRENCY_URL``.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from reactloop.errors import ToolError
from reactloop.tools.base import Tool, make_tool
from reactloop.tools.context import ToolContext, run_deadline

GEOCODING_URL = "https://geocoding-api.open-meteo.com"
WEATHER_URL = "https://api.open-meteo.com"
CURRENCY_URL = "https://api.frankfurter.dev"
CONNECT_SECONDS = 5.0
READ_SECONDS = 10.0
UNITS = ("celsius", "fahrenheit")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


class WebClient:
    """GETs JSON with connect and read limits, each cut to the run's time left."""

    def __init__(self, *, connect: float = CONNECT_SECONDS, read: float = READ_SECONDS) -> None:
        self.connect = connect
        self.read = read

    def get(self, base_env: str, default: str, path: str, params: dict[str, Any]) -> httpx.Response:
        base = os.environ.get(base_env, default).rstrip("/")
        host = urlsplit(base).netloc or base
        read = _cut_to_run(self.read)
        timeout = httpx.Timeout(read, connect=min(self.connect, read))
        try:
            response = httpx.get(base + path, params=params, timeout=timeout)
        except httpx.TimeoutException:
            raise ToolError(f"{host} did not answer within {read:g} s; try again later") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"cannot reach {host} ({_reason(exc)}); is the network up?") from None
        return response


def _cut_to_run(seconds: float) -> float:
    deadline = run_deadline()
    if deadline is None:
        return seconds
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolError("the run's time limit was reached before the request")
    return min(seconds, left)


def _reason(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower():
        return "connection refused"
    return text if len(text) <= 120 else text[:117] + "..."


def _host(response: httpx.Response) -> str:
    return response.request.url.netloc.decode("ascii", "replace")


def weather_tool(client: WebClient) -> Tool:
    def get_current_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """Get the current weather for a given city, including temperature and precipitation.

        Args:
            city: the city name, e.g. Athens
            unit: celsius or fahrenheit
        """
        wanted = unit.strip().lower()
        if wanted not in UNITS:
            raise ToolError("unit must be celsius or fahrenheit")
        if not city.strip():
            raise ToolError("city must not be empty")
        latitude, longitude = _geocode(client, city.strip())
        params = {
            "latitude": latitude,
            "longitude": longitude,
            "current": "temperature_2m,precipitation",
            "temperature_unit": wanted,
        }
        response = client.get("REACTLOOP_WEATHER_URL", WEATHER_URL, "/v1/forecast", params)
        temperature, precipitation = current_weather(response)
        return {
            "city": city,
            "temperature": temperature,
            "precipitation_mm": precipitation,
            "unit": wanted,
        }

    return make_tool(get_current_weather, read_only=True)


def current_weather(response: httpx.Response) -> tuple[float, float]:
    """The temperature and precipitation of a forecast answer; ToolError when it has none."""
    current = _checked(response).get("current")
    if not isinstance(current, dict):
        raise ToolError(f"{_host(response)} sent no current weather")
    temperature = _number(current.get("temperature_2m"), response)
    return temperature, _number(current.get("precipitation"), response)


def _geocode(client: WebClient, city: str) -> tuple[float, float]:
    params = {"name": city, "count": 1}
    response = client.get("REACTLOOP_GEOCODING_URL", GEOCODING_URL, "/v1/search", params)
    results = _checked(response).get("results")
    if not isinstance(results, list) or not results or not isinstance(results[0], dict):
        raise ToolError(f"unknown city {city!r}: the geocoding service found no place by that name")
    first = results[0]
    return _number(first.get("latitude"), response), _number(first.get("longitude"), response)


def currency_tool(client: WebClient) -> Tool:
    def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
        """Convert an amount from one currency to another.

        Args:
            amount: the amount to convert
            from_currency: the source currency code, e.g. EUR
            to_currency: the target currency code, e.g. USD
        """
        if not math.isfinite(amount):
            raise ToolError("amount must be a finite number")
        base, quote = _code(from_currency), _code(to_currency)
        used = 1.0 if base == quote else _rate(client, base, quote)
        return {
            "amount": amount,
            "from_currency": base,
            "to_currency": quote,
            "converted_amount": round(amount * used, 2),
            "rate": used,
        }

    return make_tool(convert_currency, read_only=True)


def _code(text: str) -> str:
    code = text.strip().upper()
    if not _CURRENCY.match(code):
        raise ToolError(f"unknown currency {text!r}: use a three-letter code such as EUR or USD")
    return code


def _rate(client: WebClient, base: str, quote: str) -> float:
    response = client.get("REACTLOOP_CURRENCY_URL", CURRENCY_URL, f"/v2/rate/{base}/{quote}", {})
    if response.status_code in (404, 422):
        raise ToolError(f"unknown currency pair {base}/{quote}: {_host(response)} has no such rate")
    data = _checked(response)
    return _number(data.get("rate"), response)


def _checked(response: httpx.Response) -> dict[str, Any]:
    host = _host(response)
    if response.status_code >= 400:
        raise ToolError(f"{host} answered HTTP {response.status_code}")
    try:
        data = response.json()
    except (ValueError, RecursionError):
        raise ToolError(f"{host} answered something that is not JSON") from None
    if not isinstance(data, dict):
        raise ToolError(f"{host} answered JSON that is not an object")
    return data


def _number(value: Any, response: httpx.Response) -> float:
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an integer too large for a float
            number = float(value)
    if not math.isfinite(number):
        raise ToolError(f"{_host(response)} answered without the number expected")
    return number


def web_tools(*, connect: float = CONNECT_SECONDS, read: float = READ_SECONDS) -> list[Tool]:
    client = WebClient(connect=connect, read=read)
    return [weather_tool(client), currency_tool(client)]


def tools(context: ToolContext | None = None) -> list[Tool]:
    return web_tools()
