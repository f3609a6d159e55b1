"""Recall over the runtime on every backend (RUNTIME.md section 4, docs/recall.md): only records
known at K, with their knowledge time; the participant's view on a branch; never another
account's; privacy (secret results never, credentials redacted); an answer at K that later
records never change; purge and retention take the index with the records."""

from __future__ import annotations

import datetime as _dt
import json
import uuid
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.errors import InvalidInput

T0 = _dt.datetime(2026, 5, 3, 9, 0, tzinfo=_dt.UTC)


def at(days: float) -> str:
    return (T0 + _dt.timedelta(days=days)).isoformat()


def _log(conversation: str = "c1", account: str = "acct") -> list[dict[str, Any]]:
    c = conversation
    return [
        dict(event="conversation", id=c, account=account, at=at(0)),
        dict(event="participant", id="alice", model="m", label="Alice", conversation=c),
        dict(event="participant", id="bob", model="m", label="Bob", conversation=c),
        dict(event="branch", id="main", conversation=c),
        dict(event="message", id="sys", branch="main", role="system", conversation=c,
             content="You help with travel."),
        dict(event="message", id="u1", branch="main", role="user", conversation=c,
             content="My name is Michael and I live in Seattle."),
        dict(event="message", id="u2", branch="main", role="user", conversation=c,
             content="I moved to Genoa; the trains to Milan leave at 07:10.", at=at(38)),
        dict(event="run", id="r1", branch="main", participant="alice", mode="chat",
             conversation=c, at=at(39)),
        dict(event="tool_call", id="t1", run="r1", name="lookup", arguments={"q": "card"},
             conversation=c),
        dict(event="tool_result", call="t1", status="succeeded", conversation=c,
             content={"holder": "Michael", "card": "4242 4242 4242 4242", "city": "Genoa"}),
        dict(event="tool_call", id="t2", run="r1", name="vault", arguments={}, conversation=c),
        dict(event="tool_result", call="t2", status="succeeded", privacy="secret",
             conversation=c, content={"vault_code": "zebra-quartz-41"}),
        dict(event="message", id="a1", branch="main", role="assistant", run="r1",
             conversation=c, content="Noted: Genoa, trains at 07:10.", at=at(39)),
        dict(event="branch", id="alt", parent="main", fork_after="u1", conversation=c, at=at(40)),
        dict(event="message", id="u3", branch="alt", role="user", conversation=c,
             content="On this branch I prefer buses to Turin.", at=at(40)),
    ]


def _import(vg: Vigente, events: list[dict[str, Any]]) -> None:
    vg.runtime.import_events([json.dumps(e) for e in events])


def refs(result: Any) -> list[str]:
    return [h.ref for h in result.hits]


def test_recall_finds_by_words_and_keeps_knowledge_time(vg: Vigente) -> None:
    _import(vg, _log())
    r = vg.runtime.recall("where do I live", conversation="c1", mode="lexical")
    assert refs(r)[0] == "u1"
    assert r.hits[0].at.isoformat() == "2026-05-03T09:00:00Z"
    assert r.hits[0].kind == "message" and r.hits[0].conversation == "c1"
    early = vg.runtime.recall("Genoa trains", conversation="c1", known_at=at(10), mode="lexical")
    assert early.hits == () and early.known_at.isoformat() == "2026-05-13T09:00:00Z"
    late = vg.runtime.recall("Genoa trains", conversation="c1", mode="lexical")
    assert {"u2", "a1"} <= set(refs(late))
    assert all(h.at <= late.known_at for h in late.hits)
    assert "sys" not in refs(vg.runtime.recall("travel", conversation="c1", mode="lexical"))


def test_recall_keeps_privacy_and_redacts(vg: Vigente) -> None:
    _import(vg, _log())
    assert refs(vg.runtime.recall("zebra quartz vault code", conversation="c1",
                                  mode="lexical")) == []
    card = vg.runtime.recall("card holder Michael", conversation="c1", mode="lexical")
    texts = [h.text for h in card.hits if h.ref == "t1"]
    assert texts and "4242 4242 4242 4242" not in texts[0] and "last four 4242" in texts[0]


