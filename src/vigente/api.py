"""The public Python API: :class:`Vigente`, a bitemporal evidence store over one :class:`Store`.

The facade composes the services (the :class:`Kernel` of facts, documents, derivations, review,
retrieval, the runtime and assembly) and hands each what it uses, never itself. Every surface
(CLI, HTTP, MCP, inspector) calls these methods and holds no logic of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente import telemetry
from vigente.evidence.dates import check_language
from vigente.evidence.derivations import Derivations
from vigente.evidence.documents import Documents
from vigente.evidence.wording import in_language
from vigente.kernel.answer import Evidence
from vigente.kernel.ledger import WriteResult
from vigente.kernel.service import ImportReport, Kernel, ScopeLike
from vigente.records.decisions import Decision
from vigente.records.ledger import Backfill, UnreadableInstant
from vigente.records.values import JSONValue, Scope, check_name
from vigente.records.versions import PrecedenceRule, Version
from vigente.retrieval.search import ALL_SCOPES, ScopeArg
from vigente.store import Store, open_store
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    from vigente.assemble import Assembler
    from vigente.evidence.review import ReviewQueue
    from vigente.retrieval import Retrieval, SearchResult
    from vigente.retrieval.search import Mode
    from vigente.runtime import Runtime

__all__ = ["ImportReport", "Kernel", "ScopeLike", "Vigente"]


class Vigente:
    """A bitemporal evidence store: the :class:`Kernel` of facts, and the document, derivation,
    review, retrieval, runtime and assembly services composed over one :class:`Store`.

    ``known_at=None`` in :meth:`evidence` means "as known now"; ``now=None`` means this moment
    (UTC). Writes are atomic; a refused write leaves the store unchanged.
    """

    def __init__(self, store: Store, *, default_zone: str | None = None) -> None:
        #: The facts on two time axes, their answered horizon and the decision log: what the
        #: services below are given (the Knowledge protocol), never this facade.
        self.kernel = Kernel(store, default_zone=default_zone)

    @property
    def store(self) -> Store:
        """The store every service reads and writes."""
        return self.kernel.store

    @property
    def default_zone(self) -> str | None:
        """The zone naive dates and timestamps are read in (None: they are refused)."""
        return self.kernel.default_zone

    @cached_property
    def documents(self) -> Documents:
        """Document lineages: versions, relations, evidence of what is in force."""
        return Documents(self.kernel)

    @cached_property
    def derivations(self) -> Derivations:
        """Derived copies (chunks, summaries, cached answers) and their invalidation."""
        return Derivations(self.kernel)

    @cached_property
    def retrieval(self) -> Retrieval:
        """Time-filtered hybrid search over document passages and fact values."""
        from vigente.retrieval import Retrieval

        return Retrieval(self.kernel)

    def search(
        self,
        text: str,
        *,
        valid_at: TimeLike | None,
        known_at: TimeLike | None = None,
        scope: ScopeArg = ALL_SCOPES,
        k: int = 10,
        include_superseded: bool = False,
        mode: Mode = "auto",
        date_from_query: bool = False,
        now: TimeLike | None = None,
        language: str = "en",
    ) -> SearchResult:
        """The ``k`` passages most relevant to ``text`` that are admissible on ``valid_at`` as
        known on ``known_at`` (default: now); see :meth:`Retrieval.search`. ``scope`` defaults
        to every scope; ``None`` is the global scope, as everywhere else. ``language`` ("en",
        the default, or "it") words each hit's citation and ``why``."""
        return self.retrieval.search(
            text, valid_at=valid_at, known_at=known_at, scope=scope, k=k,
            include_superseded=include_superseded, mode=mode,
            date_from_query=date_from_query, now=now, language=language,
        )

    @cached_property
    def runtime(self) -> Runtime:
        """The agent runtime graph: conversations, branches, runs, tool artifacts, memories."""
        from vigente.assemble.tokens import DeferredTokenizer
        from vigente.runtime import Runtime

        # a large result's tokens are counted once, as it is recorded (docs/runtime.md)
        return Runtime(self.store, default_zone=self.default_zone,
                       token_counters=[DeferredTokenizer()])

    @cached_property
    def assembly(self) -> Assembler:
        """Policy-governed context assembly over the runtime graph, and its audit."""
        from vigente.assemble import Assembler

        return Assembler(self.runtime)

    @cached_property
    def review(self) -> ReviewQueue:
        """Bare documents waiting for a person to approve their extracted fields."""
        from vigente.evidence.review import ReviewQueue

        return ReviewQueue(self.kernel, self.documents)

    @classmethod
    def open(cls, url: str | Path = ":memory:", *, default_zone: str | None = None) -> Vigente:
        """Open (and migrate) a store: a SQLite path, ``:memory:`` or ``postgresql://…``."""
        return cls(open_store(str(url)), default_zone=default_zone)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Vigente:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several writes into one atomic unit (:meth:`Kernel.transaction`)."""
        with self.kernel.transaction():
            yield

    # -- the kernel's facts, answers and decisions (vigente.kernel.service) ------------------
    def instant(self, value: TimeLike) -> Instant:
        """A date or timestamp read with this store's default zone (naive ones are refused
        without one) (:meth:`Kernel.instant`)."""
        return self.kernel.instant(value)

    def check_knowledge_date(self, known_at: Instant, now: TimeLike | None) -> Instant:
        """Refuse a knowledge date after ``now`` (default: this moment); return ``now``
        (:meth:`Kernel.check_knowledge_date`)."""
        return self.kernel.check_knowledge_date(known_at, now)

    def fix_answer(self, known_at: Instant, now: Instant, *, pinned: bool) -> None:
        """Before an answer as known at ``known_at`` is read: fix the store's answered
        horizon there, so that no later write can change that answer
        (:mod:`vigente.kernel.horizon`) (:meth:`Kernel.fix_answer`)."""
        self.kernel.fix_answer(known_at, now, pinned=pinned)

    def present(self, now: TimeLike | None) -> Instant:
        """``now`` read (a caller's pinned clock, never ahead of the store's clock) or this
        moment (:meth:`Kernel.present`)."""
        return self.kernel.present(now)

    def answer_times(self, known_at: TimeLike | None, now: TimeLike | None
                     ) -> tuple[Instant, Instant]:
        """``(k, now)`` of a question about to be read: checked, and the answered horizon fixed
        at an explicit past ``k``; as known now nothing is written (:meth:`Kernel.answer_times`)."""
        return self.kernel.answer_times(known_at, now)

    def answered_horizon(self) -> Instant | None:
        """The latest knowledge time this store has answered for: a write must be dated
        after it (or be a recorded backfill) (:meth:`Kernel.answered_horizon`)."""
        return self.kernel.answered_horizon()

    def check(self, *, repair: bool = False) -> list[UnreadableInstant]:
        """Stored instants outside the years 1–9999 in UTC, which no question can read back;
        with ``repair``, each moved to the nearest instant of the range and the repair
        recorded as a ``store_repair`` decision (:mod:`vigente.kernel.integrity`)
        (:meth:`Kernel.check`)."""
        return self.kernel.check(repair=repair)

    def backfills(self) -> list[Backfill]:
        """Every recorded backfill (writes allowed behind the answered horizon), oldest
        first (:meth:`Kernel.backfills`)."""
        return self.kernel.backfills()

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
        """State that ``lineage`` is ``value`` over ``[valid_from, valid_to)``, as learned
        on ``known_at`` from ``source`` (:meth:`Kernel.record`)."""
        return self.kernel.record(lineage, value, valid_from=valid_from, valid_to=valid_to,
                                  known_at=known_at, source=source, scope=scope, now=now)

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
        (``known_at=None``: learned now, as in :meth:`record`) (:meth:`Kernel.retract`)."""
        return self.kernel.retract(lineage, valid_from=valid_from, valid_to=valid_to,
                                   known_at=known_at, source=source, scope=scope, now=now)

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
        """Make conflicts in ``scope`` (optionally one lineage) resolvable: earlier sources
        in ``sources`` prevail, from ``known_at`` on (default: learned now); ``backfill`` (why)
        dates it behind the answered horizon, recorded (:meth:`Kernel.set_precedence`)."""
        return self.kernel.set_precedence(sources, known_at=known_at, scope=scope, lineage=lineage,
                                          now=now, backfill=backfill)

    def candidates_at(
        self, lineage: str, scope: Scope, t: Instant, k: Instant, now: Instant,
        *, held: bool = False,
    ) -> tuple[list[Version], list[Version] | None]:
        """The store's candidate rows at ``(t, k)`` and, for a question asked as known now
        about an earlier ``t``, those at ``(t, t)``: the values held then tell
        "retrospective" (a late-learned change) from "historical"
        (:meth:`Kernel.candidates_at`)."""
        return self.kernel.candidates_at(lineage, scope, t, k, now, held=held)

    def history(self, lineage: str, *, scope: ScopeLike = None) -> list[Version]:
        """Every snapshot of a lineage on both axes (all scopes when ``scope`` is None)
        (:meth:`Kernel.history`)."""
        return self.kernel.history(lineage, scope=scope)

    def lineages(self) -> list[tuple[str, Scope]]:
        """See :meth:`Kernel.lineages`."""
        return self.kernel.lineages()

    def import_jsonl(
        self, path: str | Path, *, now: TimeLike | None = None, backfill: str | None = None
    ) -> ImportReport:
        """Import a JSON Lines file of ``record``/``retract`` statements atomically
        (:meth:`Kernel.import_jsonl`)."""
        return self.kernel.import_jsonl(path, now=now, backfill=backfill)

    def import_lines(
        self,
        lines: Iterable[bytes | str],
        *,
        now: TimeLike | None = None,
        backfill: str | None = None,
    ) -> ImportReport:
        """Import ``record``/``retract`` statements, one JSON object a line, atomically
        (:meth:`Kernel.import_lines`)."""
        return self.kernel.import_lines(lines, now=now, backfill=backfill)

    def record_decision(self, kind: str, subject: str, payload: dict[str, Any]) -> str:
        """Store an admissibility decision (what an answer was allowed to see); its id
        (:meth:`Kernel.record_decision`)."""
        return self.kernel.record_decision(kind, subject, payload)

    def decision(self, decision_id: str) -> Decision:
        """A recorded admissibility decision: what an answer was allowed to see
        (:meth:`Kernel.decision`)."""
        return self.kernel.decision(decision_id)

    def decisions(self, limit: int = 20) -> list[Decision]:
        """See :meth:`Kernel.decisions`."""
        return self.kernel.decisions(limit)

    # -- reads -----------------------------------------------------------------------------
    @telemetry.traced("vigente.evidence")
    def evidence(
        self,
        lineage: str,
        *,
        valid_at: TimeLike,
        known_at: TimeLike | None = None,
        scope: ScopeLike = None,
        now: TimeLike | None = None,
        record: bool = False,
        language: str = "en",
    ) -> Evidence:
        """What ``lineage`` was on ``valid_at`` as known on ``known_at`` (default: now).

        ``now`` defaults to this moment (UTC); a ``known_at`` after ``now`` is an error. Dates
        compare with ``now`` at day precision, so ``t = today`` is "current".
        ``record=True`` stores the admissibility decision (read it back with
        :meth:`decision`). ``language`` ("en" or "it") words the ``statement`` wholly in that
        language (:func:`~vigente.evidence.wording.in_language`, the CLI's ``--lang``); every
        other field, and the recorded decision, stay the kernel's.
        """
        check_name("lineage", lineage)
        check_language(language)  # before anything is read or recorded
        evidence = self.kernel.evidence(lineage, valid_at=valid_at, known_at=known_at,
                                        scope=scope, now=now, record=record)
        telemetry.answered(evidence, "fact")
        return in_language(evidence, language)
