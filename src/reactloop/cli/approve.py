"""``reactloop approve TRACE [CALL_ID ...] [--deny REASON]``: decide on the calls a run left
waiting (it stopped ``awaiting_approval``); ``reactloop resume TRACE`` then goes on
(``reactloop resume TRACE --approve-pending`` does both in one command)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reactloop.cli.approvers import user
from reactloop.cli.decisions import parse_answer, record_decisions, shown
from reactloop.cli.resume_trust import check_reach
from reactloop.cli.usage_errors import CliError
from reactloop.errors import UsageError
from reactloop.resume.resume_run import prepare_resume


@click.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("call_ids", nargs=-1)
@click.option("--deny", metavar="REASON", help="Deny the calls; the model is told REASON.")
@click.option(
    "--answer",
    metavar="JSON",
    help="Answer the question a call waits on (an MCP server's): a JSON object of the form's "
    "values, or decline or cancel; the call runs again on resume and the server is told it.",
)
@click.option("--who", help="Who decides [default: the user name].")
@click.option(
    "--force", is_flag=True, help="Decide though the journal lies in its run's workspace."
)
def approve(
    trace: Path,
    call_ids: tuple[str, ...],
    deny: str | None,
    answer: str | None,
    who: str | None,
    force: bool,
) -> None:
    """Approve (or --deny) the calls TRACE's run waits for: the ids given, else all of them.

    A call that waits on a server's question (shown) is answered with --answer. A call that
    waits in a sub-agent has its chained id (call_0_0/call_0_0, shown with its agent's path),
    for an approval as for an answer.
    The decisions go into TRACE (who, when); `reactloop resume TRACE` runs the approved calls
    and answers the denied ones with the reason (`reactloop resume TRACE --approve-pending`
    approves and goes on in one command). A denial stands. Exit 0, or 2 on a usage error (a
    run not awaiting approval, an id that is not pending, a journal inside its run's written
    workspace without --force): nothing is written then.
    """
    if deny is not None and not deny.strip():
        raise CliError("--deny needs a reason the model can read")
    if deny is not None and answer is not None:
        raise CliError("give --deny or --answer, not both")
    try:
        given = None if answer is None else parse_answer(answer)
        _check_out_of_reach(trace, force)
        events = record_decisions(trace, call_ids, deny=deny, who=who or user(), answer=given)
    except UsageError as exc:  # the journal's checks are resume's: say what was refused
        raise CliError(_approve_error(str(exc))) from None
    for event in events:
        verb = "approved" if event["decision"] == "approve" else f"denied ({event['reason']})"
        question = event["question"]
        if question is not None:
            click.echo(f"{event['call_id']}: {question['server']} asks: {question['message']}")
        if "answer" in event:
            verb = f"answered {json.dumps(event['answer'], ensure_ascii=False)}"
        click.echo(f"{shown(event)}: {verb}")


def _approve_error(message: str) -> str:
    prefix = "cannot resume "
    return "cannot approve " + message[len(prefix) :] if message.startswith(prefix) else message


def _check_out_of_reach(trace: Path, force: bool) -> None:
    """The calls approved are the journal's: one its run's tools could have rewritten (an
    older reactloop's ``./runs``) is refused without ``--force``, as ``resume`` refuses it."""
    _, state = prepare_resume(trace)
    config = state.run_start.get("config")
    try:
        check_reach(trace, config if isinstance(config, dict) else {}, force=force, verb="approve")
    except UsageError as exc:
        raise UsageError(f"cannot approve {trace}: {exc}") from None
