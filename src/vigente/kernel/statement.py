"""The wording of evidence: one sentence that keeps every qualifier a model must not drop.

:func:`statement_for` walks the evidence once (its status, its interpretation, the rows that
back each value, the precedence rule that settled a conflict) and takes the words from a
:class:`Phrasebook`, one per language. :data:`ENGLISH` is the kernel's own; the reader's other
languages (Italian, in :mod:`vigente.evidence.wording`) are phrasebooks handed to the same walk,
so a new language adds words, not another copy of the logic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from vigente.kernel.answer import Evidence, Interpretation, PrecedenceOutcome, Status
from vigente.records.values import JSONValue
from vigente.records.versions import Version
from vigente.time import Instant

__all__ = ["ENGLISH", "Phrasebook", "as_known", "format_value", "moment", "statement_for"]


def format_value(value: JSONValue) -> str:
    if isinstance(value, str):
        return value
    if type(value) is int:  # the common case, spelt the same by JSON and str()
        return str(value)
    return json.dumps(value, ensure_ascii=False)


_DAY = 86_400_000_000
_MINUTE = 60_000_000
# Statements word the same few instants again and again: their text, by the minute (twice
# it, plus one for an exact midnight, whose text is its date's), in a bounded cache emptied
# when full.
_MOMENTS: dict[int, str] = {}
_MOMENTS_LIMIT = 1 << 16


def moment(at: Instant) -> str:
    """An instant as a reader wants it: ``2025-02-20`` at midnight UTC, else UTC to the minute
    (``2026-12-01 07:18 UTC``); the exact instant stays in the JSON."""
    if at.is_date:
        return at.isoformat()  # the date's text, kept by Instant
    micros = at.micros
    midnight = micros % _DAY == 0
    key = (micros // _MINUTE) << 1 | midnight
    text = _MOMENTS.get(key)
    if text is None:
        if len(_MOMENTS) >= _MOMENTS_LIMIT:
            _MOMENTS.clear()
        if midnight:
            text = at.date.isoformat()
        else:
            text = at.datetime.strftime("%Y-%m-%d %H:%M UTC")
        _MOMENTS[key] = text
    return text


class Phrasebook(Protocol):
    """The words of one language for a fact statement (the examples are English).

    :func:`statement_for` decides which sentence is said and hands it the pieces already
    worded: the ``subject`` (the lineage, with its scope), the value ``shown``, ``on_t`` (the
    day asked about, from :meth:`on_day`), the ``backing`` rows (from :meth:`support`) and the
    ``known`` qualifier (from :meth:`as_known`); a sentence words any other instant itself.
    """

    def on_day(self, at: Instant) -> str:
        """ "on 2025-02-20", "on 2026-12-01 07:18 UTC": the moment a statement is about."""

    def as_known(self, k: Instant, now: Instant) -> str:
        """ "as known now (2026-12-01 07:18 UTC)" when ``k`` is the moment asked, else
        "as known on 2025-02-20"."""

    def support(self, rows: Sequence[Version]) -> str:
        """ "source: a, valid from 2026-01-01; source: b, …": the admitted rows behind one
        value, each with its period."""

    def citation(self, version: Version) -> str:
        """ "policy, valid from 2026-09-01": one admitted row cited on its own."""

    def missing(self, subject: str, on_t: str, known: str) -> str:
        """No admissible value: say there is no record, which is not zero."""

    def conflict(self, subject: str, on_t: str, known: str, alternatives: str) -> str:
        """Sources disagree and no rule settles it: every alternative ("30 (source: …); 45
        (…)"), and the instruction not to pick, merge or average them."""

    def current(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        """ "x is 80 on … (…), as known now (…)." """

    def historical(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        """ "x was 50 on … (…), as known now (…)." """

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
        """A past value learned late: what the record showed as known on ``valid_at`` itself
        (the ``earlier`` values, worded; none: it had no record)."""

    def known_then(
        self, subject: str, shown: str, on_t: str, backing: str, known_at: Instant
    ) -> str:
        """What the store held as known on ``known_at``, not necessarily what was true."""

    def announced_future(
        self, subject: str, shown: str, start: Instant, backing: str, known: str,
        known_at: Instant,
    ) -> str:
        """A value announced from ``start``, not yet in force on ``known_at``."""

    def projected(
        self, subject: str, shown: str, on_t: str, start: Instant, backing: str, known: str
    ) -> str:
        """A later day's value, in force since ``start`` with no change announced."""

    def precedence(self, outcome: PrecedenceOutcome) -> str:
        """The sentence added when a precedence rule settled a conflict: the rule, the source
        it kept and the values it overruled."""


def _period(version: Version) -> str:
    if version.valid_to is None:
        return f"valid from {version.valid_from}"
    return f"valid from {version.valid_from} until {version.valid_to} (exclusive)"


class _English:
    """The kernel's own words (:class:`Phrasebook`)."""

    def on_day(self, at: Instant) -> str:
        return f"on {moment(at)}"

    def as_known(self, k: Instant, now: Instant) -> str:
        # The time in brackets keeps the sentence true when it is read later.
        if k == now:
            return f"as known now ({moment(k)})"
        return f"as known on {moment(k)}"

    def support(self, rows: Sequence[Version]) -> str:
        parts = [f"source: {v.source}, {_period(v)}" for v in rows]
        return "; ".join(parts)

    def citation(self, version: Version) -> str:
        return f"{version.source}, valid from {version.valid_from}"

    def missing(self, subject: str, on_t: str, known: str) -> str:
        return f"No record of {subject} {on_t} {known} — no record, not zero."

    def conflict(self, subject: str, on_t: str, known: str, alternatives: str) -> str:
        return (
            f"Conflict: the sources disagree on {subject} {on_t} {known}: "
            f"{alternatives}. No precedence rule resolves it: report every alternative, "
            "do not pick, merge or average them."
        )

    def current(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        return f"{subject} is {shown} {on_t} ({backing}), {known}."

    def historical(self, subject: str, shown: str, on_t: str, backing: str, known: str) -> str:
        return f"{subject} was {shown} {on_t} ({backing}), {known}."

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
        before = "had no record of it" if not earlier else "showed " + " or ".join(earlier)
        return (
            f"{subject} was {shown} {on_t} ({backing}), {known}. This was learned "
            f"late: as known on {moment(valid_at)} itself, the record {before}."
        )

    def known_then(
        self, subject: str, shown: str, on_t: str, backing: str, known_at: Instant
    ) -> str:
        return (
            f"As known on {moment(known_at)}, the record showed {subject} as {shown} {on_t} "
            f"({backing}). This is what the store held then, not necessarily what was true."
        )

    def announced_future(
        self, subject: str, shown: str, start: Instant, backing: str, known: str,
        known_at: Instant,
    ) -> str:
        return (
            f"{subject} is announced as {shown} from {moment(start)} ({backing}), {known}. "
            f"Announced, not yet in force on {moment(known_at)}; an announcement may still "
            "change."
        )

    def projected(
        self, subject: str, shown: str, on_t: str, start: Instant, backing: str, known: str
    ) -> str:
        return (
            f"{subject} is projected to be {shown} {on_t}: in force since {moment(start)} with "
            f"no change announced, {known} ({backing})."
        )

    def precedence(self, outcome: PrecedenceOutcome) -> str:
        overruled = "; ".join(
            f"{format_value(v.value)} (source: {v.source})" for v in outcome.overruled
        )
        return (
            f"The sources disagreed; the precedence rule {' > '.join(outcome.rule.sources)} "
            f"kept {outcome.kept_source} and overruled {overruled}."
        )


ENGLISH: Phrasebook = _English()


def as_known(k: Instant, now: Instant) -> str:
    """ "as known now (…)" for a current answer (``k`` is the moment asked), else "as known on
    …" (:data:`ENGLISH`'s qualifier)."""
    return ENGLISH.as_known(k, now)


def statement_for(
    evidence: Evidence, support: Sequence[Sequence[Version]], phrases: Phrasebook = ENGLISH
) -> str:
    """Word ``evidence`` with ``phrases`` (English by default); ``support[i]`` are the admitted
    rows that give ``values[i]``."""
    e = evidence
    subject = e.lineage if not e.scope.items else f"{e.lineage} [{e.scope}]"
    on_t = phrases.on_day(e.valid_at)
    known = phrases.as_known(e.known_at, e.now)
    if e.status is Status.MISSING:
        # Nothing learned after k may leak into an answer at k (invariant 2).
        return phrases.missing(subject, on_t, known)
    if e.status is Status.CONFLICT:
        alternatives = "; ".join(
            f"{format_value(value)} ({phrases.support(rows)})"
            for value, rows in zip(e.values, support, strict=True)
        )
        return phrases.conflict(subject, on_t, known, alternatives)
    shown = format_value(e.values[0])
    rows = support[0]
    backing = phrases.support(rows)
    label = e.interpretation
    if label is Interpretation.CURRENT:
        text = phrases.current(subject, shown, on_t, backing, known)
    elif label is Interpretation.HISTORICAL:
        text = phrases.historical(subject, shown, on_t, backing, known)
    elif label is Interpretation.RETROSPECTIVE:
        earlier = [format_value(v) for v in e.earlier_values or ()]
        text = phrases.retrospective(subject, shown, on_t, backing, known, e.valid_at, earlier)
    elif label is Interpretation.KNOWN_THEN:
        text = phrases.known_then(subject, shown, on_t, backing, e.known_at)
    elif label is Interpretation.ANNOUNCED_FUTURE:
        start = min(v.valid_from for v in rows)
        text = phrases.announced_future(subject, shown, start, backing, known, e.known_at)
    else:  # PROJECTED
        start = max(v.valid_from for v in rows)
        text = phrases.projected(subject, shown, on_t, start, backing, known)
    if e.precedence is not None:
        text += " " + phrases.precedence(e.precedence)
    return text
