"""``reactloop eval`` as a command: a scripted ladder end to end, models files, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import AS_THE_COMMAND, invoke
from reactloop.errors import UsageError
from reactloop.eval.run.ladder import load_models_file, rungs_from_specs

ROOT = Path(__file__).resolve().parents[2]
TEA = ROOT / "examples" / "tea" / "script.json"


def test_a_scripted_ladder_runs_end_to_end_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        "--suite",
        "notes",
        "--model",
        f"scripted:{TEA}",
        "--limit",
        "1",
        "--repeats",
        "2",
        "--protocol",
        "text,native",
        "--out",
        str(out),
        "--no-progress",
    ]
    code, stdout, stderr = invoke("eval", *args)
    assert code == 0, stderr
    assert stdout.splitlines() == [
        "scripted:script.json · native: success 0.0% [0.0%–65.8%], pass^2 0.0%, "
        "0 passed, 2 failed, 0 errored",
        "scripted:script.json · text: success 100.0% [34.2%–100.0%], pass^2 100.0%, "
        "2 passed, 0 failed, 0 errored",
    ]
    assert f"report: {out / 'report.md'}" in stderr
    code, _, stderr = invoke("eval", *args)
    assert code == 2 and "add --resume" in stderr and "Traceback" not in stderr
    code, stdout, _ = invoke("eval", *args, "--resume")
    assert code == 0 and "2 passed" in stdout
    manifest = json.loads((out / "eval.json").read_text())
    assert manifest["tasks"] == ["notes-01"] and manifest["repeats"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suite", "nonesuch", "--model", "scripted:x"], "unknown suite"),
        (["--suite", "arithmetic"], "name at least one model"),
        (["--suite", "arithmetic", "--model", "nonesuch:x"], "unknown model spec"),
        (["--suite", "arithmetic", "--model", "local", "--protocol", "json"], "protocols must be"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, _, stderr = invoke("eval", *args, "--out", str(tmp_path / "o"))
    assert code == 2
    assert stderr.startswith("reactloop: error: ") and message in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_a_models_file_names_each_rung(tmp_path: Path) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(
        '[[rung]]\nlabel = "small"\nspec = "vllm:qwen-0.5b"\nbase_url = "http://127.0.0.1:8001/v1"\n'
        'api_key_env = "SMALL_KEY"\nprices = {input = 0.1, cached_input = 0.05, output = 0.4}\n'
        "concurrency = 4\n\n"
        '[[rung]]\nmodel = "vllm:qwen-7b"\nprotocols = ["text"]\nmax_retries = 0\n'
    )
    small, big = load_models_file(path, ("native",))
    assert (small.label, small.spec, small.endpoint, small.concurrency) == (
        "small",
        "vllm:qwen-0.5b",
        "http://127.0.0.1:8001/v1",
        4,
    )
    assert small.protocols == ("native",) and big.protocols == ("text",)
    assert big.label == "vllm:qwen-7b" and big.max_retries == 0
    usage = {"input_tokens": 1_000_000, "cached_tokens": 400_000, "output_tokens": 100_000}
    assert small.cost(usage) == pytest.approx(0.6 * 0.1 + 0.4 * 0.05 + 0.1 * 0.4)
    assert big.cost(usage) is None
    as_json = tmp_path / "ladder.json"
    as_json.write_text(json.dumps([{"spec": "openai:a"}, {"spec": "openai:b", "label": "b"}]))
    assert [r.label for r in load_models_file(as_json, ("native",))] == ["openai:a", "b"]


@pytest.mark.parametrize(
    "text",
    [
        "[[rung]]\nlabel = 1\n",
        '[[rung]]\nspec = "a"\ncolour = "red"\n',
        '[[rung]]\nspec = "a"\nconcurrency = 0\n',
        '[[rung]]\nspec = "a"\nprices = {input = -1}\n',
        '[[rung]]\nspec = "a"\n[[rung]]\nspec = "a"\n',
        "rung = 3\n",
        "not toml ===",
    ],
)
def test_a_bad_models_file_is_a_usage_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UsageError):
        load_models_file(path, ("native",))


def test_repeated_specs_get_distinct_labels() -> None:
    labels = [r.label for r in rungs_from_specs(["openai:a", "openai:a", "openai:b"], ("text",))]
    assert labels == ["openai:a", "openai:a#2", "openai:b"]


def test_the_progress_bar_counts_episodes_and_successes(tmp_path: Path) -> None:
    code, _, stderr = invoke(
        "eval",
        "--suite",
        "notes",
        "--model",
        f"scripted:{TEA}",
        "--limit",
        "2",
        "--repeats",
        "2",
        "--protocol",
        "text",
        "--out",
        str(tmp_path / "out"),
        "--progress",
    )
    assert code == 0
    assert "4/4 passed 2/4 (50%)" in stderr  # notes-02 has other keys: the script fails it


COLLECTOR_AFTER_EVAL = (
    AS_THE_COMMAND
    + """
import gc
from reactloop.cli import main as command
try:
    command(sys.argv[1:])
except SystemExit as exit:
    assert exit.code == 0, exit.code
print(gc.get_threshold(), gc.get_freeze_count() > 0)
"""
)


def test_the_command_s_own_process_collects_garbage_less_often_and_a_test_s_does_not(
    tmp_path: Path,
) -> None:
    """With no workers the command's process runs the episodes: it takes a worker's garbage
    collector (``eval/run/memory.collect_less``); run in another program's process (here
    click's test runner) it leaves that program's collector alone."""
    import gc
    import subprocess
    import sys

    from reactloop.eval.run.memory import GC_THRESHOLDS

    args = ["--suite", "notes", "--model", f"scripted:{TEA}", "--limit", "1", "--repeats", "1"]
    args += ["--no-progress", "--out"]
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR_AFTER_EVAL, "eval", *args, str(tmp_path / "own")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == f"{GC_THRESHOLDS} True"
    before = (gc.get_threshold(), gc.get_freeze_count())
    code, _, stderr = invoke("eval", *args, str(tmp_path / "here"))
    assert code == 0, stderr
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
