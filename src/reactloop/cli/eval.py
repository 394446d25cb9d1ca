"""``reactloop eval``: the model ladder on a suite, repeated; exit 0 when every episode ran,
130 when Ctrl-C stopped it (it says how to resume), 2 on a usage error."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from reactloop import Limits
from reactloop.errors import MissingDependency, UsageError
from reactloop.eval import EvalConfig, EvalOutcome, load_suite, run_eval
from reactloop.eval.report.summary import summarize
from reactloop.eval.run.cores import CONCURRENCY_PER_WORKER, EPISODES_PER_WORKER
from reactloop.eval.run.forkserver import reactloop_main
from reactloop.eval.run.ladder import load_models_file, parse_protocols, rungs_from_specs
from reactloop.eval.run.memory import collect_less

INTERRUPTED = 130


class EvalUsageError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"reactloop: error: {self.message}", err=True)


class WorkersType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.4 on
    """``auto`` (None: the rule of ``reactloop.eval.run.cores``) or a count from 1 to 256."""

    name = "N|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> int | None:
        if value is None or str(value).strip().lower() == "auto":
            return None
        try:
            count = int(value)
        except ValueError:
            count = 0
        if not 1 <= count <= 256:
            self.fail(f"{value!r} is not auto or a count from 1 to 256", param, ctx)
        return count


@click.command("eval")
@click.option("--suite", required=True, help="arithmetic, notes, bet, coding, or FILE.jsonl")
@click.option("--model", "models", multiple=True, metavar="SPEC", help="a rung (repeatable)")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), help="TOML or JSON")
@click.option("--base-url", help="for every --model rung (a models file names its own)")
@click.option(
    "--repeats",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="K: episodes of each task per rung and protocol (pass^K needs all K to pass)",
)
@click.option(
    "--protocol",
    "protocols",
    default="native",
    show_default=True,
    help="native, text, or both comma-separated (native,text): each rung runs each one",
)
@click.option("--concurrency", type=click.IntRange(1, 4096), default=4, show_default=True)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="results folder")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option(
    "--workers",
    type=WorkersType(),
    default="auto",
    show_default=True,
    help="local backend: worker processes sharing --concurrency; auto: one a usable core, as "
    f"many as the eval can use (one process below {2 * EPISODES_PER_WORKER} episodes to run "
    f"or a concurrency of {2 * CONCURRENCY_PER_WORKER})",
)
@click.option("--ray-address", help="an existing Ray cluster (default: start a local Ray)")
@click.option(
    "--ray-actors",
    type=click.IntRange(1, 1024),
    help="Ray actors sharing --concurrency (default: one per node, at least 2)",
)
@click.option("--resume", is_flag=True, help="keep recorded episodes, rerun errored ones")
@click.option("--seed", type=int, help="repeat r runs with seed N + r")
@click.option("--temperature", type=click.FloatRange(0, 2))
@click.option("--max-steps", type=click.IntRange(1, 1000), default=8, show_default=True)
@click.option("--max-tool-calls", type=click.IntRange(1, 1000), default=16, show_default=True)
@click.option("--max-seconds", type=click.FloatRange(0.1, 86400), default=300, show_default=True)
@click.option(
    "--episode-seconds",
    type=click.FloatRange(0.1, 86400),
    help="an episode still going after S seconds is stalled: stopped, errored, rerun by --resume",
)
@click.option("--limit", type=click.IntRange(1), help="only the first N tasks of the suite")
@click.option("--progress/--no-progress", default=None, help="default: when stderr is a terminal")
def eval_command(**options: Any) -> None:
    """Run a ladder of models on a suite, K times each; write the report into --out.

    Exit 0 when every episode ran (failed episodes are results, not errors), 2 on a usage
    error, 130 when interrupted (Ctrl-C; it says how to resume).
    """
    try:
        outcome = _run(options)
    except (UsageError, MissingDependency) as exc:
        raise EvalUsageError(str(exc)) from None
    for row in _summary_lines(outcome):
        click.echo(row)
    if outcome.continued or outcome.restarted:
        click.echo(
            f"resume: {outcome.continued} episodes continued from their journals, "
            f"{outcome.restarted} started again (their journals set aside)",
            err=True,
        )
    click.echo(f"report: {outcome.out / 'report.md'} · {outcome.out / 'index.html'}", err=True)
    if not outcome.completed:
        click.echo(
            f"interrupted: {len(outcome.records)} episodes recorded in {outcome.out}; "
            f"resume with: {_resume_command()}",
            err=True,
        )
        sys.exit(INTERRUPTED)


def _run(options: dict[str, Any]) -> EvalOutcome:
    protocols = parse_protocols(options["protocols"])
    rungs = rungs_from_specs(options["models"], protocols, options["base_url"])
    if options["models_file"]:
        rungs += load_models_file(options["models_file"], protocols)
    tasks = load_suite(options["suite"])
    if options["limit"]:
        tasks = tasks[: options["limit"]]
    progress = options["progress"]
    config = EvalConfig(
        suite=options["suite"],
        rungs=tuple(rungs),
        out=Path(options["out"]),
        repeats=options["repeats"],
        concurrency=options["concurrency"],
        backend=options["backend"],
        ray_address=options["ray_address"],
        ray_actors=options["ray_actors"],
        workers=options["workers"],
        resume=options["resume"],
        seed=options["seed"],
        temperature=options["temperature"],
        limits=Limits(
            max_model_calls=options["max_steps"],
            max_tool_calls=options["max_tool_calls"],
            max_seconds=options["max_seconds"],
        ),
        episode_seconds=options["episode_seconds"],
        tasks=tuple(tasks),
        progress=sys.stderr.isatty() if progress is None else progress,
    )
    if reactloop_main() is not None:  # the command's own process (not a test's, a program's)
        collect_less()  # it runs the episodes when there are no workers
    return run_eval(config)


def _summary_lines(outcome: EvalOutcome) -> list[str]:
    rows = outcome.summary  # the report's: no record read again
    if rows is None:
        rows = summarize(outcome.records, k=outcome.repeats)
    lines = []
    for row in rows:
        success = "–" if row["success"] is None else f"{row['success']:.1%}"
        hat = "–" if row["pass_hat_k"] is None else f"{row['pass_hat_k']:.1%}"
        lines.append(
            f"{row['rung']} · {row['protocol']}: success {success} "
            f"[{row['ci_low']:.1%}–{row['ci_high']:.1%}], pass^{row['k']} {hat}, "
            f"{row['passed']} passed, {row['failed']} failed, {row['errored']} errored"
        )
    return lines


def _resume_command() -> str:
    args = sys.argv[1:]
    if "eval" not in args:
        return "the same command with --resume"
    args = args[args.index("eval") :]
    return shlex.join(["reactloop", *args, *([] if "--resume" in args else ["--resume"])])
