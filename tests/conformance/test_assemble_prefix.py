"""A request that only grows between user turns (a provider's prompt cache keeps serving it),
memories in their result's place, later readings superseding earlier ones at the next turn,
and a model turn's parallel calls as one assistant message — on every backend."""

from __future__ import annotations

import json
from typing import Any

from vigente import Vigente
from vigente.runtime.openai import event_lines, transcript_events

C = "rebook-7"
T0 = "2026-10-05T08:00:00+00:00"


def reservation(rid: str, cabin: str) -> dict[str, Any]:
    return {
        "reservation_id": rid,
        "user_id": "mia_li_3668",
        "cabin": cabin,
        "flights": [
            {"flight_number": "HAT136", "date": "2024-05-20", "origin": "JFK", "price": 152},
            {"flight_number": "HAT039", "date": "2024-05-20", "origin": "ATL", "price": 103},
        ],
        "payment_history": [{"payment_id": "certificate_7504069", "amount": 250}],
    }


class Session:
    """Events applied one by one, with the request assembled after each."""

    def __init__(self, vg: Vigente) -> None:
        self.vg = vg
        self.apply(
            dict(event="conversation", id=C, account="acct", at=T0),
            dict(event="participant", id="agent", model="gpt-4o"),
            dict(event="branch", id="main"),
            dict(event="message", id="m0", branch="main", role="system", content="Rebook."),
        )

    def apply(self, *events: dict[str, Any]) -> None:
        self.vg.runtime.import_events(
            [
                json.dumps(e if e["event"] == "conversation" else dict(e, conversation=C))
                for e in events
            ]
        )

    def call(self, run: str, call: str, name: str, args: dict[str, Any], result: Any) -> None:
        self.apply(
            dict(event="run", id=run, branch="main", participant="agent", mode="chat"),
            dict(event="tool_call", id=call, run=run, name=name, arguments=args),
            dict(event="tool_result", call=call, status="succeeded", content=result),
        )

    def user(self, mid: str, text: str, branch: str = "main") -> None:
        self.apply(dict(event="message", id=mid, branch=branch, role="user", content=text))

    def request(self, branch: str = "main", fmt: str = "openai-chat", policy: Any = None) -> Any:
        return self.vg.assembly.assemble(
            C, branch, "agent", format=fmt, policy=policy, persist=False
        )


def _decision(a: Any, ref: str) -> dict[str, Any]:
    return next(d for d in a.record["included"] + a.record["omitted"] if d["ref"] == ref)


def test_within_a_turn_each_request_extends_the_previous_one(vg: Vigente) -> None:
    s = Session(vg)
    s.user("m1", "Move reservation ZFA04Y to business, please.")
    requests = [s.request().messages]
    s.call(
        "r1",
        "t1",
        "get_reservation_details",
        {"reservation_id": "ZFA04Y"},
        reservation("ZFA04Y", "economy"),
    )
    requests.append(s.request().messages)
    s.call(
        "r2",
        "t2",
        "search_direct_flight",
        {"origin": "JFK", "destination": "SEA"},
        [
            {
                "flight_number": f"HAT{n:03}",
                "origin": "JFK",
                "destination": "SEA",
                "prices": {"economy": 100 + n, "business": 400 + n},
            }
            for n in range(4)
        ],
    )
    requests.append(s.request().messages)
    for before, after in zip(requests, requests[1:], strict=False):
        assert after[: len(before)] == before  # the cached prefix is the whole previous request
    last = s.request()
    memory = next(m for m in last.messages if m.get("tool_call_id") == "t1")
    # the result went as its lossless memory from the start, in the result's place
    assert memory["content"].startswith("[compact form]\n")
    assert "certificate_7504069" in memory["content"] and "HAT039" in memory["content"]
    # every key of the result is there, even one the call above gives (invariant 9)
    assert '"reservation_id":"ZFA04Y"' in memory["content"]
    assert _decision(last, "t1")["reason"] == "compacted"
    search = next(m for m in last.messages if m.get("tool_call_id") == "t2")
    assert '"every_row":{"destination":"SEA","origin":"JFK"}' in search["content"]
    assert "HAT003" in search["content"] and "403" in search["content"]


