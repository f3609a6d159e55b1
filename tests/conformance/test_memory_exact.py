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


# -- issue 35, item 3: a writer's summary is checked like its facts -----------------------------
def _claim_block(a: ContextAssembly, ref: str) -> str:
    (text,) = [m["content"] for m in a.messages
               if str(m.get("content") or "").startswith(f"[assertion {ref} ")]
    return str(text)


@pytest.mark.parametrize("facts", [None, {"balance": 10}])
def test_a_summary_stating_a_value_its_result_lacks_never_stands_in_its_place(
        vg: Vigente, facts: dict[str, Any] | None) -> None:
    vg.runtime.import_events(_session(("t1", "get_balance", {"user": "u"}, {"balance": 10})))
    vg.runtime.import_events([json.dumps(dict(
        event="memory", conversation=C, id="w", sources=["t1"], summary="balance is 999999",
        writer="agent-loop", at=T1, **({"facts": facts} if facts else {})))])
    w = _memory(vg, "w")
    assert w.asserted == ("summary",) and w.unsupported == (
        {"kind": "number", "value": "999999",
         "reason": "no cited result holds the number '999999'"},)
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    place = _place(a, "t1")
    assert "999999" not in place and json.loads(place.split("\n", 1)[1]) == {"balance": 10}
    assert _decision(a, "t1")["rule"] == "promotion.compacted_into:t1#memory"  # the reading
    claim = _claim_block(a, "w")
    assert claim.startswith("[assertion w by agent-loop about get_balance (t1): summary "
                            "(number 999999) not held by the tool's result; the writer's claim")
    assert sum("999999" in json.dumps(m) for m in a.messages) == 1  # only inside the claim
    # the record and explain name the rule, the writer and each value no result holds
    d = _decision(a, "w")
    assert d["as"] == "memory" and d["rule"] == "memory.writer_claim:by:agent-loop"
    assert d["unsupported"] == [{"in": "summary", "kind": "number", "value": "999999",
                                 "reason": "no cited result holds the number '999999'"}]
    assert vg.assembly.explain(a.id)["included"] == a.record["included"]
    why = vg.assembly.why_not(a.id, "w")
    assert why["rule"] == "memory.writer_claim:by:agent-loop"
    assert why["unsupported"] == d["unsupported"]
    # naming the reading in `supersedes` is refused, naming the value; nothing is written
    with pytest.raises(InvalidInput, match=r"holds number '999999' in its summary, a value its "
                                           r"sources do not hold.*cannot supersede 't1#memory'"):
        vg.runtime.record_memory(C, "w2", sources=["t1"], summary="balance 999999",
                                 supersedes=["t1#memory"])
    assert "w2" not in {n.id for n in vg.runtime.graph(C).nodes}


def test_a_summary_of_values_its_result_holds_stands_in_its_place(vg: Vigente) -> None:
    vg.runtime.import_events(_session(("t1", "get_balance", {"user": "u"},
                                       '{"user": "Mia Li", "balance": 10.50, "currency": "EUR",'
                                       ' "at": "2026-10-05T07:59:00Z", "ref": "ORD-1234"}')))
    rt = vg.runtime
    # the same values in other forms that are unambiguously the same: 10.5 for 10.50, a date
    # for its date-time, € for EUR, a possessive, the tool's own name
    m = rt.record_memory(C, "w", sources=["t1"], writer="agent-loop", at=T1,
                         summary="get_balance: Mia Li's balance is €10.5 (EUR) on 5 October "
                                 "2026 at 07:59, ref #ORD-1234.")
    assert m.asserted == () and m.unsupported == ()
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    place = _place(a, "t1")
    assert place.startswith("[memory of this result written by agent-loop; the raw result is "
                            "kept") and "€10.5" in place
    assert _decision(a, "t1#memory")["reason"] == "superseded"  # replaced, recorded


@pytest.mark.parametrize(("summary", "unsupported"), [
    ("balance is 10.001", ["10.001"]),  # never rounded
    ("balance is 10", ["10"]),  # the sign is the value: the result says -10
    ("balance is 1,000", ["1,000"]),  # reads two ways: a thousand, or one
    ("balance is $-10", ["$"]),  # no currency in the result
    ("balance is -10 for Mallory", ["Mallory"]),  # a name the result lacks
    ("balance is -10 for mallory", ["mallory"]),  # lowercase is no way around it
    ("balance is not -10", ["not"]),  # a negation is not a value the result holds
    ("balance is -10 on 2026-10-06", ["2026-10-06"]),
    ("balance of ORD-1243 is -10", ["ORD-1243"]),
    ('balance is "-10 EUR"', ["-10 EUR"]),  # a quote is a string the result holds whole
    ("balance is -10 and 7 (from t2)", ["7", "t2"]),  # a value of a result it does not cite
    ("balance is 7", ["7"]),  # held by t2 only
])
def test_every_value_a_summary_states_is_checked(vg: Vigente, summary: str,
                                                 unsupported: list[str]) -> None:
    vg.runtime.import_events(_session(("t1", "get_balance", {}, {"balance": -10}),
                                      ("t2", "get_points", {}, {"points": 7})))
    m = vg.runtime.record_memory(C, "w", sources=["t1"], summary=summary)
    assert [c["value"] for c in m.unsupported] == unsupported and m.asserted == ("summary",)


