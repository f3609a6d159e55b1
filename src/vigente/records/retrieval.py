"""Value types of retrieval that the :class:`~vigente.store.Store` persists and returns.

A *claim* is what the kernel holds as one timeline value: ``(lineage, scope, source, value)``.
A document version's claim is ``(lineage_id, scope, version_id, claim_json)``; a fact's claim is
one distinct value of one source's timeline. Passages (chunks) are derived from claims, so a
passage is admissible at ``(t, k)`` exactly when one of its claim's kernel snapshots is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from vigente.records.values import Scope
from vigente.time import Instant

__all__ = [
    "Candidate",
    "CandidateQuery",
    "Claim",
    "FieldMatch",
    "FieldRecord",
    "PassageRecord",
    "RetrievalStats",
]


@dataclass(frozen=True, slots=True)
class Claim:
    """One kernel timeline value that passages are derived from."""

    lineage: str
    scope: Scope
    source: str
    value_json: str

    @property
    def value_hash(self) -> str:
        return hashlib.sha256(self.value_json.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class PassageRecord:
    """A passage to index: its position in the claim's text, its text and the normalised text
    a backend without a Unicode-folding tokenizer indexes instead."""

    position: int
    text: str
    search_text: str

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class FieldRecord:
    """A field of a document claim to index beside its passages: its ``title`` or its official
    ``reference``, as given and as searched (:func:`~vigente.retrieval.text.field_text`)."""

    field: str  # "title" | "reference"
    text: str
    search_text: str


@dataclass(frozen=True, slots=True)
class FieldMatch:
    """A claim whose title or reference contains one of the query's terms: the field and its
    searched text (scored against the query by :mod:`vigente.retrieval.fields`)."""

    claim_id: int
    field: str
    search_text: str


@dataclass(frozen=True, slots=True)
class CandidateQuery:
    """Which passages candidate generation may return.

    ``valid_at``/``known_at`` ``None``: no temporal filter (relevance only, the baseline).
    Otherwise a passage is a candidate only when a snapshot of its claim is known at
    ``known_at`` and valid at ``valid_at``; with ``include_superseded`` a snapshot known at
    ``known_at`` that started on or before ``valid_at`` and has ended also qualifies.
    ``scope`` ``None`` means every scope.
    """

    valid_at: Instant | None
    known_at: Instant | None
    scope: Scope | None
    include_superseded: bool
    limit: int

    @property
    def filtered(self) -> bool:
        return self.valid_at is not None and self.known_at is not None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A passage returned by candidate generation, with its backend score (higher is better)."""

    passage_id: int
    claim_id: int
    claim: Claim
    kind: str  # "document" | "fact"
    position: int
    text: str
    content_hash: str
    score: float
    matched_field: str | None = None  # "title" | "reference": ranked for that field's match


@dataclass(frozen=True, slots=True)
class RetrievalStats:
    """How much is indexed: claims, passages, and passages with a vector per model id."""

    claims: int
    passages: int
    vectors: dict[str, int] = field(default_factory=dict)
