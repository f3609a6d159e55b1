"""Statements wholly in the reader's language: times, knowledge qualifiers, Italian grammar.

A statement is what an agent hands a model, so its frame and its citations speak one language:
``In force on 2025-02-20 (a past date): Circular 7/2023, in force from 1 June 2023 …`` or
``In vigore il 20 febbraio 2025 (una data passata): Circular 7/2023, in vigore dal 1° giugno
2023 …`` — never "in vigore dal" inside an English frame. A current answer reads "as known now
(2026-12-01 07:18 UTC)" rather than a microsecond timestamp; the exact instants stay in the
JSON. Official references ("Circular 7/2023") are the document's own name and are not
translated.

The kernel words fact evidence (:func:`vigente.kernel.statement.statement_for`) with a
phrasebook per language: English is the kernel's own, :data:`ITALIAN` is here.
:func:`fact_statement` words evidence in the language asked for with the same walk, and
:func:`in_language` returns the evidence with that statement: every surface (the Python API's
``Vigente.evidence(language=…)``, the CLI's ``--lang``, HTTP and MCP) words a fact answer with
it. :func:`fact_citation`, :func:`on_day` and :func:`known_phrase` take their words from the
same phrasebooks. The Italian pieces (:func:`italian_moment`, :func:`italian_period`,
:func:`italian_at`) also word search hits (:mod:`vigente.retrieval.wording`) and the answer
check's findings, so there is one Italian date and qualifier format.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from vigente.evidence.dates import Language, check_language, format_date
from vigente.evidence.references import reference_key
from vigente.kernel.answer import Evidence, PrecedenceOutcome
from vigente.kernel.statement import ENGLISH, Phrasebook, format_value, statement_for
from vigente.records.values import canonical_json
from vigente.records.versions import Version
from vigente.time import Instant

__all__ = [
    "Gender",
    "ITALIAN",
    "article",
    "fact_citation",
    "fact_statement",
    "gender",
    "in_language",
    "italian_at",
    "italian_from",
    "italian_moment",
    "italian_on",
    "italian_period",
    "known_phrase",
    "on_day",
    "participle",
]

_MICROS_PER_DAY = 86_400_000_000


# -- Italian grammar: article, articulated preposition and participle agree with the act ----
_FEMININE_KINDS = {
    "circular",
    "law",
    "directive",
    "decision",
    "resolution",
    "determination",
    "order",
    "communication",
    "recommendation",
    "note",
    "instruction",
    "provision",
    "policy",
}
_MASCULINE_KINDS = {
    "regulation",
    "decree",
    "legislative decree",
    "decree-law",
    "notice",
    "measure",
    "memorandum",
    "act",
}
Gender = Literal["f", "m", "?"]


def gender(reference: str) -> Gender:
    """The grammatical gender of an act's kind in Italian ("?" when the kind is unknown)."""
    kind, _ = reference_key(reference)
    if kind in _FEMININE_KINDS:
        return "f"
    if kind in _MASCULINE_KINDS:
        return "m"
    return "?"


def article(reference: str, preposition: str = "") -> str:
    """ "la Circolare", "dalla Circolare", "il Regolamento", "dal Regolamento", "l'Ordinanza"."""
    kind = gender(reference)
    first = reference.lstrip()[:1].lower()
    second = reference.lstrip()[1:2].lower()
    if kind == "?":
        return f"{preposition or ''}{' ' if preposition else ''}{reference}".strip()
    if first in "aeiouh":
        word = "l'"
    elif kind == "f":
        word = "la "
    elif first == "z" or (first == "s" and second not in "aeiou"):
        word = "lo "
    else:
        word = "il "
    if preposition == "da":
        word = {"l'": "dall'", "la ": "dalla ", "lo ": "dallo ", "il ": "dal "}[word]
    return f"{word}{reference}"


def participle(stem: str, reference: str) -> str:
    """ "sostituita" for a circular, "sostituito" for a regulation."""
    return stem + ("a" if gender(reference) == "f" else "o")


