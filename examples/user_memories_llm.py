"""A user-memory extractor backed by a chat model, through LangChain.

vigente ships the :class:`~vigente.runtime.UserMemoryExtractor` protocol and a rule-based
default; this example is an extractor that asks a chat model instead, and keeps only the facts
whose value the cited message states verbatim (a model may paraphrase or invent: those
proposals are dropped, never recorded).

Runs offline by default: a scripted chat model plays the LLM. To use a real one, set
``VIGENTE_EXAMPLE_MODEL`` to a LangChain model id (``openai:gpt-4o-mini``, with its provider
package installed and its API key in the environment): only then does the example call a
model, when ``main`` runs, never on import. Run it with
``python examples/user_memories_llm.py [DB]`` (default: an in-memory store).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from vigente import Vigente
from vigente.runtime import ProposedUserMemory, UserMessage

INSTRUCTIONS = """You read a user's chat messages and list the facts the user states about
themselves. Answer with JSON only: a list of {"message_id": ..., "summary": ...,
"facts": {"key": "value", ...}}. Keys are short snake_case words (name, address, lives_in,
age, email, occupation, employer, favorite_<thing>). Copy each value exactly as the user wrote
it. State nothing the messages do not say; no facts: []."""


class ChatModelUserMemoryExtractor:
    """A :class:`~vigente.runtime.UserMemoryExtractor` that asks ``model`` (any LangChain chat
    model) and keeps only values the cited message holds verbatim."""

    def __init__(self, model: BaseChatModel, name: str = "chat-model/1") -> None:
        self.model = model
        self.name = name

    def propose(self, messages: Sequence[UserMessage]) -> list[ProposedUserMemory]:
        if not messages:
            return []
        listing = "\n".join(json.dumps({"message_id": m.id, "text": m.text}) for m in messages)
        reply = self.model.invoke([SystemMessage(INSTRUCTIONS), HumanMessage(listing)])
        try:
            proposed = json.loads(str(reply.content))
        except json.JSONDecodeError:
            return []  # an answer that is not JSON proposes nothing
        texts = {m.id: m.text for m in messages}
        out = []
        for item in proposed if isinstance(proposed, list) else []:
            if not isinstance(item, dict):
                continue
            text = texts.get(str(item.get("message_id")))
            facts = item.get("facts")
            if text is None or not isinstance(facts, dict):
                continue
            # the honesty check: a value the message does not hold verbatim is not recorded
            kept: dict[str, Any] = {k: v for k, v in facts.items()
                                    if isinstance(k, str) and str(v) in text}
            if kept:
                summary = str(item.get("summary") or f"The user said {kept}.")
                out.append(ProposedUserMemory(summary, kept, (str(item["message_id"]),)))
        return out


def chat_model() -> BaseChatModel:
    """The model the user configured (``VIGENTE_EXAMPLE_MODEL``), else a scripted stand-in."""
    configured = os.environ.get("VIGENTE_EXAMPLE_MODEL")
    if configured:
        from langchain.chat_models import init_chat_model

        return init_chat_model(configured)
    from vigente.integrations.testing import ScriptedChatModel

    reply = [
        {"message_id": "u1", "summary": "The user lives in Milan.",
         "facts": {"address": "Via Roma 1, Milan", "name": "Giulia"}},
        # a paraphrase the message does not hold: dropped by the honesty check
        {"message_id": "u2", "summary": "The user is a doctor.",
         "facts": {"occupation": "doctor"}},
    ]
    return ScriptedChatModel(messages=iter([AIMessage(json.dumps(reply))]))


def main(db: str = ":memory:") -> None:
    with Vigente.open(db) as vg:
        rt = vg.runtime
        rt.open_conversation("c1", "acct-7")
        rt.add_participant("c1", "assistant", model="any")
        rt.fork_branch("c1", "main")
        rt.record_message("c1", "u1", branch="main", role="user",
                          content="Hi, I'm Giulia. Please ship to Via Roma 1, Milan.")
        rt.record_message("c1", "u2", branch="main", role="user",
                          content="I work in a hospital, night shifts mostly.")
        extractor = ChatModelUserMemoryExtractor(chat_model())
        report = rt.extract_user_memories("c1", extractor=extractor, record_as_fact=True)
        for m in report.memories:
            print(f"memory {m.id} from {', '.join(m.sources)}: {m.facts}")
        for key in ("address", "name", "occupation"):
            e = vg.evidence(f"user.{key}", valid_at=report.memories[0].known_from,
                            scope={"account": "acct-7"})
            print(f"user.{key}: {e.status.value} {list(e.values)}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
