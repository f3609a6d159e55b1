"""Bitemporal writes: the split that keeps history append-only.

A statement says "over ``[valid_from, valid_to)`` the value of this timeline is X, as known from
``known_at``". Every snapshot it changes gets its known interval closed at ``known_at``; the parts
of those snapshots outside the statement's period are appended again as corrected snapshots, and
the statement itself is appended. Nothing else is ever updated, so any answer at a knowledge date
before ``known_at`` is unchanged.

Statements are applied in rounds (:func:`apply_writes`): the open snapshots of every timeline a
round touches are read at once, the split of each statement is worked out in memory in statement
order, and the round's journal entries, closings and new snapshots are written together. The
store ends up exactly as if each statement had been applied alone, one after the other (the same
journal, version ids, closings and refusals), with a few statements per round instead of a few
per statement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from vigente.errors import HistoryRewriteError, InvalidInterval, VigenteError
from vigente.kernel.horizon import check_after, learned_now, record_back_dated, record_backfill
from vigente.records.values import Scope, check_name
from vigente.records.versions import PrecedenceRule, Version
from vigente.store.base import Store, Timeline, Write
from vigente.time import Instant, Interval, current_instant

__all__ = ["StatementRefused", "WriteResult", "apply_write", "apply_writes", "set_precedence",
           "statement"]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one statement did: the journal id, the snapshots it closed and those it appended."""

    write_id: int | None
    closed: tuple[Version, ...]
    appended: tuple[Version, ...]

    @property
    def changed(self) -> bool:
        return bool(self.closed or self.appended)


class StatementRefused(VigenteError):
    """Statement ``index`` of a batch was refused (``error`` says why); nothing of the batch
    was written, as the caller's transaction is rolled back."""

    def __init__(self, index: int, error: VigenteError) -> None:
        super().__init__(str(error))
        self.index = index
        self.error = error


def statement(
    op: str,
    lineage: str,
    value_json: str | None,
    *,
    scope: Scope,
    source: str,
    valid_from: Instant,
    valid_to: Instant | None,
    known_at: Instant,
    stamped: bool = False,
) -> Write:
    """A checked ``record``/``retract`` statement, ready for :func:`apply_write`: the lineage and
    source follow the name rules and the valid interval ends after it starts. Every writer of
    the kernel (``Vigente.record``, an import, a runtime user memory) builds its writes here."""
    write = Write(
        op=op,
        lineage=check_name("lineage", lineage),
        scope=scope,
        source=check_name("source", source),
        value_json=value_json,
        valid_from=valid_from,
        valid_to=valid_to,
        known_at=known_at,
        stamped=stamped,
    )
    if valid_to is not None and valid_to <= valid_from:
        raise InvalidInterval(
            f"valid_to {valid_to} is not after valid_from {valid_from}: the end "
            "is exclusive, so give a later date (or omit it for no known end)"
        )
    return write


def _refusal(write: Write, latest: Instant) -> HistoryRewriteError:
    return HistoryRewriteError(
        f"{write.lineage!r} from source {write.source!r} already has knowledge recorded on "
        f"{latest}; a write known on {write.known_at} would rewrite history. Record what was "
        f"learned later with --known-at {latest} or later (a correction is a new snapshot)"
    )


def apply_write(store: Store, write: Write) -> WriteResult:
    """Apply a ``record`` or ``retract`` statement inside the caller's transaction."""
    try:
        (result,) = apply_writes(store, [write])
    except StatementRefused as refused:
        raise refused.error from None
    return result


class _Snapshot:
    """An open snapshot while a round is planned: one read from the store (``stored``) or one
    the round appends (``write`` = its statement's position among the round's changes, ``n`` =
    its number within them; ``stored`` is set once the journal has named it); ``closed_at`` is
    set when a later statement of the round closes it."""

    __slots__ = ("closed_at", "n", "stored", "valid_from", "valid_to", "value_json", "write")

    def __init__(
        self,
        value_json: str,
        valid_from: Instant,
        valid_to: Instant | None,
        stored: Version | None = None,
        write: int = -1,
        n: int = 0,
    ) -> None:
        self.value_json = value_json
        self.valid_from = valid_from
        self.valid_to = valid_to
        self.stored = stored
        self.write = write
        self.n = n
        self.closed_at: Instant | None = None


