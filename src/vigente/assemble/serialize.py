"""Serializers: the pipeline's neutral blocks as a provider's request messages.

Each serializer is a :class:`Serializer` (``name``, ``serialize(blocks) -> Request``): OpenAI
Chat Completions, OpenAI Responses input items, Anthropic Messages (system apart, strict
user/assistant alternation, every ``tool_use`` answered by a ``tool_result`` in the next
message) and LangChain message dicts (``messages_to_dict`` shape). Who said a message goes
in the ``name`` field of the formats that have one (OpenAI Chat, LangChain); the renderer
writes it into the text of the others (assemble/speakers.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from vigente.assemble.blocks import Block
from vigente.assemble.speakers import wire_name
from vigente.errors import InvalidInput

__all__ = ["FORMATS", "Request", "Serializer", "serializer"]


@dataclass(frozen=True, slots=True)
class Request:
    """What a serializer returns: the messages, and the system text kept apart (Anthropic)."""

    messages: list[dict[str, Any]]
    system: str | None = None


class Serializer(Protocol):
    name: str

    def serialize(self, blocks: list[Block]) -> Request: ...


RAW_ARGUMENTS = "__raw__"  # the runtime keeps a call's arguments as the model wrote them here


def _args(block: Block) -> str:
    """A call's arguments as a JSON string: exactly as the model wrote them when the runtime
    kept that text, so the request repeats the model's own bytes (and a cached prefix)."""
    raw = block.arguments.get(RAW_ARGUMENTS)
    if isinstance(raw, str):
        return raw
    return json.dumps(block.arguments, ensure_ascii=False, sort_keys=True)


def _input(block: Block) -> dict[str, Any]:
    """A call's arguments as an object, without the runtime's copy of the raw text."""
    return {k: v for k, v in block.arguments.items() if k != RAW_ARGUMENTS}


@dataclass(frozen=True, slots=True)
class Turn:
    """One model turn: the text and the tool calls (with their results) of one run, as the
    model produced them in one assistant message."""

    text: str | None
    exchanges: tuple[Block, ...]
    speaker: str = ""  # who said the text (the ``name`` of its first text block)


def turns(blocks: list[Block]) -> list[Block | Turn]:
    """Consecutive ``assistant`` and ``exchange`` blocks of one run (``group``) as a
    :class:`Turn`, an exchange of no run as a turn of its own; every other block as it is."""
    out: list[Block | Turn] = []
    run: list[Block] = []

    def close() -> None:
        if run:
            texts = [b for b in run if b.kind == "assistant"]
            out.append(
                Turn(
                    "\n\n".join(b.text for b in texts) if texts else None,
                    tuple(b for b in run if b.kind == "exchange"),
                    next((b.speaker for b in texts if b.speaker), ""),
                )
            )
            run.clear()

    for b in blocks:
        if b.kind in ("assistant", "exchange") and b.group:
            if run and run[0].group != b.group:
                close()
            run.append(b)
            continue
        close()
        out.append(Turn(None, (b,)) if b.kind == "exchange" else b)
    close()
    return out


def _named(message: dict[str, Any], speaker: str) -> dict[str, Any]:
    """``message`` with its speaker in the ``name`` field, as OpenAI accepts one."""
    name = wire_name(speaker) if speaker else None
    if name is not None:
        message["name"] = name
    return message


class OpenAIChat:
    name = "openai-chat"

    def serialize(self, blocks: list[Block]) -> Request:
        out: list[dict[str, Any]] = []
        for item in turns(blocks):
            if isinstance(item, Turn):
                message: dict[str, Any] = _named(
                    {"role": "assistant", "content": item.text}, item.speaker
                )
                if item.exchanges:
                    message["tool_calls"] = [
                        {
                            "id": b.call_id,
                            "type": "function",
                            "function": {"name": b.name, "arguments": _args(b)},
                        }
                        for b in item.exchanges
                    ]
                out.append(message)
                out.extend(
                    {"role": "tool", "tool_call_id": b.call_id, "content": b.text}
                    for b in item.exchanges
                )
                continue
            b = item
            if b.kind == "system":
                out.append(_named({"role": "system", "content": b.text}, b.speaker))
            elif b.kind in ("user", "data"):
                out.append(_named({"role": "user", "content": b.text}, b.speaker))
            elif b.kind == "assistant":
                out.append(_named({"role": "assistant", "content": b.text}, b.speaker))
        return Request(out)


def _flat(blocks: list[Block]) -> list[Block]:
    """The blocks with each model turn's text before its calls (the order the model wrote)."""
    out: list[Block] = []
    for item in turns(blocks):
        if isinstance(item, Turn):
            if item.text is not None:
                out.append(Block("assistant", item.text))
            out.extend(item.exchanges)
        else:
            out.append(item)
    return out


