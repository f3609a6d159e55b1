"""The event log of ``../shared/contract/RUNTIME.md``: one JSON object per line, applied in
file order inside one transaction. A bad line raises :class:`ImportFileError` with its number
and nothing of the file is written. A field an event's kind does not take (:data:`EVENT_FIELDS`)
is refused, naming the field, the closest known one and every one the kind takes: ignored, a
misspelt ``privcy`` would leave a secret result ``public``. Beyond the contract's fields,
``tool_result`` also takes ``branch``, ``provider`` and ``tool_version``, and ``memory`` its
confidence's source and reason, its ``writer`` and ``record_as_fact``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.errors import (
    ImportFileError,
    InvalidInput,
    RuntimeHistoryConflict,
    UnknownFields,
    VigenteError,
)
from vigente.jsonl import json_objects, read_lines
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime

__all__ = ["EVENTS", "EVENT_FIELDS", "RuntimeImportReport", "apply_event", "check_fields",
           "import_events",
           "untrusted_refusal"]


@dataclass(frozen=True, slots=True)
class RuntimeImportReport:
    """What an import wrote: events applied, by kind; and warnings about lines that were
    stored but look mis-written (see :func:`run_order_warning`)."""

    events: int
    by_kind: dict[str, int]
    conversations: tuple[str, ...]
    warnings: tuple[str, ...] = ()


class _RunOrder:
    """A run is one model response: its assistant text and its tool calls come out together,
    and the results come back after it. An answer written after those results is the next
    model response, so a new run; written into the same run, it would be assembled before the
    results it reads. Tracks the log's calls and results by run, to warn about such a line."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, str], str] = {}  # (conversation, call) -> run
        self.answered: dict[tuple[str, str], int] = {}  # (conversation, run) -> a result's line

    def see(self, number: int, event: dict[str, Any]) -> str | None:
        kind, conversation = event.get("event"), str(event.get("conversation"))
        if kind == "tool_call" and isinstance(event.get("run"), str):
            self.calls[(conversation, str(event.get("id")))] = event["run"]
        elif kind == "tool_result":
            run = self.calls.get((conversation, str(event.get("call"))))
            if run is not None:
                self.answered.setdefault((conversation, run), number)
        elif kind == "message" and event.get("role") == "assistant" and isinstance(
                event.get("run"), str):
            result = self.answered.get((conversation, event["run"]))
            if result is not None:
                return (f"line {number}: assistant message {event.get('id')!r} of run "
                        f"{event['run']!r} comes after that run's tool results (line {result}): "
                        "a run is one model response, so an answer written after tool results "
                        "is a new run: give it its own `run` event (docs/runtime.md)")
        return None


def _get(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], *,
         required: bool = False, default: Any = None) -> Any:
    if key not in obj or obj[key] is None:
        if required:
            raise InvalidInput(f'a "{obj["event"]}" event needs "{key}"')
        return default
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidInput(f'"{key}" must be {names}, got {type(value).__name__}')
    return value


def _ids(obj: dict[str, Any], key: str, *, required: bool = False) -> list[str]:
    value = _get(obj, key, list, required=required, default=[])
    if not all(isinstance(v, str) for v in value):
        raise InvalidInput(f'"{key}" must be a list of ids (strings)')
    return list(value)


