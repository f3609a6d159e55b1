"""The final answer check: compare a generated answer with the deterministic evidence.

A correct filter does not stop a model from dropping "from 1 October" while rewording, from
picking one side of a conflict, or from quoting a number where the store has none (seed
000). :func:`verify` reads the answer (English or Italian) against the ``ask --json`` evidence
and returns a :class:`Verdict` — pass or fail with findings, each with a code, a message that
says how to fix it and the offending span of the answer:

* ``value_not_admitted`` — a number or value that is not among the admitted values;
* ``missing_date_qualifier`` — an ``announced_future``, ``historical``, ``retrospective``,
  ``known_then`` or ``projected`` value stated without its date or qualifier;
* ``conflict_as_single_value`` — a ``conflict`` presented as one value, or without a hedge;
* ``number_without_evidence`` — a number stated where the evidence is ``missing``;
* ``superseded_as_in_force`` — a superseded version cited as in force without its successor.

The check is deliberately strict and literal: it cannot prove an answer right, only catch
these specific ways of being wrong.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vigente.errors import InvalidInput, InvalidTime
from vigente.evidence.dates import find_dates
from vigente.evidence.errors import EvidenceFileError, InvalidEvidence
from vigente.evidence.numbers import find_numbers, numbers_in
from vigente.evidence.references import find_references, same_reference
from vigente.evidence.text import Span, sentence_at, sentences
from vigente.kernel.evidence import Evidence
from vigente.kernel.values import canonical_json
from vigente.time import parse_instant

__all__ = ["Finding", "FindingCode", "Verdict", "load_evidence", "verify", "verify_file"]


class FindingCode(enum.StrEnum):
    VALUE_NOT_ADMITTED = "value_not_admitted"
    MISSING_DATE_QUALIFIER = "missing_date_qualifier"
    CONFLICT_AS_SINGLE_VALUE = "conflict_as_single_value"
    NUMBER_WITHOUT_EVIDENCE = "number_without_evidence"
    SUPERSEDED_AS_IN_FORCE = "superseded_as_in_force"


@dataclass(frozen=True, slots=True)
class Finding:
    """One way the answer departs from the evidence, and where (``span`` of the answer)."""

    code: FindingCode
    message: str
    span: Span | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "message": self.message,
            "span": None if self.span is None else self.span.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """Pass when there are no findings. ``status``/``interpretation`` echo the evidence."""

    passed: bool
    findings: tuple[Finding, ...]
    status: str
    interpretation: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "status": self.status,
            "interpretation": self.interpretation,
            "findings": [f.as_dict() for f in self.findings],
        }


# -- phrases --------------------------------------------------------------------------------
def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


_ANNOUNCED = _rx(
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
_KNOWN_THEN = _rx(
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
_PROJECTED = _rx(
    r"projected",
    r"if nothing changes",
    r"no change (?:is |was )?announced",
    r"unless (?:it )?changes?",
    r"salvo (?:modifiche|variazioni)",
    r"in assenza di modifiche",
    r"se nulla cambia",
    r"previsto",
)
_HEDGE = _rx(
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
_IN_FORCE = _rx(
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
_NOT_IN_FORCE = _rx(
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
class _Facts:
    status: str
    interpretation: str | None
    values: tuple[Any, ...]
    valid_at: _dt.date | None
    known_at: _dt.date | None
    admitted: tuple[Mapping[str, Any], ...]
    excluded: tuple[Mapping[str, Any], ...]
    earlier_values: tuple[Any, ...]
    names: tuple[str, ...]  # lineage, scope values, sources, ids: never value claims


def _date_of(where: str, raw: object) -> _dt.date | None:
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


def _facts(evidence: Mapping[str, Any] | Evidence) -> _Facts:
    if isinstance(evidence, Evidence):
        data: Mapping[str, Any] = evidence.as_dict()
        if evidence.earlier_values is not None:
            data = {**data, "earlier_values": list(evidence.earlier_values)}
    elif isinstance(evidence, Mapping):
        data = evidence
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
    return _Facts(
        status=status,
        interpretation=interpretation,
        values=tuple(values),
        valid_at=_date_of("valid_at", data.get("valid_at")),
        known_at=_date_of("known_at", data.get("known_at")),
        admitted=admitted,
        excluded=excluded,
        earlier_values=tuple(earlier) if isinstance(earlier, list) else (),
        names=tuple(sorted({n for n in names if n.strip()}, key=len, reverse=True)),
    )


# -- reading the answer --------------------------------------------------------------------
class _Answer:
    """The answer text with what is not a value claim masked out (dates, references, ids)."""

    def __init__(self, text: str, facts: _Facts) -> None:
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
        key = _canonical(value)
        for row in rows:
            reference = row.get("reference")
            holds = _canonical(row.get("value")) == key or row.get("version_id") == value
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


def _canonical(value: object) -> str:
    try:
        return canonical_json(value)
    except InvalidInput:
        return repr(value)


def _shown(values: Iterable[Any]) -> str:
    return ", ".join(v if isinstance(v, str) else json.dumps(v) for v in values) or "none"


def _when(facts: _Facts) -> str:
    return f"for {facts.valid_at or 'the date asked'} as known on {facts.known_at or 'now'}"


# -- the checks -----------------------------------------------------------------------------
def _check_values(answer: _Answer, facts: _Facts) -> list[Finding]:
    findings: list[Finding] = []
    if facts.status == "missing":
        for n in answer.numbers:
            findings.append(
                Finding(
                    FindingCode.NUMBER_WITHOUT_EVIDENCE,
                    f"{n.text!r} is stated, but the evidence {_when(facts)} is missing — no "
                    "record, not zero: say that no value is recorded for that date instead",
                    answer.span(n.start, n.end),
                )
            )
    else:
        allowed = set().union(
            numbers_in(list(facts.values)), *(numbers_in(r.get("value")) for r in facts.admitted)
        )
        if facts.interpretation == "retrospective":
            allowed |= numbers_in(list(facts.earlier_values))
        # Document evidence admits texts by reference, not numbers: with no number in the
        # admitted values there is nothing to compare a stated number with.
        for n in answer.numbers if allowed else ():
            if not any(n.equals(a) for a in allowed):
                findings.append(
                    Finding(
                        FindingCode.VALUE_NOT_ADMITTED,
                        f"{n.text!r} is not among the admitted values ({_shown(facts.values)}) "
                        f"{_when(facts)}: state only admitted values, or check this one against "
                        "evidence for the date it applies to",
                        answer.span(n.start, n.end),
                    )
                )
    admitted_keys = {_canonical(v) for v in facts.values}
    admitted_keys |= {_canonical(r.get("value")) for r in facts.admitted}
    for row in facts.excluded:
        value = row.get("value")
        if not isinstance(value, str) or _canonical(value) in admitted_keys:
            continue
        if isinstance(row.get("reference"), str):
            continue  # a document version: citing it is checked as superseded or not
        for span in answer.occurrences(value):
            findings.append(
                Finding(
                    FindingCode.VALUE_NOT_ADMITTED,
                    f"{span.text!r} is the value of a version that is not admissible "
                    f"{_when(facts)} ({row.get('reason', 'excluded')}): use the admitted "
                    f"value ({_shown(facts.values)})",
                    span,
                )
            )
    return findings


def _dates_for(facts: _Facts) -> list[_dt.date]:
    days: list[_dt.date] = []
    if facts.interpretation == "known_then":
        return [facts.known_at] if facts.known_at else []
    if facts.valid_at:
        days.append(facts.valid_at)
    for row in facts.admitted:
        for key in ("valid_from", "valid_to"):
            day = _date_of(f"admitted {key}", row.get(key))
            if day is not None:
                days.append(day)
                if key == "valid_to":
                    days.append(day - _dt.timedelta(days=1))  # "until 31 August" (inclusive)
    return days


def _periods(facts: _Facts) -> list[tuple[_dt.date, _dt.date | None]]:
    periods = []
    for row in facts.admitted:
        start = _date_of("admitted valid_from", row.get("valid_from"))
        if start is not None:
            periods.append((start, _date_of("admitted valid_to", row.get("valid_to"))))
    return periods


def _qualified(answer: _Answer, facts: _Facts, start: int, end: int) -> bool:
    days = _dates_for(facts)
    periods = _periods(facts) if facts.interpretation in ("historical", "retrospective") else []
    for mention in answer.dates:
        if not start <= mention.start < end:
            continue
        if any(mention.matches(d) for d in days):
            return True
        day = mention.date
        if day is not None and any(a <= day and (b is None or day < b) for a, b in periods):
            return True
    phrase = {
        "announced_future": _ANNOUNCED,
        "known_then": _KNOWN_THEN,
        "projected": _PROJECTED,
    }.get(facts.interpretation or "")
    return phrase is not None and phrase.search(answer.text, start, end) is not None


_NEEDS = {
    "announced_future": "its start date or 'announced' (e.g. 'announced, from 1 October 2026')",
    "historical": "the date it applied to (e.g. 'on 20 August 2026')",
    "retrospective": "the date it applied to (e.g. 'on 2 September 2026')",
    "known_then": "the knowledge date (e.g. 'as known on 2 September 2026')",
    "projected": "the date and 'if nothing changes'",
}


def _check_qualifiers(answer: _Answer, facts: _Facts) -> list[Finding]:
    if facts.status != "supported" or facts.interpretation not in _NEEDS:
        return []
    findings = []
    for value in facts.values:
        for span in answer.occurrences(value, facts.admitted):
            start, end = answer.context(span.start)
            if not _qualified(answer, facts, start, end):
                findings.append(
                    Finding(
                        FindingCode.MISSING_DATE_QUALIFIER,
                        f"{span.text!r} is a {facts.interpretation} value {_when(facts)} but is "
                        f"stated without {_NEEDS[facts.interpretation]}: keep the qualifier next "
                        "to the value",
                        span,
                    )
                )
    return findings


def _check_conflict(answer: _Answer, facts: _Facts) -> list[Finding]:
    if facts.status != "conflict":
        return []
    stated = {_canonical(v): answer.occurrences(v, facts.admitted) for v in facts.values}
    mentioned = [v for v in facts.values if stated[_canonical(v)]]
    hedged = _HEDGE.search(answer.text) is not None
    first = next((s[0] for s in stated.values() if s), None)
    if mentioned and len(mentioned) < len(facts.values):
        left_out = [v for v in facts.values if not stated[_canonical(v)]]
        return [
            Finding(
                FindingCode.CONFLICT_AS_SINGLE_VALUE,
                f"the sources disagree {_when(facts)} ({_shown(facts.values)}) but the answer "
                f"states only {_shown(mentioned)}: report every alternative ({_shown(left_out)} "
                "is missing) and say that the sources conflict",
                first,
            )
        ]
    if not hedged and (mentioned or answer.numbers):
        span = first or answer.span(answer.numbers[0].start, answer.numbers[0].end)
        return [
            Finding(
                FindingCode.CONFLICT_AS_SINGLE_VALUE,
                f"the sources disagree {_when(facts)} ({_shown(facts.values)}) but the answer "
                "does not say so: state that the sources conflict and give every alternative",
                span,
            )
        ]
    return []


def _check_superseded(answer: _Answer, facts: _Facts) -> list[Finding]:
    rows = {str(r.get("version_id")): r for r in (*facts.admitted, *facts.excluded)}
    findings = []
    for row in facts.excluded:
        reference = row.get("reference")
        ended = row.get("reason") in _ENDED_REASONS or row.get("superseded") is True
        if not ended or not isinstance(reference, str):
            continue
        successor_ref = _successor_reference(row, rows)
        if not row.get("successor_id") and successor_ref is None:
            continue  # ended, not superseded
        if isinstance(successor_ref, str) and answer.citations_of(successor_ref):
            continue
        for span in answer.citations_of(reference):
            i = sentence_at(answer.bounds, span.start)
            start, end = answer.bounds[i] if answer.bounds else (0, len(answer.text))
            claim = _IN_FORCE.search(answer.text, start, end)
            if claim is None or _NOT_IN_FORCE.search(answer.text, start, end):
                continue
            instead = f" {successor_ref}" if isinstance(successor_ref, str) else " its successor"
            findings.append(
                Finding(
                    FindingCode.SUPERSEDED_AS_IN_FORCE,
                    f"{span.text!r} is cited as {claim.group(0)!r}, but it was superseded "
                    f"{_when(facts)}: cite{instead} as the version in force, or say that "
                    f"{span.text} is no longer in force",
                    span,
                )
            )
    return findings


_ENDED_REASONS = ("no_longer_valid", "superseded", "revoked")


def _successor_reference(
    row: Mapping[str, Any], rows: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The successor's reference: given on the row, on the successor's own row, or named last
    in the row's citation ("… superseded on 3 March 2025 by Circular 12/2025")."""
    given = row.get("successor_reference")
    if isinstance(given, str):
        return given
    successor = rows.get(str(row.get("successor_id")))
    if successor is not None and isinstance(successor.get("reference"), str):
        return str(successor["reference"])
    citation, own = row.get("citation"), str(row.get("reference"))
    if isinstance(citation, str):
        others = [r.text for r in find_references(citation) if not same_reference(r.text, own)]
        if others and row.get("successor_id"):
            return others[-1]
    return None


