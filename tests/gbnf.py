"""A GBNF recogniser for the grammar tests: does a grammar let the model write exactly this text?

llama.cpp's grammar sampler works on code points: a text is allowed when the root rule derives
it whole. This reads the GBNF llama.cpp reads (rules ``name ::= …``, literals with ``\\n``,
``\\xHH``, ``\\uHHHH`` escapes, character classes with ranges and ``^``, ``.``, groups,
alternatives, ``* + ?`` and ``{m}``, ``{m,}``, ``{m,n}``, ``#`` comments) and answers by
memoised descent: each (node, position) gives the set of positions where the node can end.
GBNF has no left recursion (llama.cpp refuses it too), so the descent ends. That llama.cpp
itself parses a grammar is checked against the real server (``test_local_model_grammar.py``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

Node = tuple  # ("lit", text) | ("class", negated, ranges) | ("any",) | ("ref", name) |
# ("seq", nodes) | ("alt", nodes) | ("rep", node, least, most)

ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}
RULE_START = re.compile(r"^([a-zA-Z0-9-]+)\s*::=", re.MULTILINE)


@dataclass
class Reader:
    text: str
    at: int = 0
    rules: dict[str, Node] = field(default_factory=dict)

    def peek(self) -> str:
        self.skip()
        return self.text[self.at] if self.at < len(self.text) else ""

    def skip(self) -> None:
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "#":
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end
            elif char.isspace():
                self.at += 1
            else:
                return

    def char(self) -> str:
        char = self.text[self.at]
        self.at += 1
        if char != "\\":
            return char
        kind = self.text[self.at]
        self.at += 1
        if kind in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[kind]
            value = chr(int(self.text[self.at : self.at + width], 16))
            self.at += width
            return value
        return ESCAPES[kind]


def parse(grammar: str) -> dict[str, Node]:
    """The rules of ``grammar``, each parsed into a node."""
    starts = list(RULE_START.finditer(grammar))
    rules: dict[str, Node] = {}
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(grammar)
        reader = Reader(grammar[start.end() : end])
        rules[start.group(1)] = _alternatives(reader)
        if reader.peek():
            raise ValueError(f"rule {start.group(1)}: unexpected {reader.peek()!r}")
    return rules


def _alternatives(reader: Reader) -> Node:
    options = [_sequence(reader)]
    while reader.peek() == "|":
        reader.at += 1
        options.append(_sequence(reader))
    return options[0] if len(options) == 1 else ("alt", tuple(options))


def _sequence(reader: Reader) -> Node:
    items: list[Node] = []
    while reader.peek() not in ("", "|", ")"):
        items.append(_repeated(reader, _atom(reader)))
    return ("seq", tuple(items))


def _atom(reader: Reader) -> Node:
    head = reader.peek()
    if head == "(":
        reader.at += 1
        inner = _alternatives(reader)
        if reader.peek() != ")":
            raise ValueError("unclosed group")
        reader.at += 1
        return inner
    if head == '"':
        reader.at += 1
        chars = []
        while reader.text[reader.at] != '"':
            chars.append(reader.char())
        reader.at += 1
        return ("lit", "".join(chars))
    if head == "[":
        return _char_class(reader)
    if head == ".":
        reader.at += 1
        return ("any",)
    name = re.match(r"[a-zA-Z0-9-]+", reader.text[reader.at :])
    if name is None:
        raise ValueError(f"unexpected {head!r}")
    reader.at += name.end()
    return ("ref", name.group())


def _char_class(reader: Reader) -> Node:
    reader.at += 1
    negated = reader.text[reader.at] == "^"
    reader.at += negated
    ranges = []
    while reader.text[reader.at] != "]":
        low = reader.char()
        high = low
        if reader.text[reader.at] == "-" and reader.text[reader.at + 1] != "]":
            reader.at += 1
            high = reader.char()
        ranges.append((low, high))
    reader.at += 1
    return ("class", negated, tuple(ranges))


def _repeated(reader: Reader, node: Node) -> Node:
    head = reader.text[reader.at] if reader.at < len(reader.text) else ""
    bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(head)
    if bounds is not None:
        reader.at += 1
        return ("rep", node, *bounds)
    counted = re.match(r"\{(\d+)(,(\d*))?\}", reader.text[reader.at :])
    if counted is None:
        return node
    reader.at += counted.end()
    least = int(counted.group(1))
    most = (
        least if counted.group(2) is None else (int(counted.group(3)) if counted.group(3) else None)
    )
    return ("rep", node, least, most)


def accepts(grammar: str, text: str) -> bool:
    """Whether the root rule of ``grammar`` derives exactly ``text``."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 100_000))
    try:
        rules = parse(grammar)
        return len(text) in _Matcher(rules, text).ends(rules["root"], 0)
    finally:
        sys.setrecursionlimit(limit)


class _Matcher:
    def __init__(self, rules: dict[str, Node], text: str) -> None:
        self.rules = rules
        self.text = text
        self.memo: dict[tuple[int, int], frozenset[int]] = {}  # by id: nested tuples hash slowly

    def ends(self, node: Node, at: int) -> frozenset[int]:
        key = (id(node), at)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._ends(node, at)
        return found

    def _ends(self, node: Node, at: int) -> frozenset[int]:
        kind = node[0]
        if kind == "lit":
            return (
                frozenset({at + len(node[1])}) if self.text.startswith(node[1], at) else frozenset()
            )
        if kind in ("class", "any"):
            return (
                frozenset({at + 1})
                if at < len(self.text) and _in(node, self.text[at])
                else frozenset()
            )
        if kind == "ref":
            return self.ends(self.rules[node[1]], at)
        if kind == "alt":
            return frozenset().union(*(self.ends(option, at) for option in node[1]))
        if kind == "seq":
            positions = frozenset({at})
            for item in node[1]:
                positions = frozenset().union(*(self.ends(item, p) for p in positions))
            return positions
        return self._repeat(node[1], node[2], node[3], at)

    def _repeat(self, item: Node, least: int, most: int | None, at: int) -> frozenset[int]:
        found: set[int] = {at} if least == 0 else set()
        frontier, count = {at}, 0
        while frontier and (most is None or count < most):
            count += 1
            frontier = {end for p in frontier for end in self.ends(item, p) if end != p}
            if count >= least:
                found |= frontier
        return frozenset(found)


def _in(node: Node, char: str) -> bool:
    if node[0] == "any":
        return True
    inside = any(low <= char <= high for low, high in node[2])
    return inside != node[1]
