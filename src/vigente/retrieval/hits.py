"""From ranked candidates to hits: the admitting snapshot, citation, successor and why (worded
in the language asked by :mod:`vigente.retrieval.wording`); and the excluded top candidates of
the relevance-only baseline with the kernel's reasons. A handful of batched reads per search,
whatever ``k``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vigente.evidence.dates import check_language
from vigente.records.retrieval import Candidate
from vigente.records.values import JSONValue
from vigente.records.versions import Version, admissibility
from vigente.retrieval.results import Excluded, Hit
from vigente.retrieval.wording import document_why, fact_hit_citation, fact_why
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.records.documents import DocumentVersion
    from vigente.store.base import Store

__all__ = ["HitBuilder", "Ranked", "value_text"]

_CLOSING = ("supersedes", "amends", "revokes")


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate after fusion: its fused score and its rank in each list (1-based)."""

    candidate: Candidate
    score: float
    lexical_rank: int | None
    semantic_rank: int | None

    @property
    def version_id(self) -> str:
        """The document version id (documents) or the claim's source (facts)."""
        return self.candidate.claim.source


def value_text(value: JSONValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "; ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)



def _best_snapshot(snapshots: Sequence[Version], t: Instant, k: Instant) -> Version:
    """The snapshot that decides a claim's admissibility: admitted, else known at ``k``."""
    def rank(s: Version) -> tuple[int, int]:
        if admissibility(s, s.scope, t, k) is None:
            return 0, -s.valid_from.micros
        return (1 if s.known_at(k) else 2), -s.valid_from.micros

    return min(snapshots, key=rank)



class HitBuilder:
    """Turns ranked candidates into hits (with citation, successor and why) and the excluded
    top candidates of the baseline into reasons, with a handful of batched reads."""

    def __init__(self, store: Store, t: Instant, k: Instant, language: str,
                 snapshots: dict[int, list[Version]], include_superseded: bool) -> None:
        self._store = store
        self._include_superseded = include_superseded
        self._t = t
        self._k = k
        self._language = check_language(language)
        self._snapshots = snapshots
        self._docs: dict[str, DocumentVersion] = {}
        self._successors: dict[str, DocumentVersion] = {}

    def _load_documents(self, ranked: Sequence[Ranked]) -> None:
        from vigente.evidence.documents import successors_known_at

        store = self._store
        ids = sorted({r.candidate.claim.source for r in ranked if r.candidate.kind == "document"})
        if not ids:
            return
        self._docs = {v.version_id: v for v in store.document_versions_by_id(ids)}
        successors = store.document_successors(ids)
        self._successors = successors_known_at(successors, self._k)
        wanted = {v.predecessor_id for v in self._docs.values() if v.predecessor_id}
        wanted |= {s.version_id for s in self._successors.values()}
        for v in store.document_versions_by_id(sorted(wanted - set(self._docs))):
            self._docs[v.version_id] = v

    def build(self, ranked: Sequence[Ranked], baseline: Sequence[Ranked]
              ) -> tuple[list[Hit], list[Excluded]]:
        self._load_documents([*ranked, *baseline])
        hits = [self._hit(rank, r) for rank, r in enumerate(ranked, start=1)]
        admitted = {r.candidate.claim_id for r in ranked}
        excluded: list[Excluded] = []
        seen: set[str] = set()
        for rank, r in enumerate(baseline, start=1):
            if r.candidate.claim_id in admitted:
                continue
            entry = self._excluded(rank, r)
            if entry is not None and entry.version_id not in seen:
                seen.add(entry.version_id)
                excluded.append(entry)
        return hits, excluded

    def _successor(self, version_id: str) -> DocumentVersion | None:
        successor = self._successors.get(version_id)
        if successor is None or successor.relation is None:
            return None
        return successor if successor.relation.value in _CLOSING else None

    def _hit(self, rank: int, r: Ranked) -> Hit:
        from vigente.evidence.documents import citer

        c, t, k = r.candidate, self._t, self._k
        snapshots = self._snapshots[c.claim_id]
        admitted = [s for s in snapshots if admissibility(s, s.scope, t, k) is None]
        if admitted:
            snapshot, admission = max(admitted, key=lambda s: s.valid_from), "in_force"
        else:
            ended = [s for s in snapshots if s.known_at(k) and s.valid_from <= t]
            snapshot, admission = max(ended, key=lambda s: s.valid_from), "superseded"
        document = self._docs.get(c.claim.source) if c.kind == "document" else None
        value: JSONValue = None
        successor = None
        external_id: str | None
        title: str | None
        reference: str | None
        if document is None:
            value = json.loads(c.claim.value_json)
            version_id, external_id, title, reference = (
                snapshot.version_id, c.claim.source, c.claim.lineage, None)
            citation = fact_hit_citation(c.claim.lineage, value_text(value), c.claim.source,
                                         snapshot, k, self._language)
            why = fact_why(admission, t, k, snapshot, self._language)
        else:
            version_id, external_id, title, reference = (
                document.version_id, document.external_id, document.title, document.reference)
            successor = self._successor(document.version_id)
            predecessor = self._docs.get(document.predecessor_id or "")
            citation = citer(self._language, t)(document, predecessor,
                                                  self._successors.get(document.version_id))
            why = document_why(admission, t, k, snapshot, document, successor, c.matched_field,
                               self._language)
        return Hit(
            rank=rank, kind=c.kind, lineage_id=c.claim.lineage, scope=c.claim.scope,
            version_id=version_id, external_id=external_id, title=title, reference=reference,
            citation=citation, valid_from=snapshot.valid_from, valid_to=snapshot.valid_to,
            known_from=snapshot.known_from, score=r.score,
            superseded_by=None if successor is None else successor.version_id,
            superseded_by_label=None if successor is None else successor.label,
            admission=admission, why=why, passage=c.text, passage_index=c.position,
            value=value, lexical_rank=r.lexical_rank, semantic_rank=r.semantic_rank,
            matched_field=c.matched_field,
        )

    def _excluded(self, rank: int, r: Ranked) -> Excluded | None:
        from vigente.evidence.in_force import document_reason

        c, t, k = r.candidate, self._t, self._k
        snapshots = self._snapshots.get(c.claim_id) or []
        if not snapshots:
            return None
        best = _best_snapshot(snapshots, t, k)
        reason = admissibility(best, best.scope, t, k)
        if reason is None:
            return None  # admissible, only ranked below the hits
        if self._include_superseded and best.known_at(k) and best.valid_from <= t:
            return None  # eligible too (an ended version), only ranked below the hits
        document = self._docs.get(c.claim.source) if c.kind == "document" else None
        if document is None:
            return Excluded(version_id=best.version_id, reason=reason.value, kind=c.kind,
                            lineage_id=c.claim.lineage, external_id=c.claim.source,
                            title=c.claim.lineage, similarity_rank=rank,
                            valid_from=best.valid_from, valid_to=best.valid_to,
                            successor_id=None)
        successor = self._successors.get(document.version_id)
        return Excluded(
            version_id=document.version_id,
            reason=document_reason(reason.value, successor, t),
            kind="document", lineage_id=document.lineage_id,
            external_id=document.external_id, title=document.title, similarity_rank=rank,
            valid_from=best.valid_from, valid_to=best.valid_to,
            successor_id=None if successor is None else successor.version_id,
        )
