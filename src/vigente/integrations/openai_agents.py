"""vigente as a session of the OpenAI Agents SDK (``openai-agents``).

``Runner.run(agent, input, session=VigenteSession("thread-1", vg))`` works unchanged: the SDK
gives the session every item of a run (``add_items``: the user's input, the model's messages
and function calls, the tools' outputs), which the session records into the runtime graph (an
output as its call's raw artifact), and asks it for the history at the start of the next run
(``get_items``), which is the context vigente assembles for the agent under the policy, as
Responses input items. ``last_assembly_id`` names that assembly for ``vg.assembly.explain``.

Nothing is erased: ``pop_item`` and ``clear_session`` fork a new branch (without the last item,
or empty) and the session goes on there; the old branch keeps what it held.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vigente import telemetry
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
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings

    from vigente.api import Vigente
    from vigente.assemble import Policy

__all__ = ["VigenteSession", "from_input_items", "to_input_items"]

_ASSISTANT = ("function_call",)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        if parts and all(isinstance(p, str) for p in parts):
            return "".join(str(p) for p in parts)
    return json.dumps(content, ensure_ascii=False)


def _sdk_trace() -> dict[str, str]:
    """The Agents SDK's current trace and span ids (its own tracing, not OpenTelemetry's)."""
    from agents.tracing import get_current_span, get_current_trace

    found: dict[str, str] = {}
    current_trace, current_span = get_current_trace(), get_current_span()
    if current_trace is not None:
        found["openai_agents.trace_id"] = current_trace.trace_id
    if current_span is not None:
        found["openai_agents.span_id"] = current_span.span_id
    return found


def _new_key() -> str:
    return f"item-{uuid.uuid4().hex[:16]}"


def _speaker(item: Mapping[str, Any]) -> str | None:
    """Who said a message item: its ``name``, where the application gave one (the Responses
    API has no such field: a name reaches the model as a prefix, docs/assembly.md)."""
    name = item.get("name")
    return name if isinstance(name, str) and name.strip() else None


def from_input_items(items: Sequence[Mapping[str, Any]]) -> list[Item]:
    """Responses input items as recorder items: the assistant messages and function calls
    of one model response are one turn; a message item's ``name`` is who said it. Reasoning
    and other item kinds are not recorded."""
    out: list[Item] = []
    turn: Turn | None = None

    def close() -> None:
        nonlocal turn
        if turn is not None:
            out.append(turn)
            turn = None

    for item in items:
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role == "assistant":
            if turn is None:
                turn = Turn(str(item.get("id") or _new_key()), "", (), _speaker(item))
            turn = Turn(turn.key, turn.text + _text(item.get("content")), turn.calls,
                        turn.speaker)
        elif kind == "function_call":
            raw = item.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else dict(raw or {})
            except ValueError:
                args = {}
            call = Call(
                str(item["call_id"]),
                str(item["name"]),
                args if isinstance(args, dict) else {"value": args},
                raw if isinstance(raw, str) else None,
            )
            if turn is None:
                turn = Turn(str(item.get("id") or _new_key()), "")
            turn = Turn(turn.key, turn.text, (*turn.calls, call), turn.speaker)
        elif kind == "function_call_output":
            close()
            out.append(Result(str(item["call_id"]), "succeeded", item.get("output")))
        elif kind == "message" and role in ("user", "system", "developer"):
            close()
            out.append(
                Said(
                    str(item.get("id") or _new_key()),
                    "user" if role == "user" else "system",
                    _text(item.get("content")),
                    _speaker(item),
                )
            )
    close()
    return out


def to_input_items(item: Item) -> list[dict[str, Any]]:
    """A recorder item as Responses input items (what ``pop_item`` gives back)."""
    if isinstance(item, Said):
        return [{"type": "message", "role": item.role, "content": item.content}]
    if isinstance(item, Result):
        output = item.content if isinstance(item.content, str) else json.dumps(item.content)
        return [{"type": "function_call_output", "call_id": item.key, "output": output}]
    out: list[dict[str, Any]] = []
    if item.text:
        out.append({"type": "message", "role": "assistant", "content": item.text})
    for c in item.calls:
        arguments = c.raw_arguments or json.dumps(dict(c.arguments), ensure_ascii=False)
        out.append(
            {"type": "function_call", "call_id": c.key, "name": c.name, "arguments": arguments}
        )
    return out


def _without_last_part(item: Item) -> Item | None:
    if isinstance(item, Turn):
        if item.calls:
            rest = Turn(item.key, item.text, item.calls[:-1], item.speaker)
        else:
            rest = Turn(item.key, "", (), item.speaker)
        return rest if rest.text or rest.calls else None
    return None


class VigenteSession:
    """A ``Session`` (the SDK's protocol) whose history is vigente's assembled context.

    ``session_id`` is the conversation (created on first use, owned by ``account``);
    ``participant`` this agent's id in it (with ``model`` and ``provider``: the provider
    decides privacy routing); ``budget`` / ``policy`` the assembly's.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        vg: Vigente,
        *,
        participant: str = "agent",
        model: str = "unknown",
        provider: str = "openai",
        account: str = "default",
        mode: str = "chat",
        budget: int | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.session_id = session_id
        self.vg = vg
        self.participant = participant
        self.mode = mode
        self.budget = budget
        self.policy = policy
        self.recorder = Recorder(
            vg.runtime,
            session_id,
            account=account,
            participant=participant,
            model=model,
            provider=provider,
            mode=mode,
        )
        #: The id of the assembly the last ``get_items`` returned (``vg.assembly.explain``).
        self.last_assembly_id: str | None = None

    def declare_tools(self, tools: Sequence[Any], *, read_only: Sequence[str] = ()) -> None:
        """Declare the agent's tools in the conversation (``agent.tools``, or the MCP
        ``Tool`` objects of ``await server.list_tools()``): a tool is read-only when its MCP
        annotations say ``readOnlyHint`` or its name is in ``read_only`` (the SDK's function
        tools carry no such flag). Only read-only tools are ever suggested to the model to run
        again when a value it read is stale."""
        infos = []
        for t in tools:
            name = getattr(t, "name", None)
            if not isinstance(name, str) or not name:
                continue
            description = getattr(t, "description", None)
            hinted = read_only_hint(getattr(t, "annotations", None) or {})
            infos.append(ToolInfo(name, hinted or name in read_only,
                                  description if isinstance(description, str) and description
                                  else None))
        self.recorder.declare_tools(infos)

    @property
    def branch(self) -> str:
        """The branch the session is on (the conversation's latest)."""
        return self.recorder.latest_branch()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The assembled context for the agent's next request (the latest ``limit`` items)."""
        rec = self.recorder
        # the Runner reads the session just before the model call it feeds: the span joins
        # the caller's OpenTelemetry trace and names the Agents SDK's own trace and span
        with telemetry.span("vigente.session.get_items", _sdk_trace()):
            assembly = self.vg.assembly.assemble(
                self.session_id,
                self.branch,
                self.participant,
                mode=self.mode,
                format="openai-responses",
                budget=self.budget,
                policy=self.policy,
            )
            telemetry.annotate({"vigente.assembly.id": assembly.id,
                                "gen_ai.conversation.id": self.session_id})
        self.last_assembly_id = assembly.id
        items: list[Any] = []
        wire = assembly.record.get("call_ids", {})
        for m in assembly.messages:
            if "call_id" in m:
                m = {**m, "call_id": rec.framework_call_id(wire, str(m["call_id"]))}
            items.append(m)
        return items[-limit:] if limit else items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record a run's items on the session's branch."""
        self.recorder.append(self.branch, from_input_items([dict(i) for i in items]))

    async def pop_item(self) -> TResponseInputItem | None:
        """Go on without the latest item: a new branch holds everything but it (the old
        branch keeps it); returns it."""
        rec = self.recorder
        branch = self.branch
        held = rec.items(branch)
        if not held:
            return None
        last = held[-1]
        popped = to_input_items(last)[-1]
        fork = rec.fork(branch, len(held) - 1)
        rest = _without_last_part(last)
        if rest is not None:
            rec.append(fork, [rest])
        item: TResponseInputItem = popped  # type: ignore[assignment]
        return item

    async def clear_session(self) -> None:
        """Go on from an empty branch (the old one keeps what it held)."""
        rec = self.recorder
        if rec.items(self.branch):
            rec.fork(self.branch, 0)
