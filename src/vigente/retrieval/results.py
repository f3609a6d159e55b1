"""What a search returns: ranked hits that are admissible at ``(t, k)``, each with why, and the
top candidates that were excluded, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vigente.records.values import JSONValue, Scope
from vigente.time import Instant

__all__ = ["Excluded", "Hit", "IndexReport", "SearchResult"]


def _iso(instant: Instant | None) -> str | None:
    return None if instant is None else instant.isoformat()


@dataclass(frozen=True, slots=True)
class Hit:
    """One admissible passage: where it comes from, its validity as known at ``k``, and why it
    was admitted. ``superseded_by`` names the successor (known at ``k``) that replaced or will
    replace its version; ``admission`` is ``in_force`` (valid at ``t``) or ``superseded`` (only
    with ``include_superseded``: it had ended by ``t``); ``matched_field`` is ``title`` or
    ``reference`` when the version was ranked for its title or reference matching the query."""

    rank: int
    kind: str  # "document" | "fact"
    lineage_id: str
    scope: Scope
    version_id: str
    external_id: str | None
    title: str | None
    reference: str | None
    citation: str
    valid_from: Instant
    valid_to: Instant | None
    known_from: Instant
    score: float
    superseded_by: str | None
    superseded_by_label: str | None
    admission: str
    why: str
    passage: str
    passage_index: int
    value: JSONValue = None
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    matched_field: str | None = None  # "title" | "reference": ranked for matching the query

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "lineage_id": self.lineage_id,
            "version_id": self.version_id,
            "external_id": self.external_id,
            "title": self.title,
            "citation": self.citation,
            "valid_from": self.valid_from.isoformat(),
            "valid_to": _iso(self.valid_to),
            "score": float(f"{self.score:.6g}"),
            "superseded_by": self.superseded_by,
            "kind": self.kind,
            "scope": self.scope.as_dict(),
            "reference": self.reference,
            "known_from": self.known_from.isoformat(),
            "superseded_by_label": self.superseded_by_label,
            "admission": self.admission,
            "why": self.why,
            "passage": self.passage,
            "passage_index": self.passage_index,
            "value": self.value,
            "lexical_rank": self.lexical_rank,
            "semantic_rank": self.semantic_rank,
            "matched_field": self.matched_field,
        }


@dataclass(frozen=True, slots=True)
class Excluded:
    """A version among the most relevant candidates that is not admissible at ``(t, k)``:
    ``reason`` is the kernel's (``not_yet_valid``, ``not_yet_known`` …) or the legal cause
    (``superseded``, ``revoked``, ``corrected``); ``similarity_rank`` is where relevance alone
    would have ranked it."""

    version_id: str
    reason: str
    kind: str
    lineage_id: str
    external_id: str | None
    title: str | None
    similarity_rank: int
    valid_from: Instant | None
    valid_to: Instant | None
    successor_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "version_id": self.version_id,
            "reason": self.reason,
            "kind": self.kind,
            "lineage_id": self.lineage_id,
            "external_id": self.external_id,
            "title": self.title,
            "similarity_rank": self.similarity_rank,
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to),
            "successor_id": self.successor_id,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The answer to a search at ``(valid_at, known_at)``; ``as_dict`` is the ``--json``
    contract."""

    query: str
    matched_text: str
    valid_at: Instant
    known_at: Instant
    scope: Scope | None
    k: int
    mode: str  # "lexical" | "semantic" | "hybrid"
    model_id: str | None
    include_superseded: bool
    date_phrase: str | None
    hits: tuple[Hit, ...]
    excluded: tuple[Excluded, ...]
    notes: tuple[str, ...] = ()
    decision_id: str | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "valid_at": self.valid_at.isoformat(),
            "known_at": self.known_at.isoformat(),
            "hits": [h.as_dict() for h in self.hits],
            "excluded": [e.as_dict() for e in self.excluded],
            "matched_text": self.matched_text,
            "date_from_query": self.date_phrase,
            "scope": None if self.scope is None else self.scope.as_dict(),
            "k": self.k,
            "mode": self.mode,
            "model_id": self.model_id,
            "include_superseded": self.include_superseded,
            "notes": list(self.notes),
            "decision_id": self.decision_id,
        }


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What an index run did."""

    claims_indexed: int
    passages_added: int
    model_id: str | None
    vectors_added: int
    vectors_reused: int
    passages: int
    vectors: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "claims_indexed": self.claims_indexed,
            "passages_added": self.passages_added,
            "model_id": self.model_id,
            "vectors_added": self.vectors_added,
            "vectors_reused": self.vectors_reused,
            "passages": self.passages,
            "vectors": dict(self.vectors),
        }
