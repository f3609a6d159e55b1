"""Conformance of the recall index's contract (:mod:`vigente.store.contracts.recall`): the
searchable records of the runtime with their terms, the statistics and postings as known at
``k``, and vectors per embedding model. The caller scores; the backend only finds, so every
read is checked against what the indexed records say by definition."""

from __future__ import annotations

import dataclasses
import itertools
import struct
from collections import Counter
from typing import ClassVar

from vigente.records.runtime import RecallDoc, term_weight
from vigente.retrieval.text import fold
from vigente.store.base import Store
from vigente.store.contracts import RecallIndex, RuntimeIndex, RuntimeLog
from vigente.testing.base import Conformance, Contracts
from vigente.testing.runtime import C, append, conversation, minute, record

__all__ = ["RecallIndexConformance", "recall_docs"]

OTHER = "kit-other"
#: What the records of the checks say, and the minute each was learned.
TEXTS = [
    (C, 1, "the train to Milan leaves at seven"),
    (C, 2, "the train train train is late"),
    (OTHER, 3, "a train and a bus to Genoa"),
    (C, 4, "coffee at the station before the train"),
    (C, 5, "the bus to Turin"),
]


def recall_docs(store: RuntimeLog) -> list[RecallDoc]:
    """The records of :data:`TEXTS` appended (in two conversations), and as the recall index
    takes them in: their folded terms counted."""
    conversation(store)
    conversation(store, OTHER)
    docs = []
    for n, (owner, known, text) in enumerate(TEXTS):
        (stored,) = append(store, [record(f"m{n}", known, conversation_id=owner)])
        terms = Counter(fold(text).split())
        docs.append(RecallDoc(owner, stored.seq, stored.record_id, "message", "user", None,
                              stored.known_from.micros, text, dict(terms), sum(terms.values())))
    return docs


def _indexed(store: Store) -> list[RecallDoc]:
    docs = recall_docs(store)
    with store.transaction():
        for owner in (C, OTHER):
            mine = [d for d in docs if d.conversation_id == owner]
            store.append_runtime_recall(owner, mine, mine[-1].seq)
    return docs


def _read_back(doc: RecallDoc) -> RecallDoc:
    """A record as the index gives it back: without its terms."""
    return RecallDoc(doc.conversation_id, doc.seq, doc.record_id, doc.kind, doc.speaker,
                     doc.participant_id, doc.known_micros, doc.text, {}, doc.length)


