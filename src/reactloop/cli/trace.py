"""``reactloop replay | view | cost``: commands that read a journal.

Exit codes: 0 success (``replay``: identical), 1 ``replay``
found a divergence, 2 a usage error (missing or unreadable journal, bad price table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reactloop.cli.exitcodes import USAGE_ERROR
from reactloop.cli.file_checks import check_input_file, check_output_file
from reactloop.errors import JournalError, UsageError
from reactloop.journal.reader import iter_events
from reactloop.journal.schema import ResumeEvent
from reactloop.replay import replay as run_replay
from reactloop.support.own_files import open_own_file
from reactloop.usage import PriceTable, RunUsage, UsageReport, usage_report
from reactloop.viewer import render_html

# What reading a journal or a price table may raise for bad input; all are usage errors.
# UnicodeDecodeError: a binary file given as a journal (the reader does not catch it yet).
_BAD_INPUT = (JournalError, UsageError, UnicodeDecodeError)


def _fail(message: str) -> NoReturn:
    click.echo(f"reactloop: error: {message}", err=True)
    raise SystemExit(USAGE_ERROR)


def _load_prices(path: Path | None) -> Any:
    if path is None:
        return None

    check_input_file(path, "price table")
    return PriceTable.from_file(path)


_TRACE = click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
_PRICES = click.option(
    "--prices",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON price table: {model: {input, cached_input, cache_write, output}} in $ per "
    "million tokens.",
)


@click.command()
@_TRACE
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--journal",
    "replay_journal",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the replay's own journal to this file.",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON notes file for lookup, instead of the recorded run's.",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for file tools and bash, instead of a temporary copy of the recorded one.",
)
@click.option(
    "--tools",
    help="The recorded run's tool families, given again: a replay runs no tool that writes, "
    "runs commands or reaches the network (files, bash, web) on the journal's word alone.",
)
@click.option("--read-only", is_flag=True, help="The recorded run was --read-only.")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "weak"]),
    help="How the bash tool isolates commands, as for run. [default: auto]",
)
@click.option(
    "--normalize",
    "patterns",
    multiple=True,
    metavar="REGEX",
    help="Also count text matching REGEX as equal in the tools' results (repeatable); "
    "durations, temporary paths, pids and object addresses always are.",
)
@click.option(
    "--no-default-normalize",
    is_flag=True,
    help="Compare durations, temporary paths, pids and addresses as they are.",
)
def replay(
    trace: Path,
    as_json: bool,
    replay_journal: Path | None,
    notes: Path | None,
    workspace: Path | None,
    tools: str | None,
    read_only: bool,
    sandbox: str | None,
    patterns: tuple[str, ...],
    no_default_normalize: bool,
) -> None:
    """Re-run TRACE's model turns against the real tools; report the first divergence.

    Tools run in the workspace as the recorded run started (restored from the journal's
    snapshot, or a copy checked against its digests), or in --workspace DIR (refused when it
    differs from that start); never in the recorded workspace when they write. What runs again
    is printed first (on stderr). Exit 0 when identical, 1 when the replay diverged, 2 on a
    usage error. The tools that write, run commands or reach the network run again only when
    --tools names them (and --read-only when the run was), as the run had them.
    """
    from reactloop.cli.resume_trust import check_replay_tools  # only replay needs it

    try:
        check_input_file(trace, "journal")
        check_replay_tools(trace, tools, read_only, sandbox or "auto")
        if notes is not None:
            check_input_file(notes, "notes file")
        if replay_journal is not None:
            check_output_file(replay_journal, "journal", (trace, notes))
        report = run_replay(
            trace,
            journal=replay_journal,
            notes=notes,
            workspace=workspace,
            sandbox=sandbox,
            announce=lambda plan: click.echo(plan.describe(), err=True),
            normalize=patterns,
            default_normalize=not no_default_normalize,
        )
    except _BAD_INPUT as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, default=str))
    else:
        click.echo(report.describe())
    raise SystemExit(0 if report.identical else 1)


@click.command()
@_TRACE
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the page (default: TRACE with .html).",
)
@_PRICES
def view(trace: Path, output: Path | None, prices: Path | None) -> None:
    """Write TRACE as one self-contained HTML page (no network needed to open it).

    Exit 0 when the page is written (its path is printed), 2 on a usage error (a missing or
    unreadable journal, a bad price table, a page that cannot be written).
    """

    target = output or trace.with_suffix(".html")
    try:
        check_input_file(trace, "journal")
        check_output_file(target, "page", (trace, prices))
        page = render_html(trace, prices=_load_prices(prices))
        with open_own_file(target, "wb") as file:  # never through a link at the target
            file.write(page.encode("utf-8"))
    except _BAD_INPUT as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write {target}: {exc.strerror}")
    click.echo(str(target))


@click.command()
@_TRACE
@_PRICES
@click.option("--json", "as_json", is_flag=True, help="Print the accounting as one JSON object.")
def cost(trace: Path, prices: Path | None, as_json: bool) -> None:
    """Tokens per step and per run, the quadratic cost model, money, the cache cost of each
    context compaction, and prefix warnings.

    Exit 0 with the report, 2 on a usage error (a missing or unreadable journal, a bad price
    table).
    """

    try:
        check_input_file(trace, "journal")
        report = usage_report(trace, prices=_load_prices(prices))
    except _BAD_INPUT as exc:
        _fail(str(exc))
    resumes = _resumes(trace)
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "resumes": resumes}, ensure_ascii=False))
        return
    _print_cost(report, priced=prices is not None)
    if resumes:  # one run all the same: its last stop is the run's
        whys = ", ".join(str(r["why"]) for r in resumes)
        click.echo(f"resumed {len(resumes)} time(s) (after: {whys}); the last stop is the run's")


def _resumes(trace: Path) -> list[dict[str, Any]]:
    """The ``resume`` events of the journal: where and why the run went on."""
    try:
        return [
            {"step": e.step, "why": e.why, "calls": e.calls}
            for e in iter_events(trace)
            if isinstance(e, ResumeEvent)
        ]
    except _BAD_INPUT:
        return []


def _print_cost(report: UsageReport, *, priced: bool) -> None:
    console = Console(emoji=False)
    incomplete = report.incomplete_line()
    if incomplete is not None:  # first: every figure below is short of the whole run
        console.print(Text(incomplete, style="yellow"), soft_wrap=True)
    console.print(_token_table(report))
    for line in _tree_lines(report) + _price_lines(report, priced=priced):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for issue in report.prefix_issues:
        console.print(
            Text.assemble((f"prefix changed at step {issue.step}: ", "yellow"), issue.message)
        )


def _token_table(report: UsageReport) -> Table:
    """Each model call's tokens, and the total (a conversation adds each call's turn)."""
    conversation = len(report.runs) > 1  # a ``reactloop chat`` journal: one run per turn
    table = Table(title=f"tokens — {report.model or 'unknown model'}")
    for column in ("call", *(("turn",) if conversation else ()), "step", *report.count_columns()):
        table.add_column(column, justify="right")
    for label, turn, step_number, usage in report.call_rows():
        counts = [f"{n:,}" for n in report.counts(usage)]
        table.add_row(label, *([str(turn)] if conversation else []), str(step_number), *counts)
    blank = ["", ""] if conversation else [""]
    table.add_row("total", *blank, *(f"{n:,}" for n in report.counts(report.total)), style="bold")
    return table


def _tree_lines(report: UsageReport) -> list[str]:
    """A conversation's turns, then the sub-agents (each with its own children's tokens)."""
    lines = [_turn_line(run) for run in report.runs] if len(report.runs) > 1 else []
    lines += [child.describe() for child in report.children]
    if report.children:
        tree = report.tree_total
        lines.append(
            f"tree total (this run and its sub-agents): input {tree.input_tokens:,} · "
            f"output {tree.output_tokens:,}"
        )
    return lines


def _price_lines(report: UsageReport, *, priced: bool) -> list[str]:
    """What the tokens are worth, how they were counted, and the compactions' cache cost."""
    lines = []
    if report.estimated:
        lines.append("the provider reported no usage: tokens estimated from text (~4 chars/token)")
    if report.cost_model is not None:
        lines.append(report.cost_model.describe())
    if report.money is not None:
        lines.append(f"cost: ${report.money:.6f} (price {report.price_name})")
    elif priced:
        lines.append(f"no price for model {report.model!r} in the price table")
    for compaction in report.compactions:  # an expected prefix change, with its cache cost
        lines.extend(compaction.describe())
    return lines


def _turn_line(run: RunUsage) -> str:
    """One turn of a conversation: its question, how it ended, its own tokens."""
    question = run.task if len(run.task) <= 60 else run.task[:59] + "…"
    ended = run.stop_reason or "interrupted (no stop event)"
    if run.forced:
        ended += ", forced"
    usage = run.usage
    return (
        f"turn {run.number} ({question!r}): {ended} · {run.calls} model calls · "
        f"input {usage.input_tokens:,} · output {usage.output_tokens:,}"
    )
