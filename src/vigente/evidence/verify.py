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
* ``superseded_as_in_force`` — a superseded version cited as in force without its successor
  (a document version not yet in force, or expired, cited as in force is ``value_not_admitted``).

The check is deliberately strict and literal: it cannot prove an answer right, only catch
these specific ways of being wrong. ``language`` ("en", the default, or "it") words the findings'
messages — the codes, spans and verdict are the same in either — with the dates and qualifiers
of the Italian statements ("per il 29 settembre 2026, come noto al 29 settembre 2026").
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vigente.evidence.answer_reading import (
    ANNOUNCED,
    HEDGE,
    IN_FORCE,
    KNOWN_THEN,
    NOT_IN_FORCE,
    PROJECTED,
    Answer,
    EvidenceLike,
    Facts,
    canonical,
    date_of,
    read_facts,
    shown,
    when,
)
from vigente.evidence.dates import Language, check_language
from vigente.evidence.errors import EvidenceFileError, InvalidEvidence
from vigente.evidence.numbers import numbers_in
from vigente.evidence.references import find_references, same_reference
from vigente.evidence.text import Span, sentence_at
from vigente.evidence.wording import italian_at, italian_on, participle

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


# -- the words of a finding, in English or Italian ------------------------------------------
def _when(facts: Facts, lang: Language) -> str:
    """ "for 2026-09-29 as known on 2026-09-29" / "per il 29 settembre 2026, come noto al 29
    settembre 2026": the question the evidence answers."""
    if lang == "en":
        return when(facts)
    on = "per la data chiesta" if facts.valid_at is None else f"per {italian_on(facts.valid_at)}"
    known = "ora" if facts.known_at is None else italian_at(facts.known_at)
    return f"{on}, come noto {known}"


def _shown(values: Iterable[Any], lang: Language) -> str:
    listed = shown(values)
    return "nessuno" if lang == "it" and listed == "none" else listed


def _cited(reference: str) -> str:
    """ "citata" for a circular, "citato" for a decree (the act the answer cites)."""
    return participle("citat", reference)


# -- the checks -----------------------------------------------------------------------------
def _check_values(answer: Answer, facts: Facts, lang: Language) -> list[Finding]:
    findings: list[Finding] = []
    asked = _when(facts, lang)
    if facts.status == "missing":
        for n in answer.numbers:
            message = (
                f"{n.text!r} is stated, but the evidence {asked} is missing — no "
                "record, not zero: say that no value is recorded for that date instead"
                if lang == "en"
                else f"{n.text!r} è indicato, ma l'evidenza {asked}, è mancante — nessun dato "
                "registrato, non zero: scrivere invece che per quella data non è registrato "
                "alcun valore"
            )
            findings.append(
                Finding(FindingCode.NUMBER_WITHOUT_EVIDENCE, message, answer.span(n.start, n.end))
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
                message = (
                    f"{n.text!r} is not among the admitted values ({shown(facts.values)}) "
                    f"{asked}: state only admitted values, or check this one against "
                    "evidence for the date it applies to"
                    if lang == "en"
                    else f"{n.text!r} non è tra i valori ammessi ({_shown(facts.values, lang)}) "
                    f"{asked}: indicare solo valori ammessi, oppure verificare questo valore con "
                    "l'evidenza della data a cui si riferisce"
                )
                findings.append(
                    Finding(FindingCode.VALUE_NOT_ADMITTED, message, answer.span(n.start, n.end))
                )
    admitted_keys = {canonical(v) for v in facts.values}
    admitted_keys |= {canonical(r.get("value")) for r in facts.admitted}
    for row in facts.excluded:
        value = row.get("value")
        if not isinstance(value, str) or canonical(value) in admitted_keys:
            continue
        if isinstance(row.get("reference"), str):
            continue  # a document version: citing it is checked as superseded or not
        for span in answer.occurrences(value):
            reason = row.get("reason", "excluded")
            message = (
                f"{span.text!r} is the value of a version that is not admissible "
                f"{asked} ({reason}): use the admitted value ({shown(facts.values)})"
                if lang == "en"
                else f"{span.text!r} è il valore di una versione non ammissibile {asked} "
                f"({reason}): usare il valore ammesso ({_shown(facts.values, lang)})"
            )
            findings.append(Finding(FindingCode.VALUE_NOT_ADMITTED, message, span))
    return findings


def _dates_for(facts: Facts) -> list[_dt.date]:
    days: list[_dt.date] = []
    if facts.interpretation == "known_then":
        return [facts.known_at] if facts.known_at else []
    if facts.valid_at:
        days.append(facts.valid_at)
    for row in facts.admitted:
        for key in ("valid_from", "valid_to"):
            day = date_of(f"admitted {key}", row.get(key))
            if day is not None:
                days.append(day)
                if key == "valid_to":
                    days.append(day - _dt.timedelta(days=1))  # "until 31 August" (inclusive)
    return days


def _periods(facts: Facts) -> list[tuple[_dt.date, _dt.date | None]]:
    periods = []
    for row in facts.admitted:
        start = date_of("admitted valid_from", row.get("valid_from"))
        if start is not None:
            periods.append((start, date_of("admitted valid_to", row.get("valid_to"))))
    return periods


def _qualified(answer: Answer, facts: Facts, start: int, end: int) -> bool:
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
        "announced_future": ANNOUNCED,
        "known_then": KNOWN_THEN,
        "projected": PROJECTED,
    }.get(facts.interpretation or "")
    return phrase is not None and phrase.search(answer.text, start, end) is not None