def _elided(day: int) -> bool:
    # "l'8 marzo", "l'11 marzo": the article elides before a vowel sound.
    return day in (8, 11)


def italian_on(day: _dt.date) -> str:
    """ "il 3 marzo 2025", "l'8 marzo 2025", "l'11 marzo 2025"."""
    return ("l'" if _elided(day.day) else "il ") + format_date(day, "it")


def italian_from(day: _dt.date) -> str:
    """ "dal 3 marzo 2025", "dall'8 marzo 2025", "dal 1° marzo 2025"."""
    return ("dall'" if _elided(day.day) else "dal ") + format_date(day, "it")


def _italian_at(day: _dt.date) -> str:
    """ "al 3 marzo 2025", "all'8 marzo 2025" (as in "come noto al …")."""
    return ("all'" if _elided(day.day) else "al ") + format_date(day, "it")


def italian_at(day: _dt.date) -> str:
    """ "al 3 marzo 2025", "all'8 marzo 2025" (as in "come noto al …")."""
    return _italian_at(day)


def _clock(at: Instant) -> str | None:
    """ "07:18 UTC", or ``None`` for a date (midnight UTC)."""
    if at.is_date or at.micros % _MICROS_PER_DAY == 0:
        return None
    return at.datetime.strftime("%H:%M UTC")


def _italian_moment(at: Instant, prefix: str) -> str:
    day = at.date
    head = {"il": italian_on, "dal": italian_from, "al": _italian_at}[prefix](day)
    clock = _clock(at)
    return head if clock is None else f"{head} alle {clock}"


def italian_moment(at: Instant, preposition: Literal["il", "dal", "al"]) -> str:
    """An instant as the Italian statements word it: "il 3 marzo 2025", "dal 1° marzo 2025",
    "all'8 marzo 2025", with "alle 07:18 UTC" when it is not midnight UTC."""
    return _italian_moment(at, preposition)


def italian_period(valid_from: Instant, valid_to: Instant | None) -> str:
    """ "dal 1° settembre 2026", or "dal 1° settembre 2026 fino al 1° ottobre 2026 (escluso)":
    a half-open validity as an Italian fact statement words a row's period."""
    start = _italian_moment(valid_from, "dal")
    if valid_to is None:
        return start
    return f"{start} fino {_italian_moment(valid_to, 'al')} (escluso)"


