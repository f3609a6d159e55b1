"""Importing a transcript in OpenAI chat format: one participant, one run per assistant message,
tool calls paired with their results by id and, where ids repeat (the tau-bench transcripts
reuse them), by position: the n-th call with an id pairs with the n-th result with that id.
A repeated call id is kept as ``id#2``, ``id#3`` … so that every call has its own artifact.
A message's ``name`` (OpenAI's field for who said it) is kept as its ``speaker``.
"""

from __future__ import annotations

import json
import lzma
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.errors import ImportFileError, InvalidInput
from vigente.jsonlimits import check_json_depth
from vigente.time import Instant, current_instant

if TYPE_CHECKING:
    from vigente.runtime.events import RuntimeImportReport
    from vigente.runtime.service import Runtime

__all__ = ["PARTICIPANT", "event_lines", "import_openai", "read_transcript", "transcript_events"]


#: The one participant a transcript's assistant messages come from.
PARTICIPANT = "assistant"


def read_transcript(path: str | Path, *, trial: int | None = None) -> list[dict[str, Any]]:
    """The messages of a transcript file: a JSON list of messages, an object with
    ``messages`` (or ``traj``), or a list of such objects (tau-bench trials: pick ``trial``).
    ``.xz`` files are decompressed."""
    p = Path(path)
    try:
        raw = lzma.open(p).read() if p.suffix == ".xz" else p.read_bytes()
    except (OSError, lzma.LZMAError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None
    try:
        check_json_depth(raw)
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"{path} is not a JSON transcript ({exc})") from None
    if isinstance(data, dict):
        data = data.get("messages", data.get("traj"))
    elif isinstance(data, list) and data and all(isinstance(d, dict) and "role" not in d
                                                 for d in data):
        if trial is None:
            raise InvalidInput(f"{path} holds {len(data)} transcripts (trials): choose one "
                               "with --trial N")
        if not 0 <= trial < len(data):
            raise InvalidInput(f"--trial {trial} is out of range: {path} holds {len(data)}")
        data = data[trial].get("messages", data[trial].get("traj"))
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise InvalidInput(f"{path} has no list of messages: give a JSON list of messages or "
                           'an object with "messages"')
    return data


def transcript_events(messages: list[dict[str, Any]], conversation: str, account: str, *,
                      model: str = "unknown", at: Instant | None = None
                      ) -> list[dict[str, Any]]:
    """The event log lines of an OpenAI-format transcript (each tagged ``_message`` with the
    transcript message it came from)."""
    stamp = (at or current_instant()).isoformat()
    events: list[dict[str, Any]] = [
        {"event": "conversation", "id": conversation, "account": account, "at": stamp},
        {"event": "participant", "id": PARTICIPANT, "model": model},
        {"event": "branch", "id": "main"},
    ]
    seen: dict[str, int] = defaultdict(int)  # call id -> calls so far
    answered: dict[str, int] = defaultdict(int)  # call id -> results so far
    runs = 0
    for n, m in enumerate(messages, start=1):
        first = len(events)
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else (
            "" if content is None else json.dumps(content, ensure_ascii=False))
        # OpenAI's `name` (who said it, when several share a role) is the message's speaker
        said = {"speaker": m["name"]} if m.get("name") is not None else {}
        if role in ("system", "user", "developer"):
            events.append({"event": "message", "id": f"m{n}", "branch": "main",
                           "role": "system" if role == "developer" else role, "content": text,
                           **said})
        elif role == "assistant":
            runs += 1
            run = f"run{runs}"
            events.append({"event": "run", "id": run, "branch": "main",
                           "participant": PARTICIPANT, "mode": "chat"})
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                base = str(call.get("id") or f"call{n}")
                seen[base] += 1
                cid = base if seen[base] == 1 else f"{base}#{seen[base]}"
                raw = fn.get("arguments")
                try:
                    args = json.loads(raw) if isinstance(raw, str) else (raw or {})
                except ValueError:
                    args = {}
                events.append({"event": "tool_call", "id": cid, "run": run,
                               "name": str(fn.get("name") or "unknown"),
                               "arguments": args if isinstance(args, dict) else {"value": args},
                               **({"raw_arguments": raw} if isinstance(raw, str) else {})})
            if text:
                events.append({"event": "message", "id": f"m{n}", "branch": "main",
                               "role": "assistant", "content": text, "run": run, **said})
        elif role in ("tool", "function"):
            base = str(m.get("tool_call_id") or m.get("name") or "")
            answered[base] += 1
            cid = base if answered[base] == 1 else f"{base}#{answered[base]}"
            if answered[base] > seen[base]:
                raise InvalidInput(f"message {n}: a tool result for call {base!r} that no "
                                   "assistant message asked for")
            events.append({"event": "tool_result", "call": cid, "status": "succeeded",
                           "content": text})
        else:
            raise InvalidInput(f"message {n}: unknown role {role!r}")
        _tag(events, first, n)
    for e in events[1:]:
        e["conversation"] = conversation
    return events


def _tag(events: list[dict[str, Any]], first: int, message: int) -> None:
    """Remember which transcript message each event came from (for error messages)."""
    for e in events[first:]:
        e["_message"] = message


def event_lines(events: list[dict[str, Any]]) -> list[str]:
    """``transcript_events`` as lines of the event log, without the transcript position each
    event carries for error messages."""
    return [json.dumps({k: v for k, v in e.items() if k != "_message"}, ensure_ascii=False)
            for e in events]


def import_openai(rt: Runtime, path: str | Path, *, conversation: str, account: str,
                  trial: int | None = None, model: str = "unknown",
                  at: Instant | None = None) -> RuntimeImportReport:
    """Import one transcript as a conversation, atomically."""
    from vigente.runtime.events import import_events

    events = transcript_events(read_transcript(path, trial=trial), conversation, account,
                               model=model, at=at)
    try:
        return import_events(rt, event_lines(events))
    except ImportFileError as exc:
        origin = events[exc.line_number - 1].get("_message")
        where = f"message {origin}" if origin else "the transcript's header"
        reason = str(exc).split(": ", 1)[1]
        raise InvalidInput(f"{where} of {path}: {reason}") from None
