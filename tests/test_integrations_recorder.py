"""The Recorder every integration shares, without a framework: a message list kept in step
with a branch, divergence as a fork that inherits what both share, parallel results in any
order, repeated framework ids, and the package's exports."""

from __future__ import annotations

import vigente.integrations as integrations
from vigente import Vigente
from vigente.integrations import Call, Recorder, Result, Said, Turn


def recorder(vg: Vigente) -> Recorder:
    return Recorder(vg.runtime, "c", account="acme", participant="agent")


def test_the_package_exports_the_framework_free_parts() -> None:
    assert set(integrations.__all__) == {"Call", "Item", "Recorder", "Result", "Said", "Turn"}
    assert all(hasattr(integrations, name) for name in integrations.__all__)


def test_a_list_that_follows_the_branch_is_appended(sqlite_vg: Vigente) -> None:
    rec = recorder(sqlite_vg)
    items = [
        Said("h1", "user", "find JFK-SFO"),
        Turn("a1", "", (Call("c1", "search", {"o": "JFK"}), Call("c2", "search", {"o": "EWR"}))),
        Result("c2", "succeeded", {"flights": 2}),  # parallel calls finish in any order
        Result("c1", "succeeded", "[]"),
    ]
    assert rec.sync("main", items[:2]) == "main"
    assert rec.sync("main", items) == "main"
    # the same list again, or with the results in the other order, writes nothing
    before = len(sqlite_vg.runtime.graph("c").nodes)
    assert rec.sync("main", [*items[:2], items[3], items[2]]) == "main"
    assert len(sqlite_vg.runtime.graph("c").nodes) == before
    artifacts = {a.target_id: a for a in sqlite_vg.runtime.graph("c").of_kind("artifact")}
    assert sqlite_vg.runtime.artifact_content(artifacts["c2"]) == b'{"flights": 2}'
    # a new recorder (another process) reads the same view back from the graph
    again = recorder(sqlite_vg)
    assert again.sync("main", items) == "main"
    assert len(sqlite_vg.runtime.graph("c").nodes) == before
    assert [i.key for i in again.items("main")] == ["h1", "a1", "c1", "c2"]


def test_a_list_that_leaves_the_branch_forks_after_what_both_share(sqlite_vg: Vigente) -> None:
    rt = sqlite_vg.runtime
    rec = recorder(sqlite_vg)
    shared = [Said("h1", "user", "hi"), Turn("a1", "hello", ())]
    rec.sync(
        "main",
        [
            *shared,
            Said("h2", "user", "book HAT1"),
            Turn("a2", "", (Call("k", "book", {"f": "HAT1"}),)),
            Result("k", "succeeded", "booked"),
        ],
    )
    fork = rec.sync("main", [*shared, Said("h2", "user", "book HAT2")])  # an edited message
    assert fork != "main" and rec.branches()[fork] == "main"
    assert [m.content for m in rt.transcript("c", fork)] == ["hi", "hello", "book HAT2"]
    assert [m.content for m in rt.transcript("c", "main")] == ["hi", "hello", "book HAT1"]
    # the fork goes on under the same framework ids; main's booking is not on it
    fork2 = rec.sync(
        fork,
        [
            *shared,
            Said("h2", "user", "book HAT2"),
            Turn("a2", "", (Call("k", "book", {"f": "HAT2"}),)),
            Result("k", "succeeded", "booked HAT2"),
        ],
    )
    assert fork2 == fork
    calls = {n.id: n.arguments for n in rt.graph("c", branch=fork).of_kind("tool_call")}
    assert calls == {f"{fork}/k": {"f": "HAT2"}}
    assert rec.framework_id(f"{fork}/k") == "k"


def test_a_fork_that_keeps_an_exchange_without_text_records_it_again(sqlite_vg: Vigente) -> None:
    rt = sqlite_vg.runtime
    rec = recorder(sqlite_vg)
    exchange = [
        Said("h1", "user", "status of ZFA04Y?"),
        Turn("a1", "", (Call("c1", "get", {"id": "ZFA04Y"}),)),
        Result("c1", "succeeded", {"status": "confirmed"}),
    ]
    rec.sync("main", [*exchange, Turn("a2", "Confirmed.", ())])
    fork = rec.fork("main", 3)  # without the last turn (a popped item)
    graph = rt.graph("c", branch=fork)
    # inherited up to the user's message; the exchange after it is the fork's own copy
    assert [n.id for n in graph.of_kind("tool_call")] == [f"{fork}/c1"]
    assert [i.key for i in rec.items(fork)] == ["h1", "a1", "c1"]
    assert rec.items(fork)[2] == Result("c1", "succeeded", {"status": "confirmed"})
    assert rt.transcript("c", fork)[-1].content == "status of ZFA04Y?"
    empty = rec.fork(fork, 0)
    assert rec.branches()[empty] == fork and rec.items(empty) == []  # forked at its start
    assert rec.latest_branch() == empty


def test_a_repeated_framework_id_gets_a_numbered_record(sqlite_vg: Vigente) -> None:
    rec = recorder(sqlite_vg)
    rec.sync(
        "main",
        [
            Said("h", "user", "twice"),
            Turn("a1", "", (Call("call_0", "ping", {}),)),
            Result("call_0", "succeeded", "1"),
            Turn("a2", "", (Call("call_0", "ping", {}),)),  # the same id again
            Result("call_0", "succeeded", "2"),
        ],
    )
    graph = sqlite_vg.runtime.graph("c")
    assert [n.id for n in graph.of_kind("tool_call")] == ["call_0", "call_0#2"]
    results = {
        a.target_id: sqlite_vg.runtime.artifact_content(a) for a in graph.of_kind("artifact")
    }
    assert results == {"call_0": b"1", "call_0#2": b"2"}
