"""The runtime graph on every backend: the event log of RUNTIME.md, branch and participant
isolation, knowledge-time reads, memories and their links, subagent promotion, shares, bad input
(refused with its line, nothing written) and account purge."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from vigente import ImportFileError, InvalidInput, Vigente
from vigente.errors import FutureKnowledgeError, RuntimeHistoryConflict

C = "trip-42"
T0 = "2026-10-05T08:00:00+00:00"


def session() -> list[dict[str, Any]]:
    """The session of ../shared/contract/runtime_contract.py."""
    events = [
        dict(event="conversation", id=C, account="acct-demo", at=T0),
        dict(event="participant", id="agent", model="gpt-4o", provider="openai"),
        dict(event="branch", id="main"),
        dict(event="message", id="m0", branch="main", role="system", content="You book trains."),
        dict(event="message", id="m1", branch="main", role="user",
             content="Trains from Turin to Milan tomorrow?"),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="t1", run="r1", name="train_search",
             arguments={"from": "TRN", "to": "MIL"}),
        dict(event="tool_result", call="t1", status="succeeded",
             content={"trains": [{"id": "FR-9512", "dep": "07:10"},
                                 {"id": "RV-2011", "dep": "07:25"}]}),
        dict(event="message", id="m2", branch="main", role="assistant", run="r1",
             content="FR-9512 leaves at 07:10; RV-2011 at 07:25."),
        dict(event="branch", id="other", parent="main", fork_after="m2",
             at="2026-10-05T08:05:00+00:00"),
        dict(event="message", id="o1", branch="other", role="user", content="What about Genoa?"),
        dict(event="run", id="r2", branch="other", participant="agent", mode="chat"),
        dict(event="tool_call", id="t2", run="r2", name="train_search",
             arguments={"from": "TRN", "to": "GEN"}),
        dict(event="tool_result", call="t2", status="succeeded",
             content={"trains": [{"id": "IC-0660"}]}),
        dict(event="message", id="m3", branch="main", role="user", content="Book the 07:10 one.",
             at="2026-10-05T08:10:00+00:00"),
    ]
    return [e if e["event"] == "conversation" else dict(e, conversation=C) for e in events]


def lines(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e) for e in events]


def ids(candidates: Any) -> list[str]:
    return [f"{c.node.KIND}:{c.node.id}" for c in candidates.records]


@pytest.fixture
def trip(vg: Vigente) -> Vigente:
    vg.runtime.import_events(lines(session()))
    return vg


def test_contract_session_imports_and_branches_stay_apart(trip: Vigente) -> None:
    rt = trip.runtime
    main = ids(rt.candidates(C, "main", "agent"))
    assert "artifact:t1" in main and "message:m3" in main
    assert not any(x.endswith((":t2", ":o1")) for x in main)
    other = ids(rt.candidates(C, "other", "agent"))
    assert "artifact:t2" in other and "message:m2" in other  # inherited up to the fork point
    assert "message:m3" not in other  # main's message after the fork is not inherited
    assert [m.id for m in rt.transcript(C, "other")] == ["m0", "m1", "m2", "o1"]
    assert rt.ancestry(C, "other") == [("other", None), ("main", 9)]


def test_artifact_keeps_raw_bytes_hashes_and_owner(trip: Vigente) -> None:
    (a,) = trip.runtime.artifacts("t1")
    raw = trip.runtime.artifact_content(a)
    assert json.loads(raw)["trains"][0]["id"] == "FR-9512"
    assert a.result_ref.sha256 == hashlib.sha256(raw).hexdigest() and a.result_ref.bytes == len(raw)
    assert json.loads(trip.runtime.artifact_content(a, part="arguments")) == {"from": "TRN",
                                                                              "to": "MIL"}
    assert (a.participant_id, a.run_id, a.branch_id, a.status) == ("agent", "r1", "main",
                                                                  "succeeded")
    assert a.visibility == "participant" and a.privacy == "public" and not a.result_ref.in_blob


def test_derived_memory_holds_only_values_of_its_artifact(trip: Vigente) -> None:
    (memory,) = [c.node for c in trip.runtime.candidates(C, "main", "agent").records
                 if c.node.KIND == "memory"]
    assert memory.sources == ("t1",) and memory.source_tools == ("train_search",)
    assert memory.facts["trains"] == {"columns": ["id", "dep"],
                                      "rows": [["FR-9512", "07:10"], ["RV-2011", "07:25"]]}
    assert memory.stale_after is not None and memory.observed_at is not None
    assert memory.revalidate_with == ("train_search",) and memory.extractor == "default-v3"
    assert memory.form == "object" and memory.lossless  # decoded back to t1's result


def test_read_at_a_past_knowledge_time_sees_what_was_held_then(trip: Vigente) -> None:
    before = trip.runtime.graph(C, known_at="2026-10-05T08:04:59Z")
    assert {n.id for n in before.nodes} >= {"t1", "m2"} and "other" not in {
        n.id for n in before.nodes}
    assert "message:m3" not in ids(trip.runtime.candidates(C, "main", "agent",
                                                           known_at="2026-10-05T08:09:00Z"))


def test_private_records_of_one_participant_do_not_reach_another(trip: Vigente) -> None:
    rt = trip.runtime
    rt.add_participant(C, "critic", model="claude", provider="anthropic",
                       at="2026-10-05T08:11:00Z")
    seen = ids(rt.candidates(C, "main", "critic"))
    assert "message:m2" in seen and "message:m1" in seen  # the visible answer is branch context
    assert not any(x.startswith(("artifact:", "tool_call:", "memory:", "run:")) for x in seen)
    rt.share(C, "t1", ["critic"], at="2026-10-05T08:12:00Z")
    shared = rt.candidates(C, "main", "critic")
    assert {(c.node.KIND, c.reach) for c in shared.records if c.node.id == "t1"} == {
        ("tool_call", "shared"), ("artifact", "shared")}


def test_memory_supersession_is_kept_in_both_directions(trip: Vigente) -> None:
    rt = trip.runtime
    rt.record_memory(C, "mem-a", sources=["t1"], summary="FR-9512 at 07:10", freshness="volatile",
                     at="2026-10-05T08:20:00Z")
    rt.record_memory(C, "mem-b", sources=["t1"], summary="FR-9512 delayed to 07:40",
                     supersedes=["mem-a"], at="2026-10-05T08:30:00Z")
    rt.record_memory(C, "mem-c", sources=["t1"], summary="FR-9512 cancelled",
                     conflicts_with=["mem-b"], at="2026-10-05T08:40:00Z")
    now = {c.node.id: c for c in rt.candidates(C, "main", "agent").records}
    assert now["mem-a"].superseded_by == ("mem-b",) and now["mem-b"].superseded_by == ()
    assert now["mem-a"].node.supersedes == ("t1#memory",)  # the extractor's memory of t1
    assert now["mem-b"].node.supersedes == ("mem-a",)
    assert now["t1#memory"].superseded_by == ("mem-a",)
    assert now["mem-b"].conflicts_with == ("mem-c",) and now["mem-c"].conflicts_with == ("mem-b",)
    assert now["mem-a"].stale  # volatile: an hour after it was observed
    then = {c.node.id: c for c in rt.candidates(C, "main", "agent",
                                                known_at="2026-10-05T08:25:00Z").records}
    assert then["mem-a"].superseded_by == () and "mem-b" not in then
    graph = rt.graph(C).as_dict()
    row = next(r for r in graph["records"] if r["id"] == "mem-a")
    assert row["superseded_by"] == ["mem-b"]


def test_subagent_records_stay_the_childs_until_promoted(trip: Vigente) -> None:
    rt = trip.runtime
    at = "2026-10-05T09:00:00Z"
    rt.start_run(C, "child", branch="main", participant="agent", mode="subagent",
                 parent_run="r1", at=at)
    rt.record_tool_call(C, "c1", run="child", name="read_file", arguments={"path": "x"}, at=at)
    rt.record_tool_result(C, "c1", status="succeeded", content="secret scratch", at=at)
    rt.record_message(C, "report", branch="main", role="assistant", run="child",
                      content="Child report: done", at=at)
    parent = rt.candidates(C, "main", "agent", run="r1")
    assert {n.id for n, reason in parent.hidden if reason == "not_promoted"} >= {"c1", "report"}
    assert "message:report" not in ids(parent)
    assert "artifact:c1" in ids(rt.candidates(C, "main", "agent", run="child"))
    rt.promote(C, "child", ["report"], as_="final_report", at="2026-10-05T09:01:00Z")
    after = rt.candidates(C, "main", "agent", run="r1")
    assert ("message:report" in ids(after)) and "artifact:c1" not in ids(after)
    assert "report" not in [m.id for m in rt.transcript(C, "main")]
    with pytest.raises(InvalidInput, match="no parent_run"):
        rt.promote(C, "r1", ["t1"])


def test_conversation_visibility_reaches_every_branch(trip: Vigente) -> None:
    rt = trip.runtime
    rt.record_tool_call(C, "t5", run="r1", name="upload", arguments={},
                        at="2026-10-05T09:00:00Z")
    rt.record_tool_result(C, "t5", status="succeeded", content={"file_id": "file-77"},
                          visibility="conversation", at="2026-10-05T09:00:00Z")
    other = {c.node.id: c.reach for c in rt.candidates(C, "other", "agent").records
             if c.node.KIND == "artifact"}
    assert other == {"t1": "own", "t2": "own", "t5": "conversation"}  # t5: after the fork


def test_audit_visibility_never_reaches_a_model(trip: Vigente) -> None:
    rt = trip.runtime
    rt.record_tool_call(C, "t9", run="r1", name="log", arguments={}, at="2026-10-05T09:00:00Z")
    rt.record_tool_result(C, "t9", status="failed", content="boom", visibility="audit",
                          at="2026-10-05T09:00:00Z")
    c = rt.candidates(C, "main", "agent")
    assert ("t9", "audit_only") in {(n.id, reason) for n, reason in c.hidden}
    status = {x.node.id: x.status for x in c.records if x.node.KIND == "tool_call"}
    assert status["t9"] == "failed"


BAD = [
    ({"event": "tool_result", "call": "ghost", "status": "succeeded", "content": "x"},
     "unknown call id 'ghost'"),
    ({"event": "tool_result", "call": "t1", "status": "succeeded", "content": "again"},
     "already has a succeeded result"),
    ({"event": "tool_result", "call": "t2", "status": "succeeded", "content": "x"},
     "already has"),
    ({"event": "tool_result", "call": "t1", "status": "failed", "content": "x", "branch": "other"},
     "made on branch 'main'"),
    ({"event": "branch", "id": "loop", "parent": "loop"}, "names itself as its parent"),
    ({"event": "branch", "id": "orphan", "parent": "nowhere"}, "unknown parent branch"),
    ({"event": "branch", "id": "late", "parent": "other", "fork_after": "m3"},
     "is on branch 'main', not on branch 'other'"),
    ({"event": "memory", "id": "self", "sources": ["t1"], "summary": "s", "supersedes": ["self"]},
     "cannot supersede itself"),
    ({"event": "memory", "id": "pref", "sources": ["t1"], "summary": "likes trains",
      "kind": "user"}, "user memory comes from the user's own messages"),
    ({"event": "memory", "id": "foreign", "sources": ["x1"], "summary": "s"},
     "belongs to conversation 'elsewhere'"),
    ({"event": "message", "id": "m9", "branch": "main", "role": "user", "content": "hi",
      "at": "2026-10-05T08:30:00"}, "naive timestamp"),
    ({"event": "message", "id": "m9", "branch": "main", "role": "user", "content": "hi",
      "at": "2026-10-05T07:00:00Z"}, "would rewrite history"),
    ({"event": "run", "id": "r9", "branch": "main", "participant": "agent", "mode": "dream"},
     "unknown mode 'dream'"),
    ({"event": "message", "id": "m1", "branch": "main", "role": "user", "content": "dup"},
     "already exists"),
]


@pytest.mark.parametrize(("event", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_event_is_refused_with_its_line_and_nothing_is_written(
    trip: Vigente, event: dict[str, Any], message: str
) -> None:
    rt = trip.runtime
    rt.import_events(lines([
        {"event": "conversation", "id": "elsewhere", "account": "other", "at": T0},
        {"event": "participant", "conversation": "elsewhere", "id": "p", "model": "m"},
        {"event": "branch", "conversation": "elsewhere", "id": "b"},
        {"event": "run", "conversation": "elsewhere", "id": "x", "branch": "b",
         "participant": "p", "mode": "chat"},
        {"event": "tool_call", "conversation": "elsewhere", "id": "x1", "run": "x", "name": "n",
         "arguments": {}},
    ]))
    before = rt.graph(C).as_dict()["records"]
    good = {"event": "message", "conversation": C, "id": "fine", "branch": "main",
            "role": "user", "content": "kept?", "at": "2026-10-05T08:15:00Z"}
    # a bad line is ImportFileError; a line dated before what the conversation holds is a
    # conflict with another writer (HTTP 409), with its line named the same way
    with pytest.raises((ImportFileError, RuntimeHistoryConflict), match=f"line 2: .*{message}"):
        rt.import_events(lines([good, dict(event, conversation=C)]))
    assert rt.graph(C).as_dict()["records"] == before


def test_refused_file_with_a_new_conversation_leaves_nothing(vg: Vigente) -> None:
    with pytest.raises(ImportFileError, match="line 2"):
        vg.runtime.import_events(lines([
            {"event": "conversation", "id": "bad-1", "account": "x"},
            {"event": "tool_result", "conversation": "bad-1", "call": "ghost",
             "status": "succeeded", "content": "x"},
        ]))
    assert vg.runtime.conversations() == []


def test_large_binary_and_invalid_utf8_results_are_kept_exactly(trip: Vigente) -> None:
    rt = trip.runtime
    at = "2026-10-05T09:00:00Z"
    big = b"A" * (50 * 1024 * 1024)
    binary = bytes(range(256)) * 4
    for call, content in (("big", big), ("bin", binary), ("sur", "bad \udc80 text")):
        rt.record_tool_call(C, call, run="r1", name="dump", arguments={}, at=at)
        rt.record_tool_result(C, call, status="succeeded", content=content, at=at)
    (a,) = rt.artifacts("big")
    assert a.result_ref.in_blob and a.result_ref.bytes == len(big)
    assert rt.artifact_content(a) == big
    (b,) = rt.artifacts("bin")
    assert b.result_ref.encoding == "binary" and rt.artifact_content(b) == binary
    (s,) = rt.artifacts("sur")
    assert s.result_ref.encoding == "binary"
    assert rt.artifact_content(s) == "bad \udc80 text".encode("utf-8", "surrogatepass")
    memory = next(c.node for c in rt.candidates(C, "main", "agent").records
                  if c.node.id == "bin#memory")
    assert memory.facts == {} and "binary" in memory.summary


def test_deferred_call_gets_its_outcome_later(trip: Vigente) -> None:
    rt = trip.runtime
    rt.record_tool_call(C, "slow", run="r1", name="book", arguments={"train": "FR-9512"},
                        at="2026-10-05T09:00:00Z")
    rt.record_tool_result(C, "slow", status="deferred", content="queued", retry_critical=True,
                          at="2026-10-05T09:00:00Z")
    assert rt.candidates(C, "main", "agent", known_at="2026-10-05T09:00:00Z")
    rt.record_tool_result(C, "slow", status="succeeded", content={"pnr": "X1"},
                          at="2026-10-05T09:05:00Z")
    assert [a.id for a in rt.artifacts("slow", conversation=C)] == ["slow", "slow@2"]
    status = {c.node.id: c.status for c in rt.candidates(C, "main", "agent").records}
    assert status["slow"] == "succeeded"
    past = {c.node.id: c.status for c in rt.candidates(
        C, "main", "agent", known_at="2026-10-05T09:01:00Z").records}
    assert past["slow"] == "deferred"


def test_purge_account_removes_every_record_and_blob(vg: Vigente, tmp_path: Path) -> None:
    rt = vg.runtime
    rt.import_events(lines(session()))
    rt.open_conversation("keep", "acct-other", at="2026-10-05T08:00:00Z")
    rt.fork_branch("keep", "main", at="2026-10-05T08:00:00Z")
    rt.record_message("keep", "k1", branch="main", role="user", content="stay",
                      at="2026-10-05T08:00:00Z")
    rt.record_tool_call(C, "blob", run="r1", name="dump", arguments={},
                        at="2026-10-05T09:00:00Z")
    rt.record_tool_result(C, "blob", status="succeeded", content="Z" * 200_000,
                          at="2026-10-05T09:00:00Z")
    dry = rt.purge_account("acct-demo", dry_run=True)
    assert dry.conversations == (C,) and dry.rows > 10
    assert rt.conversations(account="acct-demo")
    report = rt.purge_account("acct-demo")
    assert report.conversations == (C,) and report.blobs == 1
    assert rt.conversations(account="acct-demo") == []
    assert vg.store.runtime_records(C) == [] and vg.store.runtime_blob_digests() == []
    assert [m.id for m in rt.transcript("keep", "main")] == ["k1"]
    with pytest.raises(InvalidInput, match="unknown artifact"):
        rt.artifacts("t1")


def aged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session as it happened a year earlier: old enough for every retention class (gc
    takes no clock ahead of the store's, so time passes by dating the records back)."""
    return [dict(e, at=e["at"].replace("2026-", "2025-")) if "at" in e else e for e in events]


def test_gc_erases_old_raw_bytes_but_keeps_the_tombstone(vg: Vigente) -> None:
    rt = vg.runtime
    rt.import_events(lines(aged(session())))
    rt.record_checkpoint(C, "cp1", run="r1", state={"step": 1}, at="2025-10-05T09:00:00Z")
    rt.record_checkpoint(C, "cp2", run="r1", state={"step": 2}, at="2025-10-05T09:01:00Z")
    with pytest.raises(FutureKnowledgeError):  # no clock ahead of the store's
        rt.gc(now="2027-06-01T00:00:00Z", dry_run=True)
    dry = rt.gc(dry_run=True)
    assert dry.contents == 4 and dry.records == 1  # args + result of t1, t2; cp1
    assert rt.artifact_content(rt.artifacts("t1")[0])
    report = rt.gc()
    assert report.contents == 4 and report.records == 1
    (a,) = rt.artifacts("t1")  # the tombstone: hashes and sizes stay
    assert a.result_ref.bytes == 82
    with pytest.raises(InvalidInput, match="erased by retention"):
        rt.artifact_content(a)
    assert [n.id for n in rt.graph(C).of_kind("checkpoint")] == ["cp2"]
