"""Keeping a framework's message list and vigente's runtime graph in step.

An agent framework holds its conversation as a list (LangGraph's ``messages`` state, the
OpenAI Agents SDK's session items). The :class:`Recorder` maps that list, as neutral
:data:`Item` values, onto one branch of a runtime conversation: items the branch does not hold
yet are appended (a model turn as a run with its tool calls, a tool output as the call's raw
artifact); a list that no longer follows the branch (a LangGraph checkpoint fork, a popped
session item, an edited message) becomes a **new branch** forked at the last record both share,
so the old branch and everything on it stay as they were (history is appended, never
rewritten).

Ids: a record gets the framework's own id (a LangChain message id, a tool call id) on the
conversation's first branch, and ``<branch>/<id>`` on a fork (so a re-run of the same call on a
fork is its own record); a repeated id gets ``#2``, ``#3`` … as in the transcript import.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vigente.errors import InvalidInput
from vigente.records.runtime import Message, ModelRun, ToolArtifact, ToolCall
from vigente.runtime.content import raw_bytes
from vigente.runtime.service import Runtime

__all__ = ["Call", "Item", "Recorder", "Result", "Said", "ToolInfo", "Turn", "read_only_hint"]

_REPEAT = re.compile(r"#\d+$")


@dataclass(frozen=True, slots=True)
class Said:
    """A user or system message (``speaker``: who said it, a display name, when the framework
    names one: LangChain's ``name``)."""

    key: str
    role: str
    content: str
    speaker: str | None = None

    def fingerprint(self) -> str:
        return _hash(["said", self.role, self.content, *_named(self.speaker)])


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call a model turn asked for (``raw_arguments``: as the model wrote them)."""

    key: str
    name: str
    arguments: Mapping[str, Any]
    raw_arguments: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One model response: its text and the tool calls it made (a run of the participant);
    ``speaker``: the name its text was said under, when the framework gives one."""

    key: str
    text: str
    calls: tuple[Call, ...] = ()
    speaker: str | None = None

    def fingerprint(self) -> str:
        return _hash(["turn", self.text, [[c.key, c.name, dict(c.arguments)] for c in self.calls],
                      *_named(self.speaker)])


@dataclass(frozen=True, slots=True)
class Result:
    """A tool's output for the call ``key``, raw (``failed`` for an error)."""

    key: str
    status: str
    content: Any

    def fingerprint(self) -> str:
        data, _ = raw_bytes(self.content)
        return _result_print(self.status, hashlib.sha256(data).hexdigest())


Item = Said | Turn | Result


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """What the application's framework says of one of the agent's tools (its code, not the
    model: a trusted writer), declared in the conversation as a ``tool`` event."""

    name: str
    read_only: bool = False
    description: str | None = None


def read_only_hint(metadata: Any) -> bool:
    """Whether a tool's metadata declares it read-only: MCP's ``readOnlyHint`` annotation
    (as LangChain's MCP adapters copy it into ``tool.metadata``, or under ``annotations``),
    or a ``read_only`` key. Only the value ``True`` counts: anything else may write."""
    if not isinstance(metadata, Mapping):  # an MCP ToolAnnotations object (either SDK spelling)
        return any(getattr(metadata, key, None) is True
                   for key in ("readOnlyHint", "read_only_hint"))
    for key in ("readOnlyHint", "read_only_hint", "read_only"):
        if metadata.get(key) is True:
            return True
    annotations = metadata.get("annotations")
    return annotations is not None and read_only_hint(annotations)


def _named(speaker: str | None) -> list[Any]:
    """What a speaker adds to a fingerprint (nothing without one: an item recorded before
    speakers were kept is the same item)."""
    return [] if speaker is None else [["speaker", speaker]]


def _hash(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _result_print(status: str, sha256: str) -> str:
    return _hash(["result", status, sha256])


@dataclass(slots=True)
class _Entry:
    """An item as the branch holds it: the records it became and where they sit."""

    item: Item
    fingerprint: str
    position: int  # its records' lowest position (what a fork compares; read back before one)
    message: tuple[str, int] | None = None  # (id, seq) of its message record, if any
    calls: dict[str, str] = field(default_factory=dict)  # call key -> record id (a turn)
    record: str | None = None  # the message, run or call id the item was recorded as
    artifact: ToolArtifact | None = None  # a result read back from the graph


def _canonical(entries: Sequence[Any], key: Any) -> list[Any]:
    """Results that follow one another sorted by call key: parallel tool calls finish in any
    order, and the order they were recorded in is not a divergence."""
    out: list[Any] = []
    run: list[Any] = []
    for e in entries:
        if isinstance(key(e), Result):
            run.append(e)
            continue
        out.extend(sorted(run, key=lambda x: key(x).key))
        run = []
        out.append(e)
    out.extend(sorted(run, key=lambda x: key(x).key))
    return out


class Recorder:
    """One conversation of the runtime as seen by one participant (an agent).

    The conversation, the participant and the root branch are created on first use. Views of
    branches are cached: the recorder assumes it is the one writer of this participant's turns
    (records written by others are read when a branch is first seen).
    """

    def __init__(
        self,
        runtime: Runtime,
        conversation: str,
        *,
        account: str,
        participant: str,
        model: str = "unknown",
        provider: str = "openai",
        root: str = "main",
        mode: str = "chat",
    ) -> None:
        self.runtime = runtime
        self.conversation = conversation
        self.account = account
        self.participant = participant
        self.model = model
        self.provider = provider
        self.root = root
        self.mode = mode
        self._lock = threading.RLock()
        self._views: dict[str, list[_Entry]] = {}
        self._used: dict[str, set[str]] | None = None
        self._branches: dict[str, str | None] = {}
        self._declared: dict[str, tuple[bool, str | None]] | None = None

    # -- the conversation ---------------------------------------------------------------
    def ensure(self) -> None:
        """Create the conversation, the participant and the root branch if missing."""
        with self._lock:
            if self._used is not None:
                return
            rt = self.runtime
            with rt.transaction():
                try:
                    rt.conversation(self.conversation)
                except InvalidInput:  # not recorded yet: this agent's first call
                    rt.open_conversation(self.conversation, self.account)
                graph = rt.graph(self.conversation)
                used: dict[str, set[str]] = {}
                for n in graph.nodes:
                    used.setdefault(n.KIND, set()).add(n.id)
                    if n.KIND == "branch":
                        self._branches[n.id] = n.parent
                if self.participant not in used.get("participant", set()):
                    rt.add_participant(
                        self.conversation,
                        self.participant,
                        model=self.model,
                        provider=self.provider,
                    )
                if self.root not in self._branches:
                    rt.fork_branch(self.conversation, self.root)
                    self._branches[self.root] = None
                    used.setdefault("branch", set()).add(self.root)
            self._used = used

    def declare_tools(self, tools: Sequence[ToolInfo]) -> None:
        """Declare the agent's tools in the conversation (a ``tool`` event each), once per
        change: a tool declared read-only is the only kind a stale marker suggests running
        again."""
        self.ensure()
        with self._lock:
            if self._declared is None:
                self._declared = {
                    name: (d.read_only, d.description)
                    for name, d in self.runtime.tool_declarations(self.conversation).items()
                }
            changed = [t for t in tools
                       if self._declared.get(t.name) != (t.read_only, t.description)]
            if not changed:
                return
            with self.runtime.transaction():
                for t in changed:
                    self.runtime.declare_tool(self.conversation, t.name, read_only=t.read_only,
                                              description=t.description)
            for t in changed:
                self._declared[t.name] = (t.read_only, t.description)

    def branches(self) -> dict[str, str | None]:
        """Every branch of the conversation and its parent."""
        self.ensure()
        return dict(self._branches)

    def latest_branch(self) -> str:
        """The branch created last (a session's current branch)."""
        self.ensure()
        return list(self._branches)[-1]

    # -- reading a branch ---------------------------------------------------------------
    def items(self, branch: str) -> list[Item]:
        """The items the branch holds for this participant, in order (results with their
        raw content)."""
        with self._lock:
            return [self._item(e) for e in self._view(branch)]

    def _view(self, branch: str) -> list[_Entry]:
        self.ensure()
        if branch not in self._views:
            if branch not in self._branches:
                raise KeyError(branch)
            self._views[branch] = self._read(branch)
        return self._views[branch]

    def framework_id(self, record_id: str) -> str:
        """A record's id without the branch prefix a fork gave it."""
        head, sep, rest = record_id.partition("/")
        return rest if sep and head in self._branches else record_id

    def framework_call_id(self, call_ids: Mapping[str, str], wire: str) -> str:
        """The id to give the framework for the tool call that ``wire`` names in an assembled
        request: a short wire id the assembly made (``call_ids``, the record's map) as it is —
        it pairs the call with its result, which is all a model needs, at a few tokens instead
        of a framework's 15–20 — and any other id as the framework's own (a fork's prefix off)."""
        return wire if wire in call_ids else self.framework_id(wire)

    def _key(self, record_id: str) -> str:
        return _REPEAT.sub("", self.framework_id(record_id))

    def _read(self, branch: str) -> list[_Entry]:
        """A branch's view rebuilt from the graph (its records and what it inherits)."""
        graph = self.runtime.graph(self.conversation, branch=branch)
        entries: list[_Entry] = []
        turns: dict[str, _Entry] = {}
        calls: dict[str, tuple[_Entry, ToolCall]] = {}
        results: dict[str, _Entry] = {}
        for n in graph.nodes:
            if isinstance(n, ModelRun) and n.participant_id == self.participant:
                e = _Entry(Turn(self._key(n.id), ""), "", n.seq, record=n.id)
                turns[n.id] = e
                entries.append(e)
            elif isinstance(n, ToolCall) and n.run_id in turns:
                e = turns[n.run_id]
                assert isinstance(e.item, Turn)
                args = dict(n.arguments)
                raw = args.pop("__raw__", None)
                call = Call(self._key(n.id), n.name, args, raw)
                e.item = Turn(e.item.key, e.item.text, (*e.item.calls, call), e.item.speaker)
                e.calls[call.key] = n.id
                calls[n.id] = (e, n)
            elif isinstance(n, Message):
                if n.run_id is not None and n.run_id in turns:
                    e = turns[n.run_id]
                    assert isinstance(e.item, Turn)
                    e.item = Turn(e.item.key, n.content, e.item.calls, n.speaker)
                    e.message = (n.id, n.seq)
                elif n.role in ("user", "system"):
                    entries.append(
                        _Entry(
                            Said(self._key(n.id), n.role, n.content, n.speaker),
                            "",
                            n.seq,
                            (n.id, n.seq),
                            record=n.id,
                        )
                    )
            elif isinstance(n, ToolArtifact) and n.target_id in calls:
                found = results.get(n.target_id)
                if found is None:
                    found = _Entry(
                        Result(self._key(n.target_id), n.status, None),
                        "",
                        n.anchor,
                        record=n.target_id,
                    )
                    results[n.target_id] = found
                    entries.append(found)
                found.item = Result(found.item.key, n.status, None)
                found.fingerprint = _result_print(n.status, n.result_ref.sha256)
                found.artifact = n
        for e in entries:
            if not e.fingerprint:
                e.fingerprint = e.item.fingerprint()
        return _canonical(entries, lambda e: e.item)

    # -- writing ------------------------------------------------------------------------
    def sync(self, branch: str, items: Sequence[Item]) -> str:
        """Make the branch hold exactly ``items`` (appending what is new) and return the
        branch to use: ``branch`` itself, or a new fork when ``items`` diverge from it."""
        items = _canonical(list(items), lambda i: i)
        with self._lock:
            view = self._view(branch)
            common = 0
            for e, item in zip(view, items, strict=False):
                if e.item.key != item.key:
                    break
                if e.item != item:  # equal values are the common case, and cheap to compare
                    if e.fingerprint != item.fingerprint():
                        break
                    e.item = item  # the same record (read back without its raw content)
                common += 1
            if common < len(view):
                branch = self._fork(branch, common)
            self.append(branch, items[common:])
            return branch

    def append(self, branch: str, items: Sequence[Item]) -> None:
        """Record new items at the end of the branch."""
        with self._lock:
            view = self._view(branch)
            if not items:
                return
            with self.runtime.transaction():
                for item in items:
                    view.append(self._record(branch, item))
            if any(isinstance(i, Result) for i in items):
                view[:] = _canonical(view, lambda e: e.item)

    def fork(self, branch: str, keep: int) -> str:
        """A new branch of ``branch`` holding its first ``keep`` items (``0``: forked at its
        start, holding none); ``branch`` keeps everything it holds."""
        with self._lock:
            self._view(branch)
            return self._fork(branch, keep)

    def _fork(self, branch: str, keep: int) -> str:
        # the positions of records written here are the store's: read the branch back
        view = self._read(branch)
        kept, dropped = view[:keep], view[keep:]
        # The fork inherits the parent up to a message: one before everything it must not
        # hold (what it drops, and calls it holds unanswered, whose results it records itself)
        answered = {e.item.key for e in kept if isinstance(e.item, Result)}
        open_turns = [
            e.position
            for e in kept
            if isinstance(e.item, Turn) and any(c.key not in answered for c in e.item.calls)
        ]
        limit = min([e.position for e in dropped] + open_turns, default=None)
        anchor: tuple[str, int] | None = None
        for e in kept:
            if e.message is not None and (limit is None or e.message[1] < limit):
                if anchor is None or e.message[1] > anchor[1]:
                    anchor = e.message
        name = self._new_branch_name(branch)
        rt = self.runtime
        with rt.transaction():
            if anchor is None:  # no message to fork after: forked at the parent's start
                rt.fork_branch(self.conversation, name, parent=branch, at_start=True)
                self._branches[name] = branch
                again = kept
                fresh: list[_Entry] = []
            else:
                rt.fork_branch(self.conversation, name, parent=branch, fork_after=anchor[0])
                self._branches[name] = branch
                fresh = [e for e in kept if e.position <= anchor[1]]
                again = [e for e in kept if e.position > anchor[1]]
            assert self._used is not None
            self._used.setdefault("branch", set()).add(name)
            self._views[name] = fresh
            for e in again:  # what the fork holds but does not inherit: recorded on it anew
                self._views[name].append(self._record(name, self._item(e)))
        return name

    def _new_branch_name(self, branch: str) -> str:
        base = branch.split("~")[0]
        n = len(self._branches) + 1
        while f"{base}~{n}" in self._branches:
            n += 1
        return f"{base}~{n}"

    def _item(self, e: _Entry) -> Item:
        if isinstance(e.item, Result) and e.artifact is not None:
            a = e.artifact
            data = self.runtime.content(self.conversation, a.result_ref) or b""
            text = data.decode("utf-8", "surrogatepass")
            content: Any = json.loads(text) if a.result_ref.encoding == "json" else text
            return Result(e.item.key, e.item.status, content)
        return e.item

    def _id(self, kind: str, branch: str, key: str) -> str:
        assert self._used is not None
        used = self._used.setdefault(kind, set())
        base = key if branch == self.root else f"{branch}/{key}"
        record_id, n = base, 1
        while record_id in used:
            n += 1
            record_id = f"{base}#{n}"
        used.add(record_id)
        return record_id

    def _record(self, branch: str, item: Item) -> _Entry:
        rt, c = self.runtime, self.conversation
        if isinstance(item, Said):
            mid = self._id("message", branch, item.key)
            m = rt.record_message(c, mid, branch=branch, role=item.role, content=item.content,
                                  speaker=item.speaker)
            return _Entry(item, item.fingerprint(), m.seq, (mid, m.seq), record=mid)
        if isinstance(item, Turn):
            rid = self._id("run", branch, item.key)
            run = rt.start_run(c, rid, branch=branch, participant=self.participant, mode=self.mode)
            e = _Entry(item, item.fingerprint(), run.seq, record=rid)
            for call in item.calls:
                cid = self._id("tool_call", branch, call.key)
                rt.record_tool_call(
                    c,
                    cid,
                    run=rid,
                    name=call.name,
                    arguments=dict(call.arguments),
                    raw_arguments=call.raw_arguments,
                )
                e.calls[call.key] = cid
            if item.text:
                mid = self._id("message", branch, item.key)
                m = rt.record_message(
                    c, mid, branch=branch, role="assistant", content=item.text, run=rid,
                    speaker=item.speaker,
                )
                e.message = (mid, m.seq)
            return e
        cid = self._call_of(branch, item.key)
        artifact = rt.record_tool_result(c, cid, status=item.status, content=item.content)
        return _Entry(item, item.fingerprint(), artifact.anchor, record=cid)

    def _call_of(self, branch: str, key: str) -> str:
        """The call record a result answers: the branch's latest call with that key."""
        for e in reversed(self._views[branch]):
            if isinstance(e.item, Turn) and key in e.calls:
                return e.calls[key]
        raise InvalidInput(
            f"a tool result for call {key!r}, which no model turn on branch "
            f"{branch!r} asked for: record the model turn first"
        )