# -- fact evidence in Italian ---------------------------------------------------------------
class _Italian:
    """The Italian words of a fact statement (:class:`~vigente.kernel.statement.Phrasebook`)."""

    def on_day(self, at: Instant) -> str:
        return _italian_moment(at, "il")

    def as_known(self, k: Instant, now: Instant) -> str:
        if k == now:
            clock = _clock(k)
            day = format_date(k.date, "it")
            return f"come noto ora ({day if clock is None else f'{day}, {clock}'})"
        return "come noto " + _italian_moment(k, "al")

    def support(self, rows: Sequence[Version]) -> str:
        return "; ".join(
            f"fonte: {v.source}, valido {italian_period(v.valid_from, v.valid_to)}" for v in rows
        )

    def citation(self, version: Version) -> str:
        return f"{version.source}, valido {_italian_moment(version.valid_from, 'dal')}"

    def missing(self, subject: str, on_t: str, known: str) -> str:
        return f"Nessun dato per {subject} {on_t}, {known}: nessun valore registrato, non zero."

    def conflict(self, subject: str, on_t: str, known: str, alternatives: str) -> str:
        return (
            f"Conflitto: le fonti non concordano su {subject} {on_t}, {known}: {alternatives}. "
            "Nessuna regola di precedenza lo risolve: riportare ogni alternativa, senza "
            "sceglierne una, unirle o farne la media."
        )

    def current(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        return f"{subject} è {shown} {on_t} ({backing}), {known}."

    def historical(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        return f"{subject} era {shown} {on_t} ({backing}), {known}."

    def retrospective(
        self,
        subject: str,
        shown: str,
        on_t: str,
        backing: str,
        known: str,
        valid_at: Instant,
        earlier: Sequence[str],
    ) -> str:
        before = "non aveva alcun dato" if not earlier else "riportava " + " o ".join(earlier)
        return (
            f"{subject} era {shown} {on_t} ({backing}), {known}. Appreso in ritardo: come noto "
            f"{_italian_moment(valid_at, 'al')} stesso, l'archivio {before}."
        )

    def known_then(
        self, subject: str, shown: str, on_t: str, backing: str, known_at: Instant
    ) -> str:
        return (
            f"Come noto {_italian_moment(known_at, 'al')}, l'archivio riportava {subject} "
            f"pari a {shown} {on_t} ({backing}). È ciò che l'archivio conteneva allora, non "
            "necessariamente ciò che era vero."
        )

    def announced_future(
        self, subject: str, shown: str, start: Instant, backing: str, known: str,
        known_at: Instant,
    ) -> str:
        return (
            f"{subject} è annunciato pari a {shown} {_italian_moment(start, 'dal')} ({backing}), "
            f"{known}. Annunciato, non ancora in vigore {_italian_moment(known_at, 'al')}; un "
            "annuncio può ancora cambiare."
        )

    def projected(
        self, subject: str, shown: str, on_t: str, start: Instant, backing: str, known: str
    ) -> str:
        return (
            f"{subject} è previsto pari a {shown} {on_t}, salvo modifiche: in vigore "
            f"{_italian_moment(start, 'dal')} senza modifiche annunciate, {known} ({backing})."
        )

    def precedence(self, outcome: PrecedenceOutcome) -> str:
        overruled = "; ".join(
            f"{format_value(v.value)} (fonte: {v.source})" for v in outcome.overruled
        )
        return (
            "Le fonti non concordavano; la regola di precedenza "
            f"{' > '.join(outcome.rule.sources)} ha mantenuto {outcome.kept_source} "
            f"e scartato {overruled}."
        )


ITALIAN: Phrasebook = _Italian()
_PHRASEBOOKS: dict[Language, Phrasebook] = {"en": ENGLISH, "it": ITALIAN}


# -- the pieces of a statement, in either language ------------------------------------------
def on_day(at: Instant, language: str) -> str:
    """ "on 2025-02-20" / "il 20 febbraio 2025" (with the time to the minute when not midnight)."""
    return _PHRASEBOOKS[check_language(language)].on_day(at)


def known_phrase(k: Instant, now: Instant, language: str) -> str:
    """ "as known now (2026-12-01 07:18 UTC)" when ``k`` is the moment the question was asked,
    else "as known on 2025-02-20"; in Italian "come noto ora (…)" / "come noto al …"."""
    return _PHRASEBOOKS[check_language(language)].as_known(k, now)


def _support_of(evidence: Evidence) -> list[list[Version]]:
    """The admitted rows that back each value, as the kernel's wording groups them."""
    keys = [canonical_json(v.value) for v in evidence.admitted]
    return [
        [v for v, key in zip(evidence.admitted, keys, strict=True) if key == canonical_json(value)]
        for value in evidence.values
    ]


def fact_statement(evidence: Evidence, language: str) -> str:
    """The statement of fact evidence in ``language`` ("en": the kernel's own wording)."""
    lang = check_language(language)
    if lang == "en":
        return evidence.statement
    return statement_for(evidence, _support_of(evidence), _PHRASEBOOKS[lang])


def fact_citation(version: Version, language: str) -> str:
    """ "policy, valid from 2026-09-01" / "policy, valido dal 1° settembre 2026": where an
    admitted fact row comes from and since when."""
    return _PHRASEBOOKS[check_language(language)].citation(version)


def in_language(evidence: Evidence, language: str) -> Evidence:
    """``evidence`` with its statement worded in ``language`` (the same evidence for "en")."""
    if check_language(language) == "en":
        return evidence
    return replace(evidence, statement=fact_statement(evidence, language))
