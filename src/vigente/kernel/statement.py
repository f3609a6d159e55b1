"""The wording of evidence: one sentence that keeps every qualifier a model must not drop."""

from __future__ import annotations

import json

from vigente.kernel.evidence import Evidence, Interpretation, Status
from vigente.kernel.values import JSONValue
from vigente.kernel.versions import Version

__all__ = ["format_value", "statement_for"]


def format_value(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _period(version: Version) -> str:
    if version.valid_to is None:
        return f"valid from {version.valid_from}"
    return f"valid from {version.valid_from} until {version.valid_to} (exclusive)"


def _support(versions: list[Version]) -> str:
    """'source: a, valid from …' for the rows that back one value."""
    parts = [f"source: {v.source}, {_period(v)}" for v in versions]
    return "; ".join(parts)


def _rows_for(evidence: Evidence, value: JSONValue) -> list[Version]:
    key = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return [v for v in evidence.admitted if v.value_json == key]


def statement_for(evidence: Evidence) -> str:
    e = evidence
    subject = e.lineage if not e.scope.items else f"{e.lineage} [{e.scope}]"
    t, k = e.valid_at, e.known_at
    if e.status is Status.MISSING:
        # Nothing learned after k may leak into an answer at k (invariant 2).
        return f"No record of {subject} on {t} as known on {k} — no record, not zero."
    if e.status is Status.CONFLICT:
        alternatives = "; ".join(
            f"{format_value(value)} ({_support(_rows_for(e, value))})" for value in e.values
        )
        return (
            f"Conflict: the sources disagree on {subject} on {t} as known on {k}: "
            f"{alternatives}. No precedence rule resolves it: report every alternative, "
            "do not pick, merge or average them."
        )
    value = e.values[0]
    shown = format_value(value)
    rows = _rows_for(e, value)
    support = _support(rows)
    label = e.interpretation
    if label is Interpretation.CURRENT:
        text = f"{subject} is {shown} on {t} ({support}), as known on {k}."
    elif label is Interpretation.HISTORICAL:
        text = f"{subject} was {shown} on {t} ({support}), as known on {k}."
    elif label is Interpretation.RETROSPECTIVE:
        before = (
            "no record"
            if not e.earlier_values
            else " or ".join(format_value(v) for v in e.earlier_values)
        )
        text = (
            f"{subject} was {shown} on {t} ({support}), as known on {k}. This was learned "
            f"late: as known on {t} itself, the record showed {before}."
        )
    elif label is Interpretation.KNOWN_THEN:
        text = (
            f"As known on {k}, the record showed {subject} as {shown} on {t} ({support}). "
            "This is what the store held then, not necessarily what was true."
        )
    elif label is Interpretation.ANNOUNCED_FUTURE:
        start = min(v.valid_from for v in rows)
        text = (
            f"{subject} is announced as {shown} from {start} ({support}), as known on {k}. "
            f"Announced, not yet in force on {k}; an announcement may still change."
        )
    else:  # PROJECTED
        start = max(v.valid_from for v in rows)
        text = (
            f"{subject} is projected to be {shown} on {t}: in force since {start} with no "
            f"change announced as known on {k} ({support})."
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
