"""The rungs of a ladder from ``--model SPEC`` options or a ``--models FILE`` (TOML or JSON).

A models file lists rungs, each with a ``label``, a model ``spec`` (``model`` also works), and
optionally ``base_url``, ``api_key_env`` (the environment variable holding its key), ``prices``
(dollars per million tokens: ``input``, ``cached_input``, ``cache_write``, ``output``),
``protocols`` and ``concurrency`` (the cap on episodes in flight on its endpoint)::

    [[rung]]
    label = "qwen-0.5b"
    spec = "vllm:Qwen/Qwen2.5-0.5B-Instruct"
    base_url = "http://127.0.0.1:8001/v1"
    protocols = ["native", "text"]
    concurrency = 8

JSON takes the same as ``{"rung": [...]}`` or a bare list.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.eval.run.spec import Rung
from reactloop.usage.prices import PRICE_KEYS

PROTOCOLS = ("native", "text")
_KEYS = {
    "label", "spec", "model", "base_url", "api_key_env", "prices", "protocols", "concurrency",
    "max_retries",
}  # fmt: skip


def parse_protocols(text: str | Sequence[str]) -> tuple[str, ...]:
    names = text.split(",") if isinstance(text, str) else list(text)
    chosen = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    bad = [n for n in chosen if n not in PROTOCOLS]
    if bad or not chosen:
        raise UsageError(f"protocols must be native and/or text, not {','.join(bad) or 'none'!r}")
    return chosen


def rungs_from_specs(
    specs: Sequence[str], protocols: tuple[str, ...], base_url: str | None = None
) -> list[Rung]:
    labels = _unique_labels(specs)
    return [
        Rung(
            label=label,
            spec=spec,
            base_url=base_url,
            protocols=protocols,
            concurrency=1 if spec.partition(":")[0].strip().lower() == "local" else None,
        )
        for label, spec in zip(labels, specs, strict=True)
    ]


def _unique_labels(specs: Sequence[str]) -> list[str]:
    labels: list[str] = []
    for spec in specs:
        provider, _, name = spec.partition(":")
        short = f"{provider}:{Path(name).name}" if "/" in name and Path(name).exists() else spec
        label, n = short, 2
        while label in labels:
            label, n = f"{short}#{n}", n + 1
        labels.append(label)
    return labels


def load_models_file(path: str | Path, protocols: tuple[str, ...]) -> list[Rung]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except OSError as exc:
        raise UsageError(f"cannot read models file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(
            f"models file {path} is not valid {path.suffix[1:] or 'JSON'}: {exc}"
        ) from None
    entries = data.get("rung", data.get("models")) if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"models file {path} must list rungs ([[rung]] tables or a JSON list)")
    rungs = [_rung(path, n, entry, protocols) for n, entry in enumerate(entries, start=1)]
    labels = [r.label for r in rungs]
    if len(set(labels)) != len(labels):
        raise UsageError(f"models file {path}: labels must be unique")
    return rungs


def _rung(path: Path, number: int, entry: Any, protocols: tuple[str, ...]) -> Rung:
    where = f"models file {path}, rung {number}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where} must be a table")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}")
    spec = entry.get("spec", entry.get("model"))
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"{where} needs a model spec")
    concurrency = entry.get("concurrency")
    if concurrency is not None and (type(concurrency) is not int or concurrency < 1):
        raise UsageError(f"{where}: concurrency must be a whole number of at least 1")
    retries = entry.get("max_retries", 2)
    if type(retries) is not int or not 0 <= retries <= 20:
        raise UsageError(f"{where}: max_retries must be a whole number from 0 to 20")
    return Rung(
        label=str(entry.get("label") or spec),
        spec=spec,
        base_url=_optional_text(entry, "base_url", where),
        api_key_env=_optional_text(entry, "api_key_env", where),
        prices=_prices(entry.get("prices"), where),
        protocols=parse_protocols(entry["protocols"]) if "protocols" in entry else protocols,
        concurrency=concurrency,
        max_retries=retries,
    )


def _optional_text(entry: dict[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{where}: {key} must be text")
    return value


def _prices(value: Any, where: str) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise UsageError(
            f"{where}: prices must be a table of {', '.join(PRICE_KEYS)} ($ per million tokens)"
        )
    prices: dict[str, float] = {}
    for key, rate in value.items():
        if key not in PRICE_KEYS:
            raise UsageError(f"{where}: unknown price {key!r} (known: {', '.join(PRICE_KEYS)})")
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate):
            raise UsageError(f"{where}: price {key} must be a finite number")
        if rate < 0:
            raise UsageError(f"{where}: price {key} must not be negative")
        prices[key] = float(rate)
    return prices
