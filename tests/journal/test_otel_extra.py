"""``pip install 'reactloop[otel]'`` installs what the OpenTelemetry snippet of
docs/library.md imports: every ``opentelemetry`` module it names comes from a distribution
the ``otel`` extra requires (or one of theirs), as installed here."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def otel_snippet() -> str:
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    section = text[text.index("## OpenTelemetry: `OTelObserver`") :]
    found = re.search(r"^```python\n(.*?)^```", section, re.M | re.S)
    assert found is not None
    return found.group(1)


def imported_modules(code: str) -> set[str]:
    return set(re.findall(r"^(?:from|import) (opentelemetry[\w.]*)", code, re.M))


def extra(name: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project["optional-dependencies"][name]]


def installed_closure(requirements: list[Requirement]) -> list[metadata.Distribution]:
    """The distributions the requirements name, and theirs (markers without extras)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        key = requirement.name.lower().replace("_", "-")
        if key in seen:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            seen[key] = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{requirement.name} is not installed here")
        todo += [Requirement(text) for text in seen[key].requires or ()]
    return list(seen.values())


def provides(distribution: metadata.Distribution, module: str) -> bool:
    path = module.replace(".", "/")
    return any(
        str(file) in (f"{path}.py", f"{path}/__init__.py") for file in distribution.files or ()
    )


def test_the_otel_extra_installs_what_the_docs_snippet_imports() -> None:
    modules = imported_modules(otel_snippet())
    assert "opentelemetry.sdk.metrics" in modules  # the snippet is the one with metrics
    closure = installed_closure(extra("otel"))
    missing = sorted(m for m in modules if not any(provides(d, m) for d in closure))
    assert missing == [], f"the otel extra does not install {missing}"


def test_the_api_alone_would_not_do() -> None:
    """The check can fail: with only opentelemetry-api, the SDK's modules are missing."""
    modules = imported_modules(otel_snippet())
    closure = installed_closure([Requirement("opentelemetry-api")])
    assert not all(any(provides(d, m) for d in closure) for m in modules)
