"""Reusable JSON encoders for the loop's hot path (``json.dumps`` with options builds a new
encoder on every call)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""Compact-enough JSON text, non-ASCII kept, unknown objects through ``str``."""

canonical: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
).encode
"""One spelling per value: sorted keys, no spaces (for comparing arguments)."""
