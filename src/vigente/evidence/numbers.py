"""Numbers as people write them, in English and Italian, for comparing an answer with evidence.

``80 MB``, ``1,000.50 EUR``, ``1.000,50 €``, ``2,5 %``, ``10 000`` and number words ("eighty",
"ottantacinque", "duemila"). A written number can mean more than one value — ``1.000`` is one
thousand in Italian and one in English — so a :class:`NumberMention` keeps every reading, and a
comparison succeeds when any reading matches: the answer check must never call a correctly
stated value wrong because of a separator convention.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from vigente.evidence.dates import find_dates
from vigente.evidence.references import find_references

__all__ = ["NumberMention", "find_numbers", "numbers_in"]

_DIGITS = re.compile(
    r"(?<![\w.,/\-])(?P<number>[-+]?\d+(?:[.,'\u00a0\u202f\u2009]\d+)*)(?![.,]?\d)(?![\w/])"
    r"|(?<![\w.,/\-])(?P<joined>[-+]?\d+(?:[.,]\d+)?)(?=[A-Za-zµ€$£%])"
)
_UNIT = re.compile(r"\s?(?P<unit>%|‰|[A-Za-zµ€$£]{1,12})")
_GROUPED = re.compile(r"^\d{1,3}(?P<sep>[.,'\u00a0\u202f\u2009])\d{3}(?:(?P=sep)\d{3})*$")
_GROUPED_DECIMAL = re.compile(
    r"^\d{1,3}(?P<sep>[.,'\u00a0\u202f\u2009])\d{3}(?:(?P=sep)\d{3})*(?P<dec>[.,])\d+$"
)

_EN_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
}
_IT_PARTS = {
    "zero": 0,
    "uno": 1,
    "un": 1,
    "due": 2,
    "tre": 3,
    "quattro": 4,
    "cinque": 5,
    "sei": 6,
    "sette": 7,
    "otto": 8,
    "nove": 9,
    "dieci": 10,
    "undici": 11,
    "dodici": 12,
    "tredici": 13,
    "quattordici": 14,
    "quindici": 15,
    "sedici": 16,
    "diciassette": 17,
    "diciotto": 18,
    "diciannove": 19,
    "venti": 20,
    "vent": 20,
    "trenta": 30,
    "trent": 30,
    "quaranta": 40,
    "quarant": 40,
    "cinquanta": 50,
    "cinquant": 50,
    "sessanta": 60,
    "sessant": 60,
    "settanta": 70,
    "settant": 70,
    "ottanta": 80,
    "ottant": 80,
    "novanta": 90,
    "novant": 90,
    "cento": 100,
    "cent": 100,
    "mille": 1000,
    "mila": 1000,
    "milione": 1_000_000,
    "milioni": 1_000_000,
}
# Words that are numbers but far more often something else ("one of", "un limite", "sei tu").
_NOT_ALONE = {"one", "un", "uno", "una", "sei"}
_SCALES = {100, 1000, 1_000_000, 1_000_000_000}
_EN_SEQUENCE = re.compile(
    r"(?<![\w-])(?:" + "|".join(sorted(_EN_WORDS, key=len, reverse=True)) + r")"
    r"(?:(?:\s+and\s+|\s+|-)(?:" + "|".join(sorted(_EN_WORDS, key=len, reverse=True)) + r"))*"
    r"(?![\w-])",
    re.IGNORECASE,
)
_WORD = re.compile(r"(?<![\w])[^\W\d_]+(?![\w])")


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number written in a text: where, every value it can mean, and the unit after it."""

    text: str
    start: int
    end: int
    readings: tuple[float, ...]
    unit: str | None = None

    def equals(self, value: float) -> bool:
        return any(math.isclose(r, value, rel_tol=1e-9, abs_tol=1e-9) for r in self.readings)


