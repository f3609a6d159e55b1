"""The retrieval index's contracts: passages and fields (lexical), and vectors (semantic)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from vigente.records.retrieval import (
    Candidate,
    CandidateQuery,
    Claim,
    FieldMatch,
    FieldRecord,
    PassageRecord,
    RetrievalStats,
)
from vigente.records.versions import Version
from vigente.store.contracts.transaction import Transactional

__all__ = ["RetrievalIndex", "VectorIndex"]


class RetrievalIndex(Transactional):
    """The lexical retrieval index. Passages are derived from claims: one kernel timeline value
    (lineage, scope, source, value). Candidate generation applies the temporal filter itself
    (``CandidateQuery``): a passage is returned only when a snapshot of its claim is admissible
    at ``(t, k)``."""

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


class VectorIndex(Transactional):
    """Passage vectors per embedding model, and the nearest passages to a query vector."""

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
