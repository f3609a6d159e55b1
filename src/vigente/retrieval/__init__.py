"""Time-filtered hybrid retrieval: relevance ranks topics, validity picks the period.

``vg.retrieval.search(text, valid_at=…, known_at=…)`` returns the passages of document versions
(and fact values) that are about the topic **and** admissible at ``(t, k)``, each with lineage,
version, citation, validity and why it was admitted; the most relevant candidates that were
excluded come back with the kernel's reasons. Lexical search (BM25) needs nothing else;
semantic search needs an :class:`Embedder` (built in: ``pip install 'vigente[embed]'``).
"""

from __future__ import annotations

from vigente.records.retrieval import (
    Candidate,
    CandidateQuery,
    Claim,
    PassageRecord,
    RetrievalStats,
)
from vigente.retrieval.dates import QueryDate, date_from_query
from vigente.retrieval.embed import (
    BUILTIN_MODELS,
    MINILM,
    Embedder,
    EmbeddingUnavailable,
    MiniLMEmbedder,
    builtin_embedder,
    embedding_available,
)
from vigente.retrieval.results import Excluded, Hit, IndexReport, SearchResult
from vigente.retrieval.search import ALL_SCOPES, AllScopes, Mode, Ranked, Retrieval, fuse
from vigente.retrieval.text import MAX_PASSAGE_CHARS, chunk_text, fold, query_terms

__all__ = [
    "ALL_SCOPES",
    "BUILTIN_MODELS",
    "MAX_PASSAGE_CHARS",
    "MINILM",
    "AllScopes",
    "Candidate",
    "CandidateQuery",
    "Claim",
    "Embedder",
    "EmbeddingUnavailable",
    "Excluded",
    "Hit",
    "IndexReport",
    "MiniLMEmbedder",
    "Mode",
    "PassageRecord",
    "QueryDate",
    "Ranked",
    "Retrieval",
    "RetrievalStats",
    "SearchResult",
    "builtin_embedder",
    "chunk_text",
    "date_from_query",
    "embedding_available",
    "fold",
    "fuse",
    "query_terms",
]
