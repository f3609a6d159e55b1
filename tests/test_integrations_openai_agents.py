"""VigenteSession with the OpenAI Agents SDK's own Runner and its scripted model
(``agents.testing.ScriptedModel``) issuing function calls: the session records every item, the
model's next run starts from the assembled context, popped and cleared items fork branches
whose results never reach it, and the assembly is explained afterwards."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("agents", reason="openai-agents is not installed (the integrations extra)")

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.memory.session import Session
from agents.testing import ScriptedModel, assistant_message, function_call

from vigente import Vigente
from vigente.integrations.openai_agents import VigenteSession

set_tracing_disabled(True)

BIG = json.dumps(
    {
        "reservation_id": "ZFA04Y",
        "flights": [{"flight": f"HAT{n:03}", "note": "x" * 400} for n in range(100)],
    }
)


@function_tool
def get_reservation(reservation_id: str) -> str:
    """Look up a reservation by its id."""
    return BIG.replace("ZFA04Y", reservation_id)


@function_tool
def get_user(user_id: str) -> str:
    """Look up a user."""
    return json.dumps({"user_id": user_id, "name": "Mia Li"})


def run(agent: Agent[Any], text: str, session: VigenteSession) -> Any:
    return asyncio.run(Runner.run(agent, text, session=session))


def seen(model: ScriptedModel) -> str:
    return json.dumps([c.input for c in model.calls])


def test_the_session_records_every_item_and_the_next_run_starts_from_the_assembly(
    sqlite_vg: Vigente,
) -> None:
    vg = sqlite_vg
    model = ScriptedModel(
        [
            [
                function_call("get_user", {"user_id": "mia_li_3668"}, call_id="c1"),
                function_call("get_reservation", {"reservation_id": "ZFA04Y"}, call_id="c2"),
            ],
            [assistant_message("Mia Li, reservation ZFA04Y.", item_id="m1")],
            [assistant_message("Still ZFA04Y.", item_id="m2")],
        ]
    )
    agent = Agent(
        name="airline",
        instructions="Airline agent.",
        model=model,
        tools=[get_user, get_reservation],
    )
    session = VigenteSession("thread-1", vg)
    assert isinstance(session, Session)  # the SDK's own protocol
    run(agent, "who am I and what is ZFA04Y?", session)
    graph = vg.runtime.graph("thread-1")
    assert sorted(n.id for n in graph.of_kind("tool_call")) == ["c1", "c2"]
    raw = {a.target_id: vg.runtime.artifact_content(a) for a in graph.of_kind("artifact")}
    assert raw["c2"] == BIG.encode()
    assert [m.content for m in vg.runtime.transcript("thread-1", "main")] == [
        "who am I and what is ZFA04Y?",
        "Mia Li, reservation ZFA04Y.",
    ]

    history = asyncio.run(session.get_items())  # what the next run will start from
    result = run(agent, "again?", session)
    assert result.final_output == "Still ZFA04Y."
    given = model.calls[-1].input  # the second run's only model call
    assert given[:-1] == history and given[-1]["content"] == "again?"
    outputs = {i["call_id"]: i["output"] for i in given if i.get("type") == "function_call_output"}
    assert json.loads(outputs["c1"])["name"] == "Mia Li"  # small: as it was
    assert len(outputs["c2"]) < len(BIG) // 2  # large: its memory
    record = vg.assembly.explain(session.last_assembly_id)  # type: ignore[arg-type]
    assert {d["ref"] for d in record["included"]} >= {"c1", "c2#memory", "m1"}
    assert vg.assembly.why_not(session.last_assembly_id, "c2")[  # type: ignore[arg-type]
        "reason"
    ] in ("compacted", None)
    assert vg.assembly.rebuild(session.last_assembly_id)["matches"]  # type: ignore[arg-type]


def test_pop_and_clear_fork_branches_and_other_participants_stay_private(
    sqlite_vg: Vigente,
) -> None:
    vg = sqlite_vg
    model = ScriptedModel(
        [
            [function_call("get_user", {"user_id": "mia_li_3668"}, call_id="c1")],
            [assistant_message("You are Mia Li.", item_id="m1")],
            [assistant_message("Hello again.", item_id="m2")],
            [assistant_message("Hello, Mia.", item_id="m3")],
            [assistant_message("Fresh start.", item_id="m4")],
        ]
    )
    agent = Agent(name="airline", instructions="Airline agent.", model=model, tools=[get_user])
    session = VigenteSession("s", vg)
    run(agent, "who am I?", session)
    # another participant of the same conversation keeps its tool output to itself
    other = VigenteSession("s", vg, participant="auditor")
    asyncio.run(
        other.add_items(
            [
                {"type": "function_call", "call_id": "x1", "name": "get_user", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "x1", "output": "AUDITOR-ONLY 9917"},
            ]
        )
    )
    run(agent, "hi", session)
    assert "AUDITOR-ONLY" not in seen(model)
    assert (
        vg.assembly.why_not(session.last_assembly_id, "x1")[  # type: ignore[arg-type]
            "reason"
        ]
        == "participant_private"
    )

    popped = asyncio.run(session.pop_item())
    assert popped == {"type": "message", "role": "assistant", "content": "Hello again."}
    assert session.branch != "main"
    assert vg.runtime.transcript("s", "main")[-1].content == "Hello again."  # kept there
    run(agent, "hello?", session)
    given = json.dumps(model.calls[-1].input)
    assert "mia_li_3668" in given and "You are Mia Li." in given  # inherited
    assert "Hello again." not in given

    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    run(agent, "start over", session)
    assert model.calls[-1].input == [{"content": "start over", "role": "user"}]
    assert (
        vg.assembly.why_not(session.last_assembly_id, "c1")[  # type: ignore[arg-type]
            "reason"
        ]
        == "other_branch"
    )
    assert asyncio.run(VigenteSession("empty", vg).pop_item()) is None


def test_a_message_items_name_is_who_said_it(vg: Vigente) -> None:
    """Issue 42: an input item's ``name`` is recorded as the message's speaker; the Responses
    format has no such field, so the next run reads it as a ``[Ana]:`` prefix."""
    model = ScriptedModel([[assistant_message("Noted.", item_id="m1")],
                           [assistant_message("Still noted.", item_id="m2")]])
    agent = Agent(name="planner", instructions="Plan trips.", model=model)
    session = VigenteSession("group", vg)
    asyncio.run(Runner.run(agent, [
        {"type": "message", "role": "user", "content": "I booked the ferry.", "name": "Ana"},
        {"type": "message", "role": "user", "content": "Night train for me.", "name": "Bruno"},
    ], session=session))
    assert [(m.role, m.speaker) for m in vg.runtime.transcript("group", "main")] == [
        ("user", "Ana"), ("user", "Bruno"), ("assistant", None)]
    history = asyncio.run(session.get_items())
    assert [i["content"] for i in history[:2]] == ["[Ana]: I booked the ferry.",
                                                   "[Bruno]: Night train for me."]
