"""The store conformance kit: the checks a storage backend must pass, to run on your own.

A backend implements the contracts of :mod:`vigente.store.contracts`; this kit holds one
pytest class of checks per contract, written against the contract's methods (and, where
simpler, the public :class:`~vigente.Vigente` facade), never against one backend's tables. To
run it, subclass the classes in a test module of your own and give them one fixture,
``store_factory``: a callable that opens a fresh, empty store of yours::

    import pytest
    from vigente.testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store_factory(self, tmp_path):
            paths = (tmp_path / f"db-{n}" for n in range(1000))
            return lambda: MyStore(next(paths))

The checks of a contract your store does not implement (``isinstance(store, VectorIndex)`` is
false) are skipped, naming the contract: those are optional capabilities. docs/testing.md says
what each class checks. This package imports pytest and hypothesis; ``import vigente`` never
imports it.
"""

from __future__ import annotations

import pytest

# Before the modules of checks are imported: their asserts explain a failure as a test's do.
pytest.register_assert_rewrite(
    "vigente.testing.assembly", "vigente.testing.documents", "vigente.testing.ledger",
    "vigente.testing.recall", "vigente.testing.retrieval", "vigente.testing.runtime",
    "vigente.testing.transaction",
)

from vigente.testing.assembly import AssemblyLogConformance, TokenCountsConformance  # noqa: E402
from vigente.testing.base import Conformance, StoreFactory  # noqa: E402
from vigente.testing.documents import DocumentLogConformance, ReviewLogConformance  # noqa: E402
from vigente.testing.ledger import (  # noqa: E402
    AnswerHorizonConformance,
    DecisionLogConformance,
    IntegrityConformance,
    PrecedenceRulesConformance,
    VersionLedgerConformance,
)
from vigente.testing.recall import RecallIndexConformance  # noqa: E402
from vigente.testing.retrieval import (  # noqa: E402
    RetrievalIndexConformance,
    VectorIndexConformance,
)
from vigente.testing.runtime import (  # noqa: E402
    RuntimeContentConformance,
    RuntimeIndexConformance,
    RuntimeLogConformance,
)
from vigente.testing.store import StoreConformance  # noqa: E402
from vigente.testing.transaction import TransactionalConformance  # noqa: E402

__all__ = [
    "AnswerHorizonConformance",
    "AssemblyLogConformance",
    "Conformance",
    "DecisionLogConformance",
    "DocumentLogConformance",
    "IntegrityConformance",
    "PrecedenceRulesConformance",
    "RecallIndexConformance",
    "RetrievalIndexConformance",
    "ReviewLogConformance",
    "RuntimeContentConformance",
    "RuntimeIndexConformance",
    "RuntimeLogConformance",
    "StoreConformance",
    "StoreFactory",
    "TokenCountsConformance",
    "TransactionalConformance",
    "VectorIndexConformance",
    "VersionLedgerConformance",
]
