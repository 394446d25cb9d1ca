"""Every text the harness itself puts in front of the model, in one place (no hidden prompts)."""

from __future__ import annotations

from reactloop.journal.events import TRUNCATED_NOTICE

DEFAULT_INSTRUCTIONS = (
    "Solve the task. Use the tools when they help; each result comes back as JSON with "
    '"ok" and "output", or "error". If a call fails, read the error and change your approach. '
    "When you know the answer, reply with it alone, without calling a tool."
)


def wind_down_notice(*, tools_exhausted: bool) -> str:
    if tools_exhausted:
        return "No tool calls are left. Answer now with the best answer you can give."
    return "This is your last step. Answer now with the best answer you can give."


def budget_notice(parts: list[str]) -> str:
    """What is left of the budgets running out: "budget: 2 model calls, 40 s left"."""
    return f"budget: {', '.join(parts)} left"


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
    return TRUNCATED_NOTICE  # kept beside its warning's kind: the journal's fold places it


def trimmed_stub(name: str, chars: int) -> str:
    """What stays of a tool result whose body was trimmed to save context."""
    return f"[{chars} characters of {name} output trimmed to save context; call again if needed]"


def summary_request_notice(messages: int) -> str:
    return (
        "The context is nearly full. Write a summary of the work so far, to replace the oldest "
        f"{messages} messages: what you did, what you found (facts, numbers, names, output "
        "handles), what failed, and what is left to do. Reply with the summary only; do not "
        "call a tool."
    )


def summary_block(summary: str, messages: int) -> str:
    return f"[Summary of {messages} earlier messages, replaced to save context]\n{summary}"


def skill_kept_notice(name: str, body: str) -> str:
    """A skill's instructions, sent again after a summary replaced their activation."""
    kept = f"[Instructions of skill {name}, activated earlier; kept when the context was compacted]"
    return f"{kept}\n{body}"


def reminder_notice(task: str) -> str:
    line = task.strip().splitlines()[0] if task.strip() else ""
    if len(line) > 300:
        line = line[:300] + "…"
    return f"Reminder of the task: {line}"


def context_full_message(tokens: int, limit: int, policy: str) -> str:
    if policy == "none":
        return (
            f"the history (about {tokens} tokens) reached the context limit ({limit} tokens); "
            "--context-policy trim or summarize would compact it and go on"
        )
    return (
        f"the history (about {tokens} tokens) reached the context limit ({limit} tokens) and "
        "nothing more can be compacted"
    )


def checklist_notice(items: tuple[str, ...] | list[str]) -> str:
    listed = "\n".join(f"{number}. {item}" for number, item in enumerate(items, 1))
    return (
        "Before your answer is accepted, check the work against the task's checklist. For "
        "each item, confirm it is done and how you know, or go on working on it:\n"
        f"{listed}\nWhen every item is done, reply with the final answer again."
    )


def verify_failed_notice(why: str) -> str:
    return (
        f"Your answer was not accepted: the completion check did not pass.\n{why}\n"
        "Fix what it reports, then answer again."
    )


def silent_truncation_message(reported: int, estimate: int) -> str:
    return (
        f"the server counted {reported} prompt tokens for a history of about {estimate}: it "
        "probably cut the history to fit its context window, without an error, and the model "
        "no longer sees its beginning (the task included). Give the server a larger window: "
        "Ollama: OLLAMA_CONTEXT_LENGTH=32768 (or the num_ctx option); llama.cpp: llama-server "
        "--ctx-size 32768"
    )
