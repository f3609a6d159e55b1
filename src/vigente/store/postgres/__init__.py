"""The PostgreSQL backend: one adapter module per store contract, all on one pooled connection
and one transaction (:class:`PostgresStore`).

============  ===================================================================
module        contracts
============  ===================================================================
store         the pool, the locks, the migrations, VersionLedger and PrecedenceRules
documents     DecisionLog, DocumentLog, ReviewLog
retrieval     RetrievalIndex, VectorIndex (tsvector and pgvector)
runtime       RuntimeLog, RuntimeContent, RuntimeIndex
recall        RecallIndex
assembly      AssemblyLog, TokenCounts
horizon       AnswerHorizon
integrity     Integrity
============  ===================================================================
"""

from vigente.store.postgres.store import MIGRATIONS, WRITERS_KEY, PostgresStore, redact

__all__ = ["MIGRATIONS", "WRITERS_KEY", "PostgresStore", "redact"]
