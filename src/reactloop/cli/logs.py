"""``reactloop logs``: the runs journaled in the runs folder (or the folders and files given),
newest first, one line each; ``--last`` shows the newest run's steps as the console did."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from reactloop.cli.console import ConsoleObserver
from reactloop.cli.record_place import RUNS_DIR_ENV, runs_dir
from reactloop.cli.run_log import Entry, RunSummary, Unreadable, journals, modified, read_entry
from reactloop.cli.usage_errors import CliError
from reactloop.errors import JournalError
from reactloop.journal.reader import iter_events
from reactloop.journal.schema import StopEvent

NO_RUN = 1
TASK_WIDTH = 40
MODEL_WIDTH = 24
HEADER = (
    f"{'WHEN':16}  {'MODEL':{MODEL_WIDTH}}  {'TASK':{TASK_WIDTH}}  {'STOP':22}  "
    f"{'CALLS':>7}  {'TOKENS':>7}  {'COST':>8}  {'TIME':>8}  JOURNAL"
)


@click.command("logs")
@click.argument("places", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-n", "count", type=click.IntRange(min=1), default=20, show_default=True,
    help="Show at most N runs.",
)  # fmt: skip
@click.option("-q", "query", help="Only runs whose task or answer contains TEXT (any case).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON array (with --last: one object)."
)
@click.option("--last", is_flag=True, help="Print the newest run: its steps, stops, answers.")
@click.option("--path", "path_only", is_flag=True, help="With --last: print its journal's path.")
def logs(
    places: tuple[Path, ...],
    count: int,
    query: str | None,
    as_json: bool,
    last: bool,
    path_only: bool,
) -> None:
    """List the runs in the runs folder, newest first, one line each.

    The runs folder is $REACTLOOP_RUNS_DIR, else ./runs; PLACES (journals, or folders searched
    for *.jsonl at any depth, e.g. an eval's --out) replace it. Each line: when the journal
    was last written, model, task, stop reason, model/tool calls, tokens, cost, seconds,
    journal; a file that is not a readable journal is a line saying why. A chat's line sums
    its turns. Exit 0, 1 when --last finds no run, 2 on a usage error.
    """
    if path_only and not last:
        raise CliError("--path goes with --last")
    found = _entries(places or _default_places(), query)
    if last:
        newest = next((e for e in found if isinstance(e, RunSummary)), None)
        if newest is None:
            click.echo("reactloop: no run found", err=True)
            sys.exit(NO_RUN)
        _print_last(newest, path_only=path_only, as_json=as_json)
        return
    shown = [entry for _, entry in zip(range(count), found, strict=False)]
    if as_json:
        click.echo(json.dumps([entry.to_json() for entry in shown], ensure_ascii=False))
        return
    if not shown:
        click.echo("reactloop: no runs found", err=True)
        return
    click.echo(HEADER)
    for entry in shown:
        click.echo(line(entry))


def _default_places() -> tuple[Path, ...]:
    folder = runs_dir()
    if not folder.is_dir():
        click.echo(f"reactloop: no runs folder {folder}/ yet (${RUNS_DIR_ENV} moves it)", err=True)
        return ()
    return (folder,)


def _entries(places: tuple[Path, ...], query: str | None) -> Iterator[Entry]:
    """Newest first, each journal read only when it is reached (``-n`` reads only N)."""
    for place in places:
        if not place.exists():
            raise CliError(f"no such journal or folder: {place}")
    paths = sorted(set(journals(places)), key=lambda p: (modified(p), str(p)), reverse=True)
    for path in paths:
        entry = read_entry(path)
        if query is None or (isinstance(entry, RunSummary) and entry.matches(query)):
            yield entry


def line(entry: Entry) -> str:
    when = datetime.fromtimestamp(entry.modified).strftime("%Y-%m-%d %H:%M")
    if isinstance(entry, Unreadable):
        return f"{when}  {entry.path}: unreadable: {entry.reason}"
    stop = entry.stop + (" (forced)" if entry.forced else "")
    calls = f"{entry.model_calls}/{entry.tool_calls}"
    tokens = "-" if entry.tokens is None else str(entry.tokens)
    cost = "-" if entry.cost is None else f"${entry.cost:.4f}"
    return (
        f"{when:16}  {_cut(entry.model, MODEL_WIDTH):{MODEL_WIDTH}}  "
        f"{_cut(entry.task, TASK_WIDTH):{TASK_WIDTH}}  {stop:22}  {calls:>7}  {tokens:>7}  "
        f"{cost:>8}  {entry.seconds:>7.2f}s  {entry.path}"
    )


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_last(entry: RunSummary, *, path_only: bool, as_json: bool) -> None:
    if path_only:
        click.echo(str(entry.path))
    elif as_json:
        click.echo(json.dumps(entry.to_json(), ensure_ascii=False))
    else:
        show_steps(entry.path, Console(highlight=False, soft_wrap=True, emoji=False))


def show_steps(path: Path, console: Console) -> None:
    """The run's steps as ``reactloop run`` printed them, each stop's line and answer."""
    observer = ConsoleObserver(console)
    try:
        for event in iter_events(path):
            observer.show(event)
            if isinstance(event, StopEvent):
                _print_stop(console, event)
    except JournalError as exc:  # changed since it was listed
        console.print(f"[red]{escape(str(exc))}[/]")
    console.print(f"[dim]trace: {escape(str(path))}[/]")


def _print_stop(console: Console, stop: StopEvent) -> None:
    took = f" · {stop.seconds:.2f} s" if stop.seconds is not None else ""
    console.print(
        f"[dim]stop: {escape(stop.stop_reason)} · {stop.model_calls} model "
        f"calls · {stop.tool_calls} tool calls{took}[/]"
    )
    if stop.answer is not None:
        marker = "[bold yellow]Forced answer[/]: " if stop.forced else ""
        console.print(f"{marker}{escape(stop.answer)}")
