"""The composite store: every contract of :mod:`vigente.store.contracts` on one connection.

Domain code (the kernel's bitemporal writes and evidence, the documents, retrieval, runtime and
assembly domains) talks to storage only through those contracts. A backend owns its SQL, its
migrations and the mapping of instants to columns; it holds no domain rules. The conformance
suite in ``tests/conformance`` runs the same tests against every backend.
"""

from __future__ import annotations

from vigente.store.contracts import (
    COMPACT_WAIT_MS,
    AnswerHorizon,
    AssemblyLog,
    Compaction,
    DecisionLog,
    DocumentLog,
    Integrity,
    PrecedenceRules,
    RecallIndex,
    RetrievalIndex,
    ReviewLog,
    RuntimeContent,
    RuntimeIndex,
    RuntimeLog,
    Timeline,
    TokenCounts,
    VectorIndex,
    VersionLedger,
    Write,
)

__all__ = ["COMPACT_WAIT_MS", "Compaction", "Store", "Timeline", "Write"]


class Store(VersionLedger, PrecedenceRules, AnswerHorizon, Integrity, DecisionLog,
            DocumentLog, ReviewLog, RetrievalIndex, VectorIndex,
            RuntimeLog, RuntimeContent, RuntimeIndex, RecallIndex, AssemblyLog, TokenCounts):
    """Every contract, as one backend implements them on one connection and transaction: what
    :func:`vigente.store.open_store` returns and the :class:`~vigente.Vigente` facade composes
    its services from. A service that needs only part of it is typed against that contract."""
