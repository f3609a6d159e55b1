"""Drop-in integrations with the agent frameworks people already run (the ``integrations``
extra): each framework's own extension point records the agent's turns into ``vg.runtime`` and
gives its model the context ``vg.assembly`` builds.

* :mod:`vigente.integrations.langchain` — ``VigenteMiddleware`` for LangChain v1 agents
  (``create_agent(..., middleware=[VigenteMiddleware(vg)])``).
* :mod:`vigente.integrations.langgraph` — ``VigenteContext`` for a hand-built LangGraph graph:
  a ``pre_model_hook`` node keyed by ``thread_id``, checkpoint forks as branch forks.
* :mod:`vigente.integrations.openai_agents` — ``VigenteSession``, a ``Session`` of the OpenAI
  Agents SDK whose ``get_items`` is the assembled context as Responses input items.
* :mod:`vigente.integrations.retriever` — ``VigenteRetriever``, a LangChain retriever over
  ``vg.search`` (reference date, superseded versions with their successor, citations).

The frameworks are optional: import the module of the one you use. What they share is the
:class:`~vigente.integrations.recorder.Recorder`, which keeps a framework's message list and a
branch of the runtime graph in step (a list that leaves the branch becomes a forked branch).
"""

from __future__ import annotations

from vigente.integrations.recorder import Call, Item, Recorder, Result, Said, Turn

__all__ = ["Call", "Item", "Recorder", "Result", "Said", "Turn"]
