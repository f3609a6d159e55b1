"""The runtime's read caches on every backend: the read index (protected-state look-ups, open
calls as known at k, the read horizon, group ranks), replay token counts with running sums per
branch, the marks that say how far each cache has read, and purge."""

from __future__ import annotations

import json
from typing import Any

from vigente import Vigente
from vigente.runtime.reader import group_key
from vigente.store.base import Store
from vigente.time import Instant, parse_instant

C = "cache-1"
T = "2026-10-05T08:{:02d}:00+00:00"


def _events() -> list[str]:
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=C, account="acct-cache", at=T.format(0)),
        dict(event="participant", id="agent", model="m", provider="openai", at=T.format(0)),
        dict(event="branch", id="main", at=T.format(0)),
        dict(
            event="message",
            id="sys",
            branch="main",
            role="system",
            content="Be exact.",
            at=T.format(1),
        ),
        dict(event="message", id="u1", branch="main", role="user", content="Go.", at=T.format(1)),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat", at=T.format(1)),
        dict(event="tool_call", id="ok", run="r1", name="search", arguments={}, at=T.format(2)),
        dict(event="tool_result", call="ok", status="succeeded", content={"a": 1}, at=T.format(2)),
        dict(event="tool_call", id="late", run="r1", name="search", arguments={}, at=T.format(3)),
        dict(event="tool_call", id="bad", run="r1", name="pay", arguments={}, at=T.format(3)),
        dict(
            event="tool_result",
            call="bad",
            status="failed",
            content={"e": "declined"},
            at=T.format(3),
        ),
        dict(
            event="message", id="u2", branch="main", role="user", content="Again.", at=T.format(4)
        ),
        dict(
            event="tool_result", call="late", status="succeeded", content={"b": 2}, at=T.format(5)
        ),
    ]
    return [
        json.dumps(e if e["event"] == "conversation" else dict(e, conversation=C)) for e in events
    ]


def _ready(vg: Vigente) -> Store:
    vg.runtime.import_events(_events())
    vg.runtime.catch_up_index(C)
    return vg.store


def test_index_marks_and_protected_lookups(vg: Vigente) -> None:
    store = _ready(vg)
    last = max(r.seq for r in store.runtime_records(C))
    assert store.runtime_cache_mark(C, "index") == last
    assert store.runtime_cache_mark(C, "tokens:o200k_base/openai-chat") == 0
    now = parse_instant(T.format(9))
    assert [r.record_id for r in store.runtime_flagged(C, "instruction", now)] == ["sys"]
    latest = store.runtime_flagged(C, "user", now, branch_id="main", upto=None, limit=1)
    assert [r.record_id for r in latest] == ["u2"]
    assert [r.record_id for r in store.runtime_flagged(C, "troubled", now)] == ["bad"]
    assert store.runtime_flagged(C, "checkpoint", now) == []
    # open calls as known then: "late" was unanswered from 08:03 until 08:05
    assert [r.record_id for r in store.runtime_open_calls(C, now)] == []
    assert [r.record_id for r in store.runtime_open_calls(C, parse_instant(T.format(4)))] == [
        "late"
    ]
    assert store.runtime_open_calls(C, parse_instant(T.format(2))) == []
    # again is a no-op: rows already indexed are skipped, ranks unchanged
    vg.runtime.catch_up_index(C)
    assert store.runtime_cache_mark(C, "index") == last


def test_horizon_and_group_ranks(vg: Vigente) -> None:
    store = _ready(vg)
    now = parse_instant(T.format(9))
    refs = [
        r
        for r in store.runtime_records(C)
        if r.kind in ("message", "tool_call", "memory", "user_memory")
    ]
    # the 2nd newest ref of the branch (an artifact is not a ref of its own)
    assert store.runtime_horizon(C, "main", None, None, now, 2) == refs[-2].seq
    assert store.runtime_horizon(C, "main", None, None, now, len(refs)) == refs[0].seq
    assert store.runtime_horizon(C, "main", None, None, now, len(refs) + 1) is None
    # as known at 08:03, u2 did not exist yet
    early = parse_instant(T.format(3))
    known = [r for r in refs if r.known_from <= early]
    assert known[-1].record_id == "bad"
    assert store.runtime_horizon(C, "main", None, None, early, 1) == known[-1].seq
    calls = group_key("main", "agent", "participant")
    users = group_key("main", None, "branch")
    end = refs[-1].seq + 1
    owned = sum(1 for r in refs if r.participant_id == "agent" and r.visibility == "participant")
    assert owned == 5  # three calls, two memories the extractor derived
    assert store.runtime_group_counts(C, [(calls, end), (users, end), (calls, 0)]) == [owned, 3, 0]
    first_call = next(r.seq for r in refs if r.kind == "tool_call")
    assert store.runtime_group_counts(C, [(calls, first_call + 1)]) == [1]
    assert store.runtime_group_counts(C, [("no such group", end)]) == [0]


def test_token_running_sums(vg: Vigente) -> None:
    store = _ready(vg)
    rows = [
        (10, "main", 10, 1, 5, 1),
        (11, "main", 11, 2, 7, 2),
        (12, "side", 12, 3, 100, 1),
        (13, "main", 10, 4, -2, 0),
    ]
    with store.transaction():
        store.append_runtime_token_counts(C, "enc/fmt", rows, 20)
    assert store.runtime_cache_mark(C, "tokens:enc/fmt") == 20
    assert store.runtime_token_total(C, "enc/fmt", [("main", None)], Instant(4)) == (10, 3)
    assert store.runtime_token_total(C, "enc/fmt", [("main", None)], Instant(2)) == (12, 3)
    assert store.runtime_token_total(
        C, "enc/fmt", [("main", None), ("side", None)], Instant(9)
    ) == (110, 4)
    # a fork after position 10: row 11 is not inherited, the later row anchored at 10 is
    assert store.runtime_token_total(C, "enc/fmt", [("main", 10)], Instant(9)) == (3, 1)
    # counted rows are skipped when given again (a second filler), sums unchanged
    with store.transaction():
        store.append_runtime_token_counts(C, "enc/fmt", rows[:1], 20)
    assert store.runtime_token_total(C, "enc/fmt", [("main", None)], Instant(9)) == (10, 3)


def test_purge_takes_the_caches(vg: Vigente) -> None:
    store = _ready(vg)
    vg.assembly.assemble(C, "main", "agent")
    assert store.runtime_cache_mark(C, "tokens:o200k_base/openai-chat") > 0
    vg.runtime.purge_account("acct-cache")
    assert store.runtime_cache_mark(C, "index") == 0
    assert store.runtime_cache_mark(C, "tokens:o200k_base/openai-chat") == 0
    assert store.runtime_group_counts(
        C, [(group_key("main", "agent", "participant"), 1 << 40)]
    ) == [0]
