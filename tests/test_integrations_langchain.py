"""VigenteMiddleware in a real LangChain v1 agent (``create_agent``) with a scripted chat model
that issues tool calls: the graph holds every call and raw result, the model receives the
assembled context, other branches' and participants' results never reach it, and each
assembly is explained afterwards."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain", reason="langchain is not installed (the integrations extra)")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from vigente import Vigente
from vigente.integrations.langchain import VigenteMiddleware
from vigente.integrations.testing import ScriptedChatModel

SYSTEM = "You are an airline agent. Use the tools."
#: A result far above the default policy's ``max_result_bytes``: never sent to a model raw.
BIG = {
    "reservation_id": "ZFA04Y",
    "flights": [{"flight": f"HAT{n:03}", "seat": f"{n}A", "note": "x" * 400} for n in range(100)],
}


@tool
def get_reservation(reservation_id: str) -> str:
    """Look up a reservation by its id."""
    return json.dumps({**BIG, "reservation_id": reservation_id})


@tool
def get_user(user_id: str) -> str:
    """Look up a user."""
    return json.dumps({"user_id": user_id, "name": "Mia Li", "membership": "gold"})


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def texts(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def agent_for(vg: Vigente, model: ScriptedChatModel, **options: Any) -> tuple[Any, Any]:
    mw = VigenteMiddleware(vg, **options)
    agent = create_agent(
        model,
        tools=[get_reservation, get_user],
        system_prompt=SYSTEM,
        middleware=[mw],
        checkpointer=InMemorySaver(),
    )
    return agent, mw


def test_every_call_and_raw_result_is_recorded_and_the_model_gets_the_assembly(
    vg: Vigente,
) -> None:
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage(
                    "",
                    tool_calls=[
                        call("get_user", "c1", user_id="mia_li_3668"),
                        call("get_reservation", "c2", reservation_id="ZFA04Y"),
                    ],
                ),
                AIMessage("Mia Li's reservation ZFA04Y is on HAT000."),
            ]
        )
    )
    agent, _ = agent_for(vg, model)
    config = {"configurable": {"thread_id": "t1"}}
    out = agent.invoke({"messages": [HumanMessage("my reservation ZFA04Y?")]}, config)

    # the graph holds both calls and their results, raw, byte for byte
    graph = vg.runtime.graph("t1")
    calls = {n.id: n for n in graph.of_kind("tool_call")}
    assert {c: n.name for c, n in calls.items()} == {"c1": "get_user", "c2": "get_reservation"}
    raw = {a.target_id: vg.runtime.artifact_content(a) for a in graph.of_kind("artifact")}
    assert raw["c2"] == get_reservation.invoke({"reservation_id": "ZFA04Y"}).encode()
    assert json.loads(raw["c1"])["name"] == "Mia Li"
    assert [m.content for m in vg.runtime.transcript("t1", "main")] == [
        "my reservation ZFA04Y?",
        "Mia Li's reservation ZFA04Y is on HAT000.",
    ]

    # what the model received on its second call is the assembly, not the state
    first, second = model.received
    assert isinstance(first[0], SystemMessage) and first[0].content == SYSTEM
    assert texts(first[1:]) == "my reservation ZFA04Y?"
    tool_messages = {m.tool_call_id: m for m in second if isinstance(m, ToolMessage)}
    assert set(tool_messages) == {"c1", "c2"}
    assert tool_messages["c1"].content == raw["c1"].decode()  # small: as it was
    state_c2 = next(
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c2"
    )
    assert state_c2.content == raw["c2"].decode()  # the state keeps the raw result …
    assert len(tool_messages["c2"].content) < len(raw["c2"]) // 2  # … the model its memory

    # the assembly is on the response and in the state, and explains itself
    answer = out["messages"][-1]
    assembly_id = out["vigente_assembly_id"]
    assert answer.response_metadata["vigente_assembly_id"] == assembly_id
    assert out["vigente_branch"] == "main"
    record = vg.assembly.explain(assembly_id)
    how = {d["ref"]: d["as"] for d in record["included"]}
    assert how["c1"] == "tool_exchange"
    c2 = vg.assembly.why_not(assembly_id, "c2")  # its memory went in its place
    assert c2["reason"] == "compacted" or c2.get("included_as") in ("memory", "reference")
    assert record["counts"]["assembled_messages"] == len(second) - 1  # the system prompt apart
    assert vg.assembly.rebuild(assembly_id)["matches"]
    earlier = vg.assembly.explain(out["messages"][1].response_metadata["vigente_assembly_id"])
    assert earlier["snapshot"] < record["snapshot"] and earlier["included"][0]["as"] == "message"


def test_results_of_a_sibling_branch_or_another_participant_never_reach_the_model(
    sqlite_vg: Vigente,
) -> None:
    vg = sqlite_vg
    rt = vg.runtime
    # the conversation so far: the agent's first turn on main
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("get_user", "c1", user_id="mia_li_3668")]),
                AIMessage("You are Mia Li."),
                AIMessage("", tool_calls=[call("get_reservation", "c3", reservation_id="ZFA04Y")]),
                AIMessage("Done."),
            ]
        )
    )
    agent, _ = agent_for(vg, model, conversation="shared")
    agent.invoke({"messages": [HumanMessage("who am I?")]}, {"configurable": {"thread_id": "a"}})
    # a sibling branch with a secret-looking result of the same agent, and another
    # participant's result on main itself
    first_message = rt.transcript("shared", "main")[0].id
    rt.fork_branch("shared", "what-if", parent="main", fork_after=first_message)
    rt.start_run("shared", "w1", branch="what-if", participant="agent")
    rt.record_tool_call("shared", "sib", run="w1", name="get_user", arguments={"user_id": "x"})
    rt.record_tool_result("shared", "sib", status="succeeded", content="SIBLING-ONLY 4421")
    rt.add_participant("shared", "auditor", model="other")
    rt.start_run("shared", "o1", branch="main", participant="auditor")
    rt.record_tool_call("shared", "oth", run="o1", name="get_user", arguments={"user_id": "y"})
    rt.record_tool_result("shared", "oth", status="succeeded", content="AUDITOR-ONLY 9917")

    out = agent.invoke(
        {"messages": [HumanMessage("and my reservation?")]}, {"configurable": {"thread_id": "a"}}
    )
    seen = "\n".join(texts(r) for r in model.received)
    assert "SIBLING-ONLY" not in seen and "AUDITOR-ONLY" not in seen
    assert "mia_li_3668" in texts(model.received[-1])  # its own earlier exchange does
    assembly_id = out["vigente_assembly_id"]
    assert vg.assembly.why_not(assembly_id, "sib")["reason"] == "other_branch"
    assert vg.assembly.why_not(assembly_id, "oth")["reason"] == "participant_private"
    assert out["vigente_branch"] == "main"


def test_a_state_forked_from_an_earlier_checkpoint_is_a_forked_branch(sqlite_vg: Vigente) -> None:
    vg = sqlite_vg
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("get_user", "c1", user_id="mia_li_3668")]),
                AIMessage("You are Mia Li."),
                AIMessage("", tool_calls=[call("get_user", "c9", user_id="noah_5")]),
                AIMessage("You are Noah."),
            ]
        )
    )
    agent, mw = agent_for(vg, model)
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("who am I? mia_li_3668")]}, config)
    start = next(
        s
        for s in agent.get_state_history(config)
        if s.next == ("model",) and len(s.values["messages"]) == 1
    )
    # time travel: the same first turn asked differently
    human = start.values["messages"][0]
    forked = agent.update_state(
        start.config, {"messages": [HumanMessage("who am I? noah_5", id=human.id)]}
    )
    out = agent.invoke(None, forked)
    branch = out["vigente_branch"]
    assert branch != "main" and out["messages"][-1].content == "You are Noah."
    # forked at main's start: nothing before it is shared, and its parent is kept (issue 21)
    assert mw.threads.recorder("t").branches()[branch] == "main"
    assert "mia_li" not in texts(model.received[-1])
    assert [m.content for m in vg.runtime.transcript("t", "main")] == [
        "who am I? mia_li_3668",
        "You are Mia Li.",
    ]  # the original branch is untouched
    assert vg.assembly.why_not(out["vigente_assembly_id"], "c1")["reason"] == "other_branch"


def test_a_tool_that_raises_is_kept_as_a_failed_artifact(sqlite_vg: Vigente) -> None:
    @tool
    def cancel(reservation_id: str) -> str:
        """Cancel a reservation."""
        raise RuntimeError(f"reservation {reservation_id} is not cancellable")

    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("cancel", "k1", reservation_id="ZFA04Y")]),
            ]
        )
    )
    mw = VigenteMiddleware(sqlite_vg, conversation="c")
    agent = create_agent(model, tools=[cancel], middleware=[mw])
    with pytest.raises(RuntimeError, match="not cancellable"):
        agent.invoke({"messages": [HumanMessage("cancel ZFA04Y")]})
    (artifact,) = sqlite_vg.runtime.graph("c").of_kind("artifact")
    assert artifact.status == "failed"
    assert b"not cancellable" in sqlite_vg.runtime.artifact_content(artifact)


def test_without_a_thread_id_or_conversation_the_error_says_what_to_give(
    sqlite_vg: Vigente,
) -> None:
    from vigente.errors import InvalidInput

    model = ScriptedChatModel(messages=iter([AIMessage("hi")]))
    agent = create_agent(model, tools=[], middleware=[VigenteMiddleware(sqlite_vg)])
    with pytest.raises(InvalidInput, match="thread_id"):
        agent.invoke({"messages": [HumanMessage("hello")]})


def test_another_middleware_editing_the_request_is_not_history(sqlite_vg: Vigente) -> None:
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("get_user", "c1", user_id="mia_li_3668")]),
                AIMessage("You are Mia Li."),
            ]
        )
    )
    clear_all = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=0, keep=0)])
    mw = VigenteMiddleware(sqlite_vg, conversation="c")
    agent = create_agent(model, tools=[get_user], middleware=[clear_all, mw])
    out = agent.invoke({"messages": [HumanMessage("who am I?")]})
    # the edit of one request is neither recorded nor a fork; the model gets vigente's request
    assert out["vigente_branch"] == "main"
    assert "[cleared]" not in texts(model.received[-1])
    assert "mia_li_3668" in texts(model.received[-1])
    (artifact,) = sqlite_vg.runtime.graph("c").of_kind("artifact")
    assert b"Mia Li" in sqlite_vg.runtime.artifact_content(artifact)


def test_the_async_agent_is_recorded_the_same_way(sqlite_vg: Vigente) -> None:
    import asyncio

    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("get_user", "c1", user_id="mia_li_3668")]),
                AIMessage("You are Mia Li."),
            ]
        )
    )
    agent, _ = agent_for(sqlite_vg, model)
    out = asyncio.run(
        agent.ainvoke(
            {"messages": [HumanMessage("who am I?")]}, {"configurable": {"thread_id": "async"}}
        )
    )
    (artifact,) = sqlite_vg.runtime.graph("async").of_kind("artifact")
    assert artifact.target_id == "c1" and artifact.status == "succeeded"
    assert [type(m) for m in model.received[-1]] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
    ]
    assert sqlite_vg.assembly.rebuild(out["vigente_assembly_id"])["matches"]


def test_the_model_gets_short_call_ids_for_a_providers_long_ones(vg: Vigente) -> None:
    long_id = "call_7MqMjJMaXLRTpdPdzCjzjfpE"
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("get_user", long_id, user_id="mia_li_3668")]),
                AIMessage("Mia Li is a gold member."),
            ]
        )
    )
    agent, _ = agent_for(vg, model)
    out = agent.invoke(
        {"messages": [HumanMessage("who am I?")]}, {"configurable": {"thread_id": "ids"}}
    )
    assert out["messages"][-1].content == "Mia Li is a gold member."
    # the state and the graph keep the provider's id; the model's request pairs call and
    # result under a short one, which the assembly record maps back
    assert {n.id for n in vg.runtime.graph("ids").of_kind("tool_call")} == {long_id}
    second = model.received[-1]
    (ai,) = [m for m in second if isinstance(m, AIMessage) and m.tool_calls]
    (result,) = [m for m in second if isinstance(m, ToolMessage)]
    assert ai.tool_calls[0]["id"] == result.tool_call_id != long_id
    record = vg.assembly.explain(out["vigente_assembly_id"])
    assert record["call_ids"] == {result.tool_call_id: long_id}


def test_a_messages_name_is_who_said_it(vg: Vigente) -> None:
    """Issue 42: a LangChain message's ``name`` is recorded as its speaker, and the model
    gets it back in the ``name`` field (as OpenAI accepts one) of the assembled request."""
    model = ScriptedChatModel(messages=iter([AIMessage("Ferry for Ana, train for Bruno.",
                                                       name="Nova")]))
    agent, _ = agent_for(vg, model)
    config = {"configurable": {"thread_id": "group"}}
    agent.invoke({"messages": [HumanMessage("I booked the ferry.", name="Ana María"),
                               HumanMessage("Night train for me.", name="Bruno")]}, config)
    assert [(m.role, m.speaker) for m in vg.runtime.transcript("group", "main")] == [
        ("user", "Ana María"), ("user", "Bruno"), ("assistant", "Nova")]
    (received,) = model.received
    assert [m.name for m in received[1:]] == ["Ana_Maria", "Bruno"]
    # the same state again is the same branch: a name read back is the same item
    model.messages = iter([AIMessage("Still noted.")])
    agent.invoke({"messages": [HumanMessage("And the return?", name="Ana María")]}, config)
    assert [b.id for b in vg.runtime.graph("group").of_kind("branch")] == ["main"]
