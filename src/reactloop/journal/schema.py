"""The journal's events as values: one frozen dataclass per event type, and its dict form.

``to_dict()`` is the event's line exactly as the writer writes it; ``from_dict()`` reads such
a line, checked once (a field of the wrong kind, or a required one missing, is a ``ValueError``
naming it; ``reader.py`` adds the file and line). A field with a default may be absent (older
journals); an event read back remembers which fields its line held (``written``) and keeps
keys it does not know in ``extra``, so ``to_dict()`` gives the line back exactly. An event
made in code writes every field but the ``OPTIONAL`` ones left ``None`` (or, given
``written``, those fields: ``CheckEvent.verify``, ``WarningEvent.model_error``). The loop
hands these values to its ``Emitter`` (``emitter.py``). Nested values (a turn, a result, a
call) stay their JSON: their own types (``ModelTurn``, ``ToolResult``) read them. Each class
is an ``event_class`` (``event_value.py``); no ``from __future__ import annotations`` here:
``typing.get_type_hints`` takes the types as objects, and compiled each string at import.
"""

from dataclasses import field
from typing import Any, ClassVar, Self

from reactloop.journal.event_value import JournalEvent, event_class
from reactloop.journal.warning_kinds import WarningKind


@event_class
class RunStartEvent(JournalEvent):
    TYPE: ClassVar[str] = "run_start"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"output_schema", "continues", "workspace"})
    # As the user gave them: each reader checks the part it uses (replay, resume), not this.
    task: Any = ""
    model: Any = None
    protocol: Any = None
    tools: Any = None
    limits: Any = None
    instructions: Any = None
    config: Any = None
    output_schema: Any = None
    continues: Any = None
    workspace: Any = None


@event_class
class RequestEvent(JournalEvent):
    TYPE: ClassVar[str] = "request"
    n_messages: int
    messages_new: list[Any]
    tool_choice: Any = None
    wind_down: bool = False


@event_class
class ResponseEvent(JournalEvent):
    TYPE: ClassVar[str] = "response"
    raw: Any = None
    request: Any = None


@event_class
class TurnEvent(JournalEvent):
    TYPE: ClassVar[str] = "turn"
    turn: dict[str, Any]
    seconds: float | None = None


@event_class
class ToolCallEvent(JournalEvent):
    TYPE: ClassVar[str] = "tool_call"
    call: dict[str, Any]
    effects: str | None = None  # the guard judged it: its tool's ``Effects`` (guard_state.py)


@event_class
class ToolStartEvent(JournalEvent):
    TYPE: ClassVar[str] = "tool_start"
    call_id: str
    name: str = ""
    arguments: Any = None


@event_class
class ToolSearchEvent(JournalEvent):
    TYPE: ClassVar[str] = "tool_search"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"by", "error"})
    queries: list[Any]
    matches: list[Any] = field(default_factory=list)
    revealed: list[Any] = field(default_factory=list)
    by: str | None = None  # "provider": a search the provider ran (native tool search)
    error: str | None = None  # the provider's error code for a search that failed


@event_class
class SkillActivationEvent(JournalEvent):
    TYPE: ClassVar[str] = "skill_activation"
    name: str
    again: bool = False
    folder: str | None = None


@event_class
class ToolResultEvent(JournalEvent):
    TYPE: ClassVar[str] = "tool_result"
    result: dict[str, Any]
    content: str = ""


@event_class
class WarningEvent(JournalEvent):
    TYPE: ClassVar[str] = "warning"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {"call_id", "index", "count", "evidence", "error_kind", "request", "seconds", "notice"}
        | {"reported", "estimated"}
    )
    ENUMS: ClassVar[tuple[str, ...]] = ("kind",)
    kind: WarningKind | str
    message: str = ""
    call_id: str | None = None
    index: int | None = None
    count: int | None = None
    evidence: Any = None
    error_kind: str | None = None  # of a model_error
    request: Any = None  # of a model_error: the request as sent
    seconds: float | None = None  # of a model_error
    reported: Any = None  # of a silent_truncation
    estimated: Any = None
    notice: str | None = None  # of an invalid_output: the message the model is answered with

    @classmethod
    def model_error(cls, message: str, error_kind: str, request: Any, seconds: float) -> Self:
        """A model call that failed: its ``request`` written, null when none was sent."""
        return cls(
            kind=WarningKind.MODEL_ERROR,
            message=message,
            error_kind=error_kind,
            request=request,
            seconds=seconds,
            written=frozenset({"step", "kind", "message", "error_kind", "request", "seconds"}),
        )

    @classmethod
    def _build(cls, values: dict[str, Any], extra: dict[str, Any], written: frozenset[str]) -> Self:
        kind = values["kind"]
        values["kind"] = WarningKind(kind) if kind in WarningKind._value2member_map_ else kind
        return cls(**values, extra=extra, written=written)


