"""Every text the harness itself puts in front of the model, in one place (no hidden prompts)."""

from __future__ import annotations

DEFAULT_INSTRUCTIONS = (
    "Solve the task. Use the tools when they help; each result comes back as JSON with "
    '"ok" and "output", or "error". If a call fails, read the error and change your approach. '
    "When you know the answer, reply with it alone, without calling a tool."
)


def wind_down_notice(*, tools_exhausted: bool) -> str:
    if tools_exhausted:
        return "No tool calls are left. Answer now with the best answer you can give."
    return "This is your last step. Answer now with the best answer you can give."


def loop_notice() -> str:
    return (
        "You are repeating the same calls, so the run stops here. "
        "Answer now with the best answer you can give from what you have."
    )


def format_error_notice(problem: str) -> str:
    return f"Format error: {problem}"


def empty_reply_notice() -> str:
    return "Your reply was empty. Call a tool, or reply with the final answer."


def truncated_notice() -> str:
    return (
        "Your reply was cut off at the output limit and nothing in it was run. "
        "Reply again, shorter."
    )
