"""``eval/``'s sub-packages read in one order, ``tasks`` → ``records`` → ``report`` → ``run``:
a module names (imports, for types too) only its own sub-package and those before it, so no
two of them name each other; and each sub-package's ``__init__`` lists exactly its files."""

from __future__ import annotations

import re
from pathlib import Path

EVAL = Path(__file__).resolve().parents[2] / "src" / "reactloop" / "eval"
ORDER = ("tasks", "records", "report", "run")
_NAMED = re.compile(r"^\s*from reactloop\.eval\.(\w+)(?:\.(\w+))? import", re.M)


def test_each_sub_package_names_only_those_before_it() -> None:
    upward = []
    for package in ORDER:
        for path in sorted((EVAL / package).glob("*.py")):
            for named, _ in _NAMED.findall(path.read_text(encoding="utf-8")):
                if ORDER.index(named) > ORDER.index(package):
                    upward.append(f"{package}/{path.name} names {named}")
    assert upward == []


def test_the_eval_folder_holds_only_the_sub_packages() -> None:
    assert sorted(p.name for p in EVAL.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in EVAL.iterdir() if p.is_dir() and p.name != "__pycache__") == (
        sorted(ORDER)
    )


def test_no_two_modules_of_a_sub_package_name_each_other() -> None:
    for package in ORDER:
        names = {}
        for path in (EVAL / package).glob("*.py"):
            text = path.read_text(encoding="utf-8")
            names[path.stem] = {m for p, m in _NAMED.findall(text) if p == package and m}
        circles = [(a, b) for a in names for b in names[a] if a in names.get(b, set())]
        assert circles == [], f"{package}: {circles}"


def test_each_init_lists_its_files() -> None:
    for package in ORDER:
        text = (EVAL / package / "__init__.py").read_text(encoding="utf-8")
        listed = re.findall(r"^- ``(\w+)``", text, re.M)
        files = sorted(p.stem for p in (EVAL / package).glob("*.py") if p.stem != "__init__")
        assert sorted(listed) == files, package
        assert len(listed) == len(set(listed)), package
