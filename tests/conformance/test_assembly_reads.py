"""The reads an assembly batches, on every backend: raw contents of many digests in one read
(inline and in the blob store, unknown and erased ones), the protected state in one read, and
the reader's ancestry and candidates from what the caller has read already, a recall's postings
of every term in one round trip, and a recall given what an assembly read — each the same as
the one-by-one reads it replaces."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import InvalidInput, Vigente
from vigente.records.runtime import from_record, term_weight
from vigente.runtime.content import INLINE_LIMIT
from vigente.runtime.recall import Recall
from vigente.store.base import Store
from vigente.time import parse_instant

C = "reads-1"
T = "2026-10-06T09:{:02d}:00+00:00"
BIG = "x" * (INLINE_LIMIT + 100)  # over the inline limit: kept in the blob store
SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"


def _events() -> list[str]:
    def call(i: int, at: int, **extra: Any) -> list[dict[str, Any]]:
        return [
            dict(event="tool_call", id=f"c{i}", run="r1", name="search", arguments={"i": i},
                 at=T.format(at)),
            dict(event="tool_result", call=f"c{i}", at=T.format(at), **extra),
        ]  # fmt: skip

    events: list[dict[str, Any]] = [
        dict(event="conversation", id=C, account="acct-reads", at=T.format(0)),
        dict(event="participant", id="agent", model="m", provider="openai", at=T.format(0)),
        dict(event="branch", id="main", at=T.format(0)),
        dict(event="message", id="sys", branch="main", role="system", content="Be exact.",
             at=T.format(1)),
        dict(event="message", id="u1", branch="main", role="user", content="Go.", at=T.format(1)),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat",
             at=T.format(1)),
        *call(1, 2, status="succeeded", content={"fare": 19}),
        *call(2, 2, status="succeeded", content={"blob": BIG}),
        *call(3, 3, status="failed", content={"error": "declined"}),
        dict(event="tool_call", id="open", run="r1", name="pay", arguments={}, at=T.format(3)),
        dict(event="message", id="u2", branch="main", role="user", content="Again.",
             at=T.format(4)),
        dict(event="branch", id="side", parent="main", fork_after="u1", at=T.format(5)),
        dict(event="message", id="s1", branch="side", role="user", content="Side.",
             at=T.format(5)),
        *call(4, 6, status="succeeded", content={"fare": 23}),
        dict(event="tool_result", call="open", status="succeeded", content={"paid": True},
             at=T.format(7)),
    ]  # fmt: skip
    return [
        json.dumps(e if e["event"] == "conversation" else dict(e, conversation=C)) for e in events
    ]


def _ready(vg: Vigente) -> Store:
    vg.runtime.import_events(_events())
    vg.runtime.catch_up_index(C)
    return vg.store


def _digests(store: Store) -> list[str]:
    """The raw results' digests, in the log's order."""
    return [from_record(r).result_ref.sha256 for r in store.runtime_records(C, kinds=["artifact"])]


def test_contents_in_one_read_are_the_contents_read_one_by_one(vg: Vigente) -> None:
    store = _ready(vg)
    shas = _digests(store)
    assert len(set(shas)) == 5
    one_by_one = {sha: store.runtime_content(C, sha) for sha in shas}
    assert all(data is not None for data in one_by_one.values())
    assert any(len(data or b"") > INLINE_LIMIT for data in one_by_one.values())
    unknown = "0" * 64
    found = store.runtime_contents(C, [*reversed(shas), unknown, shas[0]])
    assert found == {**one_by_one, unknown: None}
    assert list(found) == [*dict.fromkeys(reversed(shas)), unknown]  # in the order asked
    assert store.runtime_contents(C, []) == {}
    assert store.runtime_contents("no-such-conversation", shas) == dict.fromkeys(shas)
    # erased (retention): None, as runtime_content says
    with store.transaction():
        store.delete_runtime_contents(C, [shas[0]])
    assert store.runtime_content(C, shas[0]) is None
    assert store.runtime_contents(C, shas) == {**one_by_one, shas[0]: None}


def _protected_one_by_one(store: Store, k: Any, requests: list[Any]) -> tuple[Any, Any]:
    return store.runtime_open_calls(C, k), [
        store.runtime_flagged(C, flag, k, branch_id=branch, upto=upto, limit=limit)
        for flag, branch, upto, limit in requests
    ]


@pytest.mark.parametrize("minute", [1, 3, 4, 6, 9])
def test_the_protected_state_in_one_read_is_the_separate_look_ups(vg: Vigente, minute: int) -> None:
    store = _ready(vg)
    k = parse_instant(T.format(minute))
    fork = next(r.seq for r in store.runtime_records(C, record_ids=["u1"]))
    requests: list[tuple[str, str | None, int | None, int | None]] = [
        ("instruction", None, None, None),
        ("troubled", None, None, None),
        ("user", None, None, None),
        ("user", "main", None, 1),
        ("user", "main", fork, 1),
        ("user", "side", None, 2),
        ("skill_state", "main", None, 1),
        ("checkpoint", "side", None, 1),
    ]
    together = store.runtime_protected(C, k, requests)
    assert together == _protected_one_by_one(store, k, requests)
    if minute == 4:  # the pay call was open then, and u2 the latest user message
        assert [r.record_id for r in together[0]] == ["open"]
        assert [r.record_id for r in together[1][3]] == ["u2"]
        assert [r.record_id for r in together[1][4]] == ["u1"]
        assert [r.record_id for r in together[1][1]] == ["c3"]
    assert store.runtime_protected(C, k, []) == (store.runtime_open_calls(C, k), [])


def test_the_protected_state_skips_a_record_retention_erased(vg: Vigente) -> None:
    """The index keeps the rank of a record retention erased; the latest look-up then finds
    the one before it, in one read as in the separate look-ups."""
    store = _ready(vg)
    (u2,) = store.runtime_records(C, record_ids=["u2"])
    with store.transaction():
        assert store.delete_runtime_records(C, [u2.seq]) == 1
    k = parse_instant(T.format(9))
    requests: list[tuple[str, str | None, int | None, int | None]] = [("user", "main", None, 1)]
    together = store.runtime_protected(C, k, requests)
    assert [r.record_id for r in together[1][0]] == ["u1"]
    assert together == _protected_one_by_one(store, k, requests)


def test_ancestry_and_candidates_from_records_already_read(vg: Vigente) -> None:
    store = _ready(vg)
    rt = vg.runtime
    k = parse_instant(T.format(9))
    branches = store.runtime_records(C, kinds=["branch"], known_at=k)
    for branch in ("main", "side"):
        chain = rt.ancestry(C, branch, known_at=k)
        assert rt.ancestry(C, branch, known_at=k, branches=branches) == chain
        for since in (0, 12):
            read = rt.candidates(C, branch, "agent", known_at=k, since=since, include=["c3"])
            given = rt.candidates(C, branch, "agent", known_at=k, since=since, include=["c3"],
                                  ancestry=chain)  # fmt: skip
            assert given == read
    assert rt.ancestry(C, "side", known_at=k)[1][0] == "main"
    # a branch not yet known then is refused the same way
    early = parse_instant(T.format(1))
    known = store.runtime_records(C, kinds=["branch"], known_at=early)
    with pytest.raises(InvalidInput, match="unknown branch 'side'"):
        rt.ancestry(C, "side", known_at=early, branches=known)
    with pytest.raises(InvalidInput, match="unknown branch 'side'"):
        rt.ancestry(C, "side", known_at=early)


def test_candidates_carry_each_calls_status_as_known_then(vg: Vigente) -> None:
    """The call results the reader reads with the runs and memory links (one statement):
    a call's status is its latest result's as known then, pending without one."""
    _ready(vg)
    rt = vg.runtime
    k = parse_instant(T.format(4))
    status = {c.node.id: c.status for c in rt.candidates(C, "main", "agent", known_at=k).records
              if c.node.KIND == "tool_call"}  # fmt: skip
    assert status == {"c1": "succeeded", "c2": "succeeded", "c3": "failed", "open": "pending"}
    later = rt.candidates(C, "main", "agent", known_at=parse_instant(T.format(9)))
    assert {c.node.id: c.status for c in later.records if c.node.KIND == "tool_call"}["open"] == (
        "succeeded"
    )


def test_records_after_a_mark_in_one_read_are_the_two_reads(vg: Vigente) -> None:
    store = _ready(vg)
    every = store.runtime_records(C)
    assert store.runtime_records_after_mark(C, "index", 1_000) == (every[-1].seq, [])
    assert store.runtime_records_after_mark(C, "tokens:none/yet", 3) == (0, every[:3])
    with store.transaction():
        store.append_runtime_token_counts(C, "enc/fmt", [], every[4].seq)
    mark, after = store.runtime_records_after_mark(C, "tokens:enc/fmt", 100)
    assert (mark, after) == (every[4].seq, store.runtime_records_after(C, every[4].seq, 100))
    assert after == every[5:]
    assert store.runtime_records_after_mark("no-such-conversation", "index", 10) == (0, [])


@pytest.mark.parametrize("fixture", ["participant_visibility", "subagent_promotion",
                                     "scheduled_task"])  # fmt: skip
def test_candidates_from_the_shares_and_promotions_read_with_the_structure(
    vg: Vigente, fixture: str
) -> None:
    """Given every record above the horizon and the conversation's shares and promotions, the
    reader reads nothing for what reaches the participant through the conversation: the
    candidates are those it finds by reading the store."""
    lines = (SCENARIOS / f"{fixture}.jsonl").read_text("utf-8").splitlines()
    events = [line for line in lines if line.strip() and json.loads(line)["event"] != "expect"]
    report = vg.runtime.import_events(events, now=json.loads(events[-1]).get("at"))
    store, rt = vg.store, vg.runtime
    reaches: set[str] = set()
    for conversation in report.conversations:
        k = store.runtime_latest_knowledge(conversation)
        assert k is not None
        every = store.runtime_records(conversation, known_at=k)
        granted = store.runtime_records(conversation, kinds=["share", "promotion"], known_at=k)
        participants = [r.record_id for r in every if r.kind == "participant"]
        branches = [r.record_id for r in every if r.kind == "branch"]
        for since in (0, every[len(every) // 2].seq):
            read = [r for r in every if r.seq >= since]
            for branch in branches:
                for participant in participants:
                    found = rt.candidates(conversation, branch, participant, known_at=k,
                                          since=since, read=read)  # fmt: skip
                    given = rt.candidates(conversation, branch, participant, known_at=k,
                                          since=since, read=read, granted=granted)  # fmt: skip
                    assert given == found
                    reaches |= {c.reach for c in found.records}
    assert reaches & {"shared", "promoted"}


_WORDS = ["fare", "seat", "genoa", "milan", "train", "bus", "refund"]


def _indexed_conversations(
    vg: Vigente, account: str, texts: list[tuple[int, list[str]]]
) -> list[str]:
    """Two conversations of ``account`` holding ``texts`` ((conversation, words) each, one
    message a second), indexed for recall: their ids."""
    cids = [f"{account}-{c}" for c in range(2)]
    events: list[dict[str, Any]] = []
    for cid in cids:
        events += [dict(event="conversation", id=cid, account=account, at=T.format(0)),
                   dict(event="participant", id="p", model="m", conversation=cid),
                   dict(event="branch", id="main", conversation=cid)]  # fmt: skip
    for n, (c, words) in enumerate(texts):
        events.append(dict(event="message", id=f"m{n}", branch="main", role="assistant",
                           content=" ".join(words), conversation=cids[c],
                           at=T.format(n + 1)))  # fmt: skip
    vg.runtime.import_events([json.dumps(e) for e in events])
    vg.runtime.recall("fare", account=account, mode="lexical")  # the index caught up
    return cids


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 1), st.lists(st.sampled_from(_WORDS), min_size=1,
                                                        max_size=5)), min_size=1, max_size=12),
       st.lists(st.sampled_from([*_WORDS, "absent"]), max_size=5, unique=True), st.integers(1, 4),
       st.integers(0, 12))  # fmt: skip
def test_postings_of_many_terms_in_one_read_are_the_reads_term_by_term(
    vg: Vigente, texts: list[tuple[int, list[str]]], terms: list[str], limit: int, cut: int
) -> None:
    """The postings of every conversation and term of a recall, read at once, are those read
    one conversation and one term at a time, in that order, each its most weighty first (then
    by seq) and at most ``limit``; inside a transaction too."""
    account = f"postings-{uuid.uuid4().hex}"  # one store for every example
    cids = _indexed_conversations(vg, account, texts)
    store = vg.store
    known = parse_instant(T.format(cut) if cut else T.format(0)).micros + 30_000_000
    asked = [*reversed(cids), f"{account}-none"]
    one_by_one = [
        p
        for cid in asked
        for term in terms
        for p in store.runtime_recall_postings([cid], [term], known, limit)
    ]
    assert store.runtime_recall_postings(asked, terms, known, limit) == one_by_one
    with store.transaction():
        assert store.runtime_recall_postings(asked, terms, known, limit) == one_by_one
    groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for cid, seq, term, tf, length in one_by_one:
        groups.setdefault((cid, term), []).append((-term_weight(tf, length), seq))
    for (cid, term), found in groups.items():
        assert found == sorted(found) and len(found) <= limit
        held = sum(1 for n, (c, words) in enumerate(texts)
                   if cids[c] == cid and term in words and n + 1 <= cut)  # fmt: skip
        assert len(found) == min(held, limit)


@pytest.mark.parametrize("fixture", ["participant_visibility", "subagent_promotion"])
def test_a_recall_given_what_an_assembly_read_is_the_recall_that_reads_it(
    vg: Vigente, fixture: str
) -> None:
    """A recall handed the branch's ancestry, the participants and the shares and promotions
    (as an assembly does) finds what the recall that reads them itself finds, for every branch
    and participant, including a query that names a participant."""
    lines = (SCENARIOS / f"{fixture}.jsonl").read_text("utf-8").splitlines()
    events = [line for line in lines if line.strip() and json.loads(line)["event"] != "expect"]
    report = vg.runtime.import_events(events, now=json.loads(events[-1]).get("at"))
    store, rt = vg.store, vg.runtime
    hits = 0
    for conversation in report.conversations:
        k = store.runtime_latest_knowledge(conversation)
        assert k is not None
        every = store.runtime_records(conversation, known_at=k)
        granted = store.runtime_records(conversation, kinds=["share", "promotion"], known_at=k)
        labels = [(r.record_id, r.payload.get("label")) for r in every
                  if r.kind == "participant"]  # fmt: skip
        words = " ".join(str(r.payload.get("content", "")) for r in every
                         if r.kind == "message")  # fmt: skip
        queries = [words[:200] or "anything", f"what did {labels[0][0]} say"]
        for branch in [r.record_id for r in every if r.kind == "branch"]:
            chain = rt.ancestry(conversation, branch, known_at=k)
            for participant, _ in labels:
                for query in queries:
                    asked = dict(
                        conversation=conversation,
                        branch=branch,
                        participant=participant,
                        known_at=k,
                        mode="lexical",
                        k=20,
                    )
                    found = Recall(rt).recall(query, **asked)  # type: ignore[arg-type]
                    given = Recall(rt).recall(
                        query,
                        **asked,  # type: ignore[arg-type]
                        ancestry=chain,
                        participants=labels,
                        granted=granted,
                    )
                    assert given == found
                    hits += len(found.hits)
    assert hits
    with pytest.raises(InvalidInput, match="give conversation and branch"):
        Recall(rt).recall("x", account="acct", ancestry=[("main", None)])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(["main", "side"]), st.integers(1, 12), st.integers(0, 40),
       st.sampled_from([1, 2, 3, 5, 2_000]), st.integers(1, 9))  # fmt: skip
def test_the_horizon_and_the_records_above_it_in_one_read_are_the_reads_it_replaces(
    vg: Vigente, branch: str, count: int, cut: int, limit: int, minute: int
) -> None:
    """The read horizon of an ancestry and the records from it up to a bound, read at once,
    are the newest of the branches' horizons and the records read after it (at most
    ``limit``, below the bound), on a store holding them since a first example."""
    store = vg.store
    if not store.runtime_records(C):
        _ready(vg)
    k = parse_instant(T.format(minute))
    chain = vg.runtime.ancestry(C, branch if minute >= 5 else "main", known_at=k)  # side: at 5
    every = store.runtime_records(C)
    below = None if cut >= len(every) else every[cut].seq
    found = [store.runtime_horizon(C, b, upto, None, k, count) for b, upto in chain]
    since = max((s for s in found if s is not None), default=0)
    expected = [r for r in every if r.seq >= since and (below is None or r.seq < below)]
    expected = expected[:limit]
    assert store.runtime_horizon_records(C, chain, k, count, below, limit) == (since, expected)
    with store.transaction():
        assert store.runtime_horizon_records(C, chain, k, count, below, limit) == (
            since, expected)  # fmt: skip
    assert store.runtime_horizon_records(C, [], k, count, below, limit)[0] == 0


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 1), st.lists(st.sampled_from(_WORDS), min_size=1,
                                                        max_size=5)), min_size=1, max_size=12),
       st.lists(st.sampled_from([*_WORDS, "absent"]), max_size=5, unique=True),
       st.integers(0, 12))  # fmt: skip
def test_recall_statistics_in_one_read_are_the_two_reads(
    vg: Vigente, texts: list[tuple[int, list[str]]], terms: list[str], cut: int
) -> None:
    """A recall's statistics (records and terms indexed, and how many records hold each term,
    as known at K) read at once are those of the two reads it replaces; inside a transaction
    too."""
    account = f"statistics-{uuid.uuid4().hex}"  # one store for every example
    cids = _indexed_conversations(vg, account, texts)
    store = vg.store
    known = parse_instant(T.format(cut)).micros + 30_000_000
    for asked in ([*cids, f"{account}-none"], cids[1:], []):
        docs, length = store.runtime_recall_stats(asked, known)
        counts = store.runtime_recall_term_counts(asked, terms, known)
        assert store.runtime_recall_statistics(asked, terms, known) == (docs, length, counts)
        with store.transaction():
            assert store.runtime_recall_statistics(asked, terms, known) == (docs, length, counts)
        held = [words for n, (c, words) in enumerate(texts) if cids[c] in asked and n + 1 <= cut]
        assert docs == len(held)
        assert counts == {t: sum(1 for words in held if t in words) for t in terms}
