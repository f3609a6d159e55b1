"""The one storage contract every backend implements.

Domain code (the kernel's bitemporal writes and evidence, later the lineage and runtime domains)
talks to storage only through :class:`Store`. A backend owns its SQL, its migrations and the
mapping of instants to columns; it holds no domain rules. The conformance suite in
``tests/conformance`` runs the same tests against every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from vigente.evidence.records import (
    DerivationRecord,
    DocumentVersion,
    ProposalRecord,
    ReviewEvent,
)
from vigente.kernel.decisions import Decision
from vigente.kernel.horizon import Backfill
from vigente.kernel.integrity import UnreadableInstant
from vigente.kernel.values import Scope
from vigente.kernel.versions import PrecedenceRule, Version, admissibility
from vigente.time import Instant, Interval

if TYPE_CHECKING:
    from vigente.retrieval.records import (
        Candidate,
        CandidateQuery,
        Claim,
        FieldMatch,
        FieldRecord,
        PassageRecord,
        RetrievalStats,
    )
    from vigente.runtime.records import Conversation, RecallDoc, RuntimeRecord

__all__ = ["COMPACT_WAIT_MS", "Compaction", "Store", "Timeline", "Write"]

#: How long a compaction waits for readers before it reports that it could not finish.
COMPACT_WAIT_MS = 2000


class Compaction(NamedTuple):
    """What a compaction after an erasure achieved: ``complete`` when the backend's files
    hold none of the erased bytes it can check; ``message`` says what was done or is left."""

    complete: bool
    message: str


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


class Store(ABC):
    """Persistence for versions, the write journal and precedence rules.

    Every method that changes data must run inside :meth:`transaction`; a transaction is atomic
    (all or nothing) and nested calls join the outer one. Writers of one timeline are serialised
    by :meth:`lock_timeline`.
    """

    #: The URL or path the store was opened with (for messages, never parsed by domain code).
    url: str
    #: Statements an import plans and writes together (kernel.ledger.apply_writes); bounds the
    #: memory of one round and the size of its queries. A whole import still runs in one
    #: transaction. Set it on a store to change it.
    write_round: int = 5_000

    # -- lifecycle -------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None:
        """Release connections. The store cannot be used afterwards."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """An atomic unit of work; re-entrant (inner calls join the outer transaction)."""

    @abstractmethod
    def lock_timeline(self, lineage: str, scope: Scope, source: str) -> None:
        """Serialise concurrent writers of one timeline until the transaction ends."""

    def lock_timelines(self, timelines: Sequence[Timeline]) -> None:
        """:meth:`lock_timeline` for each of ``timelines``, in the order given (callers sort
        them by :meth:`Timeline.order`, so that two writers of overlapping sets wait for each
        other instead of deadlocking). Backends may take them in one statement."""
        for lineage, scope, source in timelines:
            self.lock_timeline(lineage, scope, source)

    # -- journal ---------------------------------------------------------------------------
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

    # -- versions --------------------------------------------------------------------------
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

    # -- precedence rules ------------------------------------------------------------------
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

    @abstractmethod
    def versions_by_id(self, version_ids: Sequence[str]) -> list[Version]:
        """Kernel snapshots by id (unknown ids are skipped), in insertion order."""

    # -- the knowledge horizon (vigente.kernel.horizon) --------------------------------------
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
    def backfills(self) -> list[Backfill]:
        """Every recorded backfill, oldest first."""

    # -- integrity (vigente.kernel.integrity) ------------------------------------------------
    @abstractmethod
    def unreadable_instants(self) -> list[UnreadableInstant]:
        """Every stored instant outside the years 1–9999 in UTC (written before the parsers
        refused them), with where it is."""

    @abstractmethod
    def repair_unreadable_instants(self) -> list[UnreadableInstant]:
        """Move each unreadable instant to the nearest instant of the range (an end beyond it:
        an open end), in one transaction; what was repaired, and into what."""

    # -- recorded decisions ------------------------------------------------------------------
    @abstractmethod
    def append_decision(self, decision: Decision) -> None:
        """Store an admissibility decision (append-only)."""

    @abstractmethod
    def decision(self, decision_id: str) -> Decision | None:
        """A recorded decision, or ``None``."""

    @abstractmethod
    def decisions(self, limit: int) -> list[Decision]:
        """The latest recorded decisions, newest first."""

    # -- document lineages -------------------------------------------------------------------
    @abstractmethod
    def append_document_version(self, version: DocumentVersion) -> None:
        """Store a new, immutable document version."""

    @abstractmethod
    def document_versions_by_id(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        """Document versions by id (unknown ids are skipped), in insertion order."""

    @abstractmethod
    def document_versions(self, lineage_id: str, scope: Scope | None) -> list[DocumentVersion]:
        """Every version of a document lineage (one scope, or all), in insertion order."""

    @abstractmethod
    def document_successors(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        """Versions whose predecessor is one of ``version_ids``, in insertion order."""

    # -- derivations -------------------------------------------------------------------------
    @abstractmethod
    def append_derivation(self, record: DerivationRecord) -> None:
        """Store a derived item and its sources."""

    @abstractmethod
    def derivations(self) -> list[DerivationRecord]:
        """Every derived item, in insertion order."""

    @abstractmethod
    def derivations_by_id(self, derived_ids: Sequence[str]) -> list[DerivationRecord]:
        """Derived items by id (unknown ids are skipped)."""

    # -- review queue ------------------------------------------------------------------------
    @abstractmethod
    def append_proposal(self, proposal: ProposalRecord) -> None:
        """Store a proposal extracted from a bare document."""

    @abstractmethod
    def proposals(self) -> list[ProposalRecord]:
        """Every proposal, in insertion order."""

    @abstractmethod
    def append_review_event(self, event: ReviewEvent) -> None:
        """Append one review step (edit, approve, reject) of a proposal."""

    @abstractmethod
    def review_events(self, proposal_id: str | None) -> list[ReviewEvent]:
        """The review steps of one proposal (or all), in order."""

    # -- retrieval ---------------------------------------------------------------------------
    # Passages are derived from claims: one kernel timeline value (lineage, scope, source,
    # value). Candidate generation applies the temporal filter itself (CandidateQuery): a
    # passage is returned only when a snapshot of its claim is admissible at (t, k).
    @abstractmethod
    def pending_claims(self, *, full: bool = False) -> tuple[list[Claim], int]:
        """Claims of snapshots added since the last :meth:`mark_indexed` (every claim with
        ``full``) that have no passages yet, and the cursor to pass to :meth:`mark_indexed`
        (``0`` when no snapshot was added since: the index is up to date)."""

    @abstractmethod
    def mark_indexed(self, through: int) -> None:
        """Remember that every claim up to the cursor ``through`` is indexed."""

    @abstractmethod
    def append_passages(self, claim: Claim, kind: str, passages: Sequence[PassageRecord],
                        fields: Sequence[FieldRecord] = ()) -> bool:
        """Index a claim (``kind`` "document" or "fact") with its passages and (documents) its
        title and reference fields; ``False`` when it was indexed already."""

    @abstractmethod
    def pending_fields(self) -> list[Claim]:
        """Document claims indexed before titles and references were (a store indexed by an
        older vigente); empty once :meth:`mark_fields_indexed` has run."""

    @abstractmethod
    def append_fields(self, claim: Claim, fields: Sequence[FieldRecord]) -> None:
        """Index the title and reference fields of an indexed claim (once; again is a no-op)."""

    @abstractmethod
    def mark_fields_indexed(self) -> None:
        """Remember that every claim of :meth:`pending_fields` has its fields."""

    @abstractmethod
    def reset_retrieval(self) -> None:
        """Forget every claim, passage and vector (before re-chunking)."""

    @abstractmethod
    def retrieval_stats(self) -> RetrievalStats:
        """How many claims, passages and vectors (per model id) are indexed."""

    @abstractmethod
    def claim_snapshots(self, claim_ids: Sequence[int]) -> list[tuple[int, Version]]:
        """Every kernel snapshot of the given claims, as ``(claim_id, snapshot)``."""

    @abstractmethod
    def search_lexical(self, terms: Sequence[str], query: CandidateQuery) -> list[Candidate]:
        """Passages matching any of the folded ``terms``, best first (at most
        ``query.limit``), restricted by ``query``'s temporal filter and scope."""

    @abstractmethod
    def search_fields(self, terms: Sequence[str], query: CandidateQuery) -> list[FieldMatch]:
        """Title and reference fields containing any of ``terms`` (field terms, see
        :func:`~vigente.retrieval.text.field_terms`), of claims that pass ``query``'s temporal
        filter and scope; at most ``query.limit`` claims, those matching most terms first. A
        backend may match only the rarest terms (as for passages): the caller scores every
        field returned against the whole query."""

    @abstractmethod
    def first_passages(self, claim_ids: Sequence[int]) -> list[Candidate]:
        """The first passage (position 0) of each of these claims that has one, score 0."""

    @abstractmethod
    def passages_without_vectors(self, model_id: str, limit: int
                                 ) -> list[tuple[int, str, str]]:
        """Up to ``limit`` passages with no vector for ``model_id``: ``(passage_id,
        content_hash, text)``."""

    @abstractmethod
    def vectors_by_content(self, model_id: str, content_hashes: Sequence[str]
                           ) -> dict[str, bytes]:
        """Stored vectors of ``model_id`` for passages with these contents (to reuse them)."""

    @abstractmethod
    def append_vectors(self, model_id: str, rows: Sequence[tuple[int, bytes]]) -> None:
        """Store ``(passage_id, float32 little-endian unit vector)`` rows for ``model_id``."""

    @abstractmethod
    def drop_vectors(self, model_id: str) -> int:
        """Delete every vector of ``model_id``; returns how many."""

    @abstractmethod
    def search_vectors(self, model_id: str, vector: bytes, query: CandidateQuery
                       ) -> list[Candidate]:
        """Passages nearest to ``vector`` (cosine) among those with a vector of ``model_id``,
        best first, restricted by ``query``'s temporal filter and scope."""

    # -- runtime graph -----------------------------------------------------------------------
    # The agent runtime's records (vigente.runtime): append-only rows with the time each became
    # known, raw contents inline or in a content-addressed blob store, and the one erasure
    # (purge and retention). Reads filter ``known_from <= known_at``.
    @abstractmethod
    def append_runtime_conversation(self, conversation: Conversation) -> None:
        """Store a new conversation (its id is unique)."""

    @abstractmethod
    def runtime_conversations(self, *, account: str | None = None,
                              ids: Sequence[str] | None = None) -> list[Conversation]:
        """Conversations (of one account, or with these ids, or all), sorted by id."""

    @abstractmethod
    def append_runtime_records(self, records: Sequence[RuntimeRecord]) -> list[int]:
        """Append graph records in order; their ``seq`` (increasing)."""

    @abstractmethod
    def runtime_records(self, conversation_id: str, *, kinds: Sequence[str] | None = None,
                        record_ids: Sequence[str] | None = None,
                        target_ids: Sequence[str] | None = None,
                        known_at: Instant | None = None) -> list[RuntimeRecord]:
        """Records of a conversation, in ``seq`` order: of these kinds, with these ids or
        these targets (either matches), known at ``known_at`` (``None``: every record)."""

    @abstractmethod
    def runtime_branch_records(self, conversation_id: str, branch_id: str, upto: int | None,
                               participant_id: str, known_at: Instant, since: int = 0
                               ) -> list[RuntimeRecord]:
        """Records on one branch at positions ``<= upto`` (``None``: all) known at
        ``known_at`` that are the participant's own or visible to the branch or conversation,
        in ``seq`` order (an indexed read: its cost follows what it returns); only rows at
        ``seq >= since``."""

    @abstractmethod
    def runtime_reachable(self, conversation_id: str, participant_id: str,
                          known_at: Instant, since: int = 0) -> list[RuntimeRecord]:
        """Records of any branch visible to the whole conversation, and the share and
        promotion records naming the participant, known at ``known_at``, in ``seq`` order
        (the visible rows only at ``seq >= since``; the shares and promotions all)."""

    @abstractmethod
    def runtime_record_homes(self, record_id: str) -> list[tuple[str, str]]:
        """``(conversation_id, kind)`` of every record with this id, sorted."""

    @abstractmethod
    def runtime_latest_knowledge(self, conversation_id: str) -> Instant | None:
        """The latest ``known_from`` of the conversation's records, or ``None``."""

    @abstractmethod
    def put_runtime_content(self, conversation_id: str, sha256: str, data: bytes, *,
                            inline: bool) -> None:
        """Keep raw bytes for a conversation: in the database (``inline``) or in the blob
        store. Idempotent for one conversation and digest."""

    @abstractmethod
    def runtime_content(self, conversation_id: str, sha256: str) -> bytes | None:
        """Raw bytes kept for a conversation, or ``None`` (unknown or erased)."""

    def runtime_contents(self, conversation_id: str, sha256s: Sequence[str]
                         ) -> dict[str, bytes | None]:
        """:meth:`runtime_content` of each digest (``None``: unknown or erased), in one read
        where the backend can."""
        return {sha: self.runtime_content(conversation_id, sha) for sha in dict.fromkeys(sha256s)}

    def put_runtime_content_tokens(self, conversation_id: str,
                                   counts: Sequence[tuple[str, str, int]]) -> None:
        """Keep ``(sha256, encoding, tokens)``: how many tokens a content's replay text has in
        an encoding, derived once so that an assembly never tokenizes those bytes again.
        Idempotent (a count already kept stays). Optional: a backend that keeps none makes
        the assembler count the bytes as it reads them."""
        return None

    def runtime_content_tokens(self, conversation_id: str, sha256s: Sequence[str],
                               encoding: str) -> dict[str, int]:
        """The counts kept by :meth:`put_runtime_content_tokens` for these digests in
        ``encoding`` (a digest without one is absent); erased with the contents."""
        return {}

    @abstractmethod
    def delete_runtime_contents(self, conversation_id: str, sha256s: Sequence[str]) -> int:
        """Erase a conversation's raw bytes (retention), with their token counts; how many
        were erased."""

    @abstractmethod
    def delete_runtime_records(self, conversation_id: str, seqs: Sequence[int]) -> int:
        """Erase records (retention); how many."""

    @abstractmethod
    def delete_runtime_conversations(self, conversation_ids: Sequence[str]) -> int:
        """Erase conversations with every row that belongs to them; how many rows."""

    @abstractmethod
    def runtime_blob_digests(self) -> list[str]:
        """Every digest in the blob store, sorted."""

    @abstractmethod
    def runtime_blob_referenced(self, sha256: str) -> bool:
        """True while some conversation's content is kept in the blob under ``sha256``."""

    @abstractmethod
    def delete_runtime_blobs(self, sha256s: Sequence[str]) -> int:
        """Erase blobs (the caller checked they are unreferenced); how many."""

    @abstractmethod
    def end_runtime_blobs(self, committed: bool) -> None:
        """Called after a runtime transaction: when it rolled back, forget the blobs it
        created outside the database (a file store cannot roll back by itself)."""

    @abstractmethod
    def runtime_compact(self, *, full: bool = True, samples: Sequence[bytes] = ()
                        ) -> Compaction:
        """After an erasure, make the freed bytes unreadable where the backend can (outside a
        transaction), waiting a bounded time for readers: whether it finished, and a sentence
        saying what was done or what is left. ``full`` false: only finish what an earlier
        compaction left (no rewrite). ``samples``: bytes of the erased text; where the backend
        can read its own files, it checks that none of them is left there."""

    # -- read caches of the runtime graph (vigente.runtime.reader, vigente.assemble) ----------
    # Derived from the append-only records, filled on first need in ``seq`` order (a mark per
    # cache says how far), purged with their account. ``runtime_index``: one row per context
    # record (message, call, artifact, memory, skill state, checkpoint) as the tuple
    # ``(seq, kind, record_id, target_id, branch_id, group, known_micros, flag)`` — ``group``
    # names its branch/participant/visibility (None for an artifact, which shares its call's
    # ref), ``flag`` its protected-state class ('' when none). Token counts: per counter
    # (``encoding/format``) ``(seq, branch_id, position, known_micros, tokens, messages)``.
    @abstractmethod
    def runtime_records_after(self, conversation_id: str, seq: int, limit: int
                              ) -> list[RuntimeRecord]:
        """Up to ``limit`` records of the conversation after ``seq``, in ``seq`` order."""

    @abstractmethod
    def runtime_cache_mark(self, conversation_id: str, cache: str) -> int:
        """The last ``seq`` the cache named ``cache`` has taken in (0: none yet)."""

    def runtime_records_after_mark(self, conversation_id: str, cache: str, limit: int
                                   ) -> tuple[int, list[RuntimeRecord]]:
        """:meth:`runtime_cache_mark` of ``cache`` and up to ``limit`` records after it
        (:meth:`runtime_records_after`), in one read where the backend can."""
        mark = self.runtime_cache_mark(conversation_id, cache)
        return mark, self.runtime_records_after(conversation_id, mark, limit)

    @abstractmethod
    def append_runtime_index(self, conversation_id: str, rows: Sequence[tuple[Any, ...]],
                             through: int) -> None:
        """Index rows in ``seq`` order (rows indexed already are skipped) and the ``index``
        mark moved to ``through``. Each row gets its 1-based rank in its group; an artifact
        row resolves the call it targets (the first result's ``known_from`` stays)."""

    @abstractmethod
    def runtime_flagged(self, conversation_id: str, flag: str, known_at: Instant, *,
                        branch_id: str | None = None, upto: int | None = None,
                        limit: int | None = None) -> list[RuntimeRecord]:
        """Records indexed with ``flag`` known at ``known_at`` (on one branch at ``seq <=
        upto`` when given), newest first, at most ``limit``."""

    @abstractmethod
    def runtime_open_calls(self, conversation_id: str, known_at: Instant
                           ) -> list[RuntimeRecord]:
        """The tool calls known at ``known_at`` with no result known then, in ``seq`` order."""

    def runtime_protected(self, conversation_id: str, known_at: Instant,
                          requests: Sequence[tuple[str, str | None, int | None, int | None]]
                          ) -> tuple[list[RuntimeRecord], list[list[RuntimeRecord]]]:
        """The protected state in one read where the backend can: :meth:`runtime_open_calls`,
        and :meth:`runtime_flagged` for each ``(flag, branch_id, upto, limit)``."""
        return (self.runtime_open_calls(conversation_id, known_at),
                [self.runtime_flagged(conversation_id, flag, known_at, branch_id=branch,
                                      upto=upto, limit=limit)
                 for flag, branch, upto, limit in requests])

    @abstractmethod
    def runtime_horizon(self, conversation_id: str, branch_id: str, upto: int | None,
                        before: int | None, known_at: Instant, count: int) -> int | None:
        """The ``seq`` of the ``count``-th newest indexed ref (not an artifact) on the branch
        at ``seq <= upto`` and ``< before`` known at ``known_at``; None when there are fewer."""

    def runtime_horizon_records(self, conversation_id: str,
                                chain: Sequence[tuple[str, int | None]], known_at: Instant,
                                count: int, below: int | None, limit: int
                                ) -> tuple[int, list[RuntimeRecord]]:
        """The read horizon that takes in the ``count`` newest refs of the ancestry ``chain``
        (``(branch, upto)`` pairs): the newest of the branches' :meth:`runtime_horizon`, 0
        when a branch has fewer everywhere; and up to ``limit`` records at ``seq >= `` it and
        ``< below`` (every record when ``below`` is None), in ``seq`` order
        (:meth:`runtime_records_after`), in one read where the backend can."""
        found = [self.runtime_horizon(conversation_id, b, upto, None, known_at, count)
                 for b, upto in chain]  # fmt: skip
        since = max((s for s in found if s is not None), default=0)
        if below is not None:
            limit = min(limit, below - since)
        if limit <= 0:
            return since, []
        return since, [r for r in self.runtime_records_after(conversation_id, since - 1, limit)
                       if below is None or r.seq < below]  # fmt: skip

    @abstractmethod
    def runtime_group_counts(self, conversation_id: str,
                             bounds: Sequence[tuple[str, int]]) -> list[int]:
        """For each ``(group, below)``: how many indexed refs of the group have ``seq <
        below`` (an index seek each, not a count of rows)."""

    @abstractmethod
    def append_runtime_token_counts(self, conversation_id: str, counter: str,
                                    rows: Sequence[tuple[int, str, int, int, int, int]],
                                    through: int) -> None:
        """Token rows of one counter in ``seq`` order (rows counted already are skipped),
        with running sums per branch, and the counter's mark moved to ``through``."""

    @abstractmethod
    def runtime_token_total(self, conversation_id: str, counter: str,
                            windows: Sequence[tuple[str, int | None]],
                            known_at: Instant) -> tuple[int, int]:
        """``(tokens, messages)`` of the counted rows known at ``known_at`` on each branch of
        ``windows`` at positions ``<= upto`` (``None``: all): a running sum read per branch."""

    # -- the recall index (vigente.runtime.recall) --------------------------------------------
    # A read cache of the runtime graph like the one above (mark ``recall``): one row per
    # searchable record with its text and folded terms, running counts per conversation (the
    # statistics as known at ``k`` are a seek), and vectors per embedding model. The caller
    # scores; the backend only finds. Purged with the account; pruned with retention.
    @abstractmethod
    def append_runtime_recall(self, conversation_id: str, docs: Sequence[RecallDoc],
                              through: int) -> None:
        """Index records in ``seq`` order (records indexed already are skipped) with their
        terms, and move the ``recall`` mark to ``through``."""

    @abstractmethod
    def runtime_recall_stats(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> tuple[int, int]:
        """``(records, terms)`` indexed for these conversations known at ``known_micros``."""

    @abstractmethod
    def runtime_recall_term_counts(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                   known_micros: int) -> dict[str, int]:
        """For each term, how many indexed records known at ``known_micros`` hold it (a seek
        per conversation and term, not a count of rows)."""

    def runtime_recall_statistics(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                  known_micros: int) -> tuple[int, int, dict[str, int]]:
        """:meth:`runtime_recall_stats` and :meth:`runtime_recall_term_counts` together, in one
        read where the backend can (the counts are all 0 when no record is indexed)."""
        docs, length = self.runtime_recall_stats(conversation_ids, known_micros)
        if not docs or not terms:
            return docs, length, dict.fromkeys(terms, 0)
        return docs, length, self.runtime_recall_term_counts(conversation_ids, terms,
                                                             known_micros)

    @abstractmethod
    def runtime_recall_postings(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                known_micros: int, limit: int
                                ) -> list[tuple[str, int, str, int, int]]:
        """``(conversation_id, seq, term, count, record length)`` of the indexed records known
        at ``known_micros`` that hold one of ``terms``: per conversation and term at most
        ``limit``, those where it weighs most first (:func:`~vigente.runtime.records.
        term_weight`, then ``seq``)."""

    @abstractmethod
    def runtime_recall_docs(self, keys: Sequence[tuple[str, int]]) -> list[RecallDoc]:
        """The indexed records with these ``(conversation_id, seq)`` (unknown ones skipped;
        ``terms`` empty), in any order."""

    @abstractmethod
    def runtime_recall_between(self, conversation_ids: Sequence[str], start_micros: int,
                               end_micros: int, limit: int) -> list[RecallDoc]:
        """The newest ``limit`` indexed records known between the two instants (both
        included), newest first."""

    @abstractmethod
    def runtime_recall_unembedded(self, conversation_id: str, model_id: str, after: int,
                                  limit: int) -> list[tuple[int, int, str]]:
        """Up to ``limit`` indexed records after ``seq`` with no vector of ``model_id``:
        ``(seq, known_micros, text)`` in ``seq`` order."""

    @abstractmethod
    def append_runtime_recall_vectors(self, conversation_id: str, model_id: str,
                                      rows: Sequence[tuple[int, int, bytes]]) -> None:
        """Store ``(seq, known_micros, float32 little-endian unit vector)`` rows."""

    @abstractmethod
    def runtime_recall_vector_mark(self, conversation_id: str, model_id: str
                                   ) -> tuple[int, int]:
        """``(how many vectors, the last seq)`` of ``model_id`` for the conversation: what a
        cache of them compares to know it is current."""

    @abstractmethod
    def runtime_recall_vectors(self, conversation_id: str, model_id: str
                               ) -> list[tuple[int, int, bytes]]:
        """Every ``(seq, known_micros, vector)`` of ``model_id`` for the conversation."""

    @abstractmethod
    def delete_runtime_recall(self, conversation_id: str, seqs: Sequence[int]) -> int:
        """Erase the index rows of these records (their text was erased); how many rows."""

    # -- context assemblies (vigente.assemble) ------------------------------------------------
    # Append-only records of what reached a model request; purged with their account.
    @abstractmethod
    def append_runtime_assembly(self, assembly_id: str, conversation_id: str,
                                created_micros: int, snapshot_micros: int,
                                payload_json: str) -> None:
        """Keep one assembly record (its JSON), in the caller's transaction."""

    @abstractmethod
    def runtime_assembly(self, assembly_id: str) -> tuple[str, str] | None:
        """``(conversation_id, payload_json)`` of an assembly, or None."""

    @abstractmethod
    def runtime_assembly_ids(self, conversation_id: str) -> list[str]:
        """The assemblies of a conversation, oldest first."""

    @abstractmethod
    def delete_runtime_assemblies(self, conversation_id: str, assembly_ids: list[str]) -> int:
        """Delete these assemblies of the conversation (their retention has run out), in the
        caller's transaction; how many rows went."""

    # -- helpers shared by backends ---------------------------------------------------------
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