_NEEDS = {
    "announced_future": "its start date or 'announced' (e.g. 'announced, from 1 October 2026')",
    "historical": "the date it applied to (e.g. 'on 20 August 2026')",
    "retrospective": "the date it applied to (e.g. 'on 2 September 2026')",
    "known_then": "the knowledge date (e.g. 'as known on 2 September 2026')",
    "projected": "the date and 'if nothing changes'",
}
_NEEDS_IT = {
    "announced_future": "la data di inizio o 'annunciato' (per esempio 'annunciato, dal 1° "
    "ottobre 2026')",
    "historical": "la data a cui si riferiva (per esempio 'il 20 agosto 2026')",
    "retrospective": "la data a cui si riferiva (per esempio 'il 2 settembre 2026')",
    "known_then": "la data della conoscenza (per esempio 'come noto al 2 settembre 2026')",
    "projected": "la data e 'salvo modifiche'",
}
_INTERPRETATION_IT = {
    "announced_future": "annunciato",
    "historical": "storico",
    "retrospective": "appreso in ritardo",
    "known_then": "noto allora",
    "projected": "previsto",
}


def _check_qualifiers(answer: Answer, facts: Facts, lang: Language) -> list[Finding]:
    label = facts.interpretation
    if facts.status != "supported" or label not in _NEEDS:
        return []
    findings = []
    for value in facts.values:
        for span in answer.occurrences(value, facts.admitted):
            start, end = answer.context(span.start)
            if not _qualified(answer, facts, start, end):
                message = (
                    f"{span.text!r} is a {label} value {_when(facts, lang)} but is "
                    f"stated without {_NEEDS[label]}: keep the qualifier next to the value"
                    if lang == "en"
                    else f"{span.text!r} è un valore {_INTERPRETATION_IT[label]} ({label}) "
                    f"{_when(facts, lang)}, ma è indicato senza {_NEEDS_IT[label]}: tenere la "
                    "qualificazione accanto al valore"
                )
                findings.append(Finding(FindingCode.MISSING_DATE_QUALIFIER, message, span))
    return findings


