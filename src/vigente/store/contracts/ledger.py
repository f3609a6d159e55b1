"""The kernel ledger's contracts: journal and versions, precedence rules, the answered
horizon, integrity and the decision log."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from vigente.records.decisions import Decision
from vigente.records.ledger import Backfill, UnreadableInstant
from vigente.records.values import Scope
from vigente.records.versions import PrecedenceRule, Version, admissibility
from vigente.store.contracts.transaction import Transactional
from vigente.time import Instant, Interval

__all__ = [
    "AnswerHorizon",
    "DecisionLog",
    "Integrity",
    "PrecedenceRules",
    "Timeline",
    "VersionLedger",
    "Write",
]


@dataclass(frozen=True, slots=True)
class Write:
    """One statement as the caller made it: the append-only journal of the store."""

    op: str  # "record" | "retract"
    lineage: str
    scope: Scope
    source: str
    value_json: str | None
    valid_from: Instant
    valid_to: Instant | None
    known_at: Instant
    #: The caller gave no knowledge time: "known now", stamped again by the store inside the
    #: write's transaction, after every answer already given (vigente.kernel.horizon).
    stamped: bool = False


class Timeline(NamedTuple):
    """What one writer serialises on: the statements of one source about one lineage in one
    scope. Sorted by :meth:`order`, the order every writer takes their locks in."""

    lineage: str
    scope: Scope
    source: str

    def order(self) -> tuple[str, str, str]:
        return (self.lineage, self.scope.key, self.source)



class VersionLedger(Transactional):
    """The kernel's journal and its versions: the statements as made and the versions they left,
    on both time axes. Writers of one timeline are serialised by :meth:`lock_timeline`."""

    #: Statements an import plans and writes together (kernel.ledger.apply_writes); bounds the
    #: memory of one round and the size of its queries. A whole import still runs in one
    #: transaction. Set it on a store to change it.
    write_round: int = 5_000

    @abstractmethod
    def lock_timeline(self, lineage: str, scope: Scope, source: str) -> None:
        """Serialise concurrent writers of one timeline until the transaction ends."""

    def lock_timelines(self, timelines: Sequence[Timeline]) -> None:
        """:meth:`lock_timeline` for each of ``timelines``, in the order given (callers sort
        them by :meth:`Timeline.order`, so that two writers of overlapping sets wait for each
        other instead of deadlocking). Backends may take them in one statement."""
        for lineage, scope, source in timelines:
            self.lock_timeline(lineage, scope, source)

    @abstractmethod
    def append_write(self, write: Write) -> int:
        """Append a statement to the journal and return its id (increasing)."""

    @abstractmethod
    def latest_knowledge(self, lineage: str, scope: Scope, source: str) -> Instant | None:
        """The latest ``known_at`` of any write to the timeline, or ``None``."""

    def append_writes(self, writes: Sequence[Write]) -> list[int]:
        """:meth:`append_write` for each statement, in order; their ids (increasing). Backends
        may insert them in one statement."""
        return [self.append_write(write) for write in writes]

    def latest_knowledge_many(self, timelines: Sequence[Timeline]) -> list[Instant | None]:
        """:meth:`latest_knowledge` of each timeline, in order. Backends may read them in one
        query."""
        return [self.latest_knowledge(lin, scope, source) for lin, scope, source in timelines]

    @abstractmethod
    def current_versions(self, lineage: str, scope: Scope, source: str) -> list[Version]:
        """Versions of the timeline whose known interval is still open."""

    def current_versions_overlapping(
        self, lineage: str, scope: Scope, source: str, valid: Interval
    ) -> list[Version]:
        """The versions of :meth:`current_versions` whose valid interval overlaps ``valid``,
        in the same order: the only ones a write over ``valid`` changes. Backends may answer
        this with an indexed query; the default filters :meth:`current_versions`."""
        return [v for v in self.current_versions(lineage, scope, source) if v.valid.overlaps(valid)]

    def current_versions_overlapping_many(
        self, requests: Sequence[tuple[Timeline, Interval]]
    ) -> list[list[Version]]:
        """:meth:`current_versions_overlapping` of each ``(timeline, valid)``, in order (a bulk
        write reads every timeline it touches at once). Backends may answer in one query."""
        return [
            self.current_versions_overlapping(lineage, scope, source, valid)
            for (lineage, scope, source), valid in requests
        ]

    @abstractmethod
    def append_versions(self, versions: Sequence[Version]) -> None:
        """Insert new versions (their ids are unique)."""

    @abstractmethod
    def close_versions(self, version_ids: Sequence[str], known_to: Instant) -> None:
        """Close the known interval of open versions at ``known_to`` (the only update)."""

    def close_versions_at(self, closes: Sequence[tuple[str, Instant]]) -> None:
        """Close each open version ``version_id`` at its own ``known_to`` (a bulk write closes
        versions at the knowledge dates of different statements). Backends may do it in one
        statement; the default makes one :meth:`close_versions` per distinct ``known_to``."""
        groups: dict[tuple[int, bool], tuple[Instant, list[str]]] = {}
        for version_id, known_to in closes:
            key = (known_to.micros, known_to.is_date)
            groups.setdefault(key, (known_to, []))[1].append(version_id)
        for known_to, version_ids in groups.values():
            self.close_versions(version_ids, known_to)

    @abstractmethod
    def candidates(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant
    ) -> list[Version]:
        """The rows that decide an answer at ``(t, k)``, in insertion order.

        * the versions of ``(lineage, scope)`` valid at ``t`` and known at ``k`` (admitted);
        * among versions of ``(lineage, scope)`` valid at ``t`` with a non-empty known interval,
          those whose knowledge ended last at or before ``k`` and those learned first after
          ``k`` (the neighbours on the knowledge axis);
        * among versions of ``(lineage, scope)`` known at ``k``, those ending nearest before
          ``t`` and those starting nearest after ``t`` (the neighbours on the validity axis);
        * versions of ``lineage`` in other scopes that are valid at ``t`` and known at ``k``.
        """

    def candidates_and_held(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant, held_at: Instant
    ) -> tuple[list[Version], list[Version]]:
        """:meth:`candidates` at ``(t, k)``, and the versions of ``(lineage, scope)`` valid at
        ``t`` and known at ``held_at`` (what the store held then), both in insertion order.

        This default reads them one after the other; a backend may read both at once.
        """
        held = [
            v
            for v in self.candidates(lineage, scope, valid_at, held_at)
            if admissibility(v, scope, valid_at, held_at) is None
        ]
        return self.candidates(lineage, scope, valid_at, known_at), held

    @abstractmethod
    def history(self, lineage: str, scope: Scope | None = None) -> list[Version]:
        """Every version of the lineage (of one scope, or of all), in insertion order."""

    @abstractmethod
    def lineages(self) -> list[tuple[str, Scope]]:
        """Every ``(lineage, scope)`` that has at least one write, sorted."""

    @abstractmethod
    def versions_by_id(self, version_ids: Sequence[str]) -> list[Version]:
        """Kernel snapshots by id (unknown ids are skipped), in insertion order."""


class PrecedenceRules(Transactional):
    """The precedence rules between sources, versioned on the knowledge axis."""

    @abstractmethod
    def append_precedence(self, rule: PrecedenceRule) -> None:
        """Store a new precedence rule."""

    @abstractmethod
    def close_precedence(self, rule_id: str, known_to: Instant) -> None:
        """Close the known interval of a rule."""

    @abstractmethod
    def precedence_rules(self, lineage: str | None, scope: Scope) -> list[PrecedenceRule]:
        """Every rule stored for exactly ``(lineage, scope)``; ``None`` = scope-wide rules."""

    def precedence_rules_for(self, lineage: str, scope: Scope) -> list[PrecedenceRule]:
        """The rules that may resolve a conflict of ``lineage`` in ``scope``: the lineage's own,
        then the scope-wide ones. Read only when an answer's values conflict; backends may answer
        it in one query (the default makes two)."""
        return self.precedence_rules(lineage, scope) + self.precedence_rules(None, scope)


class AnswerHorizon(Transactional):
    """The knowledge horizon (:mod:`vigente.kernel.horizon`): the latest knowledge time answered
    for, and the backfills recorded behind it."""

    @abstractmethod
    def answered_horizon(self) -> Instant | None:
        """The latest knowledge time the store has answered for (``None``: none yet). Inside a
        write transaction, no horizon can be fixed from this call until the transaction ends."""

    @abstractmethod
    def fix_answered_horizon(self, known_at: Instant) -> None:
        """Raise the answered horizon to ``known_at`` (never lowers it), committed before it
        returns; waits for the writes in flight."""

    @abstractmethod
    def append_backfill(self, backfill: Backfill) -> None:
        """Record a write behind the horizon (inside the backfill's own transaction)."""

    @abstractmethod
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` on this thread."""

    @abstractmethod
    def reserve_write(self, reservation_id: str, at: Instant) -> None:
        """Record that a write learned now will be dated at or after ``at``, committed (visible
        to every reader) before it returns; called outside any transaction."""

    @abstractmethod
    def release_write(self, reservation_id: str) -> None:
        """Forget a reservation: inside the write's transaction (it ends with the write), or on
        its own after a write that rolled back."""

    @abstractmethod
    def writes_in_flight_since(self, since: Instant) -> Instant | None:
        """The earliest reservation made at or after ``since`` and not yet released (None: no
        write learned now is in flight); a plain read, no lock."""

    @abstractmethod
    def backfills(self) -> list[Backfill]:
        """Every recorded backfill, oldest first."""


class Integrity(Transactional):
    """Stored instants that cannot be read back (:mod:`vigente.kernel.integrity`)."""

    @abstractmethod
    def unreadable_instants(self) -> list[UnreadableInstant]:
        """Every stored instant outside the years 1–9999 in UTC (written before the parsers
        refused them), with where it is."""

    @abstractmethod
    def repair_unreadable_instants(self) -> list[UnreadableInstant]:
        """Move each unreadable instant to the nearest instant of the range (an end beyond it:
        an open end), in one transaction; what was repaired, and into what."""

    @abstractmethod
    def future_knowledge(self, after: Instant) -> list[UnreadableInstant]:
        """Every stored knowledge time (a version's known interval, a write's, a precedence
        rule's, a document's publication or learning, a runtime record's, the answered horizon)
        after ``after``: knowledge the store cannot have held yet (``problem="future"``)."""

    @abstractmethod
    def repair_future_knowledge(self, after: Instant, to: Instant) -> list[UnreadableInstant]:
        """Move every knowledge time after ``after`` to ``to`` (the ``i``-th distinct one, in
        order, to ``to`` + ``i`` µs, so their order and every interval between them are kept),
        in one transaction; what was repaired, and into what."""


class DecisionLog(Transactional):
    """The recorded decisions: every answer and assembly an audit can look up by id."""

    @abstractmethod
    def append_decision(self, decision: Decision) -> None:
        """Store an admissibility decision (append-only)."""

    @abstractmethod
    def decision(self, decision_id: str) -> Decision | None:
        """A recorded decision, or ``None``."""

    @abstractmethod
    def decisions(self, limit: int) -> list[Decision]:
        """The latest recorded decisions, newest first."""
