"""The recall index's contract (:mod:`vigente.runtime.recall`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from vigente.records.runtime import RecallDoc
from vigente.store.contracts.transaction import Transactional

__all__ = ["RecallIndex"]


class RecallIndex(Transactional):
    """The recall index (:mod:`vigente.runtime.recall`), a read cache of the runtime graph like
    :class:`~vigente.store.contracts.runtime.RuntimeIndex` (mark ``recall``): one row per
    searchable record with its text and folded terms, running counts per conversation (the
    statistics as known at ``k`` are a seek), and vectors per embedding model. The caller
    scores; the backend only finds. Purged with the account; pruned with retention."""

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
        ``limit``, those where it weighs most first (:func:`~vigente.records.runtime.
        term_weight`, then ``seq``)."""

    @abstractmethod
    def runtime_recall_names(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> list[str]:
        """The speakers' names (:attr:`~vigente.records.runtime.RecallDoc.name`) of the indexed
        records known at ``known_micros``, each once, sorted."""

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
