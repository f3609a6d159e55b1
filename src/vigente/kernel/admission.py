"""Admission: which candidate rows are admitted at ``(t, k)``, the status, the label.

Everything here is a pure function of the candidate rows, the precedence rules and the dates, so
the same inputs always give the same evidence (DESIGN.md invariants 2 and 3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from vigente.kernel.answer import (
    Evidence,
    Exclusion,
    Interpretation,
    PrecedenceOutcome,
    Status,
    build_evidence,
    build_exclusion,
)
from vigente.kernel.statement import statement_for
from vigente.records.values import JSONValue, Scope, canonical_json
from vigente.records.versions import ExclusionReason, PrecedenceRule, Version, admissibility
from vigente.time import Instant

__all__ = ["as_known_at", "decide", "interpretation_for", "status_of"]


def _by_value(versions: Iterable[Version]) -> dict[str, list[Version]]:
    """The rows grouped by value (their canonical JSON), in order of first appearance."""
    groups: dict[str, list[Version]] = {}
    for v in versions:
        rows = groups.get(v.value_json)
        if rows is None:
            groups[v.value_json] = [v]
        else:
            rows.append(v)
    return groups


def status_of(distinct_values: int) -> Status:
    """Invariant 3: the status depends on the number of distinct admissible values only."""
    if distinct_values == 0:
        return Status.MISSING
    return Status.SUPPORTED if distinct_values == 1 else Status.CONFLICT


class _Successors:
    """The snapshot that replaced an excluded row: on the knowledge axis, the one written when
    it was closed (preferring one valid at ``t``); on the validity axis, the next period known at
    ``k``. Only rows of the same source and scope count. The pool is indexed once, so deciding
    over ``n`` candidates stays linear instead of comparing every pair. Instants are compared by
    their microseconds (one attribute read instead of a method call per comparison)."""

    __slots__ = ("_by_known_from", "_k", "_known_at_k", "_pool", "_t")

    def __init__(self, pool: list[Version], t: Instant, k: Instant) -> None:
        self._pool = pool
        self._t = t.micros
        self._k = k.micros
        self._by_known_from: dict[int, list[Version]] | None = None
        self._known_at_k: list[Version] | None = None

    def of(self, row: Version, reason: ExclusionReason) -> str | None:
        if reason is ExclusionReason.NO_LONGER_KNOWN:
            assert row.known_to is not None
            index = self._by_known_from
            if index is None:
                index = self._by_known_from = {}
                for v in self._pool:
                    index.setdefault(v.known_from.micros, []).append(v)
            replaced = index.get(row.known_to.micros)
            if not replaced:
                return None
            t = self._t
            first = None
            for v in replaced:
                if v is not row and v.source == row.source and _same_scope(v, row):
                    valid_to = v.valid_to
                    if v.valid_from.micros <= t and (valid_to is None or t < valid_to.micros):
                        return v.version_id
                    if first is None:
                        first = v.version_id
            return first
        if reason is ExclusionReason.NO_LONGER_VALID and row.valid_to is not None:
            known = self._known_at_k
            if known is None:
                k = self._k
                known = self._known_at_k = [
                    v
                    for v in self._pool
                    if v.known_from.micros <= k and (v.known_to is None or k < v.known_to.micros)
                ]
            end = row.valid_to.micros
            best: tuple[int, str] | None = None
            for v in known:
                start = v.valid_from.micros
                if start >= end and v is not row and v.source == row.source:
                    if _same_scope(v, row) and (best is None or (start, v.version_id) < best):
                        best = (start, v.version_id)
            if best is not None:
                return best[1]
        return None


# The only reasons a successor is looked for (_Successors.of answers None for the others).
_NO_LONGER_KNOWN = ExclusionReason.NO_LONGER_KNOWN
_NO_LONGER_VALID = ExclusionReason.NO_LONGER_VALID


def _same_scope(a: Version, b: Version) -> bool:
    return a.scope is b.scope or a.scope == b.scope


def interpretation_for(
    status: Status,
    admitted: tuple[Version, ...],
    t: Instant,
    k: Instant,
    now: Instant,
    earlier_values: tuple[JSONValue, ...] | None,
    values: tuple[JSONValue, ...],
) -> Interpretation:
    """The seed's labels; ``earlier_values`` are the values at ``(t, t)`` when ``t < k = now``."""

    def changed() -> bool:
        return earlier_values is not None and {canonical_json(v) for v in earlier_values} != {
            canonical_json(v) for v in values
        }

    return _interpretation(status, admitted, t, k, now, changed)


def _interpretation(
    status: Status,
    admitted: tuple[Version, ...],
    t: Instant,
    k: Instant,
    now: Instant,
    changed: Callable[[], bool],
) -> Interpretation:
    """:func:`interpretation_for`, asking ``changed()`` (only when it matters) whether the
    values at ``(t, t)`` differ from the answer's."""
    if status is Status.MISSING:
        return Interpretation.MISSING
    if t > k and not t.same_moment(k):
        if any(v.valid_from > k for v in admitted):
            return Interpretation.ANNOUNCED_FUTURE
        return Interpretation.PROJECTED
    if not k.same_moment(now):
        return Interpretation.KNOWN_THEN
    if t.same_moment(k):
        return Interpretation.CURRENT
    if changed():
        return Interpretation.RETROSPECTIVE
    return Interpretation.HISTORICAL


