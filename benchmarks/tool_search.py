"""Tool search on a big registry: tokens sent per request with and without it, and how often
the right tool is found.

    PYTHONPATH=src python benchmarks/tool_search.py

The suite (``tool_search_suite.py``): 225 tools in nine families and 64 tasks whose right
tool is known. Tokens: the tools as each adapter renders them (Chat Completions' ``tools``,
Anthropic's ``tools``, text ReAct's system prompt), in characters and in tokens estimated at
4 characters a token (reactloop's usage estimate; no tokenizer is loaded). With search, every
tool is deferred and a request carries the ``search_tools`` / ``call_tool`` pair; a search
adds its result (five schemas) once to the history. Finding: the first search is the task's
text, the second the task's short query (what a model types after a miss); a task counts as
found when the right tool is among a search's results (five per query). The baseline is a
plain keyword match (query words found in the name or description, most words first).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from reactloop.messages import ToolCall, ToolSpec
from reactloop.models.anthropic.request import render_tools as anthropic_tools
from reactloop.models.openai.request import render_tools as openai_tools
from reactloop.models.react.prompt import system_prompt
from reactloop.tools.search import MATCHES_PER_QUERY, SEARCH_TOOLS, deferred
from reactloop.tools.toolbox import Toolbox
from tool_search_suite import TASKS, suite_tools

RENDERINGS = {
    "Chat Completions tools": lambda specs: json.dumps(openai_tools(specs)),
    "Anthropic tools": lambda specs: json.dumps(anthropic_tools(specs)),
    "text ReAct system prompt": lambda specs: system_prompt(specs),
}


def sizes(all_specs: list[ToolSpec], sent: list[ToolSpec]) -> list[tuple[str, int, int]]:
    return [(label, len(r(all_specs)), len(r(sent))) for label, r in RENDERINGS.items()]


def keyword_top(tools: list[ToolSpec], query: str) -> list[str]:
    """The baseline: how many query words each tool's name or description contains."""
    terms = query.lower().split()
    scored = []
    for index, spec in enumerate(tools):
        text = f"{spec.name} {spec.description}".lower()
        hits = sum(term in text for term in terms)
        if hits:
            scored.append((-hits, index, spec.name))
    return [name for _, _, name in sorted(scored)[:MATCHES_PER_QUERY]]


def main() -> None:
    tools = [deferred(t) for t in suite_tools()]
    box = Toolbox(tools).for_run()
    assert box.search is not None
    all_specs = [t.spec for t in tools]
    print(f"{len(tools)} tools, {len(TASKS)} tasks\n")
    print("| rendering | without search | with search | per request saved |")
    print("|---|---:|---:|---:|")
    for label, without, with_search in sizes(all_specs, list(box.specs)):
        saved = 100 * (1 - with_search / without)
        print(
            f"| {label} | {without:,} chars (~{without // 4:,} tokens) "
            f"| {with_search:,} chars (~{with_search // 4:,} tokens) | {saved:.1f}% |"
        )
    results, first, second, top1, base1, base2, base_top1 = [], 0, 0, 0, 0, 0, 0
    for i, (task, query, right) in enumerate(TASKS):
        call = ToolCall(id=str(i), name=SEARCH_TOOLS, arguments=json.dumps({"queries": [task]}))
        found = box.execute(call)
        results.append(len(found.to_content()))
        names = [t["name"] for t in found.output["tools"]]
        again = box.search.index.find(query)
        first += right in names
        second += right in names or right in again
        top1 += bool(names) and names[0] == right
        naive = keyword_top(all_specs, task)
        base_top1 += bool(naive) and naive[0] == right
        base1 += right in naive
        base2 += right in naive or right in keyword_top(all_specs, query)
    n = len(TASKS)
    print(f"\nA search's result: ~{statistics.mean(results) / 4:,.0f} tokens on average (once).\n")
    print("| ranking | right tool first | found by search 1 | found within 2 searches |")
    print("|---|---:|---:|---:|")
    print(
        f"| BM25 (reactloop) | {top1}/{n} | {first}/{n} | {second}/{n} ({100 * second / n:.0f}%) |"
    )
    share = f"{base2}/{n} ({100 * base2 / n:.0f}%)"
    print(f"| plain keyword match | {base_top1}/{n} | {base1}/{n} | {share} |")


if __name__ == "__main__":
    main()