class RecallIndexConformance(Conformance):
    """The recall index: texts, terms, statistics as known at ``k``, and vectors."""

    contracts: ClassVar[Contracts] = (RuntimeLog, RecallIndex)

    def test_statistics_are_those_of_the_records_known_at_k(self, store: Store) -> None:
        docs = _indexed(store)
        for known in (0, 2, 4, 9):
            held = [d for d in docs if d.conversation_id == C and d.known_micros
                    <= minute(known).micros]  # fmt: skip
            micros = minute(known).micros
            assert store.runtime_recall_stats([C], micros) == (
                len(held), sum(d.length for d in held))
            counts = store.runtime_recall_term_counts([C], ["train", "bus", "absent"], micros)
            assert counts == {term: sum(1 for d in held if term in d.terms)
                              for term in ("train", "bus", "absent")}
            terms = ["train", "genoa"]
            assert (store.runtime_recall_statistics([C, OTHER], terms, micros)
                    == RecallIndex.runtime_recall_statistics(store, [C, OTHER], terms, micros))

    def test_indexing_a_record_again_changes_nothing(self, store: Store) -> None:
        docs = _indexed(store)
        before = store.runtime_recall_stats([C], minute(59).micros)
        mine = [d for d in docs if d.conversation_id == C]
        with store.transaction():
            store.append_runtime_recall(C, mine, mine[-1].seq)
        assert store.runtime_recall_stats([C], minute(59).micros) == before
        if isinstance(store, RuntimeIndex):
            assert store.runtime_cache_mark(C, "recall") == mine[-1].seq

    def test_postings_weigh_most_first_and_keep_their_limit(self, store: Store) -> None:
        docs = _indexed(store)
        for known, limit in itertools.product((2, 9), (1, 2, 10)):
            micros = minute(known).micros
            one_by_one = []
            for owner, term in itertools.product((OTHER, C), ("train", "bus", "absent")):
                held = sorted(((-term_weight(d.terms[term], d.length), d.seq), d) for d in docs
                              if d.conversation_id == owner and term in d.terms
                              and d.known_micros <= micros)  # fmt: skip
                expected = [(owner, d.seq, term, d.terms[term], d.length)
                            for _, d in held[:limit]]
                assert store.runtime_recall_postings([owner], [term], micros, limit) == expected
                one_by_one += expected
            assert store.runtime_recall_postings(
                [OTHER, C], ["train", "bus", "absent"], micros, limit) == one_by_one

    def test_indexed_records_by_key_and_by_knowledge_time(self, store: Store) -> None:
        docs = _indexed(store)
        keys = [(d.conversation_id, d.seq) for d in docs[:2]] + [(C, 10_000_000)]
        found = store.runtime_recall_docs(keys)
        assert sorted(found, key=lambda d: d.seq) == [_read_back(d) for d in docs[:2]]
        between = store.runtime_recall_between([C, OTHER], minute(2).micros, minute(4).micros, 10)
        assert between == [_read_back(d) for d in (docs[3], docs[2], docs[1])]  # newest first
        assert store.runtime_recall_between([C, OTHER], minute(0).micros, minute(9).micros,
                                            2) == [_read_back(d) for d in (docs[4], docs[3])]

    def test_speakers_names_as_known_at_k(self, store: Store) -> None:
        """Each record keeps its speaker's name; the names of a conversation are those of the
        records known at ``k``, each once (a name first said later is not yet a name)."""
        docs = recall_docs(store)
        names = ["Ana", None, "Bruno", "Ana", "Zoë"]
        named = [dataclasses.replace(d, name=n) for d, n in zip(docs, names, strict=True)]
        with store.transaction():
            for owner in (C, OTHER):
                mine = [d for d in named if d.conversation_id == owner]
                store.append_runtime_recall(owner, mine, mine[-1].seq)
        assert [d.name for d in sorted(store.runtime_recall_docs(
            [(d.conversation_id, d.seq) for d in named]), key=lambda d: d.seq)] == names
        for known in (0, 1, 3, 4, 9):
            micros = minute(known).micros
            for owners in ([C], [OTHER], [C, OTHER]):
                expected = sorted({d.name for d in named if d.name is not None
                                   and d.conversation_id in owners
                                   and d.known_micros <= micros})
                assert store.runtime_recall_names(owners, micros) == expected

    def test_vectors_per_model(self, store: Store) -> None:
        docs = [d for d in _indexed(store) if d.conversation_id == C]
        assert store.runtime_recall_unembedded(C, "kit/m", 0, 10) == [
            (d.seq, d.known_micros, d.text) for d in docs]
        assert store.runtime_recall_vector_mark(C, "kit/m") == (0, 0)
        rows = [(d.seq, d.known_micros, struct.pack("<2f", 0.6, 0.8)) for d in docs[:2]]
        with store.transaction():
            store.append_runtime_recall_vectors(C, "kit/m", rows)
        assert store.runtime_recall_vectors(C, "kit/m") == rows
        assert store.runtime_recall_vector_mark(C, "kit/m") == (2, docs[1].seq)
        assert store.runtime_recall_unembedded(C, "kit/m", 0, 10) == [
            (d.seq, d.known_micros, d.text) for d in docs[2:]]
        assert store.runtime_recall_unembedded(C, "kit/m", docs[2].seq, 10) == [
            (d.seq, d.known_micros, d.text) for d in docs[3:]]
        assert store.runtime_recall_vectors(C, "kit/other-model") == []

    def test_erasing_index_rows(self, store: Store) -> None:
        docs = _indexed(store)
        gone = docs[1]
        with store.transaction():
            store.append_runtime_recall_vectors(C, "kit/m", [(gone.seq, gone.known_micros,
                                                              struct.pack("<2f", 1, 0))])
            assert store.delete_runtime_recall(C, [gone.seq]) > 0
        assert store.runtime_recall_docs([(C, gone.seq)]) == []
        postings = store.runtime_recall_postings([C], ["train"], minute(59).micros, 10)
        assert gone.seq not in {seq for _, seq, *_ in postings} and postings
        assert store.runtime_recall_vectors(C, "kit/m") == []