def apply_writes(
    store: Store,
    writes: Sequence[Write],
    *,
    each_round: Callable[[list[WriteResult]], object] | None = None,
    backfill: bool = False,
) -> list[WriteResult]:
    """Apply statements in order inside the caller's transaction, as :func:`apply_write` would
    one by one; one result per statement. A refused statement raises :class:`StatementRefused`
    with its position (the caller's transaction then rolls back whatever was written).

    With ``each_round``, the results are handed to it round by round instead and not kept (a
    large import needs only their counts): the list returned is then empty.

    A statement dated at or before the store's answered horizon is refused
    (:mod:`vigente.kernel.horizon`) unless ``backfill``: the caller then records the
    :class:`~vigente.kernel.horizon.Backfill` in the same transaction."""
    results: list[WriteResult] = []
    keep = results.extend if each_round is None else each_round
    with store.transaction():
        # Every lock up front, in one order: two writers of overlapping timelines wait for each
        # other instead of deadlocking.
        timelines = {Timeline(w.lineage, w.scope, w.source) for w in writes}
        store.lock_timelines(sorted(timelines, key=Timeline.order))
        stamped = any(w.stamped for w in writes)
        if writes and (stamped or not backfill):
            horizon = store.answered_horizon()  # read once, under the writers' lock
            if not backfill:
                # dated by the caller, before the store's clock: answers given as known now
                # since then may change, so the write is recorded as a backfill
                record_back_dated(store, "statements",
                                  [w.known_at for w in writes if not w.stamped], current_instant())
            if stamped:  # learned now: dated here, after every answer given
                at = learned_now(horizon)
                writes = [replace(w, known_at=at) if w.stamped else w for w in writes]
            if not backfill:
                _check_horizon(horizon, writes)
        size = store.write_round
        for start in range(0, len(writes), size):
            keep(_apply_round(store, writes[start : start + size], start))
    return results


def _check_horizon(horizon: Instant | None, writes: Sequence[Write]) -> None:
    earliest = min(range(len(writes)), key=lambda i: writes[i].known_at)
    w = writes[earliest]
    try:
        check_after(horizon, w.known_at, f"{w.lineage!r} from source {w.source!r}")
    except HistoryRewriteError as exc:
        raise StatementRefused(earliest, exc) from None


