"""The wording of evidence: one sentence that keeps every qualifier a model must not drop."""

from __future__ import annotations

import json
from collections.abc import Sequence

from vigente.kernel.evidence import Evidence, Interpretation, Status
from vigente.kernel.values import JSONValue
from vigente.kernel.versions import Version

__all__ = ["format_value", "statement_for"]


def format_value(value: JSONValue) -> str:
    if isinstance(value, str):
        return value
    if type(value) is int:  # the common case, spelt the same by JSON and str()
        return str(value)
    return json.dumps(value, ensure_ascii=False)


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
    t, k = e.valid_at, e.known_at
    if e.status is Status.MISSING:
        # Nothing learned after k may leak into an answer at k (invariant 2).
        return f"No record of {subject} on {t} as known on {k} — no record, not zero."
    if e.status is Status.CONFLICT:
        alternatives = "; ".join(
            f"{format_value(value)} ({_support(rows)})"
            for value, rows in zip(e.values, support, strict=True)
        )
        return (
            f"Conflict: the sources disagree on {subject} on {t} as known on {k}: "
            f"{alternatives}. No precedence rule resolves it: report every alternative, "
            "do not pick, merge or average them."
        )
    value = e.values[0]
    shown = format_value(value)
    rows = support[0]
    backing = _support(rows)
    label = e.interpretation
    if label is Interpretation.CURRENT:
        text = f"{subject} is {shown} on {t} ({backing}), as known on {k}."
    elif label is Interpretation.HISTORICAL:
        text = f"{subject} was {shown} on {t} ({backing}), as known on {k}."
    elif label is Interpretation.RETROSPECTIVE:
        before = (
            "no record"
            if not e.earlier_values
            else " or ".join(format_value(v) for v in e.earlier_values)
        )
        text = (
            f"{subject} was {shown} on {t} ({backing}), as known on {k}. This was learned "
            f"late: as known on {t} itself, the record showed {before}."
        )
    elif label is Interpretation.KNOWN_THEN:
        text = (
            f"As known on {k}, the record showed {subject} as {shown} on {t} ({backing}). "
            "This is what the store held then, not necessarily what was true."
        )
    elif label is Interpretation.ANNOUNCED_FUTURE:
        start = min(v.valid_from for v in rows)
        text = (
            f"{subject} is announced as {shown} from {start} ({backing}), as known on {k}. "
            f"Announced, not yet in force on {k}; an announcement may still change."
        )
    else:  # PROJECTED
        start = max(v.valid_from for v in rows)
        text = (
            f"{subject} is projected to be {shown} on {t}: in force since {start} with no "
            f"change announced as known on {k} ({backing})."
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
