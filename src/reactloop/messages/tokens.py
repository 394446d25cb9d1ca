"""The tokens a model call spent (``Usage``) and the one reader of token counts from outside."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.support.fast_init import fast_init


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Tokens of one model call, or a sum of calls.

    ``cached_tokens`` is the part of ``input_tokens`` served from a provider's prefix cache;
    ``cache_write_tokens`` the part written to it (Anthropic's ``cache_creation_input_tokens``,
    billed at its own rate); ``reasoning_tokens`` is the part of ``output_tokens`` spent on
    hidden reasoning.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        """Counts from JSON (a missing one is 0); ValueError for anything but whole numbers."""
        if not isinstance(data, dict):
            raise ValueError(f"usage must be an object, not {type(data).__name__}")
        return cls(**{key: _token_count(data, key) for key in cls.__dataclass_fields__})


MAX_TOKEN_COUNT = 10**15  # beyond any run (and exact as a float): a larger count is not a count


def token_count(value: Any) -> int | None:
    """``value`` read as a token count from JSON anyone may have written (a provider's
    ``usage``, a journal): a number or a numeric string from 0 to ``MAX_TOKEN_COUNT``, a
    fraction cut to its whole part; None for anything else (a bool, NaN, a negative or an
    absurd number, ``"lots"``, a 5000-digit string).

    The one reader of foreign token counts: the adapters' usage readers read a field absent
    or not a count as 0 (``count_of``), ``Usage.from_dict`` refuses it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = int(value)
    except (ValueError, OverflowError):  # "abc", inf, nan, a string of too many digits
        return None
    return number if 0 <= number <= MAX_TOKEN_COUNT else None


def count_of(fields: Any, key: str) -> int:
    """The token count under ``key`` of a JSON object from outside; 0 when it has none."""
    value = fields.get(key) if isinstance(fields, Mapping) else None
    return token_count(value) or 0


def exact_count(value: Any) -> int | None:
    """``value`` as the count a ``Usage`` keeps: a whole number (an int, or a float without a
    fraction) from 0 to ``MAX_TOKEN_COUNT``; None for anything else (NaN, a fraction, a bool,
    a negative or an absurd number such as 2**53, a string).

    The one rule for the counts of a ``Usage``, kept on both sides of the journal:
    ``Usage.from_dict`` (replay, resume) refuses a count that fails it, and the loop counts a
    model's such count as 0, with a ``bad_usage`` warning (``loop.model_call``), so a run
    never journals a count that replay refuses.
    """
    if type(value) is int:  # the common case
        return value if 0 <= value <= MAX_TOKEN_COUNT else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    count = token_count(value)
    return count if count is not None and count == value else None


def _token_count(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"usage {key} must be a number, not {type(value).__name__}")
    count = exact_count(value)
    if count is None:  # NaN, a fraction, out of range
        raise ValueError(f"usage {key} must be a whole number of tokens, not {value!r}")
    return count
