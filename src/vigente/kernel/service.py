"""The kernel as a service: one store with its zone, its answered horizon and its decision log.

:class:`Kernel` records and retracts facts, sets precedence, imports statements and answers
questions at ``(t, k)``. It is the :class:`~vigente.kernel.knowledge.Knowledge` the document,
derivation, review and retrieval services are given, and the :class:`~vigente.Vigente` facade
composes it with them (docs/architecture.md). Its answers' statements are in English; the
facade words them in another language.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from vigente.errors import (
    AnsweredHistoryError,
    FutureKnowledgeError,
    ImportFileError,
    InvalidInput,
    VigenteError,
)
from vigente.jsonl import json_objects, read_lines
from vigente.kernel.admission import decide
from vigente.kernel.answer import Evidence
from vigente.kernel.horizon import fix_answer, known_now, learning_now, record_backfill
from vigente.kernel.integrity import check_store
from vigente.kernel.ledger import (
    StatementRefused,
    WriteResult,
    apply_write,
    apply_writes,
    set_precedence,
    statement,
)
from vigente.records.decisions import Decision, new_decision
from vigente.records.ledger import Backfill, UnreadableInstant
from vigente.records.values import JSONValue, Scope, canonical_json, check_name
from vigente.records.versions import PrecedenceRule, Version
from vigente.store.base import Store, Write
from vigente.time import (
    Instant,
    TimeLike,
    check_not_ahead,
    current_instant,
    parse_instant,
    to_instant,
)

__all__ = ["ImportReport", "Kernel", "ScopeLike"]

ScopeLike = Scope | Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: statements read, statements that changed the store, versions."""

    statements: int
    applied: int
    versions_appended: int
    versions_closed: int


