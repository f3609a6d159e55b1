"""Every conformance class in one: what a backend of the whole
:class:`~vigente.store.Store` runs."""

from __future__ import annotations

from vigente.testing.assembly import AssemblyLogConformance, TokenCountsConformance
from vigente.testing.documents import DocumentLogConformance, ReviewLogConformance
from vigente.testing.ledger import (
    AnswerHorizonConformance,
    DecisionLogConformance,
    IntegrityConformance,
    PrecedenceRulesConformance,
    VersionLedgerConformance,
)
from vigente.testing.recall import RecallIndexConformance
from vigente.testing.retrieval import RetrievalIndexConformance, VectorIndexConformance
from vigente.testing.runtime import (
    RuntimeContentConformance,
    RuntimeIndexConformance,
    RuntimeLogConformance,
)
from vigente.testing.transaction import TransactionalConformance

__all__ = ["StoreConformance"]


class StoreConformance(
    TransactionalConformance, VersionLedgerConformance, PrecedenceRulesConformance,
    AnswerHorizonConformance, IntegrityConformance, DecisionLogConformance,
    DocumentLogConformance, ReviewLogConformance, RetrievalIndexConformance,
    VectorIndexConformance, RuntimeLogConformance, RuntimeContentConformance,
    RuntimeIndexConformance, RecallIndexConformance, AssemblyLogConformance,
    TokenCountsConformance,
):
    """The checks of every contract. A backend that implements only some runs the checks of
    those; the others are skipped, each naming the contract it lacks."""
