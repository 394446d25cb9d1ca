"""Hypothesis strategies for a journal event's fields, by their type hints: ``by_hint`` gives
a hint its values from ``scalars`` (a test's own: how wide its numbers may be), and a dict or
a list of ``json`` values, or any member of a union."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st


def by_hint(
    hint: Any, scalars: Mapping[Any, st.SearchStrategy[Any]], json: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    if hint in scalars:
        return scalars[hint]
    origin = typing.get_origin(hint)
    if origin is dict:
        return st.dictionaries(st.text(), json, max_size=3)
    if origin is list:
        return st.lists(json, max_size=3)
    return st.one_of([by_hint(arg, scalars, json) for arg in typing.get_args(hint)])
