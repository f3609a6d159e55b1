"""What stands in a tool result's place (invariant 9), on every backend: a writer's memory of a
value the result does not hold is its labelled assertion, never the result's stand-in; the
extractor's memory is exact or says it is not (proved by decoding it back to the result); a
later reading supersedes only the values it restates, and the record names them and the call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vigente import InvalidInput, Vigente
from vigente.assemble import ContextAssembly, policy_from_document
from vigente.runtime.artifact_memory import parse_exact

C = "acct-7"
T0 = "2026-10-05T08:00:00+00:00"
T1 = "2026-10-05T08:01:00+00:00"
SOON = "2026-10-05T08:15:00+00:00"  # its memories are fresh
COMPACT = policy_from_document(  # every past result goes compacted: its memory in its place
    {"id": "compact", "version": 1, "recency": {"tool_exchanges": 0, "keep_small_bytes": 0}}
)


def _session(*tools: tuple[str, str, dict[str, Any], Any]) -> list[str]:
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=C, account="a", at=T0),
        dict(event="participant", id="agent", model="gpt-4o"),
        dict(event="branch", id="main"),
        dict(event="message", id="u1", branch="main", role="user", content="Check my account."),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
    ]
    for call, name, args, content in tools:
        events += [
            dict(event="tool_call", id=call, run="r1", name=name, arguments=args),
            dict(event="tool_result", call=call, status="succeeded", content=content),
        ]
    return [json.dumps(e if e["event"] == "conversation" else dict(e, conversation=C))
            for e in events]


def _place(a: ContextAssembly, call: str) -> str:
    (block,) = [m for m in a.messages if m.get("tool_call_id") == call]
    content: str = block["content"]
    return content


def _decision(a: ContextAssembly, ref: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        d for d in (*a.record["included"], *a.record["omitted"]) if d["ref"] == ref)
    return found


def _memory(vg: Vigente, ref: str) -> Any:
    return next(n for n in vg.runtime.graph(C).nodes if n.KIND == "memory" and n.id == ref)


# -- item 5: a writer's claim -------------------------------------------------------------
def test_a_writers_value_the_result_does_not_hold_never_stands_in_its_place(vg: Vigente) -> None:
    vg.runtime.import_events(_session(("t1", "get_balance", {"user": "u"}, {"balance": 10})))
    vg.runtime.import_events([json.dumps(dict(
        event="memory", conversation=C, id="w", sources=["t1"], summary="balance is 999999",
        facts={"balance": 999999}, writer="agent-loop", at=T1))])
    w = _memory(vg, "w")
    assert w.asserted == ("balance", "summary") and w.writer == "agent-loop"  # who, what
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    place = _place(a, "t1")
    assert "999999" not in place and json.loads(place.split("\n", 1)[1]) == {"balance": 10}
    assert "t1#memory" not in {d["ref"] for d in a.record["omitted"]}  # not superseded
    assert _decision(a, "w")["as"] == "memory"
    claim = next(m["content"] for m in a.messages if "999999" in str(m.get("content")))
    assert claim.startswith("[assertion w by agent-loop about get_balance (t1): balance, summary "
                            "(number 999999) not held by the tool's result; the writer's claim")
    # naming the extractor's reading in `supersedes` is refused, naming the key
    with pytest.raises(InvalidInput, match=r"holds balance, number '999999' in its summary, a "
                                           r"value its sources do not hold.*"
                                           r"cannot supersede 't1#memory'"):
        vg.runtime.record_memory(C, "w2", sources=["t1"], summary="balance 999999",
                                 facts={"balance": 999999}, supersedes=["t1#memory"])
    assert "w2" not in {n.id for n in vg.runtime.graph(C).nodes}  # nothing half-written


def test_a_writers_memory_of_values_the_result_holds_is_checked_by_path(vg: Vigente) -> None:
    vg.runtime.import_events(_session(
        ("t1", "get_user", {}, {"user": {"id": "mia", "points": 12}, "tags": ["a", "b"]})))
    rt = vg.runtime
    held = rt.record_memory(C, "ok", sources=["t1"], summary="mia",
                            facts={"user": {"id": "mia"}, "tags": ["a"]})
    assert held.asserted == ()  # a sub-document at the same paths: values the result holds
    moved = rt.record_memory(C, "moved", sources=["t1"], summary="mia",
                             facts={"id": "mia", "user": {"points": 12.0}, "tags": ["b"]})
    # the same value at another path, 12.0 for 12, another position: the writer's, not held
    assert moved.asserted == ("id", "user.points", "tags[0]")


def test_a_memory_written_through_mcp_record_event_is_labelled_a_models_claim(
        vg: Vigente) -> None:
    from vigente.application.runtime import apply_events  # the MCP tool's path, with its writer

    vg.runtime.import_events(_session(("t1", "get_balance", {}, {"balance": 10})))
    apply_events(vg, [dict(event="memory", conversation=C, id="m", sources=["t1"], summary="s",
                           facts={"balance": 999999}, writer="mcp:record_event", at=T1)],
                batch=False)
    m = _memory(vg, "m")
    assert m.asserted == ("balance", "summary") and m.writer == "mcp:record_event"
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    assert "999999" not in _place(a, "t1")


# -- item 7: exact or says it is not --------------------------------------------------------
LOSSY = '{"x": 1e400, "pi": 3.14159265358979323846, "price": 10.50}'
EXACT = [
    '[{"a": {"b": 1}}, {"a.b": 2}]',
    '{"cards": {"card_7": {"id": "card_7", "last_four": "1907"}}}',
    '{"rows": [{"id": "A", "n": 1}, {"id": "B"}]}',
    '{"result": {"id": "r"}}',
    '{"flights": [{"f": "HAT1", "p": {"eco": 1}}, {"f": "HAT2", "p": {"eco": 2}}]}',
]


def test_numbers_keep_their_digits_and_an_inexact_memory_says_so(vg: Vigente) -> None:
    vg.runtime.import_events(_session(("t1", "quote", {}, LOSSY)))
    memory = _memory(vg, "t1#memory")
    assert memory.facts == {"x": "1e400", "pi": "3.14159265358979323846", "price": "10.50"}
    assert not memory.lossless and len(memory.limit_notes) == 3
    place = _place(vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT), "t1")
    assert not place.startswith("[compact form") and "3.14159265358979323846" in place
    assert "Infinity" not in place


@pytest.mark.parametrize("raw", EXACT)
def test_a_lossless_compact_form_decodes_back_to_the_result(vg: Vigente, raw: str) -> None:
    vg.runtime.import_events(_session(("t1", "read", {"id": "r"}, raw)))
    memory = _memory(vg, "t1#memory")
    assert memory.lossless and not memory.limit_notes
    place = _place(vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT), "t1")
    head, body = place.split("\n", 1)
    assert head == "[compact form]"
    from vigente.runtime.artifact_memory import expand

    assert expand(json.loads(body)) == parse_exact(raw.encode())[0] or (
        expand({"result": json.loads(body)})["result"] == parse_exact(raw.encode())[0])


# -- item 9: supersession by value -----------------------------------------------------------
RESERVATION = {
    "reservation_id": "ZFA04Y", "status": "confirmed", "user_id": "mia_li_3668",
    "payment": {"id": "credit_card_4421", "amount": 1204},
    "flights": [{"flight": f"HAT{n:03}", "date": f"2024-05-{n + 1:02}", "basis": "Y" * 30}
                for n in range(12)],
}


def test_a_short_later_reading_supersedes_only_the_values_it_restates(vg: Vigente) -> None:
    vg.runtime.import_events(_session(
        ("t1", "get_reservation", {"reservation_id": "ZFA04Y"}, RESERVATION),
        ("t2", "cancel_reservation", {"reservation_id": "ZFA04Y"},
         {"reservation_id": "ZFA04Y", "status": "cancelled"})))
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON)
    earlier = _place(a, "t1")
    assert "credit_card_4421" in earlier and "HAT011" in earlier and "mia_li_3668" in earlier
    assert "confirmed" not in earlier  # restated by t2: the later value goes, the earlier not
    assert earlier.startswith("[earlier reading, observed 2026-10-05T08:00:00Z; "
                              "reservation_id, status restated by t2 (left out here)")
    assert "cancelled" in _place(a, "t2")
    d = _decision(a, "t1#memory")
    assert d["as"] == "memory"
    assert d["superseded_values"] == [{"by": "t2", "paths": ["reservation_id", "status"]}]
    assert d["rule"] == "supersession.same_entity:reservation_id=ZFA04Y.restated_in_part:by:t2"


def test_a_reading_restated_whole_is_superseded_with_its_values_named(vg: Vigente) -> None:
    args = {"reservation_id": "ZFA04Y"}
    again = {**RESERVATION, "status": "cancelled"}
    vg.runtime.import_events(_session(("t1", "get_reservation", args, RESERVATION),
                                      ("t2", "get_reservation", args, again)))
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON)
    d = _decision(a, "t1#memory")
    assert d["reason"] == "superseded" and d["rule"] == "supersession.same_read:by:t2#memory"
    assert d["superseded_values"] == [  # every path: the stored facts' key order
        {"by": "t2", "paths": ["flights", "payment.amount", "payment.id", "reservation_id",
                               "status", "user_id"]}]
    assert "confirmed" not in json.dumps(a.messages)
