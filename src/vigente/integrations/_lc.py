"""What the LangChain middleware and the LangGraph hooks share: LangChain messages as recorder
items, an assembly as LangChain messages, and one :class:`Recorder` per conversation (a
LangGraph ``thread_id``)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
)

from vigente.errors import InvalidInput
from vigente.integrations.recorder import (
    Call,
    Item,
    Recorder,
    Result,
    Said,
    ToolInfo,
    Turn,
    read_only_hint,
)

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from vigente.api import Vigente
    from vigente.assemble import ContextAssembly, Policy

__all__ = [
    "Assembled",
    "ThreadRecorders",
    "assembled_messages",
    "to_items",
    "tool_infos",
    "turn_of",
]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _key(message: BaseMessage, index: int) -> str:
    if message.id:
        return message.id
    # a message that never went through add_messages: a key stable across calls
    digest = hashlib.sha256(f"{message.type}\0{_text(message.content)}".encode()).hexdigest()
    return f"lc-{index}-{digest[:16]}"


def turn_of(message: AIMessage, index: int = 0) -> Turn:
    """A model response as a recorder turn (its tool calls with their ids)."""
    calls = tuple(
        Call(
            str(c.get("id") or f"{_key(message, index)}-call{n}"),
            c["name"],
            dict(c.get("args") or {}),
        )
        for n, c in enumerate(message.tool_calls)
    )
    return Turn(_key(message, index), message.text if message.content else "", calls,
                _speaker(message))


def result_of(message: ToolMessage) -> Result:
    """A tool output as a recorder result, raw: the content the tool returned."""
    status = "failed" if message.status == "error" else "succeeded"
    return Result(message.tool_call_id, status, message.content)


def _speaker(message: BaseMessage) -> str | None:
    """Who said a message: LangChain's ``name`` (None when it has none)."""
    name = message.name
    return name if isinstance(name, str) and name.strip() else None


def to_items(messages: Sequence[BaseMessage]) -> list[Item]:
    """LangChain messages (an agent's ``messages`` state) as recorder items; a message's
    ``name`` is who said it (its speaker)."""
    items: list[Item] = []
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            items.append(turn_of(m, i))
        elif isinstance(m, ToolMessage):
            items.append(result_of(m))
        elif isinstance(m, SystemMessage) or (
                isinstance(m, ChatMessage) and m.role in ("system", "developer")):
            items.append(Said(_key(m, i), "system", _text(m.content), _speaker(m)))
        else:  # human messages, and any other kind the user typed
            items.append(Said(_key(m, i), "user", _text(m.content), _speaker(m)))
    return items


def assembled_messages(assembly: ContextAssembly, recorder: Recorder) -> list[BaseMessage]:
    """The assembled request (``format="langchain"``) as LangChain messages; ids of records a
    fork re-recorded (``branch/id``) are given back as the framework's own ids, short wire ids
    (``c17``) go as they are (see :meth:`Recorder.framework_call_id`)."""
    out = messages_from_dict(assembly.messages)
    wire = assembly.record.get("call_ids", {})
    for m in out:
        if isinstance(m, AIMessage) and m.tool_calls:
            for c in m.tool_calls:
                if c.get("id"):
                    c["id"] = recorder.framework_call_id(wire, str(c["id"]))
        elif isinstance(m, ToolMessage):
            m.tool_call_id = recorder.framework_call_id(wire, m.tool_call_id)
    return out


@dataclass(frozen=True, slots=True)
class Assembled:
    """One model request prepared from the graph: where, what the model gets, and the
    assembly (``assembly.id`` explains it afterwards)."""

    conversation: str
    branch: str
    messages: list[BaseMessage]
    assembly: ContextAssembly
    started: float
    assembly_ms: float
    started_cpu: float = 0.0
    assembly_cpu_ms: float = 0.0