def verify(answer_text: str, evidence: Mapping[str, Any] | Evidence) -> Verdict:
    """Check ``answer_text`` against ``evidence`` (an :class:`Evidence` or its ``as_dict()``,
    i.e. ``ask --json``, including document rows with ``reference``/``citation``)."""
    if not isinstance(answer_text, str):
        raise InvalidEvidence(f"the answer must be text, got {type(answer_text).__name__}")
    facts = _facts(evidence)
    answer = _Answer(answer_text, facts)
    findings = [
        *_check_values(answer, facts),
        *_check_qualifiers(answer, facts),
        *_check_conflict(answer, facts),
        *_check_superseded(answer, facts),
    ]
    findings.sort(key=lambda f: (f.span.start if f.span else -1, f.code.value))
    return Verdict(not findings, tuple(findings), facts.status, facts.interpretation)


def load_evidence(path: str | Path) -> dict[str, Any]:
    """Read an evidence file written by ``vigente ask … --json``; raise
    :class:`EvidenceFileError` saying what is wrong with it and how to produce a good one."""
    where = Path(path)
    how = "write it with `vigente ask LINEAGE --at DATE --json > FILE.json`"
    try:
        raw = where.read_bytes()
    except FileNotFoundError:
        raise EvidenceFileError(f"evidence file {where} does not exist: {how}") from None
    except IsADirectoryError:
        raise EvidenceFileError(f"{where} is a directory, not an evidence file: {how}") from None
    except OSError as exc:
        raise EvidenceFileError(f"cannot read {where}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EvidenceFileError(f"{where} is not UTF-8 text: {how}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EvidenceFileError(f"{where} is not valid JSON ({exc}): {how}") from None
    if not isinstance(data, dict):
        raise EvidenceFileError(
            f"{where} holds a JSON {type(data).__name__}, not an evidence object: {how}"
        )
    return data


def verify_file(path: str | Path, text: str) -> Verdict:
    """:func:`verify` ``text`` against the evidence saved in the JSON file at ``path``."""
    return verify(text, load_evidence(path))
