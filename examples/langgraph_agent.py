"""A hand-built LangGraph graph with vigente's pre-model hook, and a checkpoint fork.

The graph: assemble (vigente) → model → record (vigente) → tools → assemble … The thread id is
the conversation; resuming from an earlier checkpoint with another question forks a branch, and
the first branch's later tool results never reach the fork's model. Runs offline with a scripted
chat model: ``python examples/langgraph_agent.py [DB]``.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from vigente import Vigente
from vigente.integrations.langgraph import VigenteContext, VigenteState
from vigente.integrations.testing import ScriptedChatModel


@tool
def search_flights(origin: str, destination: str) -> str:
    """Search direct flights between two airports."""
    return f'[{{"flight": "HAT{len(origin + destination) * 11}", "{origin}": "{destination}"}}]'


def call(call_id: str, origin: str, destination: str) -> dict[str, Any]:
    return {
        "name": "search_flights",
        "args": {"origin": origin, "destination": destination},
        "id": call_id,
        "type": "tool_call",
    }


def main(db: str = ":memory:") -> None:
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[call("c1", "JFK", "SFO")]),
                AIMessage("HAT66 flies JFK to SFO."),
                AIMessage("", tool_calls=[call("c2", "JFK", "SEA")]),
                AIMessage("HAT66 flies JFK to SEA."),
            ]
        )
    )
    with Vigente.open(db) as vg:
        ctx = VigenteContext(vg, participant="planner")

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
        graph = g.compile(checkpointer=InMemorySaver())

        config = {"configurable": {"thread_id": "trip-7"}}
        out = graph.invoke({"messages": [HumanMessage("Flights JFK to SFO?")]}, config)
        print("main:", out["messages"][-1].content, "on branch", out["vigente_branch"])
        # time travel: back to before the first model call, and ask something else
        start = next(
            s
            for s in graph.get_state_history(config)
            if s.next == ("assemble",) and len(s.values["messages"]) == 1
        )
        human = start.values["messages"][0]
        forked = graph.update_state(
            start.config, {"messages": [HumanMessage("Flights JFK to SEA?", id=human.id)]}
        )
        out = graph.invoke(None, forked)
        branch = out["vigente_branch"]
        print("fork:", out["messages"][-1].content, "on branch", branch)
        print("branches:", ctx.threads.recorder("trip-7").branches())
        why = vg.assembly.why_not(out["vigente_assembly_id"], "c1")
        print(f"why the fork's model never saw c1: {why['reason']} ({why['rule']})")
        print("fork transcript:", [m.content for m in vg.runtime.transcript("trip-7", branch)])


if __name__ == "__main__":
    main(*sys.argv[1:2])