def test_recall_sees_what_the_participant_sees_on_the_branch(vg: Vigente) -> None:
    _import(vg, _log())
    everything = refs(vg.runtime.recall("buses Turin trains Genoa", conversation="c1",
                                        mode="lexical"))
    assert {"u2", "u3"} <= set(everything)
    alt = refs(vg.runtime.recall("buses Turin trains Genoa", conversation="c1", branch="alt",
                                 participant="alice", mode="lexical"))
    assert "u3" in alt and "u2" not in alt  # after the fork point of alt
    bob = refs(vg.runtime.recall("card holder Michael Genoa", conversation="c1", branch="main",
                                 participant="bob", mode="lexical"))
    assert "t1" not in bob  # alice's tool result is hers (visibility participant)
    assert "t1" in refs(vg.runtime.recall("card holder Michael Genoa", conversation="c1",
                                          branch="main", participant="alice", mode="lexical"))


def test_recall_over_an_account_never_reaches_another(vg: Vigente) -> None:
    _import(vg, _log("c1", "acct"))
    _import(vg, _log("c2", "acct"))
    _import(vg, _log("x1", "other"))
    r = vg.runtime.recall("Seattle", account="acct", mode="lexical")
    assert {h.conversation for h in r.hits} == {"c1", "c2"}
    assert vg.runtime.recall("Seattle", account="nobody", mode="lexical").hits == ()


def test_time_expressions_raise_their_window(vg: Vigente) -> None:
    _import(vg, _log())
    r = vg.runtime.recall("what did I say in June", conversation="c1", known_at=at(60),
                          mode="lexical")
    assert refs(r)[0] in ("u2", "a1", "u3") and all(
        "time" in " ".join(h.why) for h in r.hits[:2])
    assert any("in June" in n for n in r.notes)
    before = vg.runtime.recall("where did I live before the move to Genoa", conversation="c1",
                               mode="lexical")
    assert refs(before)[0] == "u1"


def test_bad_recalls_are_refused_clearly(vg: Vigente) -> None:
    _import(vg, _log())
    for kwargs, words in [
        (dict(query=""), "needs a query"),
        (dict(query="x", conversation=None), "conversation"),
        (dict(query="x", k=0), "k must be"),
        (dict(query="x", branch="main"), "go together"),
        (dict(query="x", branch="nope", participant="alice"), "unknown branch"),
        (dict(query="x", mode="psychic"), "unknown recall mode"),
    ]:
        call = {"conversation": "c1", **kwargs}
        with pytest.raises(InvalidInput, match=words):
            vg.runtime.recall(**call)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="unknown conversation"):
        vg.runtime.recall("x", conversation="nope")


def test_purge_and_retention_take_the_index(vg: Vigente) -> None:
    # a year earlier: old enough for the artifacts' retention (gc takes no clock ahead of now)
    _import(vg, [dict(e, at=e["at"].replace("2026-", "2025-")) if "at" in e else e
                 for e in _log()])
    assert vg.runtime.recall("Seattle", conversation="c1", mode="lexical").hits
    vg.runtime.gc()  # artifacts' raw results expire (RETENTION)
    gone = refs(vg.runtime.recall("card holder Michael", conversation="c1", mode="lexical"))
    assert "t1" not in gone
    vg.runtime.purge_account("acct")
    assert vg.store.runtime_recall_stats(["c1"], 1 << 62) == (0, 0)
    assert vg.store.runtime_recall_postings(["c1"], ["seattle"], 1 << 62, 10) == []


words = st.sampled_from(["train", "Genoa", "Milan", "bus", "coffee", "name", "Seattle",
                         "card", "move", "ticket"])


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(words, min_size=1, max_size=6), st.integers(0, 3)),
                min_size=2, max_size=14), st.integers(1, 13), st.lists(words, min_size=1,
                                                                      max_size=3))
