"""Evidence: the structured answer to "what was true on ``t`` as known on ``k``?".

The status is a pure function of the distinct admissible values (plus an explicit precedence
rule): none → ``missing``, one → ``supported``, more → ``conflict``. Values are never averaged
and the latest-ingested row is never preferred. The statement keeps the qualifiers a model must
not drop.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from vigente.records.values import JSONValue, Scope
from vigente.records.versions import ExclusionReason, PrecedenceRule, Version
from vigente.time import Instant

__all__ = [
    "Evidence",
    "Exclusion",
    "Interpretation",
    "PrecedenceOutcome",
    "Status",
    "build_evidence",
    "build_exclusion",
]


class Status(enum.StrEnum):
    SUPPORTED = "supported"
    MISSING = "missing"
    CONFLICT = "conflict"


class Interpretation(enum.StrEnum):
    """How a model must read the answer (the seed article's table)."""

    MISSING = "missing"
    CURRENT = "current"
    HISTORICAL = "historical"
    RETROSPECTIVE = "retrospective"
    KNOWN_THEN = "known_then"
    ANNOUNCED_FUTURE = "announced_future"
    PROJECTED = "projected"


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A candidate that was not admitted, why, and what replaced it (if anything)."""

    version: Version
    reason: ExclusionReason
    successor_id: str | None = None

    def as_row(self) -> dict[str, Any]:
        return {
            "version_id": self.version.version_id,
            "reason": self.reason.value,
            "successor_id": self.successor_id,
        }


@dataclass(frozen=True, slots=True)
class PrecedenceOutcome:
    """An explicit precedence rule resolved a conflict: what it kept and what it overruled."""

    rule: PrecedenceRule
    kept_source: str
    overruled: tuple[Version, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule.rule_id,
            "sources": list(self.rule.sources),
            "kept_source": self.kept_source,
            "overruled": [
                {"version_id": v.version_id, "source": v.source, "value": v.value}
                for v in self.overruled
            ],
        }


@dataclass(frozen=True, slots=True)
class Evidence:
    """The answer object handed to an agent; ``statement`` is its faithful wording."""

    lineage: str
    scope: Scope
    valid_at: Instant
    known_at: Instant
    now: Instant
    status: Status
    values: tuple[JSONValue, ...]
    interpretation: Interpretation
    admitted: tuple[Version, ...]
    excluded: tuple[Exclusion, ...]
    statement: str
    precedence: PrecedenceOutcome | None = None
    earlier_values: tuple[JSONValue, ...] | None = field(default=None, repr=False)
    decision_id: str | None = None

    @property
    def value(self) -> JSONValue:
        """The single supported value; raises when the status is not ``supported``."""
        if self.status is not Status.SUPPORTED:
            raise ValueError(f"evidence is {self.status.value}, not a single value")
        return self.values[0]

    def as_dict(self) -> dict[str, Any]:
        """The ``ask --json`` shape (a stable contract)."""
        result: dict[str, Any] = {
            "lineage": self.lineage,
            "scope": self.scope.as_dict(),
            "valid_at": self.valid_at.isoformat(),
            "known_at": self.known_at.isoformat(),
            "now": self.now.isoformat(),
            "status": self.status.value,
            "values": list(self.values),
            "interpretation": self.interpretation.value,
            "statement": self.statement,
            "admitted": [v.as_row() for v in self.admitted],
            "excluded": [e.as_row() for e in self.excluded],
            "precedence": None if self.precedence is None else self.precedence.as_dict(),
        }
        if self.earlier_values is not None:
            # What the store held at (t, t): a retrospective answer names the earlier value.
            result["earlier_values"] = list(self.earlier_values)
        if self.decision_id is not None:
            result["decision_id"] = self.decision_id
        return result


# As build_version (kernel.versions): the same values as the dataclasses' __init__ build, set
# through the slots' descriptors, for the objects decide() builds on every lookup.
_NEW = object.__new__
_SET_EXCLUSION = tuple(getattr(Exclusion, name).__set__ for name in Exclusion.__slots__)
_SET_VERSION, _SET_REASON, _SET_SUCCESSOR = _SET_EXCLUSION
_SET_EVIDENCE = tuple(getattr(Evidence, name).__set__ for name in Evidence.__slots__)


def build_exclusion(
    version: Version, reason: ExclusionReason, successor_id: str | None
) -> Exclusion:
    """``Exclusion(version, reason, successor_id)``, built faster."""
    exclusion: Exclusion = _NEW(Exclusion)
    _SET_VERSION(exclusion, version)
    _SET_REASON(exclusion, reason)
    _SET_SUCCESSOR(exclusion, successor_id)
    return exclusion


def build_evidence(
    lineage: str,
    scope: Scope,
    valid_at: Instant,
    known_at: Instant,
    now: Instant,
    status: Status,
    values: tuple[JSONValue, ...],
    interpretation: Interpretation,
    admitted: tuple[Version, ...],
    excluded: tuple[Exclusion, ...],
    statement: str,
    precedence: PrecedenceOutcome | None,
    earlier_values: tuple[JSONValue, ...] | None,
    decision_id: str | None,
) -> Evidence:
    """``Evidence(...)`` with every field given, in their order, built faster."""
    evidence: Evidence = _NEW(Evidence)
    for set_field, value in zip(
        _SET_EVIDENCE,
        (
            lineage,
            scope,
            valid_at,
            known_at,
            now,
            status,
            values,
            interpretation,
            admitted,
            excluded,
            statement,
            precedence,
            earlier_values,
            decision_id,
        ),
        strict=True,
    ):
        set_field(evidence, value)
    return evidence