def _readings(token: str) -> tuple[float, ...]:
    sign = -1.0 if token.startswith("-") else 1.0
    body = token.lstrip("+-")
    grouped = _GROUPED.match(body)
    if grouped:
        sep = grouped.group("sep")
        thousands = float(body.replace(sep, ""))
        if sep in ".," and body.count(sep) == 1:  # "1.000": a thousand, or one with decimals
            return (sign * thousands, sign * float(body.replace(",", ".")))
        return (sign * thousands,)
    decimal = _GROUPED_DECIMAL.match(body)
    if decimal and decimal.group("sep") != decimal.group("dec"):
        plain = body.replace(decimal.group("sep"), "").replace(decimal.group("dec"), ".")
        return (sign * float(plain),)
    if body.count(".") + body.count(",") == 1 and not any(c in body for c in "'\u00a0\u202f"):
        return (sign * float(body.replace(",", ".")),)
    if body.isdigit():
        return (sign * float(body),)
    return ()


def _combine(values: list[int]) -> int:
    """Number words' values in order ("two thousand five hundred" → 2500)."""
    total = current = 0
    for value in values:
        if value == 100:
            current = max(current, 1) * 100
        elif value in _SCALES:
            total += max(current, 1) * value
            current = 0
        else:
            current += value
    return total + current


def _english_value(words: list[str]) -> int | None:
    values = [_EN_WORDS[w] for w in map(str.lower, words) if w in _EN_WORDS]  # skips "and"
    return _combine(values) if values else None


def _italian_value(word: str) -> int | None:
    """Greedy split of an Italian number word ("duemilacinquecento" → 2500), else ``None``."""
    text = unicodedata.normalize("NFKD", word.lower()).encode("ascii", "ignore").decode()
    parts: list[int] = []
    i = 0
    while i < len(text):
        for size in range(min(len(text) - i, 11), 0, -1):
            piece = text[i : i + size]
            if piece in _IT_PARTS:
                parts.append(_IT_PARTS[piece])
                i += size
                break
        else:
            return None
    return _combine(parts)


def _free(start: int, end: int, masked: Iterable[tuple[int, int]]) -> bool:
    return all(end <= s or start >= e for s, e in masked)


def find_numbers(
    text: str, *, masked: Iterable[tuple[int, int]] = (), words: bool = True
) -> list[NumberMention]:
    """Every number in ``text`` outside the ``masked`` ranges (dates, references …), in order.

    With ``words`` (the default) English and Italian number words are read too.
    """
    masks = list(masked)
    found: list[NumberMention] = []
    for match in _DIGITS.finditer(text):
        token = match.group("number") or match.group("joined")
        start, end = match.start(), match.end()
        if not _free(start, end, masks):
            continue
        readings = _readings(token)
        if not readings:
            continue
        unit_match = _UNIT.match(text, end)
        unit = unit_match.group("unit") if unit_match else None
        found.append(NumberMention(token, start, end, readings, unit))
    if words:
        taken = [(m.start, m.end) for m in found] + masks
        for seq in _EN_SEQUENCE.finditer(text):
            parts = re.split(r"\s+and\s+|\s+|-", seq.group(0))
            if len(parts) == 1 and parts[0].lower() in _NOT_ALONE:
                continue
            value = _english_value(parts)
            if value is not None and _free(seq.start(), seq.end(), taken):
                found.append(NumberMention(seq.group(0), seq.start(), seq.end(), (float(value),)))
                taken.append((seq.start(), seq.end()))
        for word in _WORD.finditer(text):
            if word.group(0).lower() in _NOT_ALONE or word.group(0).lower() in _EN_WORDS:
                continue
            value = _italian_value(word.group(0))
            if value is not None and _free(word.start(), word.end(), taken):
                found.append(
                    NumberMention(word.group(0), word.start(), word.end(), (float(value),))
                )
    return sorted(found, key=lambda m: m.start)


def numbers_in(value: object) -> set[float]:
    """The numbers a JSON value states: itself if numeric, those written inside strings, and
    those of nested lists and objects (values only, not keys)."""
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, (int, float)):
        return {float(value)} if math.isfinite(value) else set()
    if isinstance(value, str):
        # Dates and act references inside a text are not values ("Circolare 3 marzo 2025").
        masked = [(d.start, d.end) for d in find_dates(value)]
        masked += [(r.start, r.end) for r in find_references(value)]
        return {r for m in find_numbers(value, masked=masked, words=False) for r in m.readings}
    if isinstance(value, dict):
        return set().union(*(numbers_in(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(numbers_in(v) for v in value)) if value else set()
    return set()