class _ImportLine(BaseModel):
    """One line of an import file (JSON Lines)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    op: Literal["record", "retract"]
    lineage: str
    scope: dict[str, str | int] = {}
    value: Any = None
    source: str
    valid_from: str
    valid_to: str | None = None
    known_at: str | None = None  # absent: learned now (dated by the store as it writes)


@functools.lru_cache(maxsize=4096)
def _parse_instant(text: str, default_zone: str | None) -> Instant:
    """:func:`parse_instant`, remembered: imports and questions repeat the same few dates, and an
    instant is immutable (a string that does not parse raises every time, and is not kept)."""
    return parse_instant(text, default_zone=default_zone)


class Kernel:
    """Facts on two time axes over one :class:`Store`.

    ``known_at=None`` in :meth:`evidence` means "as known now"; ``now=None`` means this moment
    (UTC). Writes are atomic; a refused write leaves the store unchanged.
    """

    def __init__(self, store: Store, *, default_zone: str | None = None) -> None:
        self.store = store
        self.default_zone = default_zone

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several writes into one atomic unit (reserved as a write that may be learned
        now: :func:`~vigente.kernel.horizon.learning_now`)."""
        with learning_now(self.store):
            yield

    def instant(self, value: TimeLike) -> Instant:
        """A date or timestamp read with this store's default zone (naive ones are refused
        without one)."""
        if isinstance(value, str):
            return _parse_instant(value, self.default_zone)
        return to_instant(value, default_zone=self.default_zone)

    # -- writes ----------------------------------------------------------------------------
    def _write(
        self,
        op: str,
        lineage: str,
        value_json: str | None,
        *,
        valid_from: TimeLike,
        valid_to: TimeLike | None,
        known_at: TimeLike | None,
        source: str,
        scope: ScopeLike,
        now: TimeLike | None = None,
    ) -> Write:
        stamped = known_at is None and now is None  # known now: the store dates it as it writes
        write = statement(
            op,
            lineage,
            value_json,
            scope=Scope.of(scope),
            source=source,
            valid_from=self.instant(valid_from),
            valid_to=None if valid_to is None else self.instant(valid_to),
            known_at=(current_instant() if now is None else self.instant(now))
            if known_at is None else self.instant(known_at),
            stamped=stamped,
        )
        self.check_knowledge_date(write.known_at, now)
        return write

    def present(self, now: TimeLike | None) -> Instant:
        """``now`` read (a caller's pinned clock, never ahead of the store's) or this moment."""
        if now is None:
            return current_instant()
        return check_not_ahead(self.instant(now), "now")

    def check_knowledge_date(self, known_at: Instant, now: TimeLike | None) -> Instant:
        """Refuse a knowledge date after ``now`` (default: this moment), and a ``now`` or a
        knowledge date ahead of the store's clock; return ``now``."""
        current = self.present(now)
        check_not_ahead(known_at, "known_at")
        if known_at > current and not known_at.same_moment(current):
            raise FutureKnowledgeError(
                f"known_at {known_at} is after now ({current}): nothing can be known from the "
                "future; use a knowledge date on or before today (or pass --now for a replay)"
            )
        return current

    def fix_answer(self, known_at: Instant, now: Instant, *, pinned: bool) -> None:
        """Before an answer as known at ``known_at`` is read: fix the store's answered horizon
        there, so that no later write can change that answer (:mod:`vigente.kernel.horizon`).
        ``pinned``: ``now`` was given by the caller (a replay's clock), not read from the clock."""
        fix_answer(self.store, known_at, now, pinned=pinned)

    def known_now(self, clock: Instant) -> Instant:
        """The knowledge time of an answer as known now, read without a lock or a write: the
        clock, or just before a write learned now still in flight
        (:mod:`vigente.kernel.horizon`)."""
        return known_now(self.store, clock)

    def answer_times(self, known_at: TimeLike | None, now: TimeLike | None
                     ) -> tuple[Instant, Instant]:
        """``(k, now)`` of a question about to be read: each checked, and the answered horizon
        fixed when ``k`` is an explicit past knowledge time. As known now (no ``known_at``) on
        the store's clock, ``k`` is :meth:`known_now` and nothing is written."""
        current = self.present(now)
        if known_at is None:
            if now is not None:
                return current, current  # a pinned present: never fixed, as before
            k = self.known_now(current)
            return k, k
        k = self.instant(known_at)
        self.check_knowledge_date(k, current)
        self.fix_answer(k, current, pinned=now is not None)
        return k, current

    def answered_horizon(self) -> Instant | None:
        """The latest knowledge time this store has answered for: a write must be dated after
        it (or be a recorded backfill)."""
        return self.store.answered_horizon()

    def check(self, *, repair: bool = False) -> list[UnreadableInstant]:
        """Stored instants outside the years 1–9999 in UTC, which no question can read back;
        with ``repair``, each moved to the nearest instant of the range and the repair recorded
        as a ``store_repair`` decision (:mod:`vigente.kernel.integrity`)."""
        return check_store(self.store, repair=repair, now=current_instant())

    def backfills(self) -> list[Backfill]:
        """Every recorded backfill (writes allowed behind the answered horizon), oldest first."""
        return self.store.backfills()

    def record(
        self,
        lineage: str,
        value: JSONValue,
        *,
        valid_from: TimeLike,
        valid_to: TimeLike | None = None,
        known_at: TimeLike | None = None,
        source: str,
        scope: ScopeLike = None,
        now: TimeLike | None = None,
    ) -> WriteResult:
        """State that ``lineage`` is ``value`` over ``[valid_from, valid_to)``, as learned on
        ``known_at`` from ``source``. Snapshots it changes are closed, never overwritten.
        ``known_at=None``: learned now, dated by the store as it writes (after every answer
        already given, so it is never refused for the answered horizon); with ``now``, that."""
        write = self._write(
            "record",
            lineage,
            canonical_json(value),
            valid_from=valid_from,
            valid_to=valid_to,
            known_at=known_at,
            source=source,
            scope=scope,
            now=now,
        )
        with learning_now(self.store):
            return apply_write(self.store, write)

    def retract(
        self,
        lineage: str,
        *,
        valid_from: TimeLike,
        valid_to: TimeLike | None = None,
        known_at: TimeLike | None = None,
        source: str,
        scope: ScopeLike = None,
        now: TimeLike | None = None,
    ) -> WriteResult:
        """State that ``source`` no longer asserts any value over ``[valid_from, valid_to)``
        (``known_at=None``: learned now, as in :meth:`record`)."""
        write = self._write(
            "retract",
            lineage,
            None,
            valid_from=valid_from,
            valid_to=valid_to,
            known_at=known_at,
            source=source,
            scope=scope,
            now=now,
        )
        with learning_now(self.store):
            return apply_write(self.store, write)

    def set_precedence(
        self,
        sources: Iterable[str],
        *,
        known_at: TimeLike | None = None,
        scope: ScopeLike = None,
        lineage: str | None = None,
        now: TimeLike | None = None,
        backfill: str | None = None,
    ) -> PrecedenceRule:
        """Make conflicts in ``scope`` (optionally one lineage) resolvable: earlier sources in
        ``sources`` prevail. Applies to answers as known from ``known_at`` on (None: learned
        now, or at ``now`` when given). ``backfill`` (why) lets a rule be dated behind the
        answered horizon, recorded as a :class:`Backfill`."""
        names = tuple(check_name("source", s) for s in sources)
        if not names:
            raise InvalidInput("a precedence rule needs at least one source, highest first")
        if len(set(names)) != len(names):
            raise InvalidInput("a precedence rule lists a source twice: list each source once")
        if backfill is not None and not backfill.strip():
            raise InvalidInput("a backfill needs a reason: say why history is being filled in")
        k: Instant | None = None
        if known_at is not None or now is not None:
            k = self.present(now) if known_at is None else self.instant(known_at)
            self.check_knowledge_date(k, now)
        with learning_now(self.store):
            return set_precedence(
                self.store,
                names,
                scope=Scope.of(scope),
                lineage=None if lineage is None else check_name("lineage", lineage),
                known_at=k,
                rule_id=uuid.uuid4().hex[:16],
                backfill=None if backfill is None else backfill.strip(),
            )

    # -- reads -----------------------------------------------------------------------------
    def evidence(
        self,
        lineage: str,
        *,
        valid_at: TimeLike,
        known_at: TimeLike | None = None,
        scope: ScopeLike = None,
        now: TimeLike | None = None,
        record: bool = False,
    ) -> Evidence:
        """What ``lineage`` was on ``valid_at`` as known on ``known_at`` (default: now).

        ``now`` defaults to this moment (UTC); a ``known_at`` after ``now`` is an error. Dates
        compare with ``now`` at day precision, so ``t = today`` is "current".
        ``record=True`` stores the admissibility decision (read it back with
        :meth:`decision`). The ``statement`` is in English.
        """
        check_name("lineage", lineage)
        the_scope = Scope.of(scope)
        t = self.instant(valid_at)
        k, current = self.answer_times(known_at, now)
        candidates, earlier = self.candidates_at(lineage, the_scope, t, k, current, held=True)

        def rules() -> list[PrecedenceRule]:
            return self.store.precedence_rules_for(lineage, the_scope)

        evidence = decide(lineage, the_scope, t, k, current, candidates, rules, earlier)
        if record:
            decision_id = self.record_decision("evidence", lineage, evidence.as_dict())
            evidence = replace(evidence, decision_id=decision_id)
        return evidence

    def candidates_at(
        self, lineage: str, scope: Scope, t: Instant, k: Instant, now: Instant,
        *, held: bool = False,
    ) -> tuple[list[Version], list[Version] | None]:
        """The store's candidate rows at ``(t, k)`` and, for a question asked as known now
        about an earlier ``t``, those at ``(t, t)``: the values held then tell "retrospective"
        (a late-learned change) from "historical". With ``held``, the second list is only the
        rows admissible at ``(t, t)`` (all a kernel answer uses), read with the first."""
        if t < k and not t.same_moment(k) and k.same_moment(now):
            if held:
                return self.store.candidates_and_held(lineage, scope, t, k, t)
            return self.store.candidates(lineage, scope, t, k), self.store.candidates(
                lineage, scope, t, t
            )
        return self.store.candidates(lineage, scope, t, k), None

    def history(self, lineage: str, *, scope: ScopeLike = None) -> list[Version]:
        """Every snapshot of a lineage on both axes (all scopes when ``scope`` is None)."""
        check_name("lineage", lineage)
        return self.store.history(lineage, None if scope is None else Scope.of(scope))

    def lineages(self) -> list[tuple[str, Scope]]:
        return self.store.lineages()

    # -- import ----------------------------------------------------------------------------
    def import_jsonl(
        self, path: str | Path, *, now: TimeLike | None = None, backfill: str | None = None
    ) -> ImportReport:
        """Import a JSON Lines file of ``record``/``retract`` statements atomically.

        Every line is validated first; a bad line raises :class:`ImportFileError` with its line
        number and nothing is written. ``backfill`` (why) lets the statements be dated behind
        the answered horizon, and records the import as a :class:`Backfill`.
        """
        return self.import_lines(read_lines(path), now=now, backfill=backfill)

    def import_lines(
        self,
        lines: Iterable[bytes | str],
        *,
        now: TimeLike | None = None,
        backfill: str | None = None,
    ) -> ImportReport:
        """Import ``record``/``retract`` statements, one JSON object a line, atomically (as
        :meth:`import_jsonl`)."""
        if backfill is not None and not backfill.strip():
            raise InvalidInput("a backfill needs a reason: say why history is being filled in")
        if now is not None:
            self.present(now)  # the import's clock, not a line's: refused whole
        writes = [
            (number, self._parse_line(number, obj, now)) for number, obj in json_objects(lines)
        ]
        # One transaction; apply_writes takes every timeline lock up front, in one order (two
        # imports touching the same timelines wait for each other instead of deadlocking), and
        # reads and writes the statements in rounds.
        counts = [0, 0, 0]  # statements that changed the store, snapshots appended, closed

        def tally(results: list[WriteResult]) -> None:
            for result in results:
                counts[0] += result.changed
                counts[1] += len(result.appended)
                counts[2] += len(result.closed)

        statements = [write for _, write in writes]
        try:
            with learning_now(self.store):
                apply_writes(self.store, statements, each_round=tally,
                             backfill=backfill is not None)
                if backfill is not None and statements:
                    record_backfill(self.store, "import", backfill.strip(), len(statements),
                                    min(w.known_at for w in statements),
                                    max(w.known_at for w in statements))
        except StatementRefused as refused:
            number = writes[refused.index][0]
            if isinstance(refused.error, AnsweredHistoryError):  # a 409, not bad input
                raise AnsweredHistoryError(f"line {number}: {refused.error}",
                                           refused.error.horizon) from None
            raise ImportFileError(number, str(refused.error)) from None
        return ImportReport(len(writes), *counts)

    def _parse_line(self, number: int, obj: dict[str, Any], now: TimeLike | None) -> Write:
        if obj.get("op") not in ("record", "retract"):
            raise ImportFileError(
                number, f'unknown op {obj.get("op")!r}: use "record" or "retract"'
            )
        try:
            line = _ImportLine.model_validate(obj)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ImportFileError(number, problems) from None
        if line.op == "record" and "value" not in obj:
            raise ImportFileError(number, 'a record needs a "value"')
        if line.op == "retract" and "value" in obj:
            raise ImportFileError(number, 'a retract takes no "value"')
        try:
            value_json = canonical_json(line.value) if line.op == "record" else None
            return self._write(
                line.op,
                line.lineage,
                value_json,
                valid_from=line.valid_from,
                valid_to=line.valid_to,
                known_at=line.known_at,
                source=line.source,
                scope=line.scope,
                now=now,
            )
        except VigenteError as exc:
            raise ImportFileError(number, str(exc)) from None

    def record_decision(self, kind: str, subject: str, payload: dict[str, Any]) -> str:
        """Store an admissibility decision (what an answer was allowed to see); its id."""
        decision = new_decision(kind, subject, payload)
        with self.store.transaction():
            self.store.append_decision(decision)
        return decision.decision_id

    def decision(self, decision_id: str) -> Decision:
        """A recorded admissibility decision: what an answer was allowed to see."""
        found = self.store.decision(decision_id)
        if found is None:
            raise InvalidInput(
                f"no recorded decision {decision_id!r}: list them with `vigente decisions`"
            )
        return found

    def decisions(self, limit: int = 20) -> list[Decision]:
        return self.store.decisions(limit)
