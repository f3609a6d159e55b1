"""Official references of regulatory documents ("Circular 12/2025", "Circolare n. 12/2025",
"Regulation (EU) 2024/1689", "Decreto 3 marzo 2025 n. 45"): find them in a text and compare them.

Two spellings name the same document when their kind agrees (across English and Italian:
circular = circolare) and their numbers agree: ``Circolare n. 7/2023`` is ``Circular 7/2023``,
and ``Decreto 3 marzo 2025 n. 45`` is ``Decreto n. 45 del 3 marzo 2025``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vigente.evidence.dates import find_dates

__all__ = ["ReferenceMention", "find_references", "reference_key", "same_reference"]

# Words that open a reference, with the kind they name (one kind for both languages).
_KINDS: dict[str, str] = {
    "circular": "circular",
    "circolare": "circular",
    "regulation": "regulation",
    "regolamento": "regulation",
    "directive": "directive",
    "direttiva": "directive",
    "decision": "decision",
    "decisione": "decision",
    "decree": "decree",
    "decreto": "decree",
    "d.m.": "decree",
    "d.p.r.": "decree",
    "decreto legislativo": "legislative decree",
    "legislative decree": "legislative decree",
    "d.lgs.": "legislative decree",
    "d.lgs": "legislative decree",
    "dlgs": "legislative decree",
    "decreto-legge": "decree-law",
    "decree-law": "decree-law",
    "d.l.": "decree-law",
    "law": "law",
    "legge": "law",
    "act": "act",
    "notice": "notice",
    "policy notice": "notice",
    "avviso": "notice",
    "comunicato": "notice",
    "guideline": "guidelines",
    "guidelines": "guidelines",
    "linee guida": "guidelines",
    "policy": "policy",
    "instruction": "instruction",
    "istruzione": "instruction",
    "istruzioni": "instruction",
    "order": "order",
    "ordinanza": "order",
    "resolution": "resolution",
    "risoluzione": "resolution",
    "delibera": "resolution",
    "deliberazione": "resolution",
    "determinazione": "determination",
    "provvedimento": "measure",
    "measure": "measure",
    "recommendation": "recommendation",
    "raccomandazione": "recommendation",
    "communication": "communication",
    "comunicazione": "communication",
    "nota": "note",
    "note": "note",
    "disposizione": "provision",
    "provision": "provision",
    "memorandum": "memorandum",
}
_QUALIFIERS = (
    r"(?:\s+(?:delegated|implementing|delegato|di\s+esecuzione|ministeriale|interministeriale"
    r"|direttoriale|dirigenziale|del\s+presidente\s+della\s+repubblica"
    r"|\((?:EU|UE|EC|CE|EEC|CEE|Euratom)\)))*"
)
_NUMBER_WORD = r"(?:n\.|n°|nr\.|no\.|num\.|numero|number|No)"
_KIND_RE = "|".join(re.escape(k) for k in sorted(_KINDS, key=len, reverse=True))
_SLASHED = r"\d+(?:\s?/\s?\d+)+(?:/(?:EU|UE|CE|EC|EEC|CEE))?"
_REFERENCE = re.compile(
    rf"(?<![\w.])(?P<kind>{_KIND_RE})(?![\w]){_QUALIFIERS}"
    rf"(?:\s+(?P<numbered>{_NUMBER_WORD}))?\s*(?P<number>{_SLASHED}"
    rf"|\d{{1,2}}°?\s+\w+\s+\d{{4}},?\s+{_NUMBER_WORD}\s*\d+"
    rf"|\d+(?:\s+(?:of|del|dell'|dated)\s+[^\n,;]{{4,24}}?\d{{4}})?)",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_YEAR = re.compile(r"^(?:19|20)\d{2}$")


@dataclass(frozen=True, slots=True)
class ReferenceMention:
    """A reference written in a text: where, which kind of act, and its comparison key."""

    text: str
    start: int
    end: int
    kind: str
    key: tuple[int, ...]


def _key_of(number: str) -> tuple[int, ...]:
    """The numbers that identify an act, with any date reduced to its year.

    ``12/2025`` → (12, 2025); ``45 del 3 marzo 2025`` and ``3 marzo 2025, n. 45`` → (45, 2025).
    """
    dates = find_dates(number, partial=False)
    if dates:
        rest = number
        years: list[int] = []
        for d in reversed(dates):
            rest = rest[: d.start] + " " + rest[d.end :]
            if d.year is not None:
                years.append(d.year)
        numbers = [int(n) for n in _DIGITS.findall(rest)]
        return tuple(numbers + years)
    return tuple(int(n) for n in _DIGITS.findall(number))


def find_references(text: str) -> list[ReferenceMention]:
    """Every act reference in ``text``, in order of appearance."""
    found: list[ReferenceMention] = []
    for match in _REFERENCE.finditer(text):
        kind_text = " ".join(match.group("kind").lower().split())
        number = match.group("number")
        key = _key_of(number)
        if not key:
            continue
        if number.isdigit() and not match.group("numbered") and not match.group(0)[0].isupper():
            continue  # "in order 3 …": a bare number after a lower-case word is no reference
        found.append(
            ReferenceMention(
                text=match.group(0).strip(),
                start=match.start(),
                end=match.end(),
                kind=_KINDS.get(kind_text, kind_text),
                key=key,
            )
        )
    return found


def reference_key(reference: str) -> tuple[str | None, tuple[int, ...]]:
    """``(kind, numbers)`` of one reference string; kind is ``None`` when none is written."""
    mentions = find_references(reference)
    if mentions:
        return mentions[0].kind, mentions[0].key
    return None, _key_of(reference)


def same_reference(a: str, b: str) -> bool:
    """True when two spellings name the same act (kinds agree where both are written)."""
    kind_a, key_a = reference_key(a)
    kind_b, key_b = reference_key(b)
    if not key_a or key_a != key_b:
        return " ".join(a.lower().split()) == " ".join(b.lower().split())
    return kind_a is None or kind_b is None or kind_a == kind_b


def is_year(token: str) -> bool:
    """A four-digit number that reads as a year (1900–2099)."""
    return bool(_YEAR.match(token))