def _check_conflict(answer: Answer, facts: Facts, lang: Language) -> list[Finding]:
    if facts.status != "conflict":
        return []
    stated = {canonical(v): answer.occurrences(v, facts.admitted) for v in facts.values}
    mentioned = [v for v in facts.values if stated[canonical(v)]]
    hedged = HEDGE.search(answer.text) is not None
    first = next((s[0] for s in stated.values() if s), None)
    if mentioned and len(mentioned) < len(facts.values):
        left_out = [v for v in facts.values if not stated[canonical(v)]]
        message = (
            f"the sources disagree {when(facts)} ({shown(facts.values)}) but the answer "
            f"states only {shown(mentioned)}: report every alternative ({shown(left_out)} "
            "is missing) and say that the sources conflict"
            if lang == "en"
            else f"le fonti non concordano {_when(facts, lang)} ({shown(facts.values)}), ma la "
            f"risposta indica solo {shown(mentioned)}: riportare ogni alternativa (manca "
            f"{shown(left_out)}) e dire che le fonti sono in conflitto"
        )
        return [Finding(FindingCode.CONFLICT_AS_SINGLE_VALUE, message, first)]
    if not hedged and (mentioned or answer.numbers):
        span = first or answer.span(answer.numbers[0].start, answer.numbers[0].end)
        message = (
            f"the sources disagree {when(facts)} ({shown(facts.values)}) but the answer "
            "does not say so: state that the sources conflict and give every alternative"
            if lang == "en"
            else f"le fonti non concordano {_when(facts, lang)} ({shown(facts.values)}), ma la "
            "risposta non lo dice: dichiarare che le fonti sono in conflitto e riportare ogni "
            "alternativa"
        )
        return [Finding(FindingCode.CONFLICT_AS_SINGLE_VALUE, message, span)]
    return []


def _check_versions_cited(answer: Answer, facts: Facts, lang: Language) -> list[Finding]:
    """A document version that is not admissible at ``t`` must not be cited as in force: a
    superseded one without its successor (``superseded_as_in_force``), any other (not yet in
    force, expired) without the date that qualifies it (``value_not_admitted``)."""
    rows = {str(r.get("version_id")): r for r in (*facts.admitted, *facts.excluded)}
    in_force = [r["reference"] for r in facts.admitted if isinstance(r.get("reference"), str)]
    findings: list[Finding] = []
    flagged: set[int] = set()
    asked = _when(facts, lang)
    for row in facts.excluded:
        reference, reason = row.get("reference"), str(row.get("reason"))
        if not isinstance(reference, str) or reason == "corrected":
            continue  # a corrigendum changes no law: citing the corrected act is not wrong
        if any(same_reference(reference, r) for r in in_force):
            continue
        successor_ref = _successor_reference(row, rows)
        superseded = reason in _ENDED_REASONS and bool(row.get("successor_id") or successor_ref)
        if superseded and isinstance(successor_ref, str) and answer.citations_of(successor_ref):
            continue
        starts = date_of("excluded valid_from", row.get("valid_from"))
        for span in answer.citations_of(reference):
            claim, start, end = _claim_in_force(answer, span.start)
            if claim is None:
                continue
            if superseded:
                message = _superseded_message(span, claim, reference, reason, successor_ref,
                                              asked, lang)
                findings.append(Finding(FindingCode.SUPERSEDED_AS_IN_FORCE, message, span))
                flagged.add(span.start)
                continue
            dated = starts is not None and any(
                start <= m.start < end and m.matches(starts) for m in answer.dates
            )
            if dated or ANNOUNCED.search(answer.text, start, end):
                continue  # "Circular 12/2025 will be in force from 3 March 2025"
            flagged.add(span.start)
            message = _not_in_force_message(span, claim, reference, reason, in_force, asked,
                                            lang)
            findings.append(Finding(FindingCode.VALUE_NOT_ADMITTED, message, span))
    if facts.status == "missing" and facts.documents:
        findings += _cited_when_none_in_force(answer, asked, lang, flagged)
    return findings


def _claim_in_force(answer: Answer, at: int) -> tuple[str | None, int, int]:
    """The words of the sentence around ``at`` that claim a version in force (None when
    there are none or the sentence also says "not in force"), and the sentence's bounds."""
    i = sentence_at(answer.bounds, at)
    start, end = answer.bounds[i] if answer.bounds else (0, len(answer.text))
    claim = IN_FORCE.search(answer.text, start, end)
    if claim is None or NOT_IN_FORCE.search(answer.text, start, end):
        return None, start, end
    return claim.group(0), start, end