def _apply_round(store: Store, writes: Sequence[Write], offset: int) -> list[WriteResult]:
    """Apply one round of statements (``offset``: the position of its first in the batch):
    read the open snapshots they can touch, plan every split in memory, write the plan in a
    few calls, and say what each statement did."""
    latest, open_now = _open_snapshots(store, writes)
    plan = _plan(writes, offset, latest, open_now)
    write_ids = _write_plan(store, plan)
    # The results, while a server backend stores the round (its writes are not waited for).
    return _results(plan, write_ids)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a round writes: the statements that change something (``changes``), with the
    snapshots each closes (``touched_by``) and those it appends (``appended_by``), and per
    statement of the round its index in ``changes``, or -1 when it changes nothing
    (``position``)."""

    changes: list[Write]
    touched_by: list[list[_Snapshot]]
    appended_by: list[list[_Snapshot]]
    position: list[int]


def _open_snapshots(store: Store, writes: Sequence[Write]
                    ) -> tuple[dict[Timeline, Instant | None], dict[Timeline, list[_Snapshot]]]:
    """Each timeline's latest knowledge time and its open snapshots over the period its
    statements span (the only ones they can touch), read in one call each."""
    spans: dict[Timeline, tuple[Instant, Instant | None]] = {}
    for w in writes:
        timeline = Timeline(w.lineage, w.scope, w.source)
        span = spans.get(timeline)
        if span is None:
            spans[timeline] = (w.valid_from, w.valid_to)
        else:
            end = None if span[1] is None or w.valid_to is None else max(span[1], w.valid_to)
            spans[timeline] = (min(span[0], w.valid_from), end)
    order = list(spans)
    latest = dict(zip(order, store.latest_knowledge_many(order), strict=True))
    found = store.current_versions_overlapping_many(
        [(timeline, Interval(*spans[timeline])) for timeline in order]
    )
    open_now = {
        timeline: [_Snapshot(v.value_json, v.valid_from, v.valid_to, stored=v) for v in versions]
        for timeline, versions in zip(order, found, strict=True)
    }
    return latest, open_now


def _plan(writes: Sequence[Write], offset: int, latest: dict[Timeline, Instant | None],
          open_now: dict[Timeline, list[_Snapshot]]) -> _Plan:
    """Plan every statement in order against the open snapshots as the statements before it
    left them (the store is not written yet); ``latest`` and ``open_now`` are updated."""
    changes: list[Write] = []
    touched_by: list[list[_Snapshot]] = []
    appended_by: list[list[_Snapshot]] = []
    position: list[int] = []  # per statement: its index in changes, or -1 (no change)
    for index, w in enumerate(writes):
        timeline = Timeline(w.lineage, w.scope, w.source)
        known = latest[timeline]
        if known is not None and w.known_at < known:
            raise StatementRefused(offset + index, _refusal(w, known))
        start, end = w.valid_from, w.valid_to
        snapshots = open_now[timeline]
        touched = [
            s
            for s in snapshots
            if (end is None or s.valid_from < end) and (s.valid_to is None or start < s.valid_to)
        ]
        if w.op == "record" and _already_says(touched, w):
            position.append(-1)
            continue
        if w.op == "retract" and not touched:
            position.append(-1)
            continue
        number = len(changes)
        parts: list[_Snapshot] = []
        for old in touched:
            # The parts of the old snapshot that the statement does not speak about stay true.
            if old.valid_from < start:
                parts.append(_Snapshot(old.value_json, old.valid_from, start, None, number,
                                       len(parts) + 1))  # fmt: skip
            if end is not None and (old.valid_to is None or end < old.valid_to):
                parts.append(_Snapshot(old.value_json, end, old.valid_to, None, number,
                                       len(parts) + 1))  # fmt: skip
            old.closed_at = w.known_at
        if w.op == "record":
            assert w.value_json is not None
            parts.append(_Snapshot(w.value_json, start, end, None, number, len(parts) + 1))
        if touched:
            open_now[timeline] = [s for s in snapshots if s.closed_at is None] + parts
        else:
            snapshots += parts
        # Knowledge never goes back; on a tie the newest write is the latest.
        latest[timeline] = w.known_at
        position.append(number)
        changes.append(w)
        touched_by.append(touched)
        appended_by.append(parts)
    return _Plan(changes, touched_by, appended_by, position)


def _write_plan(store: Store, plan: _Plan) -> list[int]:
    """Write a round's plan: its journal entries (their ids, returned, name the new
    snapshots), the closing of stored snapshots, and the new snapshots, already closed when a
    later statement of the round closed them."""
    changes, touched_by = plan.changes, plan.touched_by
    write_ids = store.append_writes(changes) if changes else []
    new_versions: list[Version] = []
    for number, parts in enumerate(plan.appended_by):
        w = changes[number]
        for s in parts:
            # As stored: closed already when a later statement of the round closed it.
            s.stored = Version(f"{write_ids[number]}.{s.n}", w.lineage, w.scope, w.source,
                               s.value_json, s.valid_from, s.valid_to, w.known_at,
                               s.closed_at)  # fmt: skip
            new_versions.append(s.stored)
    closes = [
        (s.stored.version_id, changes[number].known_at)
        for number, touched in enumerate(touched_by)
        for s in touched
        if s.write < 0 and s.stored is not None  # read from the store: closed by an update
    ]
    if closes:
        store.close_versions_at(closes)
    if new_versions:
        store.append_versions(new_versions)
    return write_ids


def _results(plan: _Plan, write_ids: list[int]) -> list[WriteResult]:
    """What each statement of a written round did: the snapshots it closed (as closed now) and
    those it appended (as the statement left them)."""
    changes, touched_by, appended_by = plan.changes, plan.touched_by, plan.appended_by
    results: list[WriteResult] = []
    for number in plan.position:
        if number < 0:
            results.append(WriteResult(None, (), ()))
            continue
        known_at = changes[number].known_at
        closed = [
            # read from the store: closed now; appended by the round: stored closed already
            replace(s.stored, known_to=known_at) if s.write < 0 else s.stored
            for s in touched_by[number]
            if s.stored is not None
        ]
        appended = [
            s.stored if s.closed_at is None else replace(s.stored, known_to=None)
            for s in appended_by[number]
            if s.stored is not None
        ]
        results.append(WriteResult(write_ids[number], tuple(closed), tuple(appended)))
    return results


def _already_says(touched: list[_Snapshot], write: Write) -> bool:
    """True when the current knowledge already states exactly this value for exactly this period
    (a repeated import is then a no-op instead of a needless new snapshot)."""
    return (
        len(touched) == 1
        and touched[0].value_json == write.value_json
        and touched[0].valid_from == write.valid_from
        and touched[0].valid_to == write.valid_to
    )


def set_precedence(
    store: Store,
    sources: tuple[str, ...],
    *,
    scope: Scope,
    lineage: str | None,
    known_at: Instant | None,
    rule_id: str,
    backfill: str | None = None,
) -> PrecedenceRule:
    """Replace the precedence rule of ``(lineage, scope)`` from ``known_at`` on (None: learned
    now, dated inside the transaction after every answer given). A rule dated at or before the
    answered horizon is refused unless ``backfill`` says why (recorded); one dated before the
    store's clock is recorded as a back-dated backfill."""
    with store.transaction():
        horizon = store.answered_horizon()
        if known_at is None:
            known_at = learned_now(horizon)
        elif backfill is None:
            record_back_dated(store, "precedence rule", [known_at], current_instant())
            check_after(horizon, known_at, "the precedence rule")
        else:
            record_backfill(store, "precedence", backfill, 1, known_at, known_at)
        rules = store.precedence_rules(lineage, scope)
        latest = max(
            (r.known_to if r.known_to is not None else r.known_from for r in rules), default=None
        )
        if latest is not None and known_at < latest:
            raise HistoryRewriteError(
                f"a precedence rule for this scope is already recorded on {latest}; a rule known "
                f"on {known_at} would rewrite history. Use --known-at {latest} or later, or "
                "omit --known-at (learned now)"
            )
        for rule in rules:
            if rule.known_to is None:
                store.close_precedence(rule.rule_id, known_at)
        rule = PrecedenceRule(rule_id, lineage, scope, sources, known_at, None)
        store.append_precedence(rule)
    return rule
