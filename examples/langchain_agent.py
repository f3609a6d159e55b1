"""A LangChain v1 agent whose model calls get vigente's assembled context.

Runs offline: a scripted chat model plays the LLM and issues the tool calls a real one would.
Run it with ``python examples/langchain_agent.py [DB]`` (default: an in-memory store).
"""

from __future__ import annotations

import json
import sys

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from vigente import Vigente
from vigente.integrations.langchain import VigenteMiddleware
from vigente.integrations.testing import ScriptedChatModel


@tool
def get_reservation(reservation_id: str) -> str:
    """Look up a reservation by its id."""
    flights = [
        {
            "flight": f"HAT{n:03}",
            "date": f"2024-05-{n % 28 + 1:02}",
            "seat": f"{n}A",
            "fare_basis": "Y" * 40,
        }
        for n in range(60)
    ]
    return json.dumps(
        {"reservation_id": reservation_id, "user_id": "mia_li_3668", "flights": flights}
    )


@tool
def cancel_reservation(reservation_id: str) -> str:
    """Cancel a reservation."""
    return json.dumps({"reservation_id": reservation_id, "status": "cancelled"})


def call(name: str, call_id: str, **args: str) -> dict[str, object]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def main(db: str = ":memory:") -> None:
    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage(
                    "", tool_calls=[call("get_reservation", "call_1", reservation_id="ZFA04Y")]
                ),
                AIMessage(
                    "", tool_calls=[call("cancel_reservation", "call_2", reservation_id="ZFA04Y")]
                ),
                AIMessage("Reservation ZFA04Y is cancelled."),
                AIMessage("Your refund goes to the original payment method."),
            ]
        )
    )
    with Vigente.open(db) as vg:
        middleware = VigenteMiddleware(vg, participant="airline-agent", model="scripted")
        agent = create_agent(
            model,
            tools=[get_reservation, cancel_reservation],
            system_prompt="You are an airline agent.",
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        config = {"configurable": {"thread_id": "customer-42"}}
        for question in ("Please cancel ZFA04Y.", "Where does the refund go?"):
            out = agent.invoke({"messages": [HumanMessage(question)]}, config)
            print("answer:", out["messages"][-1].content)
        for n, received in enumerate(model.received, start=1):
            size = sum(len(str(m.content)) for m in received)
            print(f"model call {n}: {len(received)} messages, {size} characters")
        record = vg.assembly.explain(out["vigente_assembly_id"])
        print("assembly:", out["vigente_assembly_id"], "on branch", out["vigente_branch"])
        for d in record["included"]:
            print(f"  included {d['kind']} {d['ref']} as {d['as']} ({d['rule']})")
        for d in record["omitted"]:
            print(f"  omitted {d['kind']} {d['ref']}: {d['reason']} ({d['rule']})")
        tokens = record["tokens"]
        print(f"tokens: {tokens['assembled']} assembled, {tokens['replay']} by replay")
        raw = vg.runtime.artifact_content(vg.runtime.artifacts("call_1")[-1])
        print(f"raw result of call_1 kept: {len(raw)} bytes")


if __name__ == "__main__":
    main(*sys.argv[1:2])
