"""The weather bet, on the real ``web`` tools against local fakes, in both weather cases.

    python examples/bet/bet.py                       # a stand-in model that reasons like the original example's
    python examples/bet/bet.py --model openai:gpt-4o-mini

"I bet my friend 100 EUR that it would rain in Athens today. If I won, how many USD is that?"
The weather decides whether there is a second tool call: only when it rained is the bet won,
and only then is the currency converted.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fake_apis import serve  # beside this file: python puts the script's folder on sys.path

from reactloop import Agent, FunctionModel, Limits, ModelRequest, RunResult, resolve_model
from reactloop.tools.families.web import web_tools

QUESTION = (
    "I bet my friend 100 EUR that it would rain in Athens today. If I won, how many USD is that?"
)
CASES = {"rain": 3.2, "dry": 0.0}


def stand_in(request: ModelRequest) -> dict[str, Any]:
    """Decide as the original example's model did, from what the tools answered so far."""
    seen = {m.name: _json(m.content) for m in request.messages if m.role == "tool"}
    weather, money = seen.get("get_current_weather"), seen.get("convert_currency")
    if weather is None:
        return _call("get_current_weather", city="Athens")
    if weather.get("precipitation_mm", 0) <= 0:
        return {"content": "It did not rain in Athens today, so you lost the bet: no conversion."}
    if money is None:
        return _call("convert_currency", amount=100, from_currency="EUR", to_currency="USD")
    return {
        "content": f"It rained in Athens ({weather['precipitation_mm']} mm), so you won: "
        f"100 EUR is {money.get('converted_amount', 0):.2f} USD."
    }


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _json(text: str) -> Any:
    """The tool's output in an observation (``{"ok": true, "output": …}``)."""
    try:
        observation = json.loads(text)
    except ValueError:
        return {}
    return observation.get("output") or {} if isinstance(observation, dict) else {}


def run_case(precipitation: float, model_spec: str | None = None) -> RunResult:
    model = resolve_model(model_spec) if model_spec else FunctionModel(stand_in, name="stand-in")
    with serve(precipitation):
        return Agent(model, web_tools(), limits=Limits(max_model_calls=5)).run(QUESTION)


def show(case: str, result: RunResult) -> None:
    print(f"--- {case} ---")
    for message in result.history:
        for call in message.tool_calls:
            print(f"Act     {call.name}({call.arguments})")
        if message.role == "tool":
            print(f"Observe {message.content}")
    print(f"Answer  {result.answer}")
    print(f"tool calls: {result.tool_calls}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model spec (default: a stand-in that reasons in Python)")
    options = parser.parse_args()
    for case, precipitation in CASES.items():
        show(case, run_case(precipitation, options.model))


if __name__ == "__main__":
    main()
