"""Bitemporal writes: the split that keeps history append-only.

A statement says "over ``[valid_from, valid_to)`` the value of this timeline is X, as known from
``known_at``". Every snapshot it changes gets its known interval closed at ``known_at``; the parts
of those snapshots outside the statement's period are appended again as corrected snapshots, and
the statement itself is appended. Nothing else is ever updated, so any answer at a knowledge date
before ``known_at`` is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vigente.errors import HistoryRewriteError
from vigente.kernel.values import Scope
from vigente.kernel.versions import PrecedenceRule, Version
from vigente.store.base import Store, Write
from vigente.time import Instant, Interval

__all__ = ["WriteResult", "apply_write", "set_precedence"]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one statement did: the journal id, the snapshots it closed and those it appended."""

    write_id: int | None
    closed: tuple[Version, ...]
    appended: tuple[Version, ...]

    @property
    def changed(self) -> bool:
        return bool(self.closed or self.appended)


def _check_knowledge(store: Store, write: Write) -> None:
    latest = store.latest_knowledge(write.lineage, write.scope, write.source)
    if latest is not None and write.known_at < latest:
        raise HistoryRewriteError(
            f"{write.lineage!r} from source {write.source!r} already has knowledge recorded on "
            f"{latest}; a write known on {write.known_at} would rewrite history. Record what was "
            f"learned later with --known-at {latest} or later (a correction is a new snapshot)"
        )


def apply_write(store: Store, write: Write) -> WriteResult:
    """Apply a ``record`` or ``retract`` statement inside the caller's transaction."""
    period = Interval(write.valid_from, write.valid_to)
    with store.transaction():
        store.lock_timeline(write.lineage, write.scope, write.source)
        _check_knowledge(store, write)
        touched = store.current_versions_overlapping(
            write.lineage, write.scope, write.source, period
        )
        if write.op == "record" and _already_says(touched, write, period):
            return WriteResult(None, (), ())
        if write.op == "retract" and not touched:
            return WriteResult(None, (), ())
        write_id = store.append_write(write)
        appended: list[Version] = []

        def new_version(value_json: str, valid: Interval) -> Version:
            return Version(
                version_id=f"{write_id}.{len(appended) + 1}",
                lineage=write.lineage,
                scope=write.scope,
                source=write.source,
                value_json=value_json,
                valid_from=valid.start,
                valid_to=valid.end,
                known_from=write.known_at,
                known_to=None,
            )

        for old in touched:
            # The parts of the old snapshot that the statement does not speak about stay true.
            if old.valid_from < period.start:
                appended.append(new_version(old.value_json, Interval(old.valid_from, period.start)))
            if period.end is not None and (old.valid_to is None or period.end < old.valid_to):
                appended.append(new_version(old.value_json, Interval(period.end, old.valid_to)))
        if write.op == "record":
            assert write.value_json is not None
            appended.append(new_version(write.value_json, period))
        store.close_versions([v.version_id for v in touched], write.known_at)
        store.append_versions(appended)
    closed = tuple(replace(v, known_to=write.known_at) for v in touched)
    return WriteResult(write_id, closed, tuple(appended))


def _already_says(touched: list[Version], write: Write, period: Interval) -> bool:
    """True when the current knowledge already states exactly this value for exactly this period
    (a repeated import is then a no-op instead of a needless new snapshot)."""
    return (
        len(touched) == 1
        and touched[0].value_json == write.value_json
        and touched[0].valid_from == period.start
        and touched[0].valid_to == period.end
    )


def set_precedence(
    store: Store,
    sources: tuple[str, ...],
    *,
    scope: Scope,
    lineage: str | None,
    known_at: Instant,
    rule_id: str,
) -> PrecedenceRule:
    """Replace the precedence rule of ``(lineage, scope)`` from ``known_at`` on."""
    with store.transaction():
        rules = store.precedence_rules(lineage, scope)
        latest = max(
            (r.known_to if r.known_to is not None else r.known_from for r in rules), default=None
        )
        if latest is not None and known_at < latest:
            raise HistoryRewriteError(
                f"a precedence rule for this scope is already recorded on {latest}; a rule known "
                f"on {known_at} would rewrite history. Use --known-at {latest} or later"
            )
        for rule in rules:
            if rule.known_to is None:
                store.close_precedence(rule.rule_id, known_at)
        rule = PrecedenceRule(rule_id, lineage, scope, sources, known_at, None)
        store.append_precedence(rule)
    return rule
