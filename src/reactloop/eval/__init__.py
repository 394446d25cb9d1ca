"""``reactloop eval``: a ladder of models on a suite of tasks, repeated, with pass^k and the
protocol-health rates, on one machine or a Ray cluster (docs/evaluation.md).

```python
from pathlib import Path

from reactloop.eval import EvalConfig, Rung, run_eval

rungs = (Rung(label="smollm2", spec="local:smollm2-135m", protocols=("native", "text")),)
outcome = run_eval(EvalConfig(suite="arithmetic", rungs=rungs, out=Path("eval-out"), repeats=3))
print(outcome.out / "report.md")
```

Modules: ``tasks`` (a task and its checks, JSONL suites; ``agent_specs``: its sub-agents),
``suites`` (the built-in suites),
``bet_tools`` and ``coding`` (their tools and workspaces), ``episode`` (one run, checked, as a
record; ``agent_tree``: a task's sub-agents run, and the tree scored as one agent),
``continued`` (an interrupted episode continued from its journal),
``health`` (protocol health from a run's events), ``store`` (atomic per-episode records,
resume), ``metrics`` (Wilson, pass@k, pass^k, McNemar), ``summary`` (the tables),
``backends``, ``process_backend`` and ``ray_backend`` (where episodes run, and stalled ones
given up; ``process_worker``: a worker process; ``pipes``: the pipes between the driver and its
workers, which cannot deadlock; ``ray_workspaces``: task folders sent to the Ray actors;
``ray_journals``: the journals between the driver and the actors), ``cores`` (how many
worker processes: the usable cores, the rule),
``throttle`` (adaptive concurrency per endpoint), ``report``, ``html``,
``health_table`` (the protocol-health table of both), ``charts``, ``report_process`` (pages
and charts in a child process),
``ladder`` (rungs from options or a models file), ``runner`` (``run_eval``), ``oracle`` (a
deterministic model for tests and benchmarks).
"""

from reactloop.eval.episode import EpisodeSpec, Rung, run_episode
from reactloop.eval.ladder import load_models_file, rungs_from_specs
from reactloop.eval.metrics import mcnemar_exact, pass_at_k, pass_hat_k, wilson_interval
from reactloop.eval.runner import EvalConfig, EvalOutcome, run_eval
from reactloop.eval.suites import SUITES, load_suite
from reactloop.eval.tasks import Task, check_answer, load_tasks

__all__ = [
    "SUITES",
    "EpisodeSpec",
    "EvalConfig",
    "EvalOutcome",
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
