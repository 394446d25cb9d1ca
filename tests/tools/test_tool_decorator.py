"""@tool: name, description and parameter docs from the signature and docstring."""

from __future__ import annotations

from reactloop import tool
from reactloop.tools.arguments import parse_docstring


def test_google_style_docstring_becomes_the_schema():
    @tool
    def convert(amount: float, currency: str = "EUR") -> float:
        """Convert an amount of money.

        Args:
            amount: how much, in the source currency
            currency: the target currency code,
                for example USD
        """
        return amount

    spec = convert.spec
    assert spec.name == "convert"
    assert spec.description == "Convert an amount of money."
    properties = spec.parameters["properties"]
    assert properties["amount"] == {
        "type": "number",
        "description": "how much, in the source currency",
    }
    assert properties["currency"]["description"] == "the target currency code, for example USD"
    assert properties["currency"]["default"] == "EUR"
    assert spec.parameters["required"] == ["amount"]
    assert spec.parameters["additionalProperties"] is False
    assert "title" not in str(spec.parameters)


def test_rest_style_and_overrides():
    @tool(name="find", description="Find things.", read_only=True)
    def search(query: str, limit: int = 5) -> list[str]:
        """Ignored summary.

        :param query: what to look for
        :param int limit: at most this many
        :returns: the matches
        """
        return []

    assert (search.name, search.description, search.read_only) == ("find", "Find things.", True)
    assert search.spec.parameters["properties"]["limit"]["description"] == "at most this many"


def test_a_tool_is_still_callable_through_run():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert add.run({"a": "2", "b": 3}) == 5
    assert add.function(1, 2) == 3


def test_parse_docstring_without_args():
    assert parse_docstring("Just a summary\nover two lines.\n\nMore text.") == (
        "Just a summary over two lines.",
        {},
    )
