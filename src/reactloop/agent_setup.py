"""What an ``Agent`` makes of its arguments: its protocol, its toolbox (with its skills and who
searches its deferred tools), its instructions and how the model is asked for a typed answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from reactloop.limits import Limits
from reactloop.loop.notices import DEFAULT_INSTRUCTIONS
from reactloop.models.base import Model
from reactloop.output.spec import OutputSpec
from reactloop.tools.base import Tool
from reactloop.tools.search import search_mode
from reactloop.tools.skills import Skill, load_skills
from reactloop.tools.skills import prompt as skills_prompt
from reactloop.tools.toolbox import Toolbox

ProtocolName = Literal["auto", "native", "text"]


def agent_toolbox(
    tools: Toolbox | Iterable[Tool],
    model: Model,
    protocol: Literal["native", "text"],
    limits: Limits,
    skills: Sequence[Any],
    tool_search: Literal["auto", "own", "native"],
) -> Toolbox:
    """The agent's toolbox, its deferred tools searched by the provider where it is the
    model's (``search_mode``), by ``search_tools`` elsewhere (automatic search: a share of the
    context window)."""
    window = limits.context_tokens or getattr(model, "context_window", None)
    searched = search_mode(tool_search, model, protocol)  # native: where it is the model's
    toolbox = _toolbox(tools, window, skills, searched, tool_search)
    if toolbox.deferred and search_mode("native", model, protocol) != "native":
        raise ValueError("the toolbox defers to the provider's search, which this model lacks")
    return toolbox


def agent_instructions(
    instructions: str | None, native: bool, toolbox: Toolbox, output: OutputSpec | None
) -> str | None:
    """The system message: the one given (None: the native protocol's default), then the
    skills' list, then what a typed answer asks for."""
    if instructions is None and native:
        instructions = DEFAULT_INSTRUCTIONS
    if toolbox.skills is not None:  # their names and descriptions: a stable prefix
        listed = skills_prompt(list(toolbox.skills.by_name.values()))
        if listed not in (instructions or ""):  # a replay's recorded ones have it
            instructions = "\n\n".join(filter(None, (instructions, listed)))
    if output is not None:
        instructions = "\n\n".join(filter(None, (instructions, output.instructions())))
    return instructions


def _toolbox(
    tools: Toolbox | Iterable[Tool],
    context_tokens: int | None,
    skills: Sequence[Any],
    search: str,
    asked: str,
) -> Toolbox:
    """The agent's toolbox; ``skills``: folders to load (``*/SKILL.md``) or ``Skill`` values;
    ``search``: the one ``asked`` resolved to (a ``Toolbox`` given keeps its own, unless
    ``native`` was asked of it explicitly)."""
    if isinstance(tools, Toolbox):
        if skills:
            raise ValueError("with a Toolbox, give it the skills: Toolbox(tools, skills=...)")
        if asked == "native" == search and tools.search is not None and not tools.search.native:
            raise ValueError("with a Toolbox, give it the search: Toolbox(tools, tool_search=...)")
        return tools
    loaded = [s for s in skills if isinstance(s, Skill)]
    loaded += load_skills(s for s in skills if not isinstance(s, Skill))
    return Toolbox(tools, context_tokens=context_tokens, skills=loaded, tool_search=search)


def pick_protocol(model: Model, protocol: ProtocolName) -> Literal["native", "text"]:
    if protocol == "auto":
        return "native" if getattr(model, "native_tools", False) else "text"
    if protocol not in ("native", "text"):
        raise ValueError(f"protocol must be auto, native or text, not {protocol!r}")
    return protocol


def output_spec(output_type: Any, model: Model, native: bool) -> OutputSpec:
    """How the model is asked for a typed answer: a JSON reply constrained by the provider
    (``answers_json_schema``), the ``final_answer`` tool (other native models) or
    ``Finish[...]`` (text ReAct)."""
    by_schema = native and getattr(model, "answers_json_schema", False) is True
    return OutputSpec(output_type, tool=native, json_reply=by_schema)
