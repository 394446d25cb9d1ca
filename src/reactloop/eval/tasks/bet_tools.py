"""Offline twins of the weather bet's ``get_current_weather`` and ``convert_currency``.

Same names, arguments and result shapes as the bet example's Open-Meteo and Frankfurter tools, but
answered from fixed tables, so that the ``bet`` suite has exact expected answers.
"""

from __future__ import annotations

from typing import Any

from reactloop import Tool, ToolError, tool

# city -> (temperature in Celsius, precipitation in mm)
WEATHER: dict[str, tuple[float, float]] = {
    "athens": (17.4, 3.2),
    "berlin": (8.1, 0.0),
    "london": (11.5, 5.4),
    "madrid": (24.0, 0.0),
    "paris": (13.2, 1.1),
    "rome": (21.7, 0.0),
    "oslo": (2.3, 7.9),
    "cairo": (34.1, 0.0),
    "lisbon": (19.0, 0.6),
    "vienna": (9.8, 0.0),
}
# units of the quote currency for one unit of the base currency
RATES: dict[tuple[str, str], float] = {
    ("EUR", "USD"): 1.085,
    ("EUR", "GBP"): 0.855,
    ("EUR", "JPY"): 162.4,
    ("USD", "EUR"): 0.9217,
    ("GBP", "USD"): 1.269,
    ("GBP", "EUR"): 1.1696,
    ("USD", "JPY"): 149.7,
}


def rained(city: str) -> bool:
    return WEATHER[city.strip().lower()][1] > 0


def converted(amount: float, from_currency: str, to_currency: str) -> float:
    return round(amount * rate(from_currency, to_currency), 2)


def rate(from_currency: str, to_currency: str) -> float:
    base, quote = from_currency.strip().upper(), to_currency.strip().upper()
    if base == quote:
        return 1.0
    if (base, quote) not in RATES:
        raise ToolError(f"no exchange rate for {base}/{quote}")
    return RATES[base, quote]


@tool(read_only=True)
def get_current_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Get the current weather for a given city, including temperature and precipitation.

    Args:
        city: the city name, e.g. Athens
        unit: celsius or fahrenheit
    """
    key = city.strip().lower()
    if key not in WEATHER:
        raise ToolError(f"unknown city {city!r}; known: {', '.join(sorted(WEATHER))}")
    celsius, precipitation = WEATHER[key]
    if unit.strip().lower() == "fahrenheit":
        temperature = round(celsius * 9 / 5 + 32, 1)
    elif unit.strip().lower() == "celsius":
        temperature = celsius
    else:
        raise ToolError("unit must be celsius or fahrenheit")
    return {
        "city": city,
        "temperature": temperature,
        "precipitation_mm": precipitation,
        "unit": unit,
    }


@tool(read_only=True)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount from one currency to another.

    Args:
        amount: the amount to convert
        from_currency: the source currency code, e.g. EUR
        to_currency: the target currency code, e.g. USD
    """
    used = rate(from_currency, to_currency)
    return {
        "amount": amount,
        "from_currency": from_currency,
        "to_currency": to_currency,
        "converted_amount": round(amount * used, 2),
        "rate": used,
    }


def bet_tools() -> list[Tool]:
    return [get_current_weather, convert_currency]
