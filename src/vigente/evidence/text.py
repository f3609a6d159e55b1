"""Small text tools shared by the extractor and the answer check: spans, sentences, language."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vigente.evidence.dates import Language

__all__ = ["Span", "detect_language", "sentence_at", "sentences"]


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a text: the matched text and its offsets ``[start, end)``."""

    text: str
    start: int
    end: int

    @classmethod
    def of(cls, text: str, start: int, end: int) -> Span:
        return cls(text[start:end], start, end)

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end}


_IT_WORDS = re.compile(r"(?<!\w)(?:il|la|le|della|delle|dei|che|per|con|sono|alla|nel|è)(?!\w)")
_EN_WORDS = re.compile(r"(?<!\w)(?:the|of|and|to|is|are|shall|with|for|this|from)(?!\w)")
# A full stop after these is an abbreviation, not the end of a sentence ("Circolare n. 12").
_ABBREVIATIONS = re.compile(
    r"(?<!\w)(?:n|no|nr|num|art|artt|par|p|pp|e\.g|i\.e|cf|cfr|ecc|etc|mr|mrs|dr|st|vs|approx|"
    r"d\.lgs|d\.l|d\.m|lett|sez|sec|fig)\.$",
    re.IGNORECASE,
)
_BOUNDARY = re.compile(r"[.!?;:]\s+|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


def detect_language(text: str) -> Language:
    """``"it"`` when Italian function words outnumber English ones, else ``"en"``."""
    lowered = text.lower()
    return "it" if len(_IT_WORDS.findall(lowered)) > len(_EN_WORDS.findall(lowered)) else "en"


def sentences(text: str, *, protected: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence; never splits inside a ``protected`` range (a
    reference or a date) nor after an abbreviation such as "n." or "art."."""
    guard = list(protected)
    cuts = [0]
    for match in _BOUNDARY.finditer(text):
        at = match.start()
        if any(s <= at < e for s, e in guard):
            continue
        if text[at] == "." and _ABBREVIATIONS.search(text, max(0, at - 8), at + 1):
            continue
        cuts.append(match.end())
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if text[a:b].strip()]


def sentence_at(bounds: list[tuple[int, int]], position: int) -> int:
    """Index of the sentence containing ``position`` (the last one if past the end)."""
    for i, (start, end) in enumerate(bounds):
        if start <= position < end:
            return i
    return max(len(bounds) - 1, 0)