def _unchanged() -> bool:
    return False


def _changed(earlier: dict[str, list[Version]], kept: dict[str, list[Version]]) -> bool:
    """Whether the distinct values held at ``(t, t)`` differ from the answer's, both grouped
    by their stored JSON. Stored JSON is canonical, so equal keys settle it without decoding;
    otherwise the values are compared as :func:`interpretation_for` does."""
    if earlier.keys() == kept.keys():
        return False
    return {canonical_json(rows[0].value) for rows in earlier.values()} != {
        canonical_json(rows[0].value) for rows in kept.values()
    }


def decide(
    lineage: str,
    scope: Scope,
    t: Instant,
    k: Instant,
    now: Instant,
    candidates: list[Version],
    rules: Callable[[], Sequence[PrecedenceRule]],
    earlier: list[Version] | None,
) -> Evidence:
    """Turn the store's candidate rows into evidence (a pure function of its inputs).

    ``rules`` reads the precedence rules of the lineage; it is called only when the admitted
    values conflict, the one case a rule can change (most answers then cost one read).
    """
    admitted: list[Version] = []
    excluded: list[Exclusion] = []
    successors = None
    # An answer as known at k is built from what was known at k only (invariant 2): a row
    # learned after k is absent, and a row closed after k is still open in it. The answer to a
    # (t, k) question therefore cannot depend on when it is asked.
    candidates = as_known_at(candidates, k)
    for row in candidates:
        reason = admissibility(row, scope, t, k)
        if reason is None:
            admitted.append(row)
        elif reason is _NO_LONGER_KNOWN or reason is _NO_LONGER_VALID:
            if successors is None:
                successors = _Successors(candidates, t, k)
            excluded.append(build_exclusion(row, reason, successors.of(row, reason)))
        else:  # not yet known, not yet valid, out of scope: nothing replaced it
            excluded.append(build_exclusion(row, reason, None))
    groups = _by_value(admitted)
    kept = groups
    status = status_of(len(groups))
    outcome = None
    if status is Status.CONFLICT:
        outcome = _apply_precedence(admitted, rules(), k)
        if outcome is not None:
            overruled = {v.version_id for v in outcome.overruled}
            kept = _by_value(v for v in admitted if v.version_id not in overruled)
            status = status_of(len(kept))
    values = tuple([rows[0].value for rows in kept.values()])
    earlier_values = None
    changed = _unchanged
    if earlier is not None:
        held = _by_value([v for v in earlier if admissibility(v, scope, t, t) is None])
        earlier_values = tuple([rows[0].value for rows in held.values()])

        def changed() -> bool:
            return _changed(held, kept)

    admitted_t = tuple(admitted)
    interpretation = _interpretation(status, admitted_t, t, k, now, changed)
    evidence = build_evidence(
        lineage,
        scope,
        t,
        k,
        now,
        status,
        values,
        interpretation,
        admitted_t,
        tuple(excluded),
        "",
        outcome,
        earlier_values,
        None,
    )
    # The statement words the finished evidence, each value with every admitted row backing
    # it. The value is not shared before this line, so setting the field here is still
    # construction (as a __post_init__ would do).
    support = [groups[key] for key in kept]
    object.__setattr__(evidence, "statement", statement_for(evidence, support))
    return evidence


def _apply_precedence(
    admitted: list[Version], rules: Sequence[PrecedenceRule], k: Instant
) -> PrecedenceOutcome | None:
    """Resolve a conflict by the rule known at ``k``, if the best-ranked source is listed."""
    rule = next(
        (r for r in rules if r.known_from <= k and (r.known_to is None or k < r.known_to)), None
    )
    if rule is None:
        return None
    best = min(admitted, key=lambda v: rule.rank(v.source))
    if rule.rank(best.source) >= len(rule.sources):
        return None  # no admitted source is named by the rule: the conflict stands
    kept = best.source
    # A rule decides only between the sources it names: a source it does not name is neither
    # overruled nor overrules (its value stays beside the kept one, in conflict if it differs).
    named = set(rule.sources)
    overruled = tuple(v for v in admitted if v.source != kept and v.source in named)
    if not overruled:
        return None
    return PrecedenceOutcome(rule, kept, overruled)


def as_known_at(candidates: list[Version], known_at: Instant) -> list[Version]:
    """The candidate rows as the store held them at ``known_at``: rows learned later dropped,
    rows closed later open again (the list itself when nothing differs, as on most answers)."""
    k = known_at.micros
    rows: list[Version] | None = None
    for n, v in enumerate(candidates):
        known_to = v.known_to
        if v.known_from.micros <= k and (known_to is None or known_to.micros <= k):
            if rows is not None:
                rows.append(v)
            continue
        if rows is None:
            rows = candidates[:n]
        if v.known_from.micros <= k:  # closed after k: still open as known at k
            rows.append(Version(v.version_id, v.lineage, v.scope, v.source, v.value_json,
                                v.valid_from, v.valid_to, v.known_from, None))
    return candidates if rows is None else rows
