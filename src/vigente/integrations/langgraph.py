"""vigente in a hand-built LangGraph graph: a ``pre_model_hook`` node, keyed by ``thread_id``.

``VigenteContext(vg)`` gives the graph three pieces:

* ``pre_model_hook`` — a node to run before the model: it records into the runtime graph what
  the ``messages`` state holds that the conversation (the ``thread_id``) does not, assembles
  the next request and returns it as ``llm_input_messages`` (LangGraph's own convention for a
  pre-model hook), with ``vigente_branch`` and ``vigente_assembly_id``. The model node calls
  the model on ``state["llm_input_messages"]``.
* ``post_model_hook`` — a node to run after the model: records its turn at once (without it
  the turn is recorded at the next ``pre_model_hook``).
* ``wrap_tool_call`` — for ``ToolNode(tools, wrap_tool_call=ctx.wrap_tool_call)``: keeps each
  tool's output as its call's raw artifact as soon as the tool returns.

Checkpoint forks are branch forks: the state carries its branch (``vigente_branch``), so a run
resumed from an earlier checkpoint (``graph.invoke(…, {"configurable": {"thread_id": t,
"checkpoint_id": c}})``, or after ``graph.update_state``) holds fewer or other messages than
that branch; the hook then forks a new branch after the last record both share (at the
branch's start when they share none, as from the thread's first checkpoint: the fork keeps its
parent) and records the run there. The original branch, and whatever its later checkpoints
saw, stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NotRequired

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import MessagesState
from langgraph.types import Command

from vigente.integrations._lc import Assembled, ThreadRecorders, to_items

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from vigente.api import Vigente
    from vigente.assemble import Policy

__all__ = ["VigenteContext", "VigenteState"]


class VigenteState(MessagesState):
    """``MessagesState`` with what the hooks write: the assembled request, the branch and
    the assembly's id."""

    llm_input_messages: NotRequired[list[AnyMessage]]
    vigente_branch: NotRequired[str]
    vigente_assembly_id: NotRequired[str]


class VigenteContext:
    """The hooks of one participant (``participant``) of the graph's conversations.

    ``conversation``: a fixed conversation instead of ``prefix`` + the ``thread_id``; the
    other options are :class:`~vigente.integrations.langchain.VigenteMiddleware`'s.
    """

    def __init__(
        self,
        vg: Vigente,
        *,
        participant: str = "agent",
        model: str = "unknown",
        provider: str = "openai",
        account: str = "default",
        conversation: str | None = None,
        prefix: str = "",
        mode: str = "chat",
        budget: int | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.vg = vg
        self.threads = ThreadRecorders(
            vg,
            conversation=conversation,
            account=account,
            participant=participant,
            model=model,
            provider=provider,
            mode=mode,
            budget=budget,
            policy=policy,
            prefix=prefix,
        )
        self._last: dict[str, Assembled] = {}

    def assemble(self, state: dict[str, Any], config: RunnableConfig | None = None) -> Assembled:
        """Record the state's new messages and assemble the next request (for a model node
        that calls the model itself)."""
        prepared = self.threads.prepare(state.get("messages") or [], state, config)
        self._last[prepared.conversation] = prepared
        return prepared

    def pre_model_hook(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """A node: the assembled request as ``llm_input_messages``."""
        prepared = self.assemble(state, config)
        return {
            "llm_input_messages": prepared.messages,
            "vigente_branch": prepared.branch,
            "vigente_assembly_id": prepared.assembly.id,
        }

    def post_model_hook(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """A node: record the model's turn on the request's branch now, and mark it with the
        assembly's id (``response_metadata["vigente_assembly_id"]``)."""
        conversation = self.threads.conversation_of(config)
        rec = self.threads.recorder(conversation)
        messages = state.get("messages") or []
        branch = rec.sync(str(state.get("vigente_branch") or rec.root), to_items(messages))
        prepared = self._last.get(conversation)
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and prepared is not None and prepared.branch == branch:
            last.response_metadata["vigente_assembly_id"] = prepared.assembly.id
            return {"messages": [last], "vigente_branch": branch}
        return {"vigente_branch": branch}

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        execute: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """For ``ToolNode(wrap_tool_call=…)``: keep the tool's output as it returned it."""
        result = execute(request)
        if isinstance(result, ToolMessage):
            self.threads.record_result(result, request.state, request.runtime.config)
        return result