class ThreadRecorders:
    """The recorders of one participant, keyed by conversation: a fixed ``conversation``, or
    the LangGraph ``thread_id`` of the running graph (``prefix`` + thread id)."""

    def __init__(
        self,
        vg: Vigente,
        *,
        conversation: str | None,
        account: str,
        participant: str,
        model: str,
        provider: str,
        mode: str,
        budget: int | None,
        policy: Policy | None,
        prefix: str = "",
    ) -> None:
        self.vg = vg
        self.conversation = conversation
        self.account = account
        self.participant = participant
        self.model = model
        self.provider = provider
        self.mode = mode
        self.budget = budget
        self.policy = policy
        self.prefix = prefix
        self._recorders: dict[str, Recorder] = {}
        self._lock = threading.Lock()

    def conversation_of(self, config: RunnableConfig | None = None) -> str:
        if self.conversation is not None:
            return self.conversation
        if config is None:
            from langgraph.config import get_config

            try:
                config = get_config()
            except RuntimeError:
                config = None
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread is None:
            raise InvalidInput(
                "no conversation to record into: give conversation=… or run "
                "the graph with a thread_id (config={'configurable': "
                "{'thread_id': …}})"
            )
        return f"{self.prefix}{thread}"

    def recorder(self, conversation: str) -> Recorder:
        with self._lock:
            found = self._recorders.get(conversation)
            if found is None:
                found = Recorder(
                    self.vg.runtime,
                    conversation,
                    account=self.account,
                    participant=self.participant,
                    model=self.model,
                    provider=self.provider,
                    mode=self.mode,
                )
                self._recorders[conversation] = found
            return found

    def prepare(
        self,
        messages: Sequence[BaseMessage],
        state: Any,
        config: RunnableConfig | None = None,
        tools: Sequence[Any] = (),
    ) -> Assembled:
        """Record what the state holds that the graph does not, and assemble the next
        request on the state's branch (a new fork when the state left it). ``tools``: the
        model's tools (LangChain tools: their ``metadata`` may say ``readOnlyHint``), declared
        in the conversation."""
        started, started_cpu = time.perf_counter(), time.thread_time()
        conversation = self.conversation_of(config)
        rec = self.recorder(conversation)
        infos = tool_infos(tools)
        if infos:
            rec.declare_tools(infos)
        branch = rec.sync(_branch(state, rec), to_items(messages))
        t0, c0 = time.perf_counter(), time.thread_time()
        assembly = self.vg.assembly.assemble(
            conversation,
            branch,
            self.participant,
            mode=self.mode,
            format="langchain",
            budget=self.budget,
            policy=self.policy,
        )
        assembly_ms = (time.perf_counter() - t0) * 1000
        assembly_cpu_ms = (time.thread_time() - c0) * 1000
        return Assembled(
            conversation,
            branch,
            assembled_messages(assembly, rec),
            assembly,
            started,
            assembly_ms,
            started_cpu,
            assembly_cpu_ms,
        )

    def record_response(self, prepared: Assembled, response: Sequence[BaseMessage]) -> None:
        """Record the model's answer as a turn of the branch the request was assembled on,
        and mark it with the assembly's id (``response_metadata["vigente_assembly_id"]``)."""
        rec = self.recorder(prepared.conversation)
        turns: list[Item] = []
        for m in response:
            if isinstance(m, AIMessage):
                if not m.id:
                    m.id = f"lc-{uuid.uuid4().hex}"
                m.response_metadata["vigente_assembly_id"] = prepared.assembly.id
                turns.append(turn_of(m))
        rec.append(prepared.branch, turns)

    def record_result(
        self, message: ToolMessage, state: Any, config: RunnableConfig | None = None
    ) -> None:
        """Keep a tool's output as its call's artifact, as the tool returned it."""
        rec = self.recorder(self.conversation_of(config))
        rec.append(_branch(state, rec), [result_of(message)])


def tool_infos(tools: Sequence[Any]) -> list[ToolInfo]:
    """LangChain tools (``BaseTool``: ``name``, ``description``, ``metadata``) as the tool
    declarations of the conversation; a provider's built-in tool given as a dict is skipped."""
    out: list[ToolInfo] = []
    for t in tools:
        name = getattr(t, "name", None)
        if not isinstance(name, str) or not name:
            continue
        description = getattr(t, "description", None)
        out.append(ToolInfo(name, read_only_hint(getattr(t, "metadata", None) or {}),
                            description if isinstance(description, str) and description
                            else None))
    return out


def _branch(state: Any, rec: Recorder) -> str:
    branch = state.get("vigente_branch") if isinstance(state, dict) else None
    return str(branch) if branch else rec.root


def model_call_attributes(model: Any) -> dict[str, str]:
    """The GenAI attributes of a LangChain model call's span: the operation, and the provider
    and model LangChain reports for its own tracing (``_get_ls_params``)."""
    attributes = {"gen_ai.operation.name": "chat"}
    try:
        params = model._get_ls_params()
    except Exception:
        params = {}
    provider = params.get("ls_provider")
    name = params.get("ls_model_name") or getattr(model, "model_name", None) or getattr(
        model, "model", None)
    if isinstance(provider, str) and provider:
        attributes["gen_ai.provider.name"] = provider
    if isinstance(name, str) and name:
        attributes["gen_ai.request.model"] = name
    return attributes


def response_attributes(prepared: Assembled, response: Sequence[BaseMessage]
                        ) -> dict[str, str | int]:
    """What the model call's span adds once it answered: the assembly that fed it, and the
    token usage the model reported (counts only)."""
    attributes: dict[str, str | int] = {
        "vigente.assembly.id": prepared.assembly.id,
        "gen_ai.conversation.id": prepared.conversation,
        "vigente.branch.id": prepared.branch,
    }
    for message in response:
        usage = getattr(message, "usage_metadata", None)
        if isinstance(message, AIMessage) and usage:
            attributes["gen_ai.usage.input_tokens"] = int(usage.get("input_tokens", 0))
            attributes["gen_ai.usage.output_tokens"] = int(usage.get("output_tokens", 0))
    return attributes
