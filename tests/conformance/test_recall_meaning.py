"""Recall by meaning on every backend, with the real embedding model: a paraphrase found that
shares no word with its record, no hit known after ``known_at``, new records reaching the
cached matrix, and the vectors (with their per-conversation marks) taken by retention and
purge. The marks are also checked as a property: after any appends and deletions they count
the vectors left, and a store migrated from before the marks fills them from its vectors."""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance.rollback import undo_from
from vigente import Vigente
from vigente.retrieval import MINILM, MiniLMEmbedder

T0 = _dt.datetime(2026, 5, 3, 9, 0, tzinfo=_dt.UTC)
QUERY = "do I have any dietary restrictions"  # no word but "I" shared with the allergy message


def at(days: float) -> str:
    return (T0 + _dt.timedelta(days=days)).isoformat()


def _log() -> list[dict[str, Any]]:
    c = "c1"
    return [
        dict(event="conversation", id=c, account="acct", at=at(0)),
        dict(event="participant", id="alice", model="m", conversation=c),
        dict(event="branch", id="main", conversation=c),
        dict(event="message", id="u1", branch="main", role="user", conversation=c,
             content="Please book a table for four on Friday evening."),
        dict(event="message", id="u2", branch="main", role="user", conversation=c,
             content="The flight to Tokyo departs on Monday at noon."),
        dict(event="message", id="u3", branch="main", role="user", conversation=c,
             content="I am allergic to peanuts.", at=at(10)),
        dict(event="run", id="r1", branch="main", participant="alice", mode="chat",
             conversation=c, at=at(11)),
        dict(event="tool_call", id="t1", run="r1", name="menu", arguments={}, conversation=c),
        dict(event="tool_result", call="t1", status="succeeded", conversation=c,
             content={"dish": "satay with peanut sauce", "allergens": "nuts"}),
        dict(event="message", id="a1", branch="main", role="assistant", run="r1",
             conversation=c, content="Booked; I told them about it.", at=at(11)),
    ]


def _import(vg: Vigente, events: list[dict[str, Any]]) -> None:
    vg.runtime.import_events([json.dumps(e) for e in events])


def refs(result: Any) -> list[str]:
    return [h.ref for h in result.hits]


def test_a_paraphrase_is_found_by_meaning_and_never_from_later_knowledge(
        vg: Vigente, minilm: MiniLMEmbedder) -> None:
    _import(vg, _log())
    lexical = vg.runtime.recall(QUERY, conversation="c1", mode="lexical")
    assert "u3" not in refs(lexical)
    semantic = vg.runtime.recall(QUERY, conversation="c1", mode="semantic", embedder=minilm)
    assert semantic.mode == "semantic" and refs(semantic)[0] == "u3"
    assert any(w.startswith("meaning:") for w in semantic.hits[0].why)
    hybrid = vg.runtime.recall(QUERY, conversation="c1", mode="hybrid", embedder=minilm)
    assert hybrid.mode == "hybrid" and "u3" in refs(hybrid)[:2]
    early = vg.runtime.recall(QUERY, conversation="c1", mode="hybrid", embedder=minilm,
                              known_at=at(5))
    assert {"u1", "u2"} >= set(refs(early)) and "u3" not in refs(early)
    assert all(h.at <= early.known_at for h in early.hits)


def test_new_records_reach_the_cached_vectors(vg: Vigente, minilm: MiniLMEmbedder) -> None:
    _import(vg, _log())
    first = vg.runtime.recall("seafood that makes me ill", conversation="c1", mode="semantic",
                              embedder=minilm)
    count, last = vg.store.runtime_recall_vector_mark("c1", MINILM)
    assert count == len(vg.store.runtime_recall_vectors("c1", MINILM)) and last > 0
    _import(vg, [dict(event="message", id="u4", branch="main", role="user", conversation="c1",
                      content="Shrimp and crab give me a rash.", at=at(12))])
    again = vg.runtime.recall("seafood that makes me ill", conversation="c1",
                              mode="semantic", embedder=minilm)
    assert "u4" not in refs(first) and refs(again)[0] == "u4"
    assert vg.store.runtime_recall_vector_mark("c1", MINILM)[0] == count + 1


