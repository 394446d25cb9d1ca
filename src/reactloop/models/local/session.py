"""One model's steps on a loaded engine: the prompt grows append-only, the KV cache keeps up.

A ``Session`` is one ``LocalLlamaModel`` on the parent's side. It renders the messages into
turns, turns them into prompt tokens (``chat_format.PromptTokens``: only new turns are
tokenized, a reply comes back as the tokens it was generated as), checks the context, tells the
journal what is sent, and asks its ``Engine`` (``xllamacpp_engine.py``: llama.cpp prebuilt)
for one constrained generation. The protocol keeps the session testable without llama.cpp.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reactloop.errors import ModelError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.base import ModelRequest
from reactloop.models.copy_guard import refuse_copied_answer, shown_strings
from reactloop.models.local.chat_format import PromptTokens, detect_format
from reactloop.models.local.generation import Generation
from reactloop.models.local.grammar import json_schema_grammar, react_grammar, tool_call_schema
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.turns import native_turn, to_turns


class Engine(Protocol):
    """A loaded GGUF model in this process, as a session needs it."""

    name: str  # "xllamacpp", named in each step's journaled request
    chat_template: str | None
    bos: list[int]  # the tokens every prompt starts with (the BOS token, if the model adds one)

    def tokenize(self, text: str, special: bool) -> list[int]: ...

    def detokenize(self, tokens: Sequence[int]) -> str: ...

    def reusable(self, prompt: Sequence[int]) -> int:
        """How many leading tokens of ``prompt`` the KV cache holds already."""
        ...

    def generate(
        self,
        prompt: list[int],
        *,
        grammar: str | None,
        request: ModelRequest,
        options: LocalOptions,
        max_tokens: int,
        deadline: float | None,
    ) -> Generation: ...

    def probe(self, prompt: str, max_tokens: int) -> str:
        """One plain greedy completion of ``prompt`` (for doctor)."""
        ...

    def info(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What one step is decoded under: the protocol and the grammar (None: unconstrained)."""

    native: bool
    grammar: str | None


def step_plan(request: ModelRequest, *, grammar: bool = True) -> Plan:
    """The protocol of a request (text ReAct marks its requests) and the grammar it gets."""
    react = request.react
    native = react is None
    if not grammar:
        return Plan(native=native, grammar=None)
    if react is not None:
        return Plan(native=False, grammar=react_grammar(react))
    schema = tool_call_schema(request.tools, request.tool_choice)
    return Plan(native=True, grammar=json_schema_grammar(schema))


class Session:
    """One model's steps on a shared engine: its prompt grows, the KV cache keeps up."""

    def __init__(self, engine: Engine, options: LocalOptions, name: str) -> None:
        self.engine = engine
        self.options = options
        self.name = name
        chat_format = detect_format(engine.chat_template)
        self._prompt = PromptTokens(chat_format, engine.tokenize, engine.bos)
        self._previous_prompt_tokens = 0
        self._sent_grammar: str | None = None

    def complete(self, request: ModelRequest) -> ModelTurn:
        # The time limit counts from here: rendering and tokenizing the prompt take time too.
        started = time.monotonic()
        deadline = None if request.timeout is None else started + max(request.timeout, 0.0)
        plan = step_plan(request, grammar=self.options.grammar)
        turns = to_turns(
            request.messages,
            request.tools,
            native=plan.native,
            worked_example=self.options.worked_example,
        )
        prompt, _ = self._prompt.build(turns)
        self._check_context(len(prompt))
        reused = min(self.engine.reusable(prompt), len(prompt) - 1)
        self._send_raw(request, prompt, reused, plan.grammar)
        generation = self.engine.generate(
            prompt,
            grammar=plan.grammar,
            request=request,
            options=self.options,
            max_tokens=min(self.options.max_output_tokens, self.options.n_ctx - len(prompt)),
            deadline=deadline,
        )
        self._prompt.remember_generated(generation.text, generation.tokens)
        return self._turn(request, generation, len(prompt), reused, plan)

    def _check_context(self, prompt_tokens: int) -> None:
        if prompt_tokens + 16 > self.options.n_ctx:
            raise ModelError(
                f"the prompt has {prompt_tokens} tokens and the context holds "
                f"{self.options.n_ctx}; start a shorter run, keep the history within the "
                "context (--context-tokens N --context-policy trim), or give the model a "
                "larger one (--local-context N; in Python ModelSettings(extra={'n_ctx': N}))"
            )

    def _send_raw(
        self, request: ModelRequest, prompt: list[int], reused: int, grammar: str | None
    ) -> None:
        if request.on_raw is None:
            return
        request.on_raw(
            {
                "model": self.name,
                "engine": self.engine.name,
                "prompt_tokens": len(prompt),
                "reused_tokens": reused,
                "new_prompt_text": self.engine.detokenize(prompt[reused:]),
                "grammar": grammar if grammar != self._sent_grammar else "(unchanged)",
                "temperature": self.options.temperature,
                "seed": self.options.seed,
            }
        )
        self._sent_grammar = grammar

    def _turn(
        self,
        request: ModelRequest,
        generation: Generation,
        prompt_tokens: int,
        reused: int,
        plan: Plan,
    ) -> ModelTurn:
        added = prompt_tokens - self._previous_prompt_tokens
        self._previous_prompt_tokens = prompt_tokens
        kind = "json_schema" if plan.native else "react"
        stats = {
            "prompt_tokens": prompt_tokens,
            "reused_tokens": reused,
            "evaluated_tokens": prompt_tokens - reused,
            "added_tokens": added,
            **generation.stats(),
            "grammar": None if plan.grammar is None else kind,
        }
        base = ModelTurn(
            text=generation.text,
            finish_reason=generation.finish_reason,
            usage=Usage(
                input_tokens=prompt_tokens,
                output_tokens=len(generation.tokens),
                cached_tokens=reused,
            ),
            raw=stats,
        )
        if generation.finish_reason == "length":
            return base
        if not plan.native:  # text ReAct: its adapter reads the reply, and guards it
            return base
        turn = native_turn(generation.text, step=request.step, base=base)
        strings = shown_strings(request.tools, worked_example=self.options.worked_example)
        return refuse_copied_answer(turn, request.messages, strings)
