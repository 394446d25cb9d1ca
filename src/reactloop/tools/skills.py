"""Agent Skills (the ``SKILL.md`` format of agentskills.io), loaded on demand.

A skill is a folder with a ``SKILL.md``: a frontmatter (``name``, ``description``; optional
``license``, ``compatibility``, ``metadata``, ``allowed-tools``) and a body of instructions.
``load_skills(folders)`` finds ``*/SKILL.md`` and checks each frontmatter as the
specification says, one line for the first mistake. Progressive disclosure: the names and
descriptions go in the system prompt (``prompt``: a stable prefix), a body only when the model
calls ``activate_skill(name)`` (``name`` is an enum of the loaded skills). Each activation is
a ``skill_activation`` journal event; a skill activated again is not sent again, also after a
resume (``reactloop.resume`` rebuilds the activated set from those events).

Skills from a folder are instructions from whoever wrote them: ``reactloop run --skills DIR``
loads them only with ``--trust-skills``. Nothing here runs a skill's scripts: a model that
wants one run asks the ``bash`` tool, whose sandbox holds it like any other command.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import UsageError
from reactloop.messages import Message
from reactloop.support import json_decode
from reactloop.tools.base import Tool

if TYPE_CHECKING:
    from reactloop.journal.event_value import JournalEvent

ACTIVATE_SKILL = "activate_skill"
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_OPTIONAL = {"license", "compatibility", "metadata", "allowed-tools"}
_MAX_FILES = 50

Emit = Callable[["JournalEvent"], None]  # the run's ``Emitter.emit``


@dataclass(frozen=True, kw_only=True)
class Skill:
    """One loaded skill: its frontmatter's fields, its body, and its folder."""

    name: str
    description: str
    body: str
    folder: Path
    fields: dict[str, Any] = field(default_factory=dict, compare=False)
    text: str = field(default="", compare=False, repr=False)  # the SKILL.md as read


def load_skills(folders: Iterable[str | Path]) -> list[Skill]:
    """The skills of ``folders``: each ``*/SKILL.md`` beneath each one (a folder that is itself
    a skill counts too), sorted by name; a ``UsageError`` for a bad one or a name twice."""
    found: dict[str, Skill] = {}
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise UsageError(f"skills folder {folder} not found")
        files = [folder / "SKILL.md"] if (folder / "SKILL.md").is_file() else []
        for path in [*files, *sorted(folder.glob("*/SKILL.md"))]:
            skill = read_skill(path)
            if skill.name in found:
                raise UsageError(f"{path}: a skill named {skill.name!r} is loaded already")
            found[skill.name] = skill
    return [found[name] for name in sorted(found)]


