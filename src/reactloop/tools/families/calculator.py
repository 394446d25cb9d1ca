"""A safe calculator: the expression is parsed with ``ast`` and evaluated node by node.

Only numbers, ``+ - * / **`` and parentheses are allowed; never ``eval``. Huge powers, huge
results, deep nesting and division by zero are reported as errors, not crashes or hangs.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from reactloop.errors import ToolError
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext
from reactloop.tools.plain import plain_tool

MAX_EXPRESSION_CHARS = 1000
MAX_DEPTH = 60
MAX_EXPONENT = 100
MAX_RESULT_BITS = 13_000  # about 3900 digits: under Python's int-to-str limit

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_ALLOWED = "only numbers, + - * / ** and parentheses are allowed"


def calculate(expression: str) -> str:
    """Evaluate ``expression`` exactly; raises ToolError with a reason the model can act on."""
    text = expression.strip()
    if not text:
        raise ToolError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise ToolError(f"not an arithmetic expression ({_reason(exc)}); {_ALLOWED}") from None
    except (RecursionError, MemoryError):
        raise ToolError("the expression is too deeply nested") from None
    try:
        value = _evaluate(tree.body, 0)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("the result is too large") from None
    return _format(value)


def _reason(exc: Exception) -> str:
    return getattr(exc, "msg", None) or str(exc) or type(exc).__name__


def _evaluate(node: ast.expr, depth: int) -> int | float:
    if depth > MAX_DEPTH:
        raise ToolError("the expression is too deeply nested")
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ToolError(f"{_ALLOWED} (found a boolean)")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, depth + 1)
        right = _evaluate(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, depth + 1))  # type: ignore[no-any-return]
    raise ToolError(f"{_ALLOWED} (found {type(node).__name__})")


def _check_power(base: int | float, exponent: int | float) -> None:
    if abs(exponent) > MAX_EXPONENT:
        raise ToolError(f"the exponent {exponent} is too large (at most {MAX_EXPONENT})")
    if not (isinstance(base, int) and isinstance(exponent, int)) or exponent <= 0:
        return
    if base.bit_length() * exponent > MAX_RESULT_BITS:
        raise ToolError("the result is too large")


def _checked(value: Any) -> int | float:
    if isinstance(value, complex):
        raise ToolError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_RESULT_BITS:
        raise ToolError("the result is too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError("the result is too large")
    return value  # type: ignore[no-any-return]


def _format(value: int | float) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return format(value, ".12g")
    return str(value)


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly: numbers, + - * / ** and parentheses.

    Args:
        expression: for example (17 * 23) + 4
    """
    return calculate(expression)


def calculator_tool() -> Tool:
    return plain_tool(calculator, read_only=True, bounded=True)


def tools(context: ToolContext | None = None) -> list[Tool]:
    return [calculator_tool()]
