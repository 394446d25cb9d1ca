"""An episode's cost is priced by the usage package (``Price.cost``), as ``reactloop cost``
prices the episode's journal: for an Anthropic rung with prompt caching, the tokens written to
the cache at ``cache_write``, those read from it at ``cached_input``. The episode runs against
the fake Anthropic server over HTTP; the money is computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from anthropic_cached_usage import FIRST, SECOND
from reactloop.errors import UsageError
from reactloop.eval import Rung, Task
from reactloop.eval.run.episode import run_episode
from reactloop.eval.run.ladder import load_models_file
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.models.anthropic import AnthropicModel
from reactloop.testing import FakeAnthropicServer, message, tool_use
from reactloop.usage import PriceTable, usage_report

RATES = {"input": 3.0, "cache_write": 3.75, "cached_input": 0.3, "output": 15.0}  # $ per 1M


def test_an_anthropic_episode_with_caching_prices_writes_and_reads(tmp_path: Path) -> None:
    script = [
        message(content=[tool_use("calculator", {"expression": "2+3"})], usage=FIRST),
        message("5", usage=SECOND),
    ]
    with FakeAnthropicServer(script) as server:
        rung = Rung(
            label="sonnet",
            spec="anthropic:claude-sonnet-4-6",
            prices=RATES,
            factory=lambda _: AnthropicModel(
                model="claude-sonnet-4-6", base_url=server.base_url, cache=True, max_retries=0
            ),
        )
        task = Task(id="add", task="What is 2 + 3?", expected=5)
        spec = EpisodeSpec(suite="cost", task=task, rung=rung, protocol="native", repeat=0)
        trace = tmp_path / "episode.jsonl"
        record = run_episode(spec, trace)
    assert all("cache_control" in str(r.json) for r in server.requests)
    assert record is not None and record.status == "passed", record
    assert record.run is not None
    usage = record.run.usage
    assert (usage["input_tokens"], usage["cached_tokens"]) == (2005 + 2037, 2000)
    assert (usage["cache_write_tokens"], usage["output_tokens"]) == (2030, 14)
    # 12 fresh input x $3 + 2,000 read x $0.30 + 2,030 written x $3.75 + 14 output x $15
    money = (12 * 3.0 + 2000 * 0.3 + 2030 * 3.75 + 14 * 15.0) / 1e6
    assert money == pytest.approx(0.0084585, abs=1e-15)
    assert record.run.cost == pytest.approx(money, abs=1e-15)
    report = usage_report(trace, prices=PriceTable.from_dict({"claude-sonnet-4*": RATES}))
    assert report.money == pytest.approx(record.run.cost, abs=1e-15)  # as ``reactloop cost``


def test_a_rung_prices_what_its_table_leaves_out_as_before() -> None:
    usage = {"input_tokens": 1_000_000, "cached_tokens": 250_000, "cache_write_tokens": 500_000}
    usage["output_tokens"] = 100_000
    # no cache_write rate: writes at the input rate; no cached_input: reads at it too
    assert Rung(label="a", spec="a", prices={"input": 2.0, "output": 10.0}).cost(
        usage
    ) == pytest.approx(2.0 + 1.0)
    with_reads = Rung(label="b", spec="b", prices={"input": 2.0, "cached_input": 0.5})
    assert with_reads.cost(usage) == pytest.approx(750_000 * 2e-6 + 250_000 * 0.5e-6)  # output free
    assert Rung(label="c", spec="c").cost(usage) is None


def test_a_models_file_prices_cache_writes_and_refuses_unknown_rates(tmp_path: Path) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(
        '[[rung]]\nlabel = "claude"\nspec = "anthropic:claude-haiku-4-5"\n'
        "prices = {input = 3.0, cached_input = 0.3, cache_write = 3.75, output = 15.0}\n"
    )
    (rung,) = load_models_file(path, ("native",))
    usage = {"input_tokens": 1_000_000, "cached_tokens": 200_000, "cache_write_tokens": 300_000}
    assert rung.cost(usage) == pytest.approx(0.5 * 3.0 + 0.2 * 0.3 + 0.3 * 3.75)
    path.write_text('[[rung]]\nspec = "anthropic:x"\nprices = {cache_read = 1.0}\n')
    with pytest.raises(UsageError, match=r"unknown price 'cache_read'.*cache_write"):
        load_models_file(path, ("native",))