def read_skill(path: Path) -> Skill:
    """One ``SKILL.md``, checked; a one-line ``UsageError`` naming the file otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    fields, body = _split(text, path)
    problem = _problem(fields, path.parent.name)
    if problem is not None:
        raise UsageError(f"{path}: {problem}")
    name, description = str(fields["name"]), str(fields["description"])
    folder = path.parent
    return Skill(
        name=name, description=description, body=body, folder=folder, fields=fields, text=text
    )


def _problem(fields: dict[str, Any], folder: str) -> str | None:
    """The first mistake of a frontmatter (agentskills.io's rules), or None."""
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not name:
        return "the frontmatter needs a name"
    if len(name) > 64 or not _NAME.match(name):
        return f"name {name!r} must be 1-64 lowercase letters, digits and single hyphens"
    if name != folder:
        return f"name {name!r} must be the folder's name, {folder!r}"
    if not isinstance(description, str) or not 1 <= len(description) <= 1024:
        return "the frontmatter needs a description (1-1024 characters)"
    unknown = sorted(set(fields) - _OPTIONAL - {"name", "description"})
    if unknown:
        known = ", ".join(["name", "description", *sorted(_OPTIONAL)])
        return f"unknown field {unknown[0]!r} (known: {known})"
    if len(str(fields.get("compatibility", ""))) > 500:
        return "compatibility must be at most 500 characters"
    if not isinstance(fields.get("metadata", {}), dict):
        return "metadata must be a map of strings"
    return None


def _split(text: str, path: Path) -> tuple[dict[str, Any], str]:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise UsageError(f"{path}: SKILL.md must start with a --- frontmatter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise UsageError(f"{path}: the frontmatter has no closing ---") from None
    fields: dict[str, Any] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.strip().partition(":")
        if not sep or not key:
            raise UsageError(f"{path}: line {number} is not 'key: value'")
        if line[0] in " \t" and current is not None:
            current[key.strip()] = _scalar(value)
        elif value.strip():
            fields[key.strip()], current = _scalar(value), None
        else:
            current = fields[key.strip()] = {}
    return fields, "\n".join(lines[end + 1 :]).strip()


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def prompt(skills: Sequence[Skill]) -> str:
    """The system prompt's part: each skill's name and description, and how to load one."""
    lines = [f"- {s.name}: {s.description}" for s in skills]
    return (
        "Skills you can use (call activate_skill with a skill's name to get its full "
        "instructions before you follow it):\n" + "\n".join(lines)
    )


class Skills:
    """A run's skills: which are activated, the ``activate_skill`` tool, the journal's emit."""

    def __init__(self, skills: Sequence[Skill], emit: Emit | None = None) -> None:
        self.by_name = {s.name: s for s in skills}
        self.activated: set[str] = set()
        self.emit = emit
        self._lock = threading.Lock()
        self.tool = self._tool()

    def for_run(self) -> Skills:
        return Skills(list(self.by_name.values()))

    def restore(self, names: Iterable[str]) -> None:
        """Mark ``names`` activated (a resumed run's, rebuilt from its journal)."""
        with self._lock:
            self.activated.update(n for n in names if n in self.by_name)

    def activate(self, name: str) -> dict[str, Any]:
        skill = self.by_name.get(name)
        if skill is None:
            raise ValueError(f"no skill is named {name!r}; known: {', '.join(self.by_name)}")
        with self._lock:
            again = name in self.activated
            self.activated.add(name)
        if self.emit is not None:
            from reactloop.journal.schema import SkillActivationEvent  # loads with the run

            self.emit(SkillActivationEvent(name=name, again=again, folder=str(skill.folder)))
        if again:
            return {"skill": name, "note": "already active: its instructions are above"}
        files = sorted(
            str(p.relative_to(skill.folder))
            for p in skill.folder.rglob("*")
            if p.is_file() and p.name != "SKILL.md"
        )
        return {  # the body last: a loop guard's repeat notice quotes only the head
            "skill": name,
            "folder": str(skill.folder),
            "files": files[:_MAX_FILES],
            "instructions": skill.body,
        }

    def activated_in(self, messages: Iterable[Message]) -> list[tuple[str, str]]:
        """The name and body of each skill an ``activate_skill`` call in ``messages``
        activated (its result ok), once each, in order: what a compaction keeps."""
        messages = list(messages)
        asked = {c.id: c.arguments for m in messages for c in m.tool_calls}
        found: dict[str, str] = {}
        for message in messages:
            if message.name == ACTIVATE_SKILL and message.content.startswith('{"ok": true'):
                name = _asked_name(asked.get(message.tool_call_id or "", ""))
                if name in self.by_name:
                    found.setdefault(name, self.by_name[name].body)
        return list(found.items())

    def _tool(self) -> Tool:
        names = list(self.by_name)
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "the skill's name"}
            },
            "required": ["name"],
            "additionalProperties": False,
        }
        description = "Load a skill's full instructions (the skills are listed in the prompt)."
        return Tool.from_schema(
            ACTIVATE_SKILL,
            description,
            schema,
            lambda name: self.activate(name),
            read_only=True,
            bounded=True,
            strict=False,
        )


def _asked_name(arguments: str) -> str:
    """The ``name`` an ``activate_skill`` call asked for, or ``""``."""
    try:
        value = json_decode.safe_loads(arguments)
    except json_decode.JSONRefused:
        return ""
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else ""


def skills_for(tools: dict[str, Tool], skills: Sequence[Skill]) -> Skills | None:
    """The skills of a toolbox's ``tools`` (``activate_skill`` added to them), or None."""
    if not skills:
        return None
    if ACTIVATE_SKILL in tools:
        raise ValueError(f"a tool is named {ACTIVATE_SKILL!r}, as the skills' own")
    made = Skills(skills)
    tools[ACTIVATE_SKILL] = made.tool
    return made


def trusted_skills(folders: Sequence[str | Path], trusted: bool) -> list[Skill]:
    """The skills of ``--skills`` folders; refused in one line unless ``--trust-skills`` says
    the user trusts them (a skill's body is instructions the model follows)."""
    if folders and not trusted:
        raise UsageError(
            f"the skills in {', '.join(map(str, folders))} are instructions for the model from "
            "whoever wrote them: read them, then pass --trust-skills to load them"
        )
    return load_skills(folders)


def digests(skills: Iterable[Skill]) -> dict[str, str]:
    """Each skill's SHA-256 over its ``SKILL.md`` as read (what a run trusted)."""
    import hashlib

    return {s.name: hashlib.sha256(s.text.encode("utf-8")).hexdigest() for s in skills}


def recorded_skills(config: Mapping[str, Any]) -> list[Skill]:
    """The skills a CLI run trusted (``run_start``'s config ``skills``), loaded again for
    ``reactloop resume``; a ``UsageError`` when one is not what the run trusted (its
    ``SKILL.md`` changed, or it is new): trust is given to a text, not to a folder."""
    folders = config.get("skills")
    if not isinstance(folders, list):
        return []
    loaded = load_skills(str(folder) for folder in folders)
    trusted = config.get("skill_digests")
    for name, digest in digests(loaded).items():
        if not isinstance(trusted, dict) or trusted.get(name) != digest:
            raise UsageError(
                f"skill {name!r} is not the one the run trusted (its SKILL.md changed)"
            )
    return loaded
