"""Conformance of the retrieval index's contracts (:mod:`vigente.store.contracts.retrieval`):
claims pending until indexed, passages found by their folded terms, and vectors found by
nearness, each search restricted by the temporal filter: a passage is a candidate at ``(t, k)``
only when a kernel snapshot of its claim is admissible there.

The facts are written through the facade (a claim is a kernel timeline value); passages are
cut as the retrieval service cuts a fact: one passage, its value's text."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from typing import ClassVar

from vigente.api import Vigente
from vigente.records.retrieval import Candidate, CandidateQuery, Claim, FieldRecord, PassageRecord
from vigente.records.values import Scope
from vigente.retrieval.text import field_terms, field_text, fold, query_terms
from vigente.store.base import Store
from vigente.store.contracts import RetrievalIndex, VectorIndex
from vigente.testing.base import KERNEL, NOW, Conformance, Contracts, at

__all__ = ["RetrievalIndexConformance", "VectorIndexConformance", "index_facts"]

L = "svc/upload-limit"
V50, V80 = "upload limit 50 MB", "upload limit 80 MB"
PASSWORDS = "passwords are rotated every ninety days"
MODEL = "kit/model-a"


def write_facts(vg: Vigente) -> None:
    """50 MB from 2024, 80 MB from 1 September 2024 (learned on 3 September), and a fact of
    another lineage."""
    vg.record(L, V50, valid_from="2024-01-01", known_at="2024-01-01", source="policy", now=NOW)
    vg.record(L, V80, valid_from="2024-09-01", known_at="2024-09-03", source="policy", now=NOW)
    vg.record("security/passwords", PASSWORDS, valid_from="2024-01-01", known_at="2024-01-01",
              source="policy", now=NOW)


def index_facts(store: RetrievalIndex) -> list[Claim]:
    """Index every pending claim as a fact, with one passage holding its value, and mark the
    index up to date (as the retrieval service does); the claims indexed."""
    with store.transaction():
        claims, cursor = store.pending_claims()
        for claim in claims:
            text = str(json.loads(claim.value_json))
            store.append_passages(claim, "fact", [PassageRecord(0, text, fold(text))])
        if cursor:
            store.mark_indexed(cursor)
    return claims


def query(valid_at: str | None, known_at: str | None = NOW, *, scope: Scope | None = None,
          include_superseded: bool = False, limit: int = 10) -> CandidateQuery:
    return CandidateQuery(None if valid_at is None else at(valid_at),
                          None if known_at is None or valid_at is None else at(known_at),
                          scope, include_superseded, limit)


def _texts(candidates: Sequence[Candidate]) -> list[str]:
    return sorted(c.text for c in candidates)


class RetrievalIndexConformance(Conformance):
    """Claims, passages and fields; lexical search with the temporal filter."""

    contracts: ClassVar[Contracts] = (*KERNEL, RetrievalIndex)

    def test_a_new_snapshot_leaves_its_claim_pending(self, vg: Vigente, store: Store) -> None:
        assert store.pending_claims() == ([], 0)
        vg.record(L, V50, valid_from="2024-01-01", known_at="2024-01-01", source="policy",
                  now=NOW)
        claims, cursor = store.pending_claims()
        assert claims == [Claim(L, Scope(), "policy", json.dumps(V50))] and cursor != 0

    def test_an_indexed_claim_is_pending_no_more(self, vg: Vigente, store: Store) -> None:
        write_facts(vg)
        claims = index_facts(store)
        assert len(claims) == 3
        assert store.pending_claims() == ([], 0)
        assert store.pending_claims(full=True)[0] == []  # every claim has its passages
        with store.transaction():
            assert not store.append_passages(claims[0], "fact", [PassageRecord(0, "x", "x")])
        stats = store.retrieval_stats()
        assert (stats.claims, stats.passages, stats.vectors) == (3, 3, {})

    def test_lexical_search_applies_the_temporal_filter(self, vg: Vigente, store: Store) -> None:
        write_facts(vg)
        index_facts(store)
        terms = query_terms("Upload LIMIT")
        for valid_at, known_at, expected in [
            ("2024-06-01", NOW, [V50]),
            ("2024-10-01", NOW, [V80]),
            ("2024-10-01", "2024-09-02", [V50]),  # 80 was not known yet
            ("2023-06-01", NOW, []),  # no version yet: nothing, not the nearest
        ]:
            found = store.search_lexical(terms, query(valid_at, known_at))
            assert _texts(found) == expected, (valid_at, known_at)
        superseded = store.search_lexical(terms, query("2024-10-01", include_superseded=True))
        assert _texts(superseded) == [V50, V80]
        assert _texts(store.search_lexical(terms, query(None))) == [V50, V80]

    def test_lexical_search_matches_terms_and_keeps_its_limit(self, vg: Vigente,
                                                              store: Store) -> None:
        write_facts(vg)
        index_facts(store)
        found = store.search_lexical(query_terms("Passwords"), query("2024-06-01"))
        assert _texts(found) == [PASSWORDS] and found[0].kind == "fact"
        assert found[0].claim.lineage == "security/passwords"
        assert store.search_lexical(["absent"], query("2024-06-01")) == []
        every = store.search_lexical(query_terms("upload passwords"), query(None))
        assert len(every) == 3 and [c.score for c in every] == sorted(
            (c.score for c in every), reverse=True)  # best first
        assert len(store.search_lexical(query_terms("upload passwords"), query(None, limit=2))
                   ) == 2

    def test_scope_restricts_the_search(self, vg: Vigente, store: Store) -> None:
        for env, text in (("prod", "upload limit 10 MB"), ("test", "upload limit 99 MB")):
            vg.record(L, text, valid_from="2024-01-01", known_at="2024-01-01", source="cfg",
                      scope={"env": env}, now=NOW)
        index_facts(store)
        terms = query_terms("upload limit")
        prod = Scope.of({"env": "prod"})
        assert _texts(store.search_lexical(terms, query("2024-06-01", scope=prod))) == [
            "upload limit 10 MB"]
        assert len(store.search_lexical(terms, query("2024-06-01"))) == 2  # every scope
        assert store.search_lexical(terms, query("2024-06-01", scope=Scope())) == []

    def test_the_snapshots_and_first_passages_of_claims(self, vg: Vigente,
                                                        store: Store) -> None:
        write_facts(vg)
        index_facts(store)
        found = store.search_lexical(query_terms("upload"), query(None))
        by_text = {c.text: c for c in found}
        ids = [by_text[V50].claim_id, by_text[V80].claim_id]
        snapshots = store.claim_snapshots(ids)
        history = {v.version_id: v for v in store.history(L)}
        assert sorted(v.version_id for _, v in snapshots) == sorted(history)
        for claim_id, version in snapshots:
            expected = V50 if claim_id == ids[0] else V80
            assert version == history[version.version_id] and version.value == expected
        first = store.first_passages([*ids, 10_000_000])
        assert sorted((c.claim_id, c.position, c.score) for c in first) == sorted(
            (claim_id, 0, 0.0) for claim_id in ids)

    def test_titles_and_references_are_searched_as_fields(self, vg: Vigente,
                                                          store: Store) -> None:
        assert store.pending_fields() == []  # a store indexed by this vigente
        vg.record(L, V50, valid_from="2024-01-01", known_at="2024-01-01", source="policy",
                  now=NOW)
        ((claim,), cursor) = store.pending_claims()
        reference = FieldRecord("reference", "Circular 12/2025", field_text("Circular 12/2025"))
        with store.transaction():
            store.append_passages(claim, "document", [PassageRecord(0, V50, fold(V50))],
                                  [reference])
            store.mark_indexed(cursor)
            store.append_fields(claim, [reference])  # once only: again is a no-op
            store.mark_fields_indexed()
        (match,) = store.search_fields(field_terms("circular 12/2025"), query("2024-06-01"))
        assert (match.field, match.search_text) == ("reference", reference.search_text)
        assert store.search_fields(field_terms("circular 12/2025"), query("2023-06-01")) == []
        assert store.search_fields(["absent"], query("2024-06-01")) == []

    def test_a_reset_forgets_every_claim_and_passage(self, vg: Vigente, store: Store) -> None:
        write_facts(vg)
        claims = index_facts(store)
        with store.transaction():
            store.reset_retrieval()
        stats = store.retrieval_stats()
        assert (stats.claims, stats.passages, stats.vectors) == (0, 0, {})
        assert sorted(store.pending_claims(full=True)[0], key=repr) == sorted(claims, key=repr)


def unit(*components: float) -> bytes:
    """A unit vector as the index keeps it: float32, little-endian."""
    norm = math.sqrt(sum(c * c for c in components))
    return struct.pack(f"<{len(components)}f", *(c / norm for c in components))


def _embed(store: Store) -> None:
    """Give each passage of the facts a vector of :data:`MODEL` along an axis of its own."""
    rows = store.passages_without_vectors(MODEL, 10)
    axes = {V50: unit(1, 0, 0, 0), V80: unit(0, 1, 0, 0), PASSWORDS: unit(0, 0, 1, 0)}
    with store.transaction():
        store.append_vectors(MODEL, [(passage_id, axes[text]) for passage_id, _, text in rows])


class VectorIndexConformance(Conformance):
    """Passage vectors per model and the nearest passages (an optional capability)."""

    contracts: ClassVar[Contracts] = (*KERNEL, RetrievalIndex, VectorIndex)

    def _embedded(self, vg: Vigente, store: Store) -> None:
        """The facts indexed, and each passage given a vector of :data:`MODEL`."""
        write_facts(vg)
        index_facts(store)
        _embed(store)

    def test_passages_wait_for_the_vectors_of_each_model(self, vg: Vigente,
                                                         store: Store) -> None:
        write_facts(vg)
        index_facts(store)
        rows = store.passages_without_vectors(MODEL, 10)
        assert sorted(text for _, _, text in rows) == sorted([V50, V80, PASSWORDS])
        assert all(content_hash == PassageRecord(0, text, "").content_hash
                   for _, content_hash, text in rows)
        assert len(store.passages_without_vectors(MODEL, 2)) == 2
        _embed(store)
        assert store.passages_without_vectors(MODEL, 10) == []
        assert len(store.passages_without_vectors("kit/model-b", 10)) == 3
        assert store.retrieval_stats().vectors == {MODEL: 3}

    def test_vectors_read_back_by_content(self, vg: Vigente, store: Store) -> None:
        self._embedded(vg, store)
        content = PassageRecord(0, V80, "").content_hash
        assert store.vectors_by_content(MODEL, [content, "0" * 32]) == {content: unit(0, 1, 0, 0)}
        assert store.vectors_by_content("kit/model-b", [content]) == {}

    def test_the_nearest_passages_come_first(self, vg: Vigente, store: Store) -> None:
        self._embedded(vg, store)
        found = store.search_vectors(MODEL, unit(0.2, 0.9, 0.1, 0), query(None))
        assert [c.text for c in found] == [V80, V50, PASSWORDS]
        assert found[0].score > found[1].score > found[2].score
        assert math.isclose(found[0].score, 0.9 / math.sqrt(0.86), rel_tol=1e-4)  # the cosine

    def test_vector_search_applies_the_temporal_filter(self, vg: Vigente, store: Store) -> None:
        self._embedded(vg, store)
        near_80 = unit(0.3, 1, 0.1, 0)
        assert [c.text for c in store.search_vectors(MODEL, near_80, query("2024-06-01"))
                ] == [V50, PASSWORDS]
        assert [c.text for c in store.search_vectors(MODEL, near_80, query("2024-10-01"))
                ][:1] == [V80]
        assert store.search_vectors(MODEL, near_80, query("2023-06-01")) == []
        assert store.search_vectors("kit/model-b", near_80, query(None)) == []

    def test_dropping_a_models_vectors(self, vg: Vigente, store: Store) -> None:
        self._embedded(vg, store)
        with store.transaction():
            assert store.drop_vectors("kit/model-b") == 0
            assert store.drop_vectors(MODEL) == 3
        assert store.retrieval_stats().vectors == {}
        assert len(store.passages_without_vectors(MODEL, 10)) == 3
