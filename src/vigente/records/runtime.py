"""The runtime graph's records: immutable values, appended with the time they became known.

Every node of the graph (seed 003, 4.1) is a frozen dataclass with its conversation, its id and
``known_from``, the knowledge time at which the runtime learned it. Nothing is updated in place:
a result for a call, a superseding memory, a promotion or a share is a new record, so "what did
the runtime hold at ``k``?" is a filter ``known_from <= k``. The store keeps every record as one
row of :class:`RuntimeRecord` (the columns it indexes, the rest as JSON); the typed classes
convert to and from it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from vigente.time import Instant

__all__ = [
    "FRESHNESS",
    "MODES",
    "PRIVACY",
    "PROMOTION_AS",
    "STATUSES",
    "RecallDoc",
    "VISIBILITY",
    "Branch",
    "ContentRef",
    "Conversation",
    "ContinuationCheckpoint",
    "Link",
    "Message",
    "ModelRun",
    "Node",
    "Participant",
    "Promotion",
    "RuntimeRecord",
    "Share",
    "SkillState",
    "ToolArtifact",
    "ToolCall",
    "ToolDeclaration",
    "ToolMemory",
    "UserMemory",
    "from_record",
    "term_weight",
    "to_record",
]

MODES = ("chat", "multi_model", "debate", "subagent", "parent_resume", "scheduled", "branch_send")
PRIVACY = ("public", "user", "oauth", "google", "secret")
VISIBILITY = ("participant", "branch", "conversation", "audit")
STATUSES = ("pending", "succeeded", "failed", "deferred")
FRESHNESS = ("volatile", "session", "scoped", "durable", "permanent")
PROMOTION_AS = ("final_report", "file_ref", "failure", "summary")

Status = Literal["pending", "succeeded", "failed", "deferred"]


@dataclass(frozen=True, slots=True)
class RuntimeRecord:
    """One stored row of the graph: the columns a backend indexes, the rest in ``payload``.

    ``anchor`` is the position that decides fork inheritance when it is not the row's own
    ``seq`` (an artifact sits where its call sits); ``seq`` is assigned by the store, in
    insertion order.
    """

    conversation_id: str
    kind: str
    record_id: str
    known_from: Instant
    payload: dict[str, Any]
    branch_id: str | None = None
    participant_id: str | None = None
    run_id: str | None = None
    target_id: str | None = None
    visibility: str | None = None
    anchor: int | None = None
    seq: int = 0

    @property
    def position(self) -> int:
        return self.seq if self.anchor is None else self.anchor

    def payload_json(self) -> str:
        return json.dumps(self.payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def term_weight(count: int, length: int) -> int:
    """How much a term weighs in a record, for the recall index's order: BM25's term part
    (k1 1.2, b 0.75) against a fixed length of 40 terms, so that it never changes with what
    is indexed later (the ranking itself uses the statistics as known at k)."""
    return int(count * 2.2 / (count + 1.2 * (0.25 + 0.75 * length / 40)) * 1_000_000)


@dataclass(frozen=True, slots=True)
class RecallDoc:
    """One record as the recall index holds it (vigente.runtime.recall): its searchable text
    (bounded, credentials redacted), the folded terms of that text with their counts, and who
    spoke it (``speaker``: a message's role, ``memory``/``user_memory``, or the tool's name;
    ``name``: the message's speaker, a person's display name, when the log gave one)."""

    conversation_id: str
    seq: int
    record_id: str
    kind: str  # message | memory | artifact (RUNTIME.md section 4)
    speaker: str
    participant_id: str | None
    known_micros: int
    text: str
    terms: dict[str, int]  # (empty when read back from the store)
    length: int  # how many terms the text holds
    name: str | None = None  # the message's speaker (RUNTIME.md section 1), when it has one

@dataclass(frozen=True, slots=True)
class Conversation:
    """The container of a chat, owned by one account (the unit of deletion)."""

    id: str
    account: str
    known_from: Instant
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ContentRef:
    """Raw bytes kept for an artifact: hash and size always, the bytes inline in the database
    when small, in the content-addressed blob store over the threshold. ``encoding`` is
    ``utf-8`` when the bytes are valid UTF-8 text, ``json`` when that text was a JSON value,
    else ``binary``. ``erased`` names why the bytes are gone (retention), hash and size stay."""

    sha256: str
    bytes: int
    encoding: str
    in_blob: bool
    erased: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContentRef:
        return cls(**data)


# -- graph nodes ---------------------------------------------------------------------------
# Field names that are columns of RuntimeRecord; every other field goes into the payload.
_COLUMNS = ("branch_id", "participant_id", "run_id", "target_id", "visibility", "anchor")
_INSTANTS = frozenset({"observed_at", "stale_after"})
_REFS = frozenset({"arguments_ref", "result_ref"})


@dataclass(frozen=True, slots=True)
class Participant:
    """A model configuration (or persona) taking part in the conversation."""

    KIND: ClassVar[str] = "participant"
    conversation_id: str
    id: str
    known_from: Instant
    model: str
    provider: str = "openai"
    label: str | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Branch:
    """An ordered path through the conversation; inherits its parent's records up to and
    including the message ``fork_after`` (``fork_position`` is that message's position)."""

    KIND: ClassVar[str] = "branch"
    conversation_id: str
    id: str
    known_from: Instant
    parent: str | None = None
    fork_after: str | None = None
    fork_position: int | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ModelRun:
    """One generation attempt of a participant on a branch; ``parent_run`` for a subagent."""

    KIND: ClassVar[str] = "run"
    conversation_id: str
    id: str
    known_from: Instant
    branch_id: str
    participant_id: str
    mode: str
    parent_run: str | None = None
    visibility: str = "participant"
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Message:
    """A node of the user-visible transcript."""

    KIND: ClassVar[str] = "message"
    conversation_id: str
    id: str
    known_from: Instant
    branch_id: str
    role: str
    content: str
    run_id: str | None = None
    participant_id: str | None = None
    visibility: str = "branch"
    #: Who logged it when a model-facing writer did (an agent key, ``vigente mcp``): the
    #: writer's claim, labelled so in a request and in ``explain`` (application/roles.py)
    claimed_by: str | None = None
    #: Who said it when several people share a role (a display name, as OpenAI's ``name``;
    #: checked by :func:`vigente.runtime.speakers.check_speaker`); None: nobody named
    speaker: str | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call a model run asked for (status lives on its artifacts)."""

    KIND: ClassVar[str] = "tool_call"
    conversation_id: str
    id: str
    known_from: Instant
    run_id: str
    branch_id: str
    participant_id: str
    name: str
    arguments: dict[str, Any]
    visibility: str = "participant"
    claimed_by: str | None = None  # a model-facing writer's claim (see Message)
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ToolArtifact:
    """The raw, persistent record of one tool execution, kept before any display truncation.

    ``id`` is the call's id (``call@2`` for a later result of a deferred call); ``target_id``
    is the call. Owner, branch, privacy, visibility and sharing decide who may see it.
    """

    KIND: ClassVar[str] = "artifact"
    conversation_id: str
    id: str
    known_from: Instant
    target_id: str
    run_id: str
    branch_id: str
    participant_id: str
    tool_name: str
    status: str
    arguments_ref: ContentRef
    result_ref: ContentRef
    anchor: int
    runtime_kind: str
    privacy: str = "public"
    visibility: str = "participant"
    retry_critical: bool = False
    shared_with: tuple[str, ...] = ()
    active_skills: tuple[str, ...] = ()
    provider: str | None = None
    tool_version: str | None = None
    is_error: bool = False
    claimed_by: str | None = None  # a model-facing writer's claim (see Message)
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ToolMemory:
    """A compact, model-facing record derived from artifacts (or other memories), with its
    provenance and freshness. ``supersedes`` and ``conflicts_with`` are given when it is
    written; who supersedes *it* is read from later :class:`Link` records.

    ``form``: how ``facts`` stands for its artifact's JSON result (``object``: the result
    object compacted; ``value``: ``{"result": …}`` for a result that is not an object; ``None``:
    not the result's compact form). ``lossless``: the runtime decoded ``facts`` back to every
    key, path and value of the result (``extract.decodes_to``). ``writer``: who wrote a memory
    the extractor did not derive; ``asserted``: the paths of its facts that no source holds
    exactly, and ``summary`` when its summary states a value no source holds: the writer's
    own claims (such a memory never stands in a result's place); ``unsupported``: those
    summary values, one ``{"kind", "value", "reason"}`` each."""

    KIND: ClassVar[str] = "memory"
    conversation_id: str
    id: str
    known_from: Instant
    summary: str
    sources: tuple[str, ...]
    source_tools: tuple[str, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    branch_id: str | None = None
    participant_id: str | None = None
    run_id: str | None = None
    confidence: float | None = None
    confidence_source: str | None = None
    confidence_reason: str | None = None
    ambiguity_notes: tuple[str, ...] = ()
    limit_notes: tuple[str, ...] = ()
    privacy: str = "public"
    visibility: str = "participant"
    freshness: str = "scoped"
    observed_at: Instant | None = None
    stale_after: Instant | None = None
    revalidate_with: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    resolution_status: str | None = None
    correction_attempts: int = 0
    supersedes: tuple[str, ...] = ()
    conflicts_with: tuple[str, ...] = ()
    promotion_policy: str = "on_request"
    extractor: str | None = None
    anchor: int | None = None
    form: str | None = None
    lossless: bool = False
    writer: str | None = None
    asserted: tuple[str, ...] = ()
    unsupported: tuple[dict[str, str], ...] = ()
    #: What the redaction step took out of the result before the extractor read it: one
    #: ``{"rule", "path"}`` per credential (the rule that matched and where, never the value).
    redactions: tuple[dict[str, str], ...] = ()
    #: a model-facing writer's claim: written by one, or derived from a result one logged
    claimed_by: str | None = None
    seq: int = 0

    def is_stale(self, at: Instant) -> bool:
        return self.stale_after is not None and at >= self.stale_after


@dataclass(frozen=True, slots=True)
class UserMemory:
    """Personalisation: a fact about the user, from the user's own messages, never from tools."""

    KIND: ClassVar[str] = "user_memory"
    conversation_id: str
    id: str
    known_from: Instant
    summary: str
    sources: tuple[str, ...]
    facts: dict[str, Any] = field(default_factory=dict)
    branch_id: str | None = None
    participant_id: str | None = None
    privacy: str = "user"
    visibility: str = "conversation"
    supersedes: tuple[str, ...] = ()
    #: written by a model-facing writer, or citing a message one logged: then not "from the
    #: user's own messages"
    claimed_by: str | None = None
    #: who stated it: the speaker of the messages it cites (None: they name nobody)
    speaker: str | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class SkillState:
    """Loaded skills, active profile and direct tools visible to one run."""

    KIND: ClassVar[str] = "skill_state"
    conversation_id: str
    id: str
    known_from: Instant
    run_id: str
    branch_id: str
    participant_id: str
    skills: tuple[str, ...]
    tools: tuple[str, ...] = ()
    profile: str | None = None
    visibility: str = "participant"
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ContinuationCheckpoint:
    """Resumable runtime state across action boundaries."""

    KIND: ClassVar[str] = "checkpoint"
    conversation_id: str
    id: str
    known_from: Instant
    run_id: str
    branch_id: str
    participant_id: str
    state: dict[str, Any]
    visibility: str = "participant"
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Promotion:
    """A child run's record made visible to its parent run's participant (``as_``: what it
    became for the parent: final report, file reference, failure state, summary)."""

    KIND: ClassVar[str] = "promotion"
    conversation_id: str
    id: str
    known_from: Instant
    run_id: str
    target_id: str
    participant_id: str
    as_: str
    parent_run: str
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Share:
    """A record made visible to another participant."""

    KIND: ClassVar[str] = "share"
    conversation_id: str
    id: str
    known_from: Instant
    target_id: str
    participant_id: str
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Link:
    """A directed relation between memories, appended when the later one is written:
    ``supersedes`` (``id``'s source replaces ``target_id``) or ``conflicts_with``."""

    KIND: ClassVar[str] = "link"
    conversation_id: str
    id: str
    known_from: Instant
    relation: str
    source_id: str
    target_id: str
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ToolDeclaration:
    """What a trusted writer declares about a tool of the conversation (the ``tool`` event):
    ``read_only`` — it only reads, so a stale marker may suggest reading again with it (a
    tool not declared read-only may change the world: no hint ever asks a model to re-run
    it). A later declaration of the same ``name`` replaces an earlier one from its knowledge
    time on (``id`` is the name, then ``name@2``, ``name@3`` …)."""

    KIND: ClassVar[str] = "tool"
    conversation_id: str
    id: str
    known_from: Instant
    name: str
    read_only: bool = False
    description: str | None = None
    seq: int = 0


Node = (
    Participant | Branch | ModelRun | Message | ToolCall | ToolArtifact | ToolMemory | UserMemory
    | SkillState | ContinuationCheckpoint | Promotion | Share | Link | ToolDeclaration
)
_CLASSES: dict[str, type[Any]] = {
    cls.KIND: cls
    for cls in (Participant, Branch, ModelRun, Message, ToolCall, ToolArtifact, ToolMemory,
                UserMemory, SkillState, ContinuationCheckpoint, Promotion, Share, Link,
                ToolDeclaration)
}
_NAMES: dict[str, frozenset[str]] = {
    kind: frozenset(f.name for f in dataclasses.fields(cls)) for kind, cls in _CLASSES.items()
}


def _plain(value: Any) -> Any:
    if isinstance(value, Instant):
        return value.isoformat()
    if isinstance(value, ContentRef):
        return value.as_dict()
    if isinstance(value, tuple):
        return list(value)
    return value


def to_record(node: Node) -> RuntimeRecord:
    """The stored row of a typed node."""
    columns: dict[str, Any] = {}
    payload: dict[str, Any] = {}
    for f in dataclasses.fields(node):
        if f.name in ("conversation_id", "id", "known_from", "seq"):
            continue
        value = getattr(node, f.name)
        if f.name in ("claimed_by", "speaker") and value is None:
            continue  # a row without one stays as it was before the field existed
        if f.name in _COLUMNS:
            columns[f.name] = value
        else:
            payload[f.name] = _plain(value)
    return RuntimeRecord(node.conversation_id, node.KIND, node.id, node.known_from, payload,
                         seq=node.seq, **columns)


@functools.lru_cache(maxsize=4096)
def _payload_instant(text: str) -> Instant:
    """An instant written by :func:`_plain` (immutable, and the same few recur)."""
    from vigente.time import parse_instant

    return parse_instant(text)


#: Typed nodes of the records converted lately, by record object: a store hands out the same
#: record again for the same row (``store.record_rows.DecodedRows``), and nodes are immutable.
_TYPED: dict[int, tuple[RuntimeRecord, Any]] = {}
_TYPED_LIMIT = 10_000


_FORGET: list[Callable[[], None]] = []


def when_forgotten(hook: Callable[[], None]) -> None:
    """Call ``hook`` whenever the typed nodes kept are forgotten (a cache keyed by node)."""
    _FORGET.append(hook)


def forget_typed() -> None:
    """Forget the typed nodes kept (a purge forgets what it deleted), and what ``hook``s of
    :func:`when_forgotten` keep by node."""
    _TYPED.clear()
    for hook in _FORGET:
        hook()


def from_record(record: RuntimeRecord) -> Any:
    """The typed node of a stored row."""
    found = _TYPED.get(id(record))
    if found is not None and found[0] is record:
        return found[1]
    node = _from_record(record)
    if len(_TYPED) >= _TYPED_LIMIT:
        _TYPED.clear()
    _TYPED[id(record)] = (record, node)
    return node


def _from_record(record: RuntimeRecord) -> Any:
    cls = _CLASSES[record.kind]
    kwargs: dict[str, Any] = {}
    names = _NAMES[record.kind]
    for name, value in record.payload.items():
        if name not in names:
            continue  # a field a newer vigente wrote: ignored, never an error
        if name in _INSTANTS and value is not None:
            value = _payload_instant(value)
        elif name in _REFS:
            value = ContentRef.from_dict(value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    for name in _COLUMNS:
        if name in names:
            kwargs[name] = getattr(record, name)
    return cls(conversation_id=record.conversation_id, id=record.record_id,
               known_from=record.known_from, seq=record.seq, **kwargs)
