"""The SQLite backend, the embedded default: one adapter module per store contract, all on one
connection and one transaction (:class:`SQLiteStore`).

============  ===================================================================
module        contracts
============  ===================================================================
store         the connection, the migrations, VersionLedger and PrecedenceRules
documents     DecisionLog, DocumentLog, ReviewLog
retrieval     RetrievalIndex, VectorIndex (FTS5 and vectors in numpy)
runtime       RuntimeLog, RuntimeContent, RuntimeIndex (blobs in a folder beside)
recall        RecallIndex
assembly      AssemblyLog, TokenCounts
horizon       AnswerHorizon
integrity     Integrity
============  ===================================================================
"""

from vigente.store.sqlite.store import CONNECTION_PRAGMAS, INTERVAL_INDEXES, SQLiteStore

__all__ = ["CONNECTION_PRAGMAS", "INTERVAL_INDEXES", "SQLiteStore"]