def _conversation(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.open_conversation(_get(e, "id", str, required=True), _get(e, "account", str, required=True),
                         title=_get(e, "title", str), at=at)


def _participant(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.add_participant(e["conversation"], _get(e, "id", str, required=True),
                       model=_get(e, "model", str, required=True),
                       provider=_get(e, "provider", str, default="openai"),
                       label=_get(e, "label", str), at=at)


def _branch(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.fork_branch(e["conversation"], _get(e, "id", str, required=True),
                   parent=_get(e, "parent", str), fork_after=_get(e, "fork_after", str), at=at)


def _run(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.start_run(e["conversation"], _get(e, "id", str, required=True),
                 branch=_get(e, "branch", str, required=True),
                 participant=_get(e, "participant", str, required=True),
                 mode=_get(e, "mode", str, required=True),
                 parent_run=_get(e, "parent_run", str), at=at)


def _message(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.record_message(e["conversation"], _get(e, "id", str, required=True),
                      branch=_get(e, "branch", str, required=True),
                      role=_get(e, "role", str, required=True),
                      content=_get(e, "content", str, required=True),
                      run=_get(e, "run", str), speaker=_get(e, "speaker", str), at=at)


def _tool_call(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.record_tool_call(e["conversation"], _get(e, "id", str, required=True),
                        run=_get(e, "run", str, required=True),
                        name=_get(e, "name", str, required=True),
                        arguments=_get(e, "arguments", dict, required=True),
                        raw_arguments=_get(e, "raw_arguments", str), at=at)


def _tool_result(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    if "content" not in e:
        raise InvalidInput('a "tool_result" event needs "content"')
    rt.record_tool_result(e["conversation"], _get(e, "call", str, required=True),
                          status=_get(e, "status", str, required=True), content=e["content"],
                          privacy=_get(e, "privacy", str, default="public"),
                          visibility=_get(e, "visibility", str, default="participant"),
                          retry_critical=_get(e, "retry_critical", bool, default=False),
                          branch=_get(e, "branch", str), provider=_get(e, "provider", str),
                          tool_version=_get(e, "tool_version", str), at=at)


def _memory(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.record_memory(
        e["conversation"], _get(e, "id", str, required=True),
        sources=_ids(e, "sources", required=True), summary=_get(e, "summary", str, required=True),
        facts=_get(e, "facts", dict), kind=_get(e, "kind", str, default="tool"),
        freshness=_get(e, "freshness", str), observed_at=_get(e, "observed_at", str),
        stale_after=_get(e, "stale_after", str), revalidate_with=_ids(e, "revalidate_with"),
        confidence=_get(e, "confidence", (int, float)),
        confidence_source=_get(e, "confidence_source", str),
        confidence_reason=_get(e, "confidence_reason", str),
        supersedes=_ids(e, "supersedes"), conflicts_with=_ids(e, "conflicts_with"),
        privacy=_get(e, "privacy", str), visibility=_get(e, "visibility", str),
        writer=_get(e, "writer", str),
        record_as_fact=_get(e, "record_as_fact", bool, default=False), at=at)


def _skill_state(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.record_skill_state(e["conversation"], _get(e, "run", str, required=True),
                          skills=_ids(e, "skills", required=True), tools=_ids(e, "tools"),
                          profile=_get(e, "profile", str), state_id=_get(e, "id", str), at=at)


def _checkpoint(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.record_checkpoint(e["conversation"], _get(e, "id", str, required=True),
                         run=_get(e, "run", str, required=True),
                         state=_get(e, "state", dict, required=True), at=at)


def _promote(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.promote(e["conversation"], _get(e, "run", str, required=True),
               _ids(e, "refs", required=True), as_=_get(e, "as", str, default="final_report"),
               at=at)


def _share(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.share(e["conversation"], _get(e, "ref", str, required=True), _ids(e, "with", required=True),
             at=at)


def _tool(rt: Runtime, e: dict[str, Any], at: Instant | None) -> None:
    rt.declare_tool(e["conversation"], _get(e, "name", str, required=True),
                    read_only=_get(e, "read_only", bool, default=False),
                    description=_get(e, "description", str), at=at)


EVENTS: dict[str, Callable[[Runtime, dict[str, Any], Instant | None], None]] = {
    "conversation": _conversation,
    "participant": _participant,
    "branch": _branch,
    "run": _run,
    "message": _message,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "memory": _memory,
    "skill_state": _skill_state,
    "checkpoint": _checkpoint,
    "promote": _promote,
    "share": _share,
    "tool": _tool,
}


#: The fields each kind of event takes (its readers above read these and no other), besides
#: ``event``, ``at`` and (every kind but ``conversation``) ``conversation``. A message's
#: ``speaker`` (RUNTIME.md §1) is kept in its record (runtime/speakers.py says what it may be).
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "conversation": ("id", "account", "title"),
    "participant": ("id", "model", "provider", "label"),
    "branch": ("id", "parent", "fork_after"),
    "run": ("id", "branch", "participant", "mode", "parent_run"),
    "message": ("id", "branch", "role", "content", "run", "speaker"),
    "tool_call": ("id", "run", "name", "arguments", "raw_arguments"),
    "tool_result": ("call", "status", "content", "privacy", "visibility", "retry_critical",
                    "branch", "provider", "tool_version"),
    "memory": ("id", "sources", "summary", "facts", "kind", "freshness", "observed_at",
               "stale_after", "revalidate_with", "confidence", "confidence_source",
               "confidence_reason", "supersedes", "conflicts_with", "privacy", "visibility",
               "writer", "record_as_fact"),
    "skill_state": ("run", "skills", "tools", "profile", "id"),
    "checkpoint": ("id", "run", "state"),
    "promote": ("run", "refs", "as"),
    "share": ("ref", "with"),
    "tool": ("name", "read_only", "description"),
}


def _known_fields(kind: str) -> tuple[str, ...]:
    head = ("event",) if kind == "conversation" else ("event", "conversation")
    return (*head, *EVENT_FIELDS[kind], "at")


def check_fields(event: dict[str, Any]) -> None:
    """Refuse the fields ``event``'s kind does not take (:class:`UnknownFields`)."""
    known = _known_fields(str(event["event"]))
    unknown = [key for key in event if key not in known]
    if unknown:
        raise UnknownFields(unknown, known, f"a {event['event']!r} event")


def untrusted_refusal(event: dict[str, Any]) -> str | None:
    """Why a model-facing writer (an agent key, ``vigente mcp``, a model's own output) may
    not write ``event``, or None: instructions (a ``system`` message, a skill state), the
    claim that a tool is read-only, recovery state (a checkpoint) and who sees what (a share,
    a promotion) come only from trusted writers (DESIGN.md, invariants 7 and 10)."""
    kind = event.get("event")
    how = ("write it through a trusted writer instead: `vigente runtime import`, the HTTP API "
           "with a service key (POST /v1/runtime/events) or vg.runtime in the application")
    if kind == "message" and event.get("role") == "system":
        return (f"a model-facing writer cannot record a system message (instructions come "
                f"only from trusted writers): record it with role user or assistant, or {how}")
    if kind == "skill_state":
        return ("a model-facing writer cannot record a skill state (it becomes system text): "
                + how)
    if kind == "tool" and event.get("read_only") not in (None, False):
        return ("a model-facing writer cannot declare a tool read-only (only a read-only tool "
                "is ever suggested to a model to run again): " + how)
    if kind == "checkpoint":
        return ("a model-facing writer cannot record a checkpoint (recovery state is kept "
                "whatever the budget and resumed from: the application's runtime writes it): "
                + how)
    if kind in ("share", "promote"):
        return (f"a model-facing writer cannot record a {kind} (it makes one participant's "
                "or a subagent's records visible to another: the application decides what "
                "each participant may see): " + how)
    if kind == "memory" and event.get("record_as_fact") not in (None, False):
        return ("a model-facing writer cannot record a memory as a fact of the account (kernel "
                "facts outlive an account purge: the application opts in, "
                "docs/user-memories.md): leave out record_as_fact, or " + how)
    return None


def apply_event(rt: Runtime, event: dict[str, Any], at: Instant | None, *,
                trusted: bool = True) -> None:
    """Apply one event (already carrying its ``at``) inside the caller's transaction.
    ``trusted`` false: the writer faces a model (see :func:`untrusted_refusal`)."""
    kind = event.get("event")
    if not trusted:
        refusal = untrusted_refusal(event)
        if refusal is not None:
            raise InvalidInput(refusal)
    if kind not in EVENTS:
        hint = (
            " (`expect` lines are a scenario's checks: run the file with `vigente scenario run`)"
            if kind == "expect"
            else ""
        )
        raise InvalidInput(f"unknown event {kind!r}: use one of {', '.join(EVENTS)}{hint}")
    check_fields(event)
    if kind != "conversation" and not isinstance(event.get("conversation"), str):
        raise InvalidInput(f'a "{kind}" event needs "conversation" (the conversation id)')
    EVENTS[kind](rt, event, at)


def import_events(rt: Runtime, source: str | Path | Iterable[bytes | str], *,
                  now: Instant | None = None, trusted: bool = True,
                  writer: str | None = None) -> RuntimeImportReport:
    """Import an event log atomically; a bad line names its number and nothing is written.
    ``trusted`` false: the log comes from a model-facing writer (named by ``writer``), which
    may not write instructions (see :func:`untrusted_refusal`), and whose messages, tool
    calls, results and memories are recorded as its claims (``Runtime.claims_of``)."""
    claims = nullcontext() if trusted else rt.claims_of(writer or "a model-facing writer")
    lines = read_lines(source) if isinstance(source, str | Path) else source
    # An event without "at" takes the previous event's; before any "at", the import's clock
    # (``now``) or, without one, the moment its record is written, read inside the
    # conversation's lock (so concurrent writers of one conversation are never refused).
    at: Instant | None = now
    counts: Counter[str] = Counter()
    conversations: dict[str, None] = {}
    order, warnings = _RunOrder(), []
    with claims, rt.transaction():
        for number, event in json_objects(lines):
            warning = order.see(number, event)
            if warning is not None:
                warnings.append(warning)
            try:
                if "at" in event and event["at"] is not None:
                    if not isinstance(event["at"], str):
                        raise InvalidInput('"at" must be a date or timestamp string')
                    at = rt.instant(event["at"])
                apply_event(rt, event, at, trusted=trusted)
            except RuntimeHistoryConflict as exc:
                raise RuntimeHistoryConflict(exc.reason, number) from None
            except VigenteError as exc:
                raise ImportFileError(number, str(exc)) from None
            counts[str(event["event"])] += 1
            cid = event["id"] if event["event"] == "conversation" else event["conversation"]
            conversations[str(cid)] = None
    return RuntimeImportReport(sum(counts.values()), dict(counts), tuple(conversations),
                               tuple(warnings))
