"""What a command does with a bad command line: one line on stderr, exit 2 (``USAGE_ERROR``)."""

from __future__ import annotations

import math
from typing import Any

import click

from reactloop.cli.exitcodes import USAGE_ERROR


class CliError(click.ClickException):
    exit_code = USAGE_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"reactloop: error: {self.message}", err=True)


class FiniteFloat(click.FloatRange):
    """A ``FloatRange`` that also refuses NaN and the infinities, which click lets through."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
