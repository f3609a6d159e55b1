"""The agent runtime's contracts: its records, their raw contents, and the read caches
derived from them."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple

from vigente.records.runtime import Conversation, RuntimeRecord
from vigente.store.contracts.transaction import Transactional
from vigente.time import Instant

__all__ = ["COMPACT_WAIT_MS", "Compaction", "RuntimeContent", "RuntimeIndex", "RuntimeLog"]

#: How long a compaction waits for readers before it reports that it could not finish.
COMPACT_WAIT_MS = 2000


class Compaction(NamedTuple):
    """What a compaction after an erasure achieved: ``complete`` when the backend's files
    hold none of the erased bytes it can check; ``message`` says what was done or is left."""

    complete: bool
    message: str



class RuntimeLog(Transactional):
    """The agent runtime's records (:mod:`vigente.runtime`): append-only rows with the time each
    became known. Reads filter ``known_from <= known_at``; the one erasure (purge and
    retention) deletes."""

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
    def delete_runtime_records(self, conversation_id: str, seqs: Sequence[int]) -> int:
        """Erase records (retention); how many."""

    @abstractmethod
    def delete_runtime_conversations(self, conversation_ids: Sequence[str]) -> int:
        """Erase conversations with every row that belongs to them; how many rows."""


class RuntimeContent(Transactional):
    """Raw contents of the runtime's records, inline or in a content-addressed blob store, their
    token counts, and the compaction that follows an erasure."""

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


class RuntimeIndex(Transactional):
    """Read caches of the runtime graph (:mod:`vigente.runtime.reader`, :mod:`vigente.assemble`).

    Derived from the append-only records, filled on first need in ``seq`` order (a mark per
    cache says how far), purged with their account. ``runtime_index``: one row per context
    record (message, call, artifact, memory, skill state, checkpoint) as the tuple
    ``(seq, kind, record_id, target_id, branch_id, group, known_micros, flag)``: ``group``
    names its branch/participant/visibility (None for an artifact, which shares its call's
    ref), ``flag`` its protected-state class ('' when none)."""

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