def test_an_answer_at_k_never_changes(vg: Vigente, messages: list[tuple[list[str], int]],
                                      cut: int, query: list[str]) -> None:
    """Whatever is appended after K, a recall as known at K returns the same hits with the
    same scores, and no hit was known after K."""
    conversation = f"p-{uuid.uuid4().hex}"  # one store for every example
    cut = min(cut, len(messages) - 1)
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=conversation, account="prop", at=at(0)),
        dict(event="participant", id="p", model="m", conversation=conversation),
        dict(event="branch", id="main", conversation=conversation)]
    day = 0
    for n, (text, gap) in enumerate(messages):
        day += gap
        events.append(dict(event="message", id=f"m{n}", branch="main", role="user",
                           content=" ".join(text), conversation=conversation, at=at(day)))
    k = events[3 + cut - 1]["at"]
    later = [e for e in events[3 + cut:] if e["at"] > k]
    head = [e for e in events[:3 + cut]] + [e for e in events[3 + cut:] if e["at"] <= k]
    _import(vg, head)
    first = vg.runtime.recall(" ".join(query), conversation=conversation, known_at=k,
                              mode="lexical").as_dict()
    _import(vg, later)
    again = vg.runtime.recall(" ".join(query), conversation=conversation, known_at=k,
                              mode="lexical").as_dict()
    assert again == first
    assert all(h["at"] <= first["known_at"] for h in first["hits"])


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 2), st.lists(words, min_size=1, max_size=6)),
                min_size=1, max_size=16), st.lists(words, min_size=1, max_size=4),
       st.integers(0, 16))
def test_words_rank_by_bm25_over_an_account(vg: Vigente, messages: list[tuple[int, list[str]]],
                                            query: list[str], cut: int) -> None:
    """Ranked by words, an account's records come in the order of Okapi BM25 (the fitted k1
    and b) over the records known at K, every conversation's together, ties by conversation
    and position: computed here from the texts alone (the session and the neighbours, which
    raise a record by others', weigh nothing here)."""
    import math
    from dataclasses import replace

    from vigente.runtime.recall import Recall, _terms
    from vigente.runtime.recall_rank import WEIGHTS

    account = f"bm25-{uuid.uuid4().hex}"  # one store for every example
    events: list[dict[str, Any]] = []
    for c in range(3):
        events += [dict(event="conversation", id=f"{account}-{c}", account=account, at=at(0)),
                   dict(event="participant", id="p", model="m", conversation=f"{account}-{c}"),
                   dict(event="branch", id="main", conversation=f"{account}-{c}")]
    docs: list[tuple[str, int, str, Counter[str]]] = []  # conversation, day, id, terms
    for n, (c, text) in enumerate(messages):
        events.append(dict(event="message", id=f"m{n}", branch="main", role="assistant",
                           content=" ".join(text), conversation=f"{account}-{c}", at=at(n + 1)))
        docs.append((f"{account}-{c}", n + 1, f"m{n}", _terms(" ".join(text))))
    _import(vg, events)
    known = [d for d in docs if d[1] <= cut]
    q = list(dict.fromkeys(_terms(" ".join(query))))
    avg = sum(sum(t.values()) for *_, t in known) / max(len(known), 1)
    expected: list[tuple[float, str, int, str]] = []
    for conversation, day, ref, terms in known:
        score = 0.0
        for term in q:
            df = sum(1 for *_, t in known if term in t)
            if terms[term]:
                idf = math.log(1 + (len(known) - df + 0.5) / (df + 0.5))
                tf, length = terms[term], sum(terms.values())
                k1, b = WEIGHTS.k1, WEIGHTS.b
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        if score > 0:
            expected.append((-score, conversation, day, ref))
    expected.sort()
    words_only = Recall(vg.runtime, weights=replace(WEIGHTS, session=0, neighbour=0))
    got = words_only.recall(" ".join(query), account=account, known_at=at(cut + 0.5),
                            mode="lexical", k=20)
    assert refs(got) == [ref for *_, ref in expected]
    assert [h.conversation for h in got.hits] == [c for _, c, _, _ in expected]
