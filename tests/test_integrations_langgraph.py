"""VigenteContext in a hand-built LangGraph graph (assemble → model → record → tools) with a
checkpointer and a scripted chat model that issues tool calls: the conversation is the
``thread_id``, the model gets the assembled request, and checkpoint forks are branch forks
whose sibling results never reach the model."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph", reason="langgraph is not installed (the integrations extra)")

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from vigente import Vigente
from vigente.integrations.langgraph import VigenteContext, VigenteState
from vigente.integrations.testing import ScriptedChatModel


@tool
def search_flights(origin: str, destination: str) -> str:
    """Search direct flights."""
    return f'[{{"flight": "HAT{len(origin) * 7}{destination}", "from": "{origin}"}}]'


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def build(ctx: VigenteContext, model: ScriptedChatModel) -> Any:
    def call_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(state["llm_input_messages"])]}

    g = StateGraph(VigenteState)
    g.add_node("assemble", ctx.pre_model_hook)
    g.add_node("model", call_model)
    g.add_node("record", ctx.post_model_hook)
    g.add_node("tools", ToolNode([search_flights], wrap_tool_call=ctx.wrap_tool_call))
    g.add_edge(START, "assemble")
    g.add_edge("assemble", "model")
    g.add_edge("model", "record")
    g.add_conditional_edges("record", tools_condition)
    g.add_edge("tools", "assemble")
    return g.compile(checkpointer=InMemorySaver())


def text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def test_the_thread_is_the_conversation_and_the_model_gets_the_assembly(
    sqlite_vg: Vigente,
) -> None:
    vg = sqlite_vg
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage(
                    "", tool_calls=[call("search_flights", "c1", origin="JFK", destination="SFO")]
                ),
                AIMessage("HAT21SFO leaves at 9."),
            ]
        )
    )
    graph = build(VigenteContext(vg, prefix="lg-"), model)
    out = graph.invoke(
        {"messages": [HumanMessage("JFK to SFO?")]}, {"configurable": {"thread_id": "t1"}}
    )
    assert vg.runtime.conversation("lg-t1").account == "default"
    (artifact,) = vg.runtime.graph("lg-t1").of_kind("artifact")
    assert (
        vg.runtime.artifact_content(artifact)
        == search_flights.invoke({"origin": "JFK", "destination": "SFO"}).encode()
    )
    # the model got what the assembler built for that request, recorded and rebuildable
    first, second = model.received
    assert text(first) == "JFK to SFO?"
    assert [type(m) for m in second] == [HumanMessage, AIMessage, ToolMessage]
    assembly_id = out["vigente_assembly_id"]
    record = vg.assembly.explain(assembly_id)
    assert [d["ref"] for d in record["included"] if d["kind"] == "artifact"] == ["c1"]
    assert record["counts"]["assembled_messages"] == len(second)
    assert vg.assembly.rebuild(assembly_id)["matches"]
    # the post-model hook marked the answer with the assembly that produced it
    assert out["messages"][-1].response_metadata["vigente_assembly_id"] == assembly_id
    assert [m.content for m in vg.runtime.transcript("lg-t1", "main")] == [
        "JFK to SFO?",
        "HAT21SFO leaves at 9.",
    ]


def test_checkpoint_forks_are_branch_forks_and_siblings_stay_apart(sqlite_vg: Vigente) -> None:
    vg = sqlite_vg
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage(
                    "", tool_calls=[call("search_flights", "c1", origin="JFK", destination="SFO")]
                ),
                AIMessage("HAT21SFO."),
                AIMessage(
                    "", tool_calls=[call("search_flights", "c2", origin="JFK", destination="LAX")]
                ),
                AIMessage("HAT21LAX."),
                AIMessage("Only HAT21SFO, as before."),
            ]
        )
    )
    ctx = VigenteContext(vg)
    graph = build(ctx, model)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("JFK to SFO?")]}, config)
    # the checkpoint after the first tool ran, before the second model call
    after_tool = next(
        s
        for s in graph.get_state_history(config)
        if s.next == ("assemble",) and len(s.values["messages"]) == 3
    )
    fork1 = graph.update_state(after_tool.config, {"messages": [HumanMessage("and LAX?")]})
    out1 = graph.invoke(None, fork1)
    fork2 = graph.update_state(after_tool.config, {"messages": [HumanMessage("anything else?")]})
    out2 = graph.invoke(None, fork2)

    branches = ctx.threads.recorder("t").branches()
    b1, b2 = out1["vigente_branch"], out2["vigente_branch"]
    assert len({"main", b1, b2}) == 3
    assert branches[b1] == "main" and branches[b2] == "main"  # both fork the original
    # each fork inherits the first exchange and holds its own; a sibling's never reaches it
    last = model.received[-1]
    assert "HAT21SFO" in text(last) and "and LAX?" not in text(last)
    assert "LAX" not in text(last) and "HAT21SFO." not in text(last)  # nor main's answer
    why = vg.assembly.why_not(out2["vigente_assembly_id"], f"{b1}/c2")
    assert why["reason"] == "other_branch"
    # the first exchange had no text to fork after: each fork holds its own copy of it; the
    # model gets it under a short wire id that the record maps to that copy
    kept = vg.assembly.why_not(out2["vigente_assembly_id"], f"{b2}/c1")
    assert kept["reason"] is None and kept["included_as"] == "tool_exchange"
    (wire,) = [m.tool_call_id for m in last if isinstance(m, ToolMessage)]
    assert vg.assembly.explain(out2["vigente_assembly_id"])["call_ids"] == {wire: f"{b2}/c1"}
    assert [m.content for m in vg.runtime.transcript("t", b1)] == [
        "JFK to SFO?",
        "and LAX?",
        "HAT21LAX.",
    ]
    assert [m.content for m in vg.runtime.transcript("t", "main")] == ["JFK to SFO?", "HAT21SFO."]


def test_a_fork_from_the_first_checkpoint_keeps_its_parent(sqlite_vg: Vigente) -> None:
    """Forked before any message, the branch was a new root: it lost its parent branch."""
    vg = sqlite_vg
    model = ScriptedChatModel(messages=iter([AIMessage("Paris."), AIMessage("Rome.")]))
    ctx = VigenteContext(vg)
    graph = build(ctx, model)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("Capital of France?")]}, config)
    first = list(graph.get_state_history(config))[-1]  # the thread's first checkpoint
    assert not first.values.get("messages")
    fork = graph.update_state(first.config, {"messages": [HumanMessage("Capital of Italy?")]})
    out = graph.invoke(None, fork)
    branch = out["vigente_branch"]
    assert branch != "main"
    assert ctx.threads.recorder("t").branches()[branch] == "main"  # its parent is kept
    node = next(b for b in vg.runtime.graph("t").of_kind("branch") if b.id == branch)
    assert node.parent == "main"
    # forked at main's start: it inherits none of main's records
    assert [m.content for m in vg.runtime.transcript("t", branch)] == ["Capital of Italy?",
                                                                        "Rome."]
    assert "Capital of France?" not in text(model.received[-1])


def test_a_messages_name_is_who_said_it(vg: Vigente) -> None:
    """Issue 42: in a LangGraph graph too, a message's ``name`` is its speaker, and the model
    gets it in the ``name`` field of the assembled request."""
    model = ScriptedChatModel(messages=iter([AIMessage("Noted, both of you.")]))
    graph = build(VigenteContext(vg, prefix="lg-"), model)
    graph.invoke({"messages": [HumanMessage("Ferry for me.", name="Ana María"),
                               HumanMessage("Train for me.", name="Bruno")]},
                 {"configurable": {"thread_id": "group"}})
    assert [(m.role, m.speaker) for m in vg.runtime.transcript("lg-group", "main")] == [
        ("user", "Ana María"), ("user", "Bruno"), ("assistant", None)]
    (received,) = model.received
    assert [m.name for m in received] == ["Ana_Maria", "Bruno"]
