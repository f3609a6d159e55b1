"""The OpenAI Agents SDK's ``Runner`` with a vigente session.

``Runner.run(agent, input, session=VigenteSession(...))`` is unchanged: the session records the
run's items and hands the next run vigente's assembled context as Responses input items. Runs
offline with the SDK's own scripted model: ``python examples/openai_agents_session.py [DB]``.
"""

from __future__ import annotations

import asyncio
import json
import sys

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from vigente import Vigente
from vigente.integrations.openai_agents import VigenteSession


@function_tool
def get_user_details(user_id: str) -> str:
    """Look up a user's profile."""
    return json.dumps(
        {
            "user_id": user_id,
            "name": "Mia Li",
            "membership": "gold",
            "payment_methods": [{"id": f"card_{n}", "last4": f"{n:04}"} for n in range(40)],
        }
    )


async def main(db: str = ":memory:") -> None:
    set_tracing_disabled(True)  # offline: nothing to export traces to
    model = ScriptedModel(
        [
            [function_call("get_user_details", {"user_id": "mia_li_3668"}, call_id="call_1")],
            [assistant_message("You are Mia Li, a gold member.", item_id="msg_1")],
            [assistant_message("Your card on file ends in 0000.", item_id="msg_2")],
        ]
    )
    agent = Agent(
        name="airline",
        instructions="You are an airline agent.",
        model=model,
        tools=[get_user_details],
    )
    with Vigente.open(db) as vg:
        session = VigenteSession("customer-42", vg, participant="airline-agent")
        for question in ("Who am I? mia_li_3668", "Which card do I have?"):
            result = await Runner.run(agent, question, session=session)
            print("answer:", result.final_output)
            record = vg.assembly.explain(session.last_assembly_id or "")
            print(
                f"  run started from assembly {session.last_assembly_id}: "
                f"{record['tokens']['assembled']} tokens (replay: {record['tokens']['replay']})"
            )
            for d in record["included"]:
                print(f"  included {d['kind']} {d['ref']} as {d['as']}")
        print("model inputs:", [len(c.input) for c in model.calls], "items per call")
        popped = await session.pop_item()
        print("popped:", popped, "-> the session goes on on branch", session.branch)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:2]))
