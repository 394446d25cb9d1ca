"""The ``bet`` suite rewards the weather bet's conditional chain and catches the greedy parallel
call; the ``coding`` suite checks a fix by running the tests in the episode's workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import call
from reactloop import FunctionModel, ModelRequest, ModelTurn, ScriptedModel
from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.report.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
BET = re.compile(r"bet my friend (\d+) (\w+) that it would rain in (\w+) today.*in (\w+)\?")


def _bet(request: ModelRequest) -> tuple[str, ...]:
    task = next(m.content or "" for m in request.messages if m.role == "user")
    found = BET.search(task)
    assert found is not None
    return found.groups()


def careful(request: ModelRequest) -> ModelTurn:
    """The bet's chain: the weather first; convert the stake only if it rained."""
    amount, source, city, target = _bet(request)
    results = [json.loads(m.content or "{}") for m in request.messages if m.role == "tool"]
    if not results:
        return ModelTurn(
            tool_calls=(call("get_current_weather", "get_current_weather-0", city=city),)
        )
    if len(results) == 1 and results[0]["output"]["precipitation_mm"] > 0:
        convert = call(
            "convert_currency",
            "convert_currency-1",
            amount=int(amount),
            from_currency=source,
            to_currency=target,
        )
        return ModelTurn(tool_calls=(convert,))
    if len(results) == 1:
        return ModelTurn(text="It did not rain, so you lost the bet.")
    return ModelTurn(text=f"You won: {results[1]['output']['converted_amount']} {target}.")


def greedy(request: ModelRequest) -> ModelTurn:
    """Asks for both calls at once, as parallel tool calling would."""
    amount, source, city, target = _bet(request)
    if not any(m.role == "tool" for m in request.messages):
        calls = (
            call("get_current_weather", "get_current_weather-0", city=city),
            call(
                "convert_currency",
                "convert_currency-1",
                amount=int(amount),
                from_currency=source,
                to_currency=target,
            ),
        )
        return ModelTurn(tool_calls=calls)
    converted = json.loads(request.messages[-1].content or "{}")["output"]["converted_amount"]
    return ModelTurn(text=f"If you win: {converted} {target}.")


def test_bet_suite_rewards_the_chain_and_catches_the_parallel_guess(tmp_path: Path) -> None:
    rungs = (
        Rung(label="careful", spec="f", factory=lambda _: FunctionModel(careful)),
        Rung(label="greedy", spec="f", factory=lambda _: FunctionModel(greedy)),
    )
    outcome = run_eval(
        EvalConfig(
            suite="bet", rungs=rungs, out=tmp_path / "out", repeats=1, report=False, fsync=False
        )
    )
    rows = {r["rung"]: r for r in summarize(outcome.records, 1)}
    tasks = load_suite("bet")
    dry = sum("convert_currency" in t.must_not_call for t in tasks)
    assert rows["careful"]["passed"] == len(tasks)
    assert rows["careful"]["n_parallel_turns"] == 0
    assert (rows["greedy"]["passed"], rows["greedy"]["failed"]) == (len(tasks) - dry, dry)
    assert rows["greedy"]["n_parallel_turns"] == len(tasks)
    failed = {r.check_detail for r in outcome.records if r.status == "failed"}
    assert failed == {"convert_currency was called"}


def test_coding_suite_checks_the_fix_by_running_the_tests(tmp_path: Path) -> None:
    script = ROOT / "examples" / "failing_test" / "script.json"
    rung = Rung(label="script", spec="scripted", factory=lambda _: ScriptedModel.from_file(script))
    tasks = tuple(load_suite("coding")[:2])  # the example, then a variant the script cannot fix
    outcome = run_eval(
        EvalConfig(
            suite="coding",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            tasks=tasks,
            report=False,
            fsync=False,
        )
    )
    records = {r.task_id: r for r in outcome.records}
    fixed = records["coding-01"]
    assert (fixed.status, (fixed.check_detail or "")[:6]) == ("passed", "exit 0")
    # the script's last turn expects "4 passed" (``expects``): on the variant it cannot fix,
    # the tests it ran fail, so it gives no answer its observations contradict
    unfixed = records["coding-02"]
    assert unfixed.status == "errored"
    assert "expects the last observation to contain '4 passed'" in (unfixed.error or "")
    assert (ROOT / "examples" / "failing_test" / "calc.py").read_text().count("+ 1)") == 1


def test_the_first_coding_task_is_the_example_as_it_stands_in_examples() -> None:
    """The package carries the example's files (a wheel has no ``examples/``): they must not
    drift apart from the ones a reader of the repository runs."""
    first = load_suite("coding")[0]
    example = ROOT / "examples" / "failing_test"
    for name in ("calc.py", "test_calc.py"):
        assert first.files[name] == (example / name).read_text(encoding="utf-8"), name
