"""``reactloop eval``: a ladder of models on a suite of tasks, repeated, with pass^k and the
protocol-health rates, on one machine or a Ray cluster (docs/evaluation.md).

```python
from pathlib import Path

from reactloop.eval import EvalConfig, Rung, run_eval

rungs = (Rung(label="smollm2", spec="local:smollm2-135m", protocols=("native", "text")),)
outcome = run_eval(EvalConfig(suite="arithmetic", rungs=rungs, out=Path("eval-out"), repeats=3))
print(outcome.out / "report.md")
```

Sub-packages, in reading order (each ``__init__`` lists its files):

- ``tasks``: what an eval asks (tasks, their checks, the suites, their tools)
- ``records``: what it keeps (each episode's record, protocol health, the store, the metrics)
- ``report``: what it shows (the tables, report.md, index.html, the charts)
- ``run``: how it runs (episodes planned, scheduled in process, in worker processes or on
  Ray, continued by ``--resume``; ``run_eval``)
"""

from typing import TYPE_CHECKING

from reactloop.support import lazy_names

if TYPE_CHECKING:  # the names loaded on first use, below, as type checkers see them
    from reactloop.eval.records.metrics import (
        mcnemar_exact,
        pass_at_k,
        pass_hat_k,
        wilson_interval,
    )
    from reactloop.eval.records.record import EpisodeRecord, EpisodeRun, Resumed
    from reactloop.eval.run.episode import run_episode
    from reactloop.eval.run.ladder import load_models_file, rungs_from_specs
    from reactloop.eval.run.plan import EvalConfig
    from reactloop.eval.run.runner import EvalOutcome, run_eval
    from reactloop.eval.run.spec import EpisodeSpec, Rung
    from reactloop.eval.tasks.suites import SUITES, load_suite
    from reactloop.eval.tasks.tasks import Task, check_answer, load_tasks

# Each name imported from its module when first asked for (PEP 562), so that a process that
# imports one module of the package (the report's child, a worker) does not import them all.
_LAZY = {
    "mcnemar_exact": "reactloop.eval.records.metrics",
    "pass_at_k": "reactloop.eval.records.metrics",
    "pass_hat_k": "reactloop.eval.records.metrics",
    "wilson_interval": "reactloop.eval.records.metrics",
    "EpisodeRecord": "reactloop.eval.records.record",
    "EpisodeRun": "reactloop.eval.records.record",
    "Resumed": "reactloop.eval.records.record",
    "run_episode": "reactloop.eval.run.episode",
    "load_models_file": "reactloop.eval.run.ladder",
    "rungs_from_specs": "reactloop.eval.run.ladder",
    "EvalConfig": "reactloop.eval.run.plan",
    "EvalOutcome": "reactloop.eval.run.runner",
    "run_eval": "reactloop.eval.run.runner",
    "EpisodeSpec": "reactloop.eval.run.spec",
    "Rung": "reactloop.eval.run.spec",
    "SUITES": "reactloop.eval.tasks.suites",
    "load_suite": "reactloop.eval.tasks.suites",
    "Task": "reactloop.eval.tasks.tasks",
    "check_answer": "reactloop.eval.tasks.tasks",
    "load_tasks": "reactloop.eval.tasks.tasks",
}

__getattr__ = lazy_names.lazy_getattr(__name__, _LAZY)

__all__ = [
    "SUITES",
    "EpisodeRecord",
    "EpisodeRun",
    "EpisodeSpec",
    "EvalConfig",
    "EvalOutcome",
    "Resumed",
    "Rung",
    "Task",
    "check_answer",
    "load_models_file",
    "load_suite",
    "load_tasks",
    "mcnemar_exact",
    "pass_at_k",
    "pass_hat_k",
    "run_episode",
    "run_eval",
    "rungs_from_specs",
    "wilson_interval",
]
