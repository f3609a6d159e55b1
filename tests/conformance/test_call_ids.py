"""Short tool-call ids on the wire (policy ``serialization.call_ids``), on every backend: a
framework's long ids go as ``c<seq>``, paired in every format, the same from one request to the
next, recorded in the assembly and given back by ``explain``; an application's own short ids
go as they are; ``"original"`` sends the recorded ids."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from vigente import Vigente
from vigente.assemble import policy_from_document
from vigente.runtime.openai import event_lines, transcript_events

LONG = ["call_7MqMjJMaXLRTpdPdzCjzjfpE", "call_Ab7YHfneXdQk4tCXNRPh0C8u", "toolu_01A09q90qw9"]


def _transcript(ids: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Look up my reservations, please."},
    ]
    for n, call in enumerate(ids):
        rid = f"RES{n:03}"
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {
                            "name": "get_reservation_details",
                            "arguments": json.dumps({"reservation_id": rid}),
                        },
                    }
                ],
            }
        )
        out.append(
            {
                "role": "tool",
                "tool_call_id": call,
                "content": json.dumps({"reservation_id": rid, "cabin": "economy", "n": n}),
            }
        )
    return out


def _events(transcript: list[dict[str, Any]]) -> list[str]:
    return event_lines(transcript_events(transcript, "ids", "acct"))


def _import(vg: Vigente, transcript: list[dict[str, Any]]) -> None:
    vg.runtime.import_events(_events(transcript))


def _calls_and_results(fmt: str, messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    if fmt == "openai-chat":
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    elif fmt == "openai-responses":
        calls = [m["call_id"] for m in messages if m.get("type") == "function_call"]
        results = [m["call_id"] for m in messages if m.get("type") == "function_call_output"]
    elif fmt == "anthropic":
        parts = [p for m in messages for p in m["content"] if isinstance(p, dict)]
        calls = [p["id"] for p in parts if p.get("type") == "tool_use"]
        results = [p["tool_use_id"] for p in parts if p.get("type") == "tool_result"]
    else:
        calls = [c["id"] for m in messages for c in m["data"].get("tool_calls") or []]
        results = [m["data"]["tool_call_id"] for m in messages if m["type"] == "tool"]
    return calls, results


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "langchain"])
def test_long_ids_go_short_and_paired_in_every_format(vg: Vigente, fmt: str) -> None:
    _import(vg, _transcript(LONG))
    a = vg.assembly.assemble("ids", "main", "assistant", format=fmt)
    calls, results = _calls_and_results(fmt, a.messages)
    assert len(calls) == 3 and calls == results  # every call answered, in order
    assert all(re.fullmatch(r"c[0-9]+", c) for c in calls)
    assert len(set(calls)) == 3
    text = json.dumps(a.messages)
    assert not any(long in text for long in LONG)  # no framework id is sent
    # the record says which call each wire id stands for, and keeps saying it once stored
    assert a.record["call_ids"] == dict(zip(calls, LONG, strict=True))
    assert vg.assembly.explain(a.id)["call_ids"] == a.record["call_ids"]
    # why-not takes the id the model saw and answers for its call
    why = vg.assembly.why_not(a.id, calls[0])
    assert why["ref"] == LONG[0] and why["candidate"] and why["kind"] == "artifact"
    assert a.record["tokens"]["assembled"] < a.record["tokens"]["replay"]


def test_a_call_keeps_its_wire_id_from_one_request_to_the_next(vg: Vigente) -> None:
    transcript = _transcript(LONG)
    head = _events(transcript[:4])  # system, user, the first call and its result
    vg.runtime.import_events(head)
    first = vg.assembly.assemble("ids", "main", "assistant", persist=False)
    rest = _events(transcript)
    vg.runtime.import_events(rest[len(head) :])
    later = vg.assembly.assemble("ids", "main", "assistant", persist=False)
    assert later.messages[: len(first.messages)] == first.messages  # the prefix is unchanged
    assert set(first.record["call_ids"].items()) <= set(later.record["call_ids"].items())


def test_an_applications_short_ids_go_as_they_are(vg: Vigente) -> None:
    # "c3" is an id the application chose; if a long id's generated wire id is the same, the
    # generated one gives way
    _import(vg, _transcript(["c3", "open2", *LONG]))
    a = vg.assembly.assemble("ids", "main", "assistant", persist=False)
    calls, results = _calls_and_results("openai-chat", a.messages)
    assert calls[:2] == ["c3", "open2"] and calls == results
    assert len(set(calls)) == 5
    assert sorted(a.record["call_ids"].values()) == sorted(LONG)


def test_original_ids_on_request(vg: Vigente) -> None:
    _import(vg, _transcript(LONG))
    original = policy_from_document(
        {"id": "original-ids", "version": 1, "serialization": {"call_ids": "original"}}
    )
    chat = vg.assembly.assemble("ids", "main", "assistant", policy=original, persist=False)
    calls, results = _calls_and_results("openai-chat", chat.messages)
    assert calls == results == LONG and chat.record["call_ids"] == {}
    short = vg.assembly.assemble("ids", "main", "assistant", persist=False)
    assert short.record["tokens"]["assembled"] < chat.record["tokens"]["assembled"]


def test_a_policy_with_an_unknown_call_id_style_is_refused() -> None:
    from vigente.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"serialization.call_ids must be one of"):
        policy_from_document({"id": "p", "version": 1, "serialization": {"call_ids": "tiny"}})
