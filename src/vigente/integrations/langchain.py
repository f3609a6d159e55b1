"""vigente as a LangChain v1 agent middleware (``langchain.agents.create_agent``).

``VigenteMiddleware(vg)`` records every model turn, tool call and tool result of the agent into
the runtime graph (a tool's output is kept as its call's raw artifact the moment the tool
returns, before any other middleware or the model truncates it) and replaces each model
request's messages with the context vigente assembles for the agent under the policy. The
assembly's id is on the response (``AIMessage.response_metadata["vigente_assembly_id"]``) and
in the agent state (``vigente_assembly_id``), so ``vg.assembly.explain(id)`` /
``why_not(id, ref)`` answer what the model saw and why the rest was left out.

The conversation is the agent's ``thread_id`` (or a fixed ``conversation=``); the branch is in
the state (``vigente_branch``), and a state forked from an earlier checkpoint becomes a forked
branch of the conversation. Put the middleware last in ``middleware=[…]``: the innermost
wrapper sees the tool's output before the others change it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.types import Command

from vigente import telemetry
from vigente.integrations._lc import (
    Assembled,
    ThreadRecorders,
    model_call_attributes,
    response_attributes,
)

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from vigente.api import Vigente
    from vigente.assemble import Policy

__all__ = ["VigenteAgentState", "VigenteMiddleware"]


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.thread_time()


class VigenteAgentState(AgentState[Any]):
    """The agent state with the branch the conversation is on and the last assembly's id."""

    vigente_branch: NotRequired[str]
    vigente_assembly_id: NotRequired[str]


class VigenteMiddleware(AgentMiddleware[VigenteAgentState, Any, Any]):
    """Record the agent's turns into ``vg.runtime``; give the model ``vg.assembly``'s context.

    ``participant``: this agent's id in the conversation (created on first use, with
    ``model`` and ``provider``: the provider decides privacy routing); ``budget`` and
    ``policy``: the assembly's token budget and policy (default: the policy's own);
    ``conversation``: a fixed conversation instead of ``prefix`` + the ``thread_id``;
    ``account``: who owns the conversations it creates (what an account purge deletes).
    """

    state_schema = VigenteAgentState

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
        super().__init__()
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
        #: Milliseconds of the last model call: ``total`` (the whole wrapper), ``model``
        #: (the handler), ``assembly`` and ``overhead`` (the rest: recording, conversion),
        #: and ``overhead_cpu``, the same in this thread's CPU time (what a loaded machine
        #: does not inflate).
        self.last_timings: dict[str, float] = {}

    # -- model calls --------------------------------------------------------------------
    def _prepare(self, request: ModelRequest[Any]) -> tuple[Assembled, ModelRequest[Any]]:
        # the state is the agent's history; the request's messages may be another
        # middleware's edit of it for this one call, not something that happened
        state = request.state if isinstance(request.state, dict) else {}
        history = state.get("messages") or request.messages
        prepared = self.threads.prepare(history, state, tools=request.tools or ())
        return prepared, request.override(messages=cast("list[AnyMessage]", prepared.messages))

    def _finish(
        self,
        prepared: Assembled,
        response: ModelResponse[Any],
        model_started: tuple[float, float],
        model_ended: tuple[float, float],
    ) -> ExtendedModelResponse[Any]:
        self.threads.record_response(prepared, response.result)
        wall, cpu = (
            (time.perf_counter() - prepared.started) * 1000,
            (time.thread_time() - prepared.started_cpu) * 1000,
        )
        model, model_cpu = ((e - s) * 1000 for s, e in zip(model_started, model_ended, strict=True))
        self.last_timings = {
            "total": wall,
            "model": model,
            "assembly": prepared.assembly_ms,
            "overhead": wall - model - prepared.assembly_ms,
            "overhead_cpu": cpu - model_cpu - prepared.assembly_cpu_ms,
        }
        telemetry.annotate(response_attributes(prepared, response.result))
        update = {"vigente_branch": prepared.branch, "vigente_assembly_id": prepared.assembly.id}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    # The model call this middleware wraps is a span (in the caller's trace), with vigente's
    # assembly and then the model's own call inside it: a trace shows what fed each call.
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ExtendedModelResponse[Any]:
        with telemetry.span("vigente.model_call", model_call_attributes(request.model)):
            prepared, assembled = self._prepare(request)
            started = _clocks()
            response = handler(assembled)
            return self._finish(prepared, response, started, _clocks())

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ExtendedModelResponse[Any]:
        with telemetry.span("vigente.model_call", model_call_attributes(request.model)):
            prepared, assembled = self._prepare(request)
            started = _clocks()
            response = await handler(assembled)
            return self._finish(prepared, response, started, _clocks())

    # -- tool calls ---------------------------------------------------------------------
    def _failed(self, request: ToolCallRequest, error: BaseException) -> None:
        call_id = str(request.tool_call.get("id") or "")
        message = ToolMessage(
            content=f"{type(error).__name__}: {error}", tool_call_id=call_id, status="error"
        )
        self.threads.record_result(message, request.state, request.runtime.config)

    def _done(self, request: ToolCallRequest, result: ToolMessage | Command[Any]) -> None:
        if isinstance(result, ToolMessage):  # a Command's messages are recorded from the state
            self.threads.record_result(result, request.state, request.runtime.config)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        try:
            result = handler(request)
        except Exception as exc:
            self._failed(request, exc)
            raise
        self._done(request, result)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        try:
            result = await handler(request)
        except Exception as exc:
            self._failed(request, exc)
            raise
        self._done(request, result)
        return result
