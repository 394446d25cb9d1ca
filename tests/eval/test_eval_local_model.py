"""One short eval on the embedded SmolLM2 (slow: it loads a real model in a child process)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from reactloop.eval import EvalConfig, load_suite, run_eval, rungs_from_specs


@pytest.mark.slow
def test_a_real_local_model_gives_scored_episodes_with_per_step_timings(tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        if os.environ.get("REACTLOOP_REQUIRE_SLOW") == "1":
            pytest.fail("xllamacpp is not installed (pip install -e '.[local]')")
        pytest.skip("xllamacpp is not installed")
    rungs = tuple(rungs_from_specs(["local:smollm2-135m"], ("native", "text")))
    config = EvalConfig(
        suite="arithmetic",
        rungs=rungs,
        out=tmp_path / "out",
        repeats=1,
        tasks=tuple(load_suite("arithmetic")[:1]),
        seed=1,
        fsync=False,
    )
    outcome = run_eval(config)
    assert outcome.completed and len(outcome.records) == 2
    for record in outcome.records:
        assert record.status in ("passed", "failed") and record.run is not None, record.error
        run = record.run
        assert run.health["turns"] == run.model_calls == len(run.steps)
        assert all(step["seconds"] > 0 and step["input_tokens"] > 0 for step in run.steps)
    assert (tmp_path / "out" / "index.html").is_file()
