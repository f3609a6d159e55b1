"""The answer check's reading of its two inputs: the evidence and the answer text.

:func:`read_facts` takes the ``ask --json`` dict (or an :class:`Evidence`) once, checking its
shape; :class:`Answer` finds what an answer states — numbers, dates, act references, sentences
— with everything that is not a value claim (dates, references, ids, article numbers, times,
list numbers, years) masked out. The checks themselves are in :mod:`vigente.evidence.verify`.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from vigente.errors import InvalidInput, InvalidTime
from vigente.evidence.dates import find_dates
from vigente.evidence.errors import InvalidEvidence
from vigente.evidence.numbers import find_numbers
from vigente.evidence.references import find_references, same_reference
from vigente.evidence.text import Span, sentence_at, sentences
from vigente.kernel.answer import Evidence
from vigente.records.values import canonical_json
from vigente.time import parse_instant

__all__ = [
    "ANNOUNCED",
    "HEDGE",
    "IN_FORCE",
    "KNOWN_THEN",
    "NOT_IN_FORCE",
    "PROJECTED",
    "Answer",
    "EvidenceLike",
    "Facts",
    "canonical",
    "date_of",
    "read_facts",
    "shown",
    "when",
]


# -- phrases --------------------------------------------------------------------------------
def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


ANNOUNCED = _rx(
    r"announced",
    r"annunciat[aoie]",
    r"scheduled",
    r"programmat[aoie]",
    r"not yet in force",
    r"non (?:è |sono )?ancora in vigore",
    r"upcoming",
    r"entrer(?:à|anno) in vigore",
    r"will (?:enter|come) into force",
)
KNOWN_THEN = _rx(
    r"as known (?:on|at|then)",
    r"as recorded (?:on|at)",
    r"the records? showed",
    r"according to the records?",
    r"risultava(?:no)?",
    r"secondo quanto (?:noto|registrato)",
    r"per quanto noto",
    r"secondo l'archivio",
    r"come noto (?:al|il)",
)
PROJECTED = _rx(
    r"projected",
    r"if nothing changes",
    r"no change (?:is |was )?announced",
    r"unless (?:it )?changes?",
    r"salvo (?:modifiche|variazioni)",
    r"in assenza di modifiche",
    r"se nulla cambia",
    r"previsto",
)
HEDGE = _rx(
    r"conflict(?:ing|s)?",
    r"disagree(?:ment|s)?",
    r"differ(?:ent)?",
    r"inconsistent",
    r"contradict\w*",
    r"either",
    r"or",
    r"alternatively",
    r"depending on",
    r"unclear",
    r"conflitt\w*",
    r"contrast\w*",
    r"discordan\w*",
    r"non concordano",
    r"diverg\w*",
    r"divers[ei] fonti",
    r"oppure",
    r"o",
    r"a seconda",
    r"incert\w*",
)
IN_FORCE = _rx(
    r"in force",
    r"current(?:ly)?",
    r"applicable",
    r"applies",
    r"in effect",
    r"valid",
    r"in vigore",
    r"vigente",
    r"attual(?:e|mente)",
    r"applicabile",
    r"si applica",
    r"efficace",
)
NOT_IN_FORCE = _rx(
    r"no longer",
    r"not",
    r"never",
    r"superseded",
    r"replaced",
    r"repealed",
    r"revoked",
    r"was",
    r"were",
    r"formerly",
    r"previously",
    r"until",
    r"non",
    r"più",
    r"sostituit[aoie]",
    r"abrogat[aoie]",
    r"revocat[aoie]",
    r"era",
    r"erano",
    r"fino al",
    r"precedente(?:mente)?",
)
_NEGATED_NUMBER = re.compile(
    r"(?<!\w)(?:not|non|nor|né|no|never|mai)\s+(?:\w+\s+){0,2}$", re.IGNORECASE
)
# Numbers that name things rather than state values: articles, sections, times, list items.
_LABELLED = re.compile(
    r"(?<!\w)(?:art(?:icle|icolo|t)?\.?|section|sezione|sez\.|§|para(?:graph)?\.?|paragrafo|"
    r"comma|punto|point|annex|allegato|chapter|capo|capitolo|page|pagina|pp?\.|version|"
    r"versione|id|step|fase|item|voce)\s*\d+(?:[.,]\d+)*[a-z]?",
    re.IGNORECASE,
)
_TIME = re.compile(r"(?<![\d.])\d{1,2}[:.]\d{2}(?:\s?(?:am|pm|h))?(?![\d.])", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*\d+[.)](?=\s)", re.MULTILINE)
# A year is a year after "in", "since", "nel", "dal" … or when nothing (no unit) follows it.
_YEAR = re.compile(
    r"(?:(?<=\bin )|(?<=\bsince )|(?<=\bfrom )|(?<=\buntil )|(?<=\bby )|(?<=\bof )|"
    r"(?<=\bbefore )|(?<=\bafter )|(?<=\byear )|(?<=\bnel )|(?<=\bdal )|(?<=\bdel )|"
    r"(?<=\bal )|(?<=\bentro )|(?<=\banno )|(?<=\bdopo il )|(?<=\bprima del ))"
    r"(?:19|20)\d{2}(?![\w/]|[.,]\d)"
    r"|(?<![\w.,/-])(?:19|20)\d{2}(?=\s*(?:[.,;:!?)]|$))(?![.,]\d)",
    re.IGNORECASE | re.MULTILINE,
)


# -- the evidence, read once ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Facts:
    status: str
    interpretation: str | None
    values: tuple[Any, ...]
    valid_at: _dt.date | None
    known_at: _dt.date | None
    admitted: tuple[Mapping[str, Any], ...]
    excluded: tuple[Mapping[str, Any], ...]
    earlier_values: tuple[Any, ...]
    names: tuple[str, ...]  # lineage, scope values, sources, ids: never value claims
    documents: bool = False  # document evidence ("kind": "document"): values are versions


def date_of(where: str, raw: object) -> _dt.date | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidEvidence(f"{where} must be a date string such as 2026-09-29")
    try:
        return parse_instant(raw).date
    except InvalidTime as exc:
        raise InvalidEvidence(f"{where}: {exc}") from None


def _rows(data: Mapping[str, Any], key: str) -> tuple[Mapping[str, Any], ...]:
    rows = data.get(key, [])
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise InvalidEvidence(f"'{key}' must be a list of row objects, as `ask --json` writes")
    return tuple(rows)


class EvidenceLike(Protocol):
    """Anything with the ``ask --json`` dict as ``as_dict()`` (kernel or document evidence)."""

    def as_dict(self) -> dict[str, Any]: ...


def read_facts(evidence: Mapping[str, Any] | EvidenceLike) -> Facts:
    """Read and check the evidence once: a dict, an :class:`Evidence` or any object with an
    ``as_dict()`` of the same shape (such as document evidence)."""
    data: Mapping[str, Any]
    if isinstance(evidence, Mapping):
        data = evidence
    elif callable(getattr(evidence, "as_dict", None)):
        data = evidence.as_dict()
        earlier = getattr(evidence, "earlier_values", None)
        if isinstance(evidence, Evidence) and earlier is not None:
            data = {**data, "earlier_values": list(earlier)}
        if not isinstance(data, Mapping):
            raise InvalidEvidence("evidence.as_dict() did not return a dict")
    else:
        raise InvalidEvidence(
            f"evidence must be an Evidence or the dict of `ask --json`, got "
            f"{type(evidence).__name__}"
        )
    status = data.get("status")
    if status not in ("supported", "missing", "conflict"):
        raise InvalidEvidence(
            f"evidence status {status!r} is not supported, missing or conflict: pass the "
            "output of `vigente ask LINEAGE --at DATE --json`"
        )
    values = data.get("values", [])
    if not isinstance(values, list):
        raise InvalidEvidence("'values' must be a list of the admitted values")
    interpretation = data.get("interpretation")
    if interpretation is not None and not isinstance(interpretation, str):
        raise InvalidEvidence("'interpretation' must be text such as 'current'")
    admitted, excluded = _rows(data, "admitted"), _rows(data, "excluded")
    names: list[str] = [str(data.get("lineage") or "")]
    scope = data.get("scope")
    if isinstance(scope, Mapping):
        names += [str(v) for v in scope.values()]
    for row in (*admitted, *excluded):
        names += [
            str(row[k])
            for k in (
                "source",
                "version_id",
                "external_id",
                "successor_id",
                "reference",
                "citation",
            )
            if row.get(k)
        ]
    earlier = data.get("earlier_values") or []
    return Facts(
        status=status,
        interpretation=interpretation,
        values=tuple(values),
        valid_at=date_of("valid_at", data.get("valid_at")),
        known_at=date_of("known_at", data.get("known_at")),
        admitted=admitted,
        excluded=excluded,
        earlier_values=tuple(earlier) if isinstance(earlier, list) else (),
        names=tuple(sorted({n for n in names if n.strip()}, key=len, reverse=True)),
        documents=data.get("kind") == "document",
    )


# -- reading the answer --------------------------------------------------------------------
class Answer:
    """The answer text with what is not a value claim masked out (dates, references, ids)."""

    def __init__(self, text: str, facts: Facts) -> None:
        self.text = text
        self.dates = find_dates(text)
        self.references = find_references(text)
        masked = [(d.start, d.end) for d in self.dates]
        masked += [(r.start, r.end) for r in self.references]
        lowered = text.lower()
        for name in facts.names:
            for match in re.finditer(re.escape(name.lower()), lowered):
                masked.append((match.start(), match.end()))
        for pattern in (_LABELLED, _TIME, _LIST_ITEM, _YEAR):
            masked += [(m.start(), m.end()) for m in pattern.finditer(text)]
        self.masked = masked
        self.bounds = sentences(text, protected=[(r.start, r.end) for r in self.references])
        self.numbers = [
            n
            for n in find_numbers(text, masked=masked)
            if not _NEGATED_NUMBER.search(text, max(0, n.start - 32), n.start)
        ]

    def context(self, position: int, before: int = 1) -> tuple[int, int]:
        """The sentence around ``position`` plus ``before`` sentences ahead of it."""
        if not self.bounds:
            return 0, len(self.text)
        i = sentence_at(self.bounds, position)
        return self.bounds[max(i - before, 0)][0], self.bounds[i][1]

    def span(self, start: int, end: int) -> Span:
        return Span.of(self.text, start, end)

    def occurrences(self, value: Any, rows: Iterable[Mapping[str, Any]] = ()) -> list[Span]:
        """Where the answer states ``value``: as a number, as a short string, or by citing the
        reference of a row that holds it."""
        found: list[Span] = []
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found += [self.span(n.start, n.end) for n in self.numbers if n.equals(float(value))]
        elif isinstance(value, str) and 0 < len(value.strip()) <= 200:
            found += [self.span(m.start(), m.end()) for m in _literal(value).finditer(self.text)]
        key = canonical(value)
        for row in rows:
            reference = row.get("reference")
            holds = canonical(row.get("value")) == key or row.get("version_id") == value
            if isinstance(reference, str) and holds:
                found += self.citations_of(reference)
        return sorted(found, key=lambda s: s.start)

    def citations_of(self, reference: str) -> list[Span]:
        spans = [
            self.span(r.start, r.end) for r in self.references if same_reference(r.text, reference)
        ]
        spans += [
            self.span(m.start(), m.end())
            for m in _literal(reference).finditer(self.text)
            if not any(s.start <= m.start() < s.end for s in spans)
        ]
        return spans


def _literal(value: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(w) for w in value.split())
    return re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)


def canonical(value: object) -> str:
    try:
        return canonical_json(value)
    except InvalidInput:
        return repr(value)


def shown(values: Iterable[Any]) -> str:
    return ", ".join(v if isinstance(v, str) else json.dumps(v) for v in values) or "none"


def when(facts: Facts) -> str:
    return f"for {facts.valid_at or 'the date asked'} as known on {facts.known_at or 'now'}"
