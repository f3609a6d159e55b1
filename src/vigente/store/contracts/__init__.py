"""The store contracts: one small contract per domain, each a handful of methods.

Domain code talks to storage only through these. A backend implements every contract on one
connection (:class:`Transactional`), so that one transaction spans them all; the composite
:class:`vigente.store.Store` is what the :class:`~vigente.Vigente` facade opens. A service is
typed against the contracts it uses. Optional capabilities (:class:`VectorIndex`,
:class:`Integrity`) can be told apart with ``isinstance``.

==================  =====================================================  =================
contract            what it keeps                                          used by
==================  =====================================================  =================
VersionLedger       the journal of statements and the versions they left   vigente.kernel
PrecedenceRules     precedence between sources                             vigente.kernel
AnswerHorizon       the answered horizon and the backfills behind it       vigente.kernel
Integrity           unreadable stored instants and their repair            vigente.kernel
DecisionLog         every recorded decision                                all services
DocumentLog         document versions and derived copies                   vigente.evidence
ReviewLog           proposals and review steps                             vigente.evidence
RetrievalIndex      claims, passages and fields; lexical search            vigente.retrieval
VectorIndex         passage vectors per model; nearest passages            vigente.retrieval
RuntimeLog          conversations and runtime records                      vigente.runtime
RuntimeContent      raw contents, blobs, token counts; compaction          vigente.runtime
RuntimeIndex        read caches of the runtime graph                       vigente.runtime
RecallIndex         the recall index: texts, terms, statistics, vectors    vigente.runtime
AssemblyLog         assembled contexts                                     vigente.assemble
TokenCounts         running token counts per counter                       vigente.assemble
==================  =====================================================  =================
"""

from vigente.store.contracts.assembly import AssemblyLog, TokenCounts
from vigente.store.contracts.documents import DocumentLog, ReviewLog
from vigente.store.contracts.ledger import (
    AnswerHorizon,
    DecisionLog,
    Integrity,
    PrecedenceRules,
    Timeline,
    VersionLedger,
    Write,
)
from vigente.store.contracts.recall import RecallIndex
from vigente.store.contracts.retrieval import RetrievalIndex, VectorIndex
from vigente.store.contracts.runtime import (
    COMPACT_WAIT_MS,
    Compaction,
    RuntimeContent,
    RuntimeIndex,
    RuntimeLog,
)
from vigente.store.contracts.transaction import Transactional

__all__ = [
    "COMPACT_WAIT_MS",
    "AnswerHorizon",
    "AssemblyLog",
    "Compaction",
    "DecisionLog",
    "DocumentLog",
    "Integrity",
    "PrecedenceRules",
    "RecallIndex",
    "RetrievalIndex",
    "ReviewLog",
    "RuntimeContent",
    "RuntimeIndex",
    "RuntimeLog",
    "Timeline",
    "TokenCounts",
    "Transactional",
    "VectorIndex",
    "VersionLedger",
    "Write",
]