def _superseded_message(span: Span, claim: str, reference: str, reason: str,
                        successor_ref: str | None, asked: str, lang: Language) -> str:
    """How to fix a superseded or revoked version cited as in force."""
    named = isinstance(successor_ref, str)
    if lang == "en":
        instead = f" {successor_ref}" if named else " a successor"
        ended = "revoked" if reason == "revoked" else "superseded"
        return (
            f"{span.text!r} is cited as {claim!r}, but it was {ended} "
            f"{asked}: cite{instead} as the version in force, or say that "
            f"{span.text} is no longer in force"
        )
    instead = f" {successor_ref}" if named else " il successore"
    ended = participle("abrogat" if reason == "revoked" else "superat", reference)
    return (
        f"{span.text!r} è {_cited(reference)} come {claim!r}, ma "
        f"{asked}, risulta {ended}: citare{instead} come versione in vigore, "
        f"oppure dire che {span.text} non è più in vigore"
    )


def _not_in_force_message(span: Span, claim: str, reference: str, reason: str,
                          in_force: list[str], asked: str, lang: Language) -> str:
    """How to fix a version not in force (not yet, or no longer) cited as in force."""
    return (
        f"{span.text!r} is cited as {claim!r}, but it is not in force "
        f"{asked} ({reason}): cite the version in force "
        f"({', '.join(in_force) or 'none is recorded for that date'}) or give "
        "the date from which it applies"
        if lang == "en"
        else f"{span.text!r} è {_cited(reference)} come {claim!r}, ma non è "
        f"in vigore {asked} ({reason}): citare la versione in vigore "
        f"({', '.join(in_force) or 'nessuna è registrata per quella data'}) oppure "
        "indicare la data da cui si applica"
    )


def _cited_when_none_in_force(answer: Answer, asked: str, lang: Language,
                              flagged: set[int]) -> list[Finding]:
    """The references cited as in force where no version is (the evidence is ``missing``),
    but those already ``flagged`` (by their start)."""
    findings: list[Finding] = []
    for ref in answer.references:
        if ref.start in flagged:
            continue
        claim, _, _ = _claim_in_force(answer, ref.start)
        if claim is not None:
            message = (
                f"{ref.text!r} is cited as {claim!r}, but no version is in "
                f"force {asked}: say that none is recorded for that date"
                if lang == "en"
                else f"{ref.text!r} è {_cited(ref.text)} come {claim!r}, ma nessuna "
                f"versione è in vigore {asked}: dire che per quella data non ne è "
                "registrata alcuna"
            )
            findings.append(
                Finding(
                    FindingCode.VALUE_NOT_ADMITTED,
                    message,
                    Span.of(answer.text, ref.start, ref.end),
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


def verify(
    answer_text: str, evidence: Mapping[str, Any] | EvidenceLike, *, language: str = "en"
) -> Verdict:
    """Check ``answer_text`` against ``evidence`` (an :class:`Evidence` or its ``as_dict()``,
    i.e. ``ask --json``, including document rows with ``reference``/``citation``); the findings'
    messages are worded in ``language`` ("en" or "it"; another raises
    :class:`~vigente.errors.UnsupportedLanguage`)."""
    lang = check_language(language)
    if not isinstance(answer_text, str):
        raise InvalidEvidence(f"the answer must be text, got {type(answer_text).__name__}")
    facts = read_facts(evidence)
    answer = Answer(answer_text, facts)
    findings = [
        *_check_values(answer, facts, lang),
        *_check_qualifiers(answer, facts, lang),
        *_check_conflict(answer, facts, lang),
        *_check_versions_cited(answer, facts, lang),
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


def verify_file(path: str | Path, text: str, *, language: str = "en") -> Verdict:
    """:func:`verify` ``text`` against the evidence saved in the JSON file at ``path``, the
    findings worded in ``language``."""
    check_language(language)  # before the file is read: the first error is the one to fix
    return verify(text, load_evidence(path), language=language)