def test_a_result_its_memory_cannot_hold_stays_raw_for_the_turn(vg: Vigente) -> None:
    s = Session(vg)
    s.user("m1", "What does the fare rule say?")
    rule = "Fare rule F: " + "changes allowed up to 24 hours before departure; " * 8
    s.call("r1", "t1", "fare_rules", {"fare": "F"}, {"fare": "F", "text": rule})
    a = s.request()
    assert _decision(a, "t1")["as"] == "tool_exchange"
    assert rule in json.dumps(a.messages, ensure_ascii=False)
    s.user("m2", "Thanks. Now rebook me.")
    b = s.request()
    # the next user message starts a new turn: the earlier turn's result is compacted now,
    # its memory saying what it left out
    assert _decision(b, "t1")["reason"] == "compacted"
    tool = next(m for m in b.messages if m.get("tool_call_id") == "t1")
    assert "rehydrate" in tool["content"] and rule not in tool["content"]


def _upgrade_session(vg: Vigente) -> Session:
    """ZFA04Y read in one turn; a sibling branch forked after it; in the next turn the cabin is
    changed (the change's result is the reservation read again)."""
    s = Session(vg)
    s.user("m1", "What is ZFA04Y?")
    s.call(
        "r1",
        "t1",
        "get_reservation_details",
        {"reservation_id": "ZFA04Y"},
        reservation("ZFA04Y", "economy"),
    )
    s.apply(
        dict(
            event="message",
            id="m2",
            branch="main",
            role="assistant",
            run="r1",
            content="It is in economy.",
        )
    )
    s.apply(dict(event="branch", id="alt", parent="main", fork_after="m2"))
    s.user("m3", "Upgrade it.")
    s.call(
        "r2",
        "t2",
        "update_reservation_cabin",
        {"reservation_id": "ZFA04Y", "cabin": "business"},
        reservation("ZFA04Y", "business"),
    )
    return s


def test_by_default_a_later_reading_of_the_same_entity_supersedes_at_once(vg: Vigente) -> None:
    s = _upgrade_session(vg)
    a = s.request()
    # the earlier turn's reading goes as a marker in its place: the model holds one reading
    older = _decision(a, "t1#memory")
    assert older["reason"] == "superseded"
    assert older["rule"] == "supersession.same_entity:reservation_id=ZFA04Y:by:t2#memory"
    tool = next(m for m in a.messages if m.get("tool_call_id") == "t1")
    assert tool["content"].startswith("[superseded by a later reading")
    current = next(m for m in a.messages if m.get("tool_call_id") == "t2")
    assert "certificate_7504069" in current["content"]  # the change's reading, current
    alt = s.request(branch="alt")  # the sibling branch never saw the change: its reading stands
    assert _decision(alt, "t1#memory")["as"] == "memory"


def test_a_later_reading_of_the_same_entity_supersedes_at_the_next_turn(vg: Vigente) -> None:
    from vigente.assemble import policy_from_document

    next_turn_policy = policy_from_document(
        {"id": "next-turn", "version": 1, "supersession": {"newer_reading": "next_turn"}}
    )
    s = _upgrade_session(vg)
    this_turn = s.request(policy=next_turn_policy)
    # the earlier turn's reading stands while this turn goes on (the prefix stays as it was)
    assert _decision(this_turn, "t1#memory")["as"] == "memory"
    s.call(
        "r3",
        "t3",
        "get_reservation_details",
        {"reservation_id": "ZFA04Y"},
        reservation("ZFA04Y", "business"),
    )
    again = s.request(policy=next_turn_policy)
    # within one turn a newer reading supersedes at once: the request changes near its end
    assert _decision(again, "t2#memory")["rule"] == (
        "supersession.same_entity:reservation_id=ZFA04Y:by:t3#memory"
    )
    assert _decision(again, "t1#memory")["as"] == "memory"
    s.user("m4", "Done?")
    next_turn = s.request(policy=next_turn_policy)
    older = _decision(next_turn, "t1#memory")
    assert older["reason"] == "superseded"
    assert older["rule"] == "supersession.same_read:by:t3#memory"
    assert _decision(next_turn, "t1")["as"] == "reference"
    tool = next(m for m in next_turn.messages if m.get("tool_call_id") == "t1")
    assert tool["content"].startswith("[superseded by a later reading")
    assert "economy" not in tool["content"]
    current = next(m for m in next_turn.messages if m.get("tool_call_id") == "t3")
    assert '"cabin":"business"' in current["content"]
    # a sibling branch forked before the update never sees those readings: its own stands
    s.user("m5", "Keep economy.", branch="alt")
    alt = s.request(branch="alt", policy=next_turn_policy)
    assert _decision(alt, "t1#memory")["as"] == "memory"
    assert _decision(alt, "t2")["reason"] == "other_branch"


