"""Constraints that make every step of a local model well-formed by construction.

Text protocol: a GBNF grammar built from the toolbox. A step is exactly::

    Thought: <one line>
    Action: <a real tool name or Finish>[<argument>]

A tool with one parameter (and ``Finish``) takes free text on one line, in which square brackets
must be balanced, so ``calculator[(2+3)*4]`` and ``lookup[a[1]]`` parse and the closing bracket
is never ambiguous. A tool with several parameters takes a one-line JSON object with exactly its
parameter names; a tool without parameters takes ``name[]``.

Native protocol: a JSON Schema (turned into GBNF by ``json_schema_gbnf``) for the union of
``{"thought": ..., "tool": NAME, "arguments": {...}}`` over the tools and
``{"thought": ..., "answer": "..."}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.messages import ToolSpec
from reactloop.models.base import ReactFormat
from reactloop.models.local.json_schema_gbnf import json_schema_to_gbnf

FINISH = "Finish"
MAX_THOUGHT_CHARS = 400
MAX_ARGUMENT_ITEMS = 160  # characters or bracketed groups: a runaway argument must end
MAX_STRING_CHARS = 200  # the same for JSON strings without a maxLength of their own

_JSON_RULES = r"""
json-value ::= json-string | json-number | json-object | json-array | "true" | "false" | "null"
json-object ::= "{" ws ( json-member ( ws "," ws json-member )* )? ws "}"
json-member ::= json-string ws ":" ws json-value
json-array ::= "[" ws ( json-value ( ws "," ws json-value )* )? ws "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x00-\x1F\x5B\x5D\x7F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
json-number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,3} )?
ws ::= " "?
"""


def grammar_tools(react: ReactFormat) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The tools a step may call: none when it may only finish; a name once, not ``Finish``."""
    if react.finish_only:
        return ()
    tools: dict[str, tuple[str, ...]] = {}
    for name, parameters in react.tools:
        if name and name != FINISH and name not in tools:
            tools[name] = parameters
    return tuple(tools.items())


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal; every character outside printable ASCII is escaped."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02X}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    out.append('"')
    return "".join(out)


def react_grammar(react: ReactFormat, *, max_thought_chars: int = MAX_THOUGHT_CHARS) -> str:
    """The GBNF grammar of one text ReAct step for these tools."""
    alternatives: list[str] = []
    rules: list[str] = []
    for index, (name, parameters) in enumerate(grammar_tools(react)):
        rule = f"tool-{index}"
        alternatives.append(rule)
        rules.append(f'{rule} ::= {gbnf_literal(name + "[")} {_argument_rule(parameters)} "]"')
    alternatives.append("finish")
    rules.append(f'finish ::= {gbnf_literal(FINISH + "[")} text-arg "]"')
    head = [
        'root ::= "Thought: " thought "\\nAction: " action',
        f"thought ::= [^\\n\\r\\t ] [^\\n\\r]{{0,{max_thought_chars - 1}}}",
        "action ::= " + " | ".join(alternatives),
        f"text-arg ::= arg-item{{1,{MAX_ARGUMENT_ITEMS}}}",
        'arg-item ::= [^\\n\\r\\x5B\\x5D] | "[" arg-item* "]"',
    ]
    return "\n".join([*head, *rules]) + "\n" + _JSON_RULES.lstrip("\n")


def _argument_rule(parameters: Sequence[str]) -> str:
    if not parameters:
        return ""
    if len(parameters) == 1:
        return "text-arg"
    members = ' ws "," ws '.join(
        f'{gbnf_literal(json.dumps(p, ensure_ascii=False))} ws ":" ws json-value'
        for p in parameters
    )
    return f'"{{" ws {members} ws "}}"'


def tool_call_schema(tools: Sequence[ToolSpec], tool_choice: str = "auto") -> dict[str, Any]:
    """The JSON Schema of one native step: a call to one of ``tools`` or an answer."""
    thought = {"type": "string", "maxLength": MAX_THOUGHT_CHARS}
    definitions: dict[str, Any] = {}
    options: list[dict[str, Any]] = []
    allowed = [t for t in tools if tool_choice in ("auto", "required", t.name)]
    if tool_choice == "none":
        allowed = []
    for index, spec in enumerate(allowed):
        arguments = _bound_strings(_hoist_definitions(spec.parameters, f"t{index}_", definitions))
        options.append(
            _object({"thought": thought, "tool": {"const": spec.name}, "arguments": arguments})
        )
    if tool_choice in ("auto", "none") or not options:
        options.append(
            _object(
                {
                    "thought": thought,
                    "answer": {"type": "string", "minLength": 1, "maxLength": MAX_STRING_CHARS},
                }
            )
        )
    schema: dict[str, Any] = options[0] if len(options) == 1 else {"anyOf": options}
    if definitions:
        schema = {**schema, "$defs": definitions}
    return schema


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _hoist_definitions(schema: Any, prefix: str, definitions: dict[str, Any]) -> Any:
    """Move a tool schema's ``$defs`` to the root under unique names, rewriting its refs."""
    if not isinstance(schema, dict) or not schema:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    local = schema.get("$defs") or {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    for name, definition in local.items():
        definitions[prefix + name] = _rewrite_refs(definition, prefix)
    return _rewrite_refs(body, prefix)


def _bound_strings(node: Any) -> Any:
    """Give every free string a maxLength, so a model that repeats itself must stop."""
    if isinstance(node, list):
        return [_bound_strings(item) for item in node]
    if not isinstance(node, dict):
        return node
    bounded = {key: _bound_strings(value) for key, value in node.items()}
    free = not ({"maxLength", "enum", "const", "pattern", "format"} & bounded.keys())
    if bounded.get("type") == "string" and free:
        bounded["maxLength"] = MAX_STRING_CHARS
    return bounded


def _rewrite_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        return {
            key: (
                value.replace("#/$defs/", "#/$defs/" + prefix, 1)
                if key == "$ref" and isinstance(value, str)
                else _rewrite_refs(value, prefix)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(item, prefix) for item in node]
    return node


def json_schema_grammar(schema: Mapping[str, Any]) -> str:
    """GBNF for a JSON Schema, by llama.cpp's Python converter (``json_schema_gbnf``)."""
    return json_schema_to_gbnf(json.dumps(schema))