@event_class
class CompactionEvent(JournalEvent):
    TYPE: ClassVar[str] = "compaction"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"summary_usage"})
    policy: str = ""
    start: int = 0
    replaced: int = 0
    call_ids: list[Any] = field(default_factory=list)
    by: list[Any] = field(default_factory=list)
    block: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    prefix_tokens: int = 0
    limit: int | None = None
    summary_usage: dict[str, Any] | None = None


@event_class
class CheckEvent(JournalEvent):
    TYPE: ClassVar[str] = "check"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"items", "output", "notice"})
    kind: str  # "checklist" or "verify"
    passed: bool
    items: list[Any] | None = None  # of a checklist
    output: str | None = None  # of a verify that refused
    notice: str | None = None  # the message the model is then told, when the run goes on

    @classmethod
    def verify(cls, refused: str | None, notice: str | None = None) -> Self:
        """A verify's verdict: its ``output`` written, null when the answer passed."""
        written = frozenset({"step", "kind", "passed", "output", *(["notice"] if notice else [])})
        return cls(
            kind="verify", passed=refused is None, output=refused, notice=notice, written=written
        )


@event_class
class BudgetNoticeEvent(JournalEvent):
    TYPE: ClassVar[str] = "budget_notice"
    line: str


@event_class
class StopEvent(JournalEvent):
    TYPE: ClassVar[str] = "stop"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"pending"})
    stop_reason: str
    answer: str | None = None
    error: str | None = None
    error_kind: str | None = None
    forced: bool = False
    model_calls: int = 0
    tool_calls: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    seconds: float | None = None
    pending: list[Any] | None = None


@event_class
class ResumeEvent(JournalEvent):
    TYPE: ClassVar[str] = "resume"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"limits"})
    why: str
    from_step: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    calls: list[Any] = field(default_factory=list)
    torn: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None


@event_class
class ApprovalEvent(JournalEvent):
    """A decision on one call (``call_id``, ``decision``), or a policy for the rest of the run
    (``policy``: ``mode`` and ``allow``, recorded, never applied from the journal)."""

    TYPE: ClassVar[str] = "approval"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {"call_id", "decision", "name", "arguments", "policy", "answer"}
    )
    call_id: str | None = None
    decision: str | None = None  # "approve" or "deny"
    reason: str | None = None
    who: str | None = None
    at: str | None = None
    name: str | None = None  # from ``reactloop approve``: the call as shown
    arguments: Any = None
    policy: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None  # a question's answer: ``action``, ``content``


@event_class
class ElicitationEvent(JournalEvent):
    """A server's question to the person during a call (MCP elicitation) and its answer:
    ``action`` ``accept`` (with ``content``), ``decline``, ``cancel``, or ``awaiting`` (nobody
    could answer now: the call waits, the run stops ``awaiting_approval``). ``omitted``: the
    fields whose values the journal does not keep."""

    TYPE: ClassVar[str] = "elicitation"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"content", "omitted"})
    server: str
    call_id: str | None = None
    message: str = ""
    form: dict[str, Any] = field(default_factory=dict)
    action: str = "awaiting"
    content: dict[str, Any] | None = None
    omitted: list[str] | None = None


@event_class
class ChildStartEvent(JournalEvent):
    TYPE: ClassVar[str] = "child_start"
    agent_path: str
    tool: str = ""
    task: str = ""
    trace: str | None = None  # the child's own journal, beside this one
    call_id: str | None = None  # the parent's call of ``tool`` that runs the child


@event_class
class ChildStopEvent(JournalEvent):
    TYPE: ClassVar[str] = "child_stop"
    agent_path: str
    trace: str | None = None
    call_id: str | None = None
    stop_reason: str = ""
    forced: bool = False
    model_calls: int = 0
    tool_calls: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None


# The event types, in the order a run writes them (``docs/journal.md``'s table).
EVENT_CLASSES: tuple[type[JournalEvent], ...] = (
    RunStartEvent,
    RequestEvent,
    ResponseEvent,
    TurnEvent,
    ToolCallEvent,
    ToolStartEvent,
    ToolSearchEvent,
    SkillActivationEvent,
    ElicitationEvent,
    ToolResultEvent,
    WarningEvent,
    CompactionEvent,
    CheckEvent,
    BudgetNoticeEvent,
    StopEvent,
    ResumeEvent,
    ApprovalEvent,
    ChildStartEvent,
    ChildStopEvent,
)
BY_TYPE: dict[str, type[JournalEvent]] = {cls.TYPE: cls for cls in EVENT_CLASSES}
