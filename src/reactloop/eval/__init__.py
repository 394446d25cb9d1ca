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

from reactloop.eval.records.metrics import mcnemar_exact, pass_at_k, pass_hat_k, wilson_interval
from reactloop.eval.records.record import EpisodeRecord, EpisodeRun, Resumed
from reactloop.eval.run.episode import run_episode
from reactloop.eval.run.ladder import load_models_file, rungs_from_specs
from reactloop.eval.run.plan import EvalConfig
from reactloop.eval.run.runner import EvalOutcome, run_eval
from reactloop.eval.run.spec import EpisodeSpec, Rung
from reactloop.eval.tasks.suites import SUITES, load_suite
from reactloop.eval.tasks.tasks import Task, check_answer, load_tasks

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
