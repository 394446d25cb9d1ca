"""``Conversation``: follow-up questions to an agent, each a run that continues the last.

    chat = Conversation(agent)
    chat.ask("What is 2 + 3?")
    chat.ask("And times 4?")        # the model sees the first question, its calls, its answer

Each ``ask`` is one ``Agent.run(text, history=last_result)``: its own budget, loop guard and
stop reason, the history so far in front of it. A turn that ended any other way than an
answer (cancelled, a limit, a model error) still leaves its history, every call answered, so
the next question goes on from there. With a ``journal``, all turns are written to it, each
turn's ``run_start`` saying which run it continues.
"""

from __future__ import annotations

from reactloop.agent import Agent
from reactloop.journal.events import Observer
from reactloop.messages import Message
from reactloop.result import RunResult


class Conversation:
    def __init__(self, agent: Agent, *, journal: Observer | None = None) -> None:
        self.agent = agent
        self.journal = journal
        self.results: list[RunResult] = []

    @property
    def history(self) -> tuple[Message, ...]:
        """The messages so far (the last turn's history, which holds every earlier one)."""
        return self.results[-1].history if self.results else ()

    @property
    def last(self) -> RunResult | None:
        return self.results[-1] if self.results else None

    def ask(self, text: str) -> RunResult:
        """Run ``text`` as the next turn; ``Agent.cancel()`` stops this turn, not the rest."""
        result = self.agent.run(text, history=self.last, journal=self.journal)
        self.results.append(result)
        return result

    async def aask(self, text: str) -> RunResult:
        """``ask`` for asyncio; a cancelled turn raises ``CancelledError`` and is not kept."""
        result = await self.agent.arun(text, history=self.last, journal=self.journal)
        self.results.append(result)
        return result