class OpenAIResponses:
    name = "openai-responses"

    def serialize(self, blocks: list[Block]) -> Request:
        out: list[dict[str, Any]] = []
        for b in _flat(blocks):
            if b.kind == "system":
                out.append({"type": "message", "role": "system", "content": b.text})
            elif b.kind in ("user", "data"):
                out.append({"type": "message", "role": "user", "content": b.text})
            elif b.kind == "assistant":
                out.append({"type": "message", "role": "assistant", "content": b.text})
            elif b.kind == "exchange":
                out.append(
                    {
                        "type": "function_call",
                        "call_id": b.call_id,
                        "name": b.name,
                        "arguments": _args(b),
                    }
                )
                out.append({"type": "function_call_output", "call_id": b.call_id, "output": b.text})
        return Request(out)


_TOOL_ID = re.compile(r"[^A-Za-z0-9_-]")


class AnthropicMessages:
    """System text apart; consecutive same-role content merged into one message so roles
    alternate; the first message is a user's; a ``tool_use`` is always followed by the user
    message that opens with its ``tool_result``."""

    name = "anthropic"

    def serialize(self, blocks: list[Block]) -> Request:
        system = [b.text for b in blocks if b.kind == "system"]
        out: list[dict[str, Any]] = []

        def push(role: str, content: list[dict[str, Any]]) -> None:
            if out and out[-1]["role"] == role:
                out[-1]["content"].extend(content)
            else:
                out.append({"role": role, "content": list(content)})

        ids: dict[str, str] = {}

        def tool_id(call: str) -> str:
            if call not in ids:
                clean = _TOOL_ID.sub("_", call) or "call"
                while clean in ids.values():
                    clean += "_"
                ids[call] = clean
            return ids[call]

        def use(b: Block) -> dict[str, Any]:
            return {
                "type": "tool_use",
                "id": tool_id(b.call_id),
                "name": b.name,
                "input": _input(b),
            }

        def result(b: Block) -> dict[str, Any]:
            r: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": tool_id(b.call_id),
                "content": b.text,
            }
            if b.is_error:
                r["is_error"] = True
            return r

        for item in turns(blocks):
            if isinstance(item, Turn):
                text = [{"type": "text", "text": item.text}] if item.text else []
                push("assistant", text + [use(b) for b in item.exchanges])
                if item.exchanges:
                    # every tool_use of the turn answered in the very next (user) message
                    out.append({"role": "user", "content": [result(b) for b in item.exchanges]})
                elif not text:
                    push("assistant", [{"type": "text", "text": "(empty)"}])
                continue
            b = item
            if b.kind in ("user", "data"):
                push("user", [{"type": "text", "text": b.text or "(empty)"}])
            elif b.kind == "assistant":
                push("assistant", [{"type": "text", "text": b.text or "(empty)"}])
        if out and out[0]["role"] != "user":
            out.insert(
                0,
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "(the conversation so far follows)"}],
                },
            )
        if not out:
            out.append({"role": "user", "content": [{"type": "text", "text": "(no messages)"}]})
        return Request(out, "\n\n".join(system) if system else None)


class LangChainDicts:
    """``langchain_core.messages.messages_to_dict`` output: ``{"type", "data"}`` per message."""

    name = "langchain"

    def serialize(self, blocks: list[Block]) -> Request:
        out: list[dict[str, Any]] = []

        def msg(kind: str, content: str, speaker: str = "", **extra: Any) -> dict[str, Any]:
            return {
                "type": kind,
                "data": {
                    "content": content,
                    "type": kind,
                    "additional_kwargs": {},
                    "response_metadata": {},
                    "name": wire_name(speaker) if speaker else None,
                    "id": None,
                    **extra,
                },
            }

        for item in turns(blocks):
            if isinstance(item, Turn):
                out.append(
                    msg(
                        "ai",
                        item.text or "",
                        item.speaker,
                        tool_calls=[
                            {
                                "name": b.name,
                                "args": _input(b),
                                "id": b.call_id,
                                "type": "tool_call",
                            }
                            for b in item.exchanges
                        ],
                        invalid_tool_calls=[],
                    )
                )
                out.extend(
                    msg(
                        "tool",
                        b.text,
                        tool_call_id=b.call_id,
                        status="error" if b.is_error else "success",
                        artifact=None,
                    )
                    for b in item.exchanges
                )
                continue
            b = item
            if b.kind == "system":
                out.append(msg("system", b.text, b.speaker))
            elif b.kind in ("user", "data"):
                out.append(msg("human", b.text, b.speaker))
            elif b.kind == "assistant":
                out.append(msg("ai", b.text, b.speaker, tool_calls=[], invalid_tool_calls=[]))
        return Request(out)


_SERIALIZERS: dict[str, Serializer] = {
    s.name: s for s in (OpenAIChat(), OpenAIResponses(), AnthropicMessages(), LangChainDicts())
}
FORMATS = tuple(_SERIALIZERS)


def serializer(name: str) -> Serializer:
    if name not in _SERIALIZERS:
        raise InvalidInput(f"unknown format {name!r}: use one of {', '.join(FORMATS)}")
    return _SERIALIZERS[name]
