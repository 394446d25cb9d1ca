"""Chat templates for local models, rendered so that the prompt only ever grows.

Chat templates written in Jinja re-render the whole conversation each time and may render an
earlier turn differently once a later one exists. Here each turn is rendered on its own (it may
look at the turn before it, never after) and tokenized on its own, and the token lists are
cached, so step k's prompt extends step k-1's token for token and llama.cpp evaluates only the
new suffix. A turn the model generated reuses the exact tokens it was generated as.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Tokenize = Callable[[str, bool], list[int]]  # (text, special) -> token ids


@dataclass(frozen=True, kw_only=True, slots=True)
class Turn:
    """One turn as the local model sees it: role is system, user or assistant."""

    role: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """A piece of the prompt; ``special`` pieces are template markers, the rest is content."""

    text: str
    special: bool


@dataclass(frozen=True, kw_only=True)
class ChatFormat:
    """How one model family marks turns. ``system_in_user`` folds the system turn into the
    first user turn (Gemma has no system role)."""

    name: str
    headers: dict[str, str]
    end: str
    system_in_user: bool = False

    def render(self, previous: Turn | None, turn: Turn) -> list[Segment]:
        segments: list[Segment] = []
        folding = previous is not None and self.system_in_user and previous.role == "system"
        if folding and turn.role != "user":
            segments.append(Segment(text=self.end, special=True))
        if self.system_in_user and turn.role == "system":
            return [
                *segments,
                Segment(text=self.headers["user"], special=True),
                Segment(text=turn.text + "\n\n", special=False),
            ]
        if not (folding and turn.role == "user"):
            segments.append(Segment(text=self.headers[turn.role], special=True))
        segments.append(Segment(text=turn.text, special=False))
        segments.append(Segment(text=self.end, special=True))
        return segments

    def generation_prompt(self, last: Turn | None) -> list[Segment]:
        segments = []
        if last is not None and self.system_in_user and last.role == "system":
            segments.append(Segment(text=self.end, special=True))
        segments.append(Segment(text=self.headers["assistant"], special=True))
        return segments


CHATML = ChatFormat(
    name="chatml",
    headers={r: f"<|im_start|>{r}\n" for r in ("system", "user", "assistant")},
    end="<|im_end|>\n",
)
GEMMA = ChatFormat(
    name="gemma",
    headers={
        "system": "<start_of_turn>user\n",
        "user": "<start_of_turn>user\n",
        "assistant": "<start_of_turn>model\n",
    },
    end="<end_of_turn>\n",
    system_in_user=True,
)
LLAMA3 = ChatFormat(
    name="llama3",
    headers={
        r: f"<|start_header_id|>{r}<|end_header_id|>\n\n" for r in ("system", "user", "assistant")
    },
    end="<|eot_id|>",
)
PLAIN = ChatFormat(
    name="plain",
    headers={"system": "### System:\n", "user": "### User:\n", "assistant": "### Assistant:\n"},
    end="\n\n",
)


def detect_format(chat_template: str | None) -> ChatFormat:
    """Pick the format from a GGUF's ``tokenizer.chat_template``; PLAIN when unknown."""
    template = chat_template or ""
    if "<|im_start|>" in template:
        return CHATML
    if "<start_of_turn>" in template:
        return GEMMA
    if "<|start_header_id|>" in template:
        return LLAMA3
    return PLAIN


class PromptTokens:
    """Turns → prompt token ids, re-tokenizing only the turns that are new or changed."""

    def __init__(self, chat_format: ChatFormat, tokenize: Tokenize, prefix: Sequence[int]) -> None:
        self.chat_format = chat_format
        self._tokenize = tokenize
        self._prefix = list(prefix)
        self._turns: list[Turn] = []
        self._tokens: list[list[int]] = []
        self._generated: OrderedDict[str, list[int]] = OrderedDict()

    def remember_generated(self, text: str, tokens: Sequence[int]) -> None:
        """Record the exact tokens a reply was generated as, to reuse when it comes back."""
        self._generated[text] = list(tokens)
        self._generated.move_to_end(text)
        while len(self._generated) > 64:
            self._generated.popitem(last=False)

    def build(self, turns: Sequence[Turn]) -> tuple[list[int], int]:
        """The prompt's tokens, and how many leading turns were served from the cache."""
        kept = 0
        limit = min(len(turns), len(self._turns))
        while kept < limit and self._turns[kept] == turns[kept]:
            kept += 1
        del self._turns[kept:], self._tokens[kept:]
        for index in range(kept, len(turns)):
            previous = turns[index - 1] if index else None
            self._turns.append(turns[index])
            self._tokens.append(self._render_tokens(previous, turns[index]))
        last = turns[-1] if turns else None
        tail = self._segments_tokens(self.chat_format.generation_prompt(last), None)
        flat = list(self._prefix)
        for tokens in self._tokens:
            flat.extend(tokens)
        flat.extend(tail)
        return flat, kept

    def _render_tokens(self, previous: Turn | None, turn: Turn) -> list[int]:
        generated = self._generated.get(turn.text) if turn.role == "assistant" else None
        return self._segments_tokens(self.chat_format.render(previous, turn), generated)

    def _segments_tokens(self, segments: list[Segment], generated: list[int] | None) -> list[int]:
        tokens: list[int] = []
        for segment in segments:
            if generated is not None and not segment.special and segment.text:
                tokens.extend(generated)
            elif segment.text:
                tokens.extend(self._tokenize(segment.text, segment.special))
        return tokens
