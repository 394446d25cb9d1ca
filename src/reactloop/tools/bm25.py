"""BM25 ranking over short documents (tool names, descriptions, parameter names); no dependency.

``words`` splits identifiers into words (``github_create_issue`` and ``githubCreateIssue``
are ``github create issue``), so that a family's shared prefix is one common word, which
BM25's inverse document frequency weighs down, and not a token that matches every tool.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
    ]
)


def words(text: str) -> list[str]:
    """The lower-case words of ``text``; identifiers split at ``_``, ``-``, ``.`` and camelCase;
    a few English stop words dropped; a plural ``s`` folded (``issues`` is ``issue``)."""
    spaced = _CAMEL.sub(r"\1 \2", text).lower()
    return [_fold(w) for w in _WORD.findall(spaced) if w not in _STOP]


def _fold(word: str) -> str:
    """A plural ``s`` cut (``issues`` is ``issue``), not from ``ss`` nor from short words."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


class BM25:
    """Okapi BM25 (``k1``, ``b``) over ``documents``, each a list of words (``words``)."""

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.counts = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        n = len(documents)
        self.average = (sum(self.lengths) / n) if n else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        self.idf = {
            word: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for word, df in frequency.items()
        }

    def scores(self, query: Sequence[str]) -> list[float]:
        """The score of every document for ``query`` (words), in document order."""
        terms = [w for w in dict.fromkeys(query) if w in self.idf]
        out: list[float] = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = self.k1 * (1.0 - self.b + self.b * length / (self.average or 1.0))
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
            out.append(score)
        return out

    def top(self, query: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """The indexes and scores of the best ``limit`` documents with a score above zero,
        best first (ties in document order)."""
        ranked = sorted(enumerate(self.scores(query)), key=lambda pair: (-pair[1], pair[0]))
        return [(i, s) for i, s in ranked[:limit] if s > 0.0]
