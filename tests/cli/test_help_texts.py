"""Every command's ``--help`` states its exit codes, describes each option, and ``run --help``
says how a model is chosen without ``--model``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reactloop.cli import main


def help_of(*command: str) -> str:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        ("run", ["Exit 0 with a clean answer", "1 without an answer", "2 on a usage error",
                 "3 with an answer that is forced or failed its checks", "130 when interrupted"]),
        ("chat", ["Exit 0 when the session ends", "1 when the model could not be loaded",
                  "2 on a usage error"]),
        ("eval", ["Exit 0 when every episode ran", "2 on a usage error", "130 when interrupted"]),
        ("replay", ["Exit 0 when identical", "1 when the replay diverged", "2 on a usage error"]),
        ("view", ["Exit 0 when the page is written", "2 on a usage error"]),
        ("cost", ["Exit 0 with the report", "2 on a usage error"]),
    ],
)  # fmt: skip
def test_each_command_states_its_exit_codes(command: str, codes: list[str]) -> None:
    text = help_of(command)
    for code in codes:
        assert code in text


def test_run_help_says_how_a_model_is_chosen_without_model() -> None:
    text = help_of("run")
    for words in ("$REACTLOOP_MODEL", "$OPENAI_API_KEY", "$ANTHROPIC_API_KEY", "Ollama",
                  "else the embedded model"):  # fmt: skip
        assert words in text


def test_eval_help_describes_repeats_and_reads_the_protocol_default_plainly() -> None:
    text = help_of("eval")
    assert "--repeats INTEGER RANGE K: episodes of each task per rung and protocol" in text
    assert "native, text, or both comma-separated (native,text)" in text
    assert "[default: native]" in text


def test_the_group_help_points_at_the_commands_exit_codes() -> None:
    shown = help_of()
    assert "Exit codes (every command: 2 a usage error; its --help says more)" in shown
    assert "replay 0 identical, 1 diverged" in shown
