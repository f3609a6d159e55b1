"""The wording of evidence: one sentence that keeps every qualifier a model must not drop."""

from __future__ import annotations

import json
from collections.abc import Sequence

from vigente.kernel.evidence import Evidence, Interpretation, Status
from vigente.records.values import JSONValue
from vigente.records.versions import Version
from vigente.time import Instant

__all__ = ["as_known", "format_value", "moment", "statement_for"]


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


def as_known(k: Instant, now: Instant) -> str:
    """ "as known now (…)" for a current answer (``k`` is the moment asked), else "as known on
    …"; the time in brackets keeps the sentence true when it is read later."""
    if k == now:
        return f"as known now ({moment(k)})"
    return f"as known on {moment(k)}"


def _period(version: Version) -> str:
    if version.valid_to is None:
        return f"valid from {version.valid_from}"
    return f"valid from {version.valid_from} until {version.valid_to} (exclusive)"


def _support(versions: Sequence[Version]) -> str:
    """'source: a, valid from …' for the rows that back one value."""
    parts = [f"source: {v.source}, {_period(v)}" for v in versions]
    return "; ".join(parts)


def statement_for(evidence: Evidence, support: Sequence[Sequence[Version]]) -> str:
    """Word ``evidence``; ``support[i]`` are the admitted rows that give ``values[i]``."""
    e = evidence
    subject = e.lineage if not e.scope.items else f"{e.lineage} [{e.scope}]"
    t, k = moment(e.valid_at), moment(e.known_at)
    known = as_known(e.known_at, e.now)
    if e.status is Status.MISSING:
        # Nothing learned after k may leak into an answer at k (invariant 2).
        return f"No record of {subject} on {t} {known} — no record, not zero."
    if e.status is Status.CONFLICT:
        alternatives = "; ".join(
            f"{format_value(value)} ({_support(rows)})"
            for value, rows in zip(e.values, support, strict=True)
        )
        return (
            f"Conflict: the sources disagree on {subject} on {t} {known}: "
            f"{alternatives}. No precedence rule resolves it: report every alternative, "
            "do not pick, merge or average them."
        )
    value = e.values[0]
    shown = format_value(value)
    rows = support[0]
    backing = _support(rows)
    label = e.interpretation
    if label is Interpretation.CURRENT:
        text = f"{subject} is {shown} on {t} ({backing}), {known}."
    elif label is Interpretation.HISTORICAL:
        text = f"{subject} was {shown} on {t} ({backing}), {known}."
    elif label is Interpretation.RETROSPECTIVE:
        before = (
            "had no record of it"
            if not e.earlier_values
            else "showed " + " or ".join(format_value(v) for v in e.earlier_values)
        )
        text = (
            f"{subject} was {shown} on {t} ({backing}), {known}. This was learned "
            f"late: as known on {t} itself, the record {before}."
        )
    elif label is Interpretation.KNOWN_THEN:
        text = (
            f"As known on {k}, the record showed {subject} as {shown} on {t} ({backing}). "
            "This is what the store held then, not necessarily what was true."
        )
    elif label is Interpretation.ANNOUNCED_FUTURE:
        start = min(v.valid_from for v in rows)
        text = (
            f"{subject} is announced as {shown} from {moment(start)} ({backing}), {known}. "
            f"Announced, not yet in force on {k}; an announcement may still change."
        )
    else:  # PROJECTED
        start = max(v.valid_from for v in rows)
        text = (
            f"{subject} is projected to be {shown} on {t}: in force since {moment(start)} with no "
            f"change announced, {known} ({backing})."
        )
    if e.precedence is not None:
        overruled = "; ".join(
            f"{format_value(v.value)} (source: {v.source})" for v in e.precedence.overruled
        )
        text += (
            f" The sources disagreed; the precedence rule {' > '.join(e.precedence.rule.sources)}"
            f" kept {e.precedence.kept_source} and overruled {overruled}."
        )
    return text