def test_a_model_turn_is_one_assistant_message_with_its_parallel_calls(vg: Vigente) -> None:
    transcript = [
        {"role": "system", "content": "Rebook."},
        {"role": "user", "content": "Both reservations, please."},
        {
            "role": "assistant",
            "content": "Looking both up.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "get_reservation_details",
                        "arguments": '{"reservation_id": "A1"}',
                    },
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {
                        "name": "get_reservation_details",
                        "arguments": '{"reservation_id":"B2" }',
                    },
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(reservation("A1", "eco"))},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(reservation("B2", "biz"))},
    ]
    vg.runtime.import_events(event_lines(transcript_events(transcript, C, "acct")))
    chat = vg.assembly.assemble(C, "main", "assistant", persist=False).messages
    turn = [m for m in chat if m["role"] == "assistant"]
    assert len(turn) == 1 and turn[0]["content"] == "Looking both up."
    # the arguments are the text the model wrote, byte for byte
    assert [c["function"]["arguments"] for c in turn[0]["tool_calls"]] == [
        '{"reservation_id": "A1"}',
        '{"reservation_id":"B2" }',
    ]
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "tool", "tool"]
    anthropic = vg.assembly.assemble(
        C, "main", "assistant", format="anthropic", persist=False
    ).messages
    assert [m["role"] for m in anthropic] == ["user", "assistant", "user"]
    kinds = [[c["type"] for c in m["content"]] for m in anthropic]
    assert kinds[1] == ["text", "tool_use", "tool_use"]
    assert kinds[2] == ["tool_result", "tool_result"]  # every tool_use answered next
    assert anthropic[1]["content"][1]["input"] == {"reservation_id": "A1"}


def test_an_audit_only_result_is_not_an_unresolved_call(vg: Vigente) -> None:
    s = Session(vg)
    s.user("m1", "Check the ledger.")
    s.apply(
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="t1", run="r1", name="ledger", arguments={}),
        dict(
            event="tool_result",
            call="t1",
            status="succeeded",
            visibility="audit",
            content={"balance": "AUDIT-ONLY-42"},
        ),
    )
    a = s.request()
    assert _decision(a, "t1")["reason"] == "audit_only"
    assert "unresolved" not in json.dumps(a.messages) and "AUDIT-ONLY-42" not in json.dumps(
        a.messages
    )


def test_rehydration_over_its_byte_budget_sends_the_memory_instead(vg: Vigente) -> None:
    from vigente.assemble import policy_from_document

    s = Session(vg)
    s.user("m1", "Show the reservation.")
    s.call(
        "r1",
        "t1",
        "get_reservation_details",
        {"reservation_id": "ZFA04Y"},
        reservation("ZFA04Y", "economy"),
    )
    tight = policy_from_document({"id": "tight", "version": 1, "rehydration": {"max_bytes": 10}})
    a = vg.assembly.assemble(C, "main", "agent", rehydrate=["t1"], policy=tight, persist=False)
    assert _decision(a, "t1")["reason"] == "compacted"
    assert _decision(a, "t1#memory")["as"] == "memory"
    tool = next(m for m in a.messages if m.get("tool_call_id") == "t1")
    assert "certificate_7504069" in tool["content"]  # its values still reach the model


def test_a_failure_the_same_call_later_got_past_is_no_longer_recovery_state(
    vg: Vigente,
) -> None:
    s = Session(vg)
    s.user("m1", "Pay.")
    s.apply(
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="p1", run="r1", name="pay", arguments={"card": "x-1"}),
        dict(event="tool_result", call="p1", status="failed", content={"error": "timeout"}),
    )
    assert _decision(s.request(), "p1")["as"] == "recovery"
    s.apply(
        dict(event="run", id="r2", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="p2", run="r2", name="pay", arguments={"card": "x-1"}),
        dict(event="tool_result", call="p2", status="succeeded", content={"paid": True}),
    )
    after = s.request()
    assert _decision(after, "p1")["reason"] == "superseded"
    assert _decision(after, "p1")["rule"] == "recovery.resolved_by_retry:p2"
    assert _decision(after, "p2")["as"] == "tool_exchange"