def test_retention_and_purge_take_the_vectors_and_their_marks(
        vg: Vigente, minilm: MiniLMEmbedder) -> None:
    # a year earlier: old enough for the result's retention (gc takes no clock ahead of now)
    _import(vg, [dict(e, at=e["at"].replace("2026-", "2025-")) if "at" in e else e
                 for e in _log()])
    found = vg.runtime.recall("a dish with nuts in the sauce", conversation="c1",
                              mode="semantic", embedder=minilm)
    assert "t1" in refs(found)
    count, _ = vg.store.runtime_recall_vector_mark("c1", MINILM)
    vg.runtime.gc()  # the tool result's raw text expires (RETENTION)
    after = vg.runtime.recall("a dish with nuts in the sauce", conversation="c1",
                              mode="semantic", embedder=minilm)
    assert "t1" not in refs(after)
    left = vg.store.runtime_recall_vectors("c1", MINILM)
    assert vg.store.runtime_recall_vector_mark("c1", MINILM) == (
        len(left), max(s for s, _, _ in left)) and len(left) < count
    vg.runtime.purge_account("acct")
    assert vg.store.runtime_recall_vectors("c1", MINILM) == []
    assert vg.store.runtime_recall_vector_mark("c1", MINILM) == (0, 0)


_conversations = itertools.count()


def _vector(seq: int) -> bytes:
    return bytes([seq % 256]) * 16


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.tuples(st.just("add"), st.lists(st.integers(1, 40), min_size=1, max_size=8)),
    st.tuples(st.just("delete"), st.lists(st.integers(1, 40), max_size=6))), max_size=12))
def test_the_marks_count_the_vectors_left_after_any_appends_and_deletions(
        vg: Vigente, steps: list[tuple[str, list[int]]]) -> None:
    conversation = f"m{next(_conversations)}"  # each example its own conversation
    for op, seqs in steps:
        with vg.store.transaction():
            if op == "add":
                vg.store.append_runtime_recall_vectors(
                    conversation, "model-a", [(s, s, _vector(s)) for s in seqs])
            else:
                vg.store.delete_runtime_recall(conversation, seqs)
        left = vg.store.runtime_recall_vectors(conversation, "model-a")
        assert [s for s, _, _ in left] == sorted({s for s, _, _ in left})
        assert vg.store.runtime_recall_vector_mark(conversation, "model-a") == (
            (len(left), max(s for s, _, _ in left)) if left else (0, 0))
    assert vg.store.runtime_recall_vector_mark(conversation, "model-b") == (0, 0)


def test_a_store_from_before_the_marks_fills_them_from_its_vectors(
        store_url: str, minilm: MiniLMEmbedder) -> None:
    vg = Vigente.open(store_url)
    _import(vg, _log())
    vg.runtime.recall(QUERY, conversation="c1", mode="semantic", embedder=minilm)
    expected = vg.store.runtime_recall_vector_mark("c1", MINILM)
    vg.close()
    # take the store back to the schema before the marks: their table and migration gone, with
    # every migration after them (the tables they create dropped)
    statements = undo_from(store_url, "runtime_recall_vector_marks")
    if store_url.startswith("postgres"):
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)
    else:
        with sqlite3.connect(Path(store_url)) as conn:
            for sql in statements:
                conn.execute(sql)
        conn.close()
    vg = Vigente.open(store_url)
    try:
        assert expected[0] > 0
        assert vg.store.runtime_recall_vector_mark("c1", MINILM) == expected
        again = vg.runtime.recall(QUERY, conversation="c1", mode="semantic", embedder=minilm)
        assert refs(again)[0] == "u3"
    finally:
        vg.close()


def test_a_recall_by_meaning_inside_a_transaction_sees_its_writes(
        vg: Vigente, minilm: MiniLMEmbedder) -> None:
    """The ranking by meaning runs on a thread of its own; inside the caller's transaction it
    must neither wait on that transaction nor miss what the transaction wrote."""
    with vg.store.transaction():
        _import(vg, _log())
        found = vg.runtime.recall(QUERY, conversation="c1", mode="hybrid", embedder=minilm)
    assert "u3" in refs(found)[:2]