def test_a_summary_of_several_sources_holds_each_value_in_one_of_them(vg: Vigente) -> None:
    vg.runtime.import_events(_session(("t1", "get_balance", {}, {"balance": 10}),
                                      ("t2", "get_points", {}, {"points": 7}),
                                      ("t3", "get_tier", {}, {"tier": "gold"})))
    rt = vg.runtime
    both = rt.record_memory(C, "both", sources=["t1", "t2"], summary="balance 10, points 7",
                             at=T1)
    assert both.asserted == ()
    # a memory citing a memory stands for that memory's results
    deeper = rt.record_memory(C, "deeper", sources=["both"], summary="points 7 and balance 10",
                               at=T1)
    assert deeper.asserted == ()
    gold = rt.record_memory(C, "gold", sources=["t1", "t2"], summary="balance 10, tier gold",
                            at=T1)
    assert gold.asserted == ("summary",)
    assert [c["value"] for c in gold.unsupported] == ["tier", "gold"]  # held by t3, not cited
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    assert _claim_block(a, "gold").startswith(
        "[assertion gold by api about get_balance, get_points (t1, t2): summary (word tier, "
        "word gold) not held")


def test_a_claim_goes_beside_the_result_never_beside_a_bare_reference(vg: Vigente) -> None:
    """When no reading of the result stands in its place (the extractor derived none), the
    result goes as it was beside the claim; dropped for the budget, the claim goes with it."""
    from vigente.runtime.artifact_memory import DefaultExtractor

    class Nothing(DefaultExtractor):
        name = "nothing"

        def extract(self, *args: Any) -> None:  # type: ignore[override]
            return None

    vg.runtime.extractor = Nothing()
    vg.runtime.import_events(_session(("t1", "get_balance", {}, {"balance": 10})))
    vg.runtime.record_memory(C, "w", sources=["t1"], summary="balance 999999", at=T1)
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    assert _decision(a, "t1")["rule"] == "memory.claim_beside_result:w"
    assert json.loads(_place(a, "t1")) == {"balance": 10}
    assert "999999" in _claim_block(a, "w")
    for budget in (20, 40, 60, 80, 120, 200, 400):
        tight = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT,
                                     budget=budget, persist=False)
        shown = {d["ref"] for d in tight.record["included"]}
        assert "w" not in shown or "t1" in shown, budget  # never the claim alone


def test_a_credential_a_claim_states_is_named_redacted_never_shown(vg: Vigente) -> None:
    """The claim's label and the record name the values no result holds; a credential among
    them (taken out of the summary the model sees) is named ``[redacted]``, not repeated."""
    key = "sk_live_" + "a1B2c3D4e5F6g7H8i9J0"
    vg.runtime.import_events(_session(("t1", "get_balance", {}, {"balance": 10})))
    vg.runtime.record_memory(C, "w", sources=["t1"], summary=f"balance 10, use {key}", at=T1)
    a = vg.assembly.assemble(C, "main", "agent", as_of=SOON, policy=COMPACT)
    assert key not in json.dumps(a.messages) and key not in json.dumps(a.record)
    assert "[redacted]" in _claim_block(a, "w").split("\n", 1)[0]
    assert {"in": "summary", "kind": "id", "value": "[redacted]",
            "reason": "no cited result holds it"} in _decision(a, "w")["unsupported"]


def test_a_value_a_summary_puts_under_another_key_is_a_claim(vg: Vigente) -> None:
    """Each value held is not enough: a value right after a key's name must be one that key
    holds ("balance 10" over a balance of 999 and a limit of 10 is the writer's claim)."""
    vg.runtime.import_events(_session(("t1", "get_account", {}, {"balance": 999, "limit": 10})))
    rt = vg.runtime
    assert rt.record_memory(C, "ok", sources=["t1"], summary="limit 10, balance 999").asserted == ()
    moved = rt.record_memory(C, "moved", sources=["t1"], summary="balance: 10")
    assert moved.asserted == ("summary",) and moved.unsupported == (
        {"kind": "number", "value": "10",
         "reason": "the cited results hold the number '10', but not under 'balance'"},)
