"""Tool search: deferred tools reached through ``search_tools`` and ``call_tool``.

A toolbox with deferred tools (``Tool.defer``; or, when no tool says otherwise, all of them
once their schemas would take more than ``AUTO_SHARE`` of the context) sends the model its
other tools and one fixed pair the harness runs itself, on every protocol:

* ``search_tools(queries)`` ranks the deferred tools by BM25 over their name, description
  and parameter names (``reactloop.tools.bm25``), returns the best few with their schemas,
  and reveals them: each search is a ``tool_search`` journal event (its queries, the names
  each matched, the names it revealed), and the revealed set is the union of those events,
  which is how ``reactloop.resume`` rebuilds it;
* ``call_tool(name, arguments)`` calls a revealed tool: the call is prepared as a call of
  the real tool (its schema validates the arguments; the approver, the loop guard and the
  budget judge the real tool), only the id and the name in the history stay the model's.

The ``tools`` array the model gets never changes during a run, so a provider's prompt cache
(and a chat template's system prompt) survives a search. A deferred tool called, directly or
through ``call_tool``, before a search revealed it is refused with an observation that says
so; it never runs silently.

With the provider's own search (``native``: by default where the model's adapter has one and
its model supports it; ``Agent(tool_search="native")``: any model of such an adapter) there is
no pair: every tool is sent, the deferred ones marked so (``ModelRequest.deferred``), the
provider searches, and the searches its reply reports (``ModelTurn.tool_searches``) are
journaled and reveal the tools they loaded, as ours do.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from reactloop.messages import ServerToolSearch, ToolCall, ToolSpec
from reactloop.tools.base import Tool, make_tool
from reactloop.tools.bm25 import BM25, words
from reactloop.tools.prepared import PreparedCall, prepare

if TYPE_CHECKING:
    from reactloop.journal.event_value import JournalEvent

SEARCH_TOOLS = "search_tools"
CALL_TOOL = "call_tool"
SEARCH_MODES = ("auto", "own", "native")  # ``Agent(tool_search=...)``, ``--tool-search``
SEARCH_USED = "tool_search_used"  # run_start's config: the search a run had, and what it defers
AUTO_SHARE = 0.10  # of the context: deferred schemas beyond it turn search on by themselves
DEFAULT_CONTEXT_TOKENS = 128_000  # the context the share is of, when none is known
MATCHES_PER_QUERY = 5
CHARS_PER_TOKEN = 4  # the estimate used for schemas (JSON, mostly ASCII words)

Emit = Callable[["JournalEvent"], None]  # the run's ``Emitter.emit``


def one_at_a_time(emit: Emit) -> Emit:
    """``emit`` behind a lock: the read-only calls of a turn run on worker threads."""
    lock = threading.Lock()

    def serial(event: JournalEvent) -> None:
        with lock:
            emit(event)

    return serial


def schema_tokens(specs: Iterable[ToolSpec]) -> int:
    """An estimate of the tokens the specs take in a request (their JSON, 4 characters a
    token)."""
    chars = sum(len(json.dumps(spec.to_dict(), ensure_ascii=False)) for spec in specs)
    return chars // CHARS_PER_TOKEN


def deferred_names(tools: Mapping[str, Tool], context_tokens: int | None) -> list[str]:
    """The tools to defer: those marked ``defer=True``, and, when the schemas of those not
    marked ``defer=False`` would take more than ``AUTO_SHARE`` of ``context_tokens``
    (``DEFAULT_CONTEXT_TOKENS`` when None), those unmarked too."""
    marked = [n for n, t in tools.items() if t.defer is True]
    open_ = [n for n, t in tools.items() if t.defer is not False]
    budget = AUTO_SHARE * (context_tokens or DEFAULT_CONTEXT_TOKENS)
    if len(open_) > len(marked) and schema_tokens(tools[n].spec for n in open_) > budget:
        return open_
    return marked


class ToolIndex:
    """The deferred tools and their BM25 index (built once, shared by a toolbox's runs)."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self.tools = {t.name: t for t in tools}
        self.names = list(self.tools)
        self.bm25 = BM25([_document(t) for t in self.tools.values()])

    def find(self, query: str, limit: int = MATCHES_PER_QUERY) -> list[str]:
        """The names of the best tools for ``query``, best first."""
        return [self.names[i] for i, _ in self.bm25.top(words(query), limit)]


def _document(tool: Tool) -> list[str]:
    """A tool's words: its name twice (names say most), its description, its parameters'
    names and descriptions."""
    params = tool.parameters.get("properties") or {}
    text = [tool.name, tool.name, tool.description]
    for key, value in params.items() if isinstance(params, dict) else ():
        text.append(str(key))
        if isinstance(value, dict) and isinstance(value.get("description"), str):
            text.append(value["description"])
    return words(" ".join(text))


class ToolSearch:
    """One run's search: the index, the names revealed so far, the journal's ``emit``."""

    def __init__(self, index: ToolIndex, emit: Emit | None = None, *, native: bool = False):
        self.index = index
        self.revealed: set[str] = set()
        self.emit = emit
        self.native = native
        self._lock = threading.Lock()
        pair = (self._search_tool(), _call_tool())
        self.pair: tuple[Tool, ...] = () if native else pair

    def for_run(self) -> ToolSearch:
        return ToolSearch(self.index, native=self.native)

    def found_by_provider(self, searches: Iterable[ServerToolSearch]) -> None:
        """The searches a provider ran in a turn: each journaled (``by: provider``) and what
        it loaded revealed, as a search of ours is."""
        for search in searches:
            found = [name for name in search.found if name in self.index.tools]
            with self._lock:
                new = [name for name in found if name not in self.revealed]
                self.revealed.update(found)
            if self.emit is not None:
                from reactloop.journal.schema import ToolSearchEvent  # loads with the run

                self.emit(
                    ToolSearchEvent(
                        queries=[search.query], matches=[list(search.found)], revealed=new,
                        by="provider", error=search.error,
                    )
                )  # fmt: skip

    def reveal(self, names: Iterable[str]) -> None:
        """Mark ``names`` found (a resumed run's, rebuilt from its ``tool_search`` events)."""
        with self._lock:
            self.revealed.update(n for n in names if n in self.index.tools)

    def search(self, queries: list[str]) -> dict[str, Any]:
        """The ``search_tools`` tool: the best tools for each query, with their schemas."""
        per_query = [self.index.find(q) for q in queries]
        found = list(dict.fromkeys(name for names in per_query for name in names))
        with self._lock:
            new = [name for name in found if name not in self.revealed]
            self.revealed.update(found)
        if self.emit is not None:
            from reactloop.journal.schema import ToolSearchEvent  # loads with the run

            self.emit(ToolSearchEvent(queries=list(queries), matches=per_query, revealed=new))
        tools = [self.index.tools[name].spec.to_dict() for name in found]
        if not tools:
            return {"tools": [], "note": "no tool matched; try other words"}
        return {"tools": tools, "call_with": f"{CALL_TOOL}(name, arguments)"}

    def prepare(self, call: ToolCall, tools: Mapping[str, Tool], unknown: str) -> PreparedCall:
        """``call`` prepared as the toolbox does, with the deferred tools' rules."""
        if call.name == CALL_TOOL and not self.native:
            return self._prepare_call_tool(call, tools)
        if call.name in self.index.tools and call.name not in self.revealed:
            return _refusal(call, self._hidden(call.name))
        tool = tools.get(call.name)
        finder = "the tool search" if self.native else SEARCH_TOOLS
        hint = f"{unknown}; {finder} finds the deferred ones"
        return prepare(call, tool, hint if tool is None else "")

    def _prepare_call_tool(self, call: ToolCall, tools: Mapping[str, Tool]) -> PreparedCall:
        outer = prepare(call, self.pair[-1], "")
        if outer.values is None:
            return outer
        name, arguments = outer.values["name"], outer.values["arguments"] or {}
        tool = tools.get(name)
        if name in (SEARCH_TOOLS, CALL_TOOL) or tool is None:
            return _refusal(call, f"unknown tool {name!r}; use {SEARCH_TOOLS} to find one")
        if name in self.index.tools and name not in self.revealed:
            return _refusal(call, self._hidden(name))
        inner = dataclasses.replace(call, name=name, arguments=json.dumps(arguments))
        return prepare(inner, tool, "")._replace(call=call)

    def _hidden(self, name: str) -> str:
        if self.native:
            return f"tool {name!r} is deferred and was not found by a search yet: search first"
        return (
            f"tool {name!r} is deferred and was not found by a search yet: call "
            f"{SEARCH_TOOLS} first, then {CALL_TOOL} with the schema it shows"
        )

    def _search_tool(self) -> Tool:
        def search_tools(queries: list[str]) -> dict[str, Any]:
            """Find tools to use: each query (a few words of what you want to do) returns the
            best matching tools with their parameters; call one with call_tool.

            Args:
                queries: one to five short searches, like "create a github issue"
            """
            if not 1 <= len(queries) <= 5:
                raise ValueError("give one to five queries")
            return self.search(queries)

        return make_tool(search_tools, read_only=True, bounded=True)


def _call_tool() -> Tool:
    def call_tool(name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool that search_tools found, by its name, with arguments that match the
        parameters it showed.

        Args:
            name: the tool's exact name, as search_tools showed it
            arguments: the tool's arguments, a JSON object
        """
        raise RuntimeError("call_tool runs the tool it names")  # prepare dispatches it

    return make_tool(call_tool)


def _refusal(call: ToolCall, error: str) -> PreparedCall:
    return PreparedCall(call, None, None, None, error, f"{call.name}\x00{call.arguments.strip()}")


def search_for(
    tools: dict[str, Tool], context_tokens: int | None, *, native: bool = False
) -> ToolSearch | None:
    """The search of a toolbox's ``tools`` (the pair added to them, unless the provider
    searches: ``native``), or None when no tool is deferred."""
    deferred = deferred_names(tools, context_tokens)
    if not deferred:
        return None
    search = ToolSearch(ToolIndex(tools[name] for name in deferred), native=native)
    for pair_tool in search.pair:
        if pair_tool.name in tools:
            raise ValueError(f"a tool is named {pair_tool.name!r}, as tool search's own")
        tools[pair_tool.name] = pair_tool
    return search


def search_mode(asked: str, model: object, protocol: str) -> str:
    """The search a toolbox gets when ``asked`` (one of ``SEARCH_MODES``): ``native`` when
    tools are called natively (``protocol``, as resolved) and ``model``'s adapter has a search
    of its own (``native_tool_search``), for ``auto`` only if its model has it too
    (``model_has_tool_search``); else ``own``, the harness's pair."""
    if asked not in SEARCH_MODES:
        raise ValueError(f"tool_search must be auto, own or native, not {asked!r}")
    searches = protocol == "native" and getattr(model, "native_tool_search", 0) is True
    if asked == "auto":
        searches = searches and getattr(model, "model_has_tool_search", 0) is True
    return "native" if asked != "own" and searches else "own"


def defer_matching(tools: Iterable[Tool], patterns: Iterable[str]) -> list[Tool]:
    """``tools`` with ``defer=True`` on each whose name matches a shell-style pattern
    (``--defer-tools 'github_*'``)."""
    import fnmatch

    wanted = tuple(patterns)
    return [
        deferred(t) if any(fnmatch.fnmatchcase(t.name, p) for p in wanted) else t for t in tools
    ]


def deferred(tool: Tool, defer: bool | None = True) -> Tool:
    """A copy of ``tool`` with ``defer`` set (for every kind of tool: some build themselves
    without the dataclass constructor)."""
    made = copy.copy(tool)
    object.__setattr__(made, "defer", defer)
    return made


def defer_as_recorded(tools: Iterable[Tool], config: Mapping[str, Any]) -> list[Tool]:
    """``tools`` deferred as a CLI run's ``run_start`` config says (``defer_tools``: the
    patterns of ``--defer-tools``), for ``reactloop resume`` and ``replay``."""
    patterns = config.get("defer_tools")
    if not isinstance(patterns, list):
        return list(tools)
    return defer_matching(tools, [p for p in patterns if isinstance(p, str)])
