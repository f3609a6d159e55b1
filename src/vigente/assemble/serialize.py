"""Serializers: the pipeline's neutral blocks as a provider's request messages.

Each serializer is a :class:`Serializer` (``name``, ``serialize(blocks) -> Request``): OpenAI
Chat Completions, OpenAI Responses input items, Anthropic Messages (system apart, strict
user/assistant alternation, every ``tool_use`` answered by a ``tool_result`` in the next
message) and LangChain message dicts (``messages_to_dict`` shape).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from vigente.assemble.blocks import Block
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


def _args(block: Block) -> str:
    return json.dumps(block.arguments, ensure_ascii=False, sort_keys=True)


class OpenAIChat:
    name = "openai-chat"

    def serialize(self, blocks: list[Block]) -> Request:
        out: list[dict[str, Any]] = []
        for b in blocks:
            if b.kind == "system":
                out.append({"role": "system", "content": b.text})
            elif b.kind in ("user", "data"):
                out.append({"role": "user", "content": b.text})
            elif b.kind == "assistant":
                out.append({"role": "assistant", "content": b.text})
            elif b.kind == "exchange":
                out.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": b.call_id,
                                "type": "function",
                                "function": {"name": b.name, "arguments": _args(b)},
                            }
                        ],
                    }
                )
                out.append({"role": "tool", "tool_call_id": b.call_id, "content": b.text})
        return Request(out)


class OpenAIResponses:
    name = "openai-responses"

    def serialize(self, blocks: list[Block]) -> Request:
        out: list[dict[str, Any]] = []
        for b in blocks:
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

        for b in blocks:
            if b.kind in ("user", "data"):
                push("user", [{"type": "text", "text": b.text or "(empty)"}])
            elif b.kind == "assistant":
                push("assistant", [{"type": "text", "text": b.text or "(empty)"}])
            elif b.kind == "exchange":
                push(
                    "assistant",
                    [
                        {
                            "type": "tool_use",
                            "id": tool_id(b.call_id),
                            "name": b.name,
                            "input": b.arguments,
                        }
                    ],
                )
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": tool_id(b.call_id),
                    "content": b.text,
                }
                if b.is_error:
                    result["is_error"] = True
                out.append({"role": "user", "content": [result]})
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

        def msg(kind: str, content: str, **extra: Any) -> dict[str, Any]:
            return {
                "type": kind,
                "data": {
                    "content": content,
                    "type": kind,
                    "additional_kwargs": {},
                    "response_metadata": {},
                    "name": None,
                    "id": None,
                    **extra,
                },
            }

        for b in blocks:
            if b.kind == "system":
                out.append(msg("system", b.text))
            elif b.kind in ("user", "data"):
                out.append(msg("human", b.text))
            elif b.kind == "assistant":
                out.append(msg("ai", b.text, tool_calls=[], invalid_tool_calls=[]))
            elif b.kind == "exchange":
                out.append(
                    msg(
                        "ai",
                        "",
                        tool_calls=[
                            {
                                "name": b.name,
                                "args": b.arguments,
                                "id": b.call_id,
                                "type": "tool_call",
                            }
                        ],
                        invalid_tool_calls=[],
                    )
                )
                out.append(
                    msg(
                        "tool",
                        b.text,
                        tool_call_id=b.call_id,
                        status="error" if b.is_error else "success",
                        artifact=None,
                    )
                )
        return Request(out)


_SERIALIZERS: dict[str, Serializer] = {
    s.name: s for s in (OpenAIChat(), OpenAIResponses(), AnthropicMessages(), LangChainDicts())
}
FORMATS = tuple(_SERIALIZERS)


def serializer(name: str) -> Serializer:
    if name not in _SERIALIZERS:
        raise InvalidInput(f"unknown format {name!r}: use one of {', '.join(FORMATS)}")
    return _SERIALIZERS[name]
