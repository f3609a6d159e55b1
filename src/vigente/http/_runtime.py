"""Endpoints of the agent runtime and its context assembly: the event log of RUNTIME.md (one
event or a batch, atomic like ``vigente runtime import``), the conversation graph with its
branches, runs and transcript, ``assemble``, ``explain`` (why-not, rebuild, diff) and the purge
of an account. Each calls ``vg.runtime`` / ``vg.assembly`` of the caller's tenant store, so a
conversation or an assembly of another tenant is, to this tenant, an id it does not hold: 404.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from vigente.api import Vigente
from vigente.assemble import policy_from_document
from vigente.errors import ImportFileError, InvalidInput, RuntimeHistoryConflict
from vigente.http._deps import TenantStore
from vigente.http._errors import ERROR_RESPONSES, ApiError, http_advice
from vigente.http._evidence import found
from vigente.http._paths import IdRoute
from vigente.http.models import Date, _has_nul, _In, _Out

__all__ = [
    "AssembleIn",
    "AssemblyOut",
    "EventKind",
    "Format",
    "Mode",
    "RuntimeEventIn",
    "RuntimeEventsIn",
    "RecallIn",
    "RecallOut",
    "RuntimeImportOut",
    "apply_events",
    "assemble",
    "explain",
    "recall",
    "router",
]

# Ids in paths may hold "/", raw or as %2F (vigente.http._paths): each id is declared
# `{name:path}`, and a route with a suffix (`/branches`, `/why-not` …) comes before the bare one.
router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, route_class=IdRoute)

# The contract's vocabularies as schema enums (tests/test_http_runtime.py keeps them equal to
# the runtime's EVENTS, MODES and FORMATS).
EventKind = Literal[
    "conversation",
    "participant",
    "branch",
    "run",
    "message",
    "tool_call",
    "tool_result",
    "memory",
    "skill_state",
    "checkpoint",
    "promote",
    "share",
    "tool",
]
Mode = Literal[
    "chat", "multi_model", "debate", "subagent", "parent_resume", "scheduled", "branch_send"
]
Format = Literal["openai-chat", "openai-responses", "anthropic", "langchain"]
Id = Annotated[str, Field(min_length=1, max_length=1024)]
ConversationId = Annotated[
    str, Path(min_length=1, max_length=1024, description="the conversation's id (may hold /)")
]
AssemblyId = Annotated[str, Path(min_length=1, max_length=1024, description="an assembly's id")]
AccountId = Annotated[
    str, Path(min_length=1, max_length=1024, description="the account's id (may hold /)")
]
KnownAt = Annotated[
    str | None,
    Query(max_length=64, description="k: the graph as known then (default: now)"),
]


# -- models ------------------------------------------------------------------------------------
class RuntimeEventIn(BaseModel):
    """One event of the runtime's event log (RUNTIME.md §1): ``event`` names its kind, every
    kind but ``conversation`` names its ``conversation``; the other fields are the kind's
    (``id``, ``branch``, ``role``, ``content``, ``call``, ``status`` …) and are checked by the
    runtime, which names the field to fix."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {"event": "conversation", "id": "trip-42", "account": "acct-demo"},
                {
                    "event": "message",
                    "conversation": "trip-42",
                    "id": "m1",
                    "branch": "main",
                    "role": "user",
                    "content": "Trains to Milan?",
                },
            ]
        },
    )

    event: EventKind
    conversation: Id | None = Field(
        default=None, description="the conversation's id (every event but `conversation`)"
    )
    at: Date | None = Field(
        default=None,
        description="when it happened (knowledge time); default: the previous event's, or now",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        if _has_nul(data):
            raise ValueError("a string contains NUL (\\u0000), which no store can hold: remove it")
        return data


class RuntimeEventsIn(_In):
    """A batch of events, applied in order, all or nothing."""

    events: Annotated[list[RuntimeEventIn], Field(min_length=1, max_length=10_000)]
    now: Date | None = Field(
        default=None, description="the import's clock, for events without `at` (default: now)"
    )


class RuntimeImportOut(_Out):
    events: int
    by_kind: dict[str, int]
    conversations: list[str]
    warnings: list[str] = Field(default_factory=list, description="lines stored that look "
                                "mis-written (e.g. a run's answer written after its results)")


class ConversationOut(_Out):
    id: str
    account: str
    title: str | None
    known_from: str


class ConversationsOut(_Out):
    conversations: list[ConversationOut]


class GraphRecordOut(_Out):
    kind: str
    id: str
    known_from: str
    seq: int


class GraphOut(_Out):
    conversation: ConversationOut
    known_at: str
    records: list[GraphRecordOut]


class BranchOut(_Out):
    id: str
    parent: str | None
    fork_after: str | None
    known_from: str


class BranchesOut(_Out):
    conversation: str
    known_at: str
    branches: list[BranchOut]


class RunOut(_Out):
    id: str
    branch: str | None
    participant: str | None
    mode: str
    parent_run: str | None
    known_from: str


class RunsOut(_Out):
    conversation: str
    known_at: str
    runs: list[RunOut]


class TranscriptMessageOut(_Out):
    id: str
    role: str
    content: str
    branch: str | None
    known_from: str


class TranscriptOut(_Out):
    conversation: str
    branch: str
    messages: list[TranscriptMessageOut]


class AssemblyIdsOut(_Out):
    conversation: str
    assemblies: list[str]


class AssembleIn(_In):
    """The next model request of ``participant`` on ``branch`` (the options of
    ``vigente assemble``)."""

    conversation: Id
    branch: Id
    participant: Id
    mode: Mode = "chat"
    provider: Annotated[str, Field(min_length=1, max_length=256)] | None = Field(
        default=None, description="the model provider (default: the participant's)"
    )
    format: Format = "openai-chat"
    budget: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        default=None, description="token budget (default: the policy's)"
    )
    rehydrate: Annotated[list[Id], Field(max_length=256)] = Field(
        default=[], description="artifacts whose raw evidence is asked for (the policy may refuse)"
    )
    as_of: Date | None = Field(
        default=None, description="assemble from the graph as known then (default: now)"
    )
    query: Annotated[str, Field(min_length=1, max_length=10_000)] | None = Field(
        default=None,
        description="what the call is about (default: the latest user message): steers which "
        "older records are recalled when the history does not fit",
    )
    policy: dict[str, Any] | None = Field(
        default=None,
        description="a policy document (the TOML of `vigente policy show` as JSON, with its own "
        "`id` and `version`); default: vigente's own",
    )


class PolicyRef(_Out):
    id: str
    version: int
    hash: str


class DecisionRef(_Out):
    ref: str
    kind: str
    rule: str


class IncludedOut(DecisionRef):
    as_: str = Field(alias="as")


class OmittedOut(DecisionRef):
    reason: str


class TokensOut(_Out):
    assembled: int
    replay: int
    encoding: str


class ExplainOut(_Out):
    """A recorded assembly: what reached the model (as what) and why the rest did not."""

    assembly_id: str
    policy: PolicyRef
    assembler_version: str
    snapshot: str
    format: str
    included: list[IncludedOut]
    omitted: list[OmittedOut]
    tokens: TokensOut


class AssemblyOut(ExplainOut):
    """An assembly and the request itself (``messages`` in the format asked for)."""

    messages: list[Any]


class WhyNotOut(_Out):
    ref: str
    candidate: bool
    reason: str | None
    rule: str


class RebuildOut(_Out):
    assembly_id: str
    matches: bool
    snapshot: str
    differences: dict[str, Any]


class DiffOut(_Out):
    before: str
    after: str
    policy_changed: bool
    tokens: list[int]
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    changed: list[dict[str, Any]]


class PurgeOut(_Out):
    account: str
    conversations: list[str]
    rows: int
    blobs: int
    compaction: str | None
    dry_run: bool
    complete: bool = Field(
        True, description="the store's files hold none of the account's text (false: see "
        "`compaction` for why, and send the DELETE again to finish; answered with 202)")


# -- shared with the MCP tools -----------------------------------------------------------------
def apply_events(
    vg: Vigente,
    events: list[dict[str, Any]],
    now: str | None = None,
    *,
    batch: bool = True,
    trusted: bool = True,
) -> dict[str, Any]:
    """Import ``events`` atomically; in a ``batch`` a refused event is named by its index.
    ``trusted`` false for a model-facing surface (the MCP tools): no instructions from it."""
    lines = [json.dumps(e, ensure_ascii=False) for e in events]
    try:
        report = vg.runtime.import_events(lines, now=now, trusted=trusted)
    except ImportFileError as exc:
        message = str(exc).removeprefix(f"line {exc.line_number}: ")
        where = f"events[{exc.line_number - 1}]: " if batch else ""
        raise ApiError(400, "import_file_error",
                       f"{where}{http_advice(message)}; nothing was written") from None
    except RuntimeHistoryConflict as exc:  # another writer got there first: a client may retry
        line = exc.line_number or 1
        where = f"events[{line - 1}]: " if batch else ""
        raise ApiError(409, "history_rewrite",
                       f"{where}{http_advice(exc.reason)}; nothing was written") from None
    return {
        "events": report.events,
        "by_kind": report.by_kind,
        "conversations": list(report.conversations),
        "warnings": list(report.warnings),
    }


def _conversation(vg: Vigente, conversation: str) -> None:
    """404 for a conversation this store does not hold (another tenant's, or none)."""
    found(lambda: vg.runtime.conversation(conversation))


def _assembly(vg: Vigente, assembly_id: str) -> dict[str, Any]:
    return found(lambda: vg.assembly.record(assembly_id))


def assemble(vg: Vigente, body: AssembleIn) -> dict[str, Any]:
    """Assemble and record the request ``body`` describes (``/v1/assemble`` and MCP)."""
    _conversation(vg, body.conversation)
    policy = None
    if body.policy is not None:
        if "id" not in body.policy or "version" not in body.policy:
            raise InvalidInput(
                "policy: a policy document must give its own `id` and `version` (a changed "
                "policy is a new version); omit `policy` for vigente's own"
            )
        policy = policy_from_document(body.policy, "in the request")
    result = vg.assembly.assemble(
        body.conversation,
        body.branch,
        body.participant,
        mode=body.mode,
        provider=body.provider,
        format=body.format,
        budget=body.budget,
        policy=policy,
        rehydrate=tuple(body.rehydrate),
        as_of=body.as_of,
        query=body.query,
    )
    return result.as_dict()


def explain(
    vg: Vigente,
    assembly_id: str,
    *,
    why_not: str | None = None,
    rebuild: bool = False,
    diff_from: str | None = None,
) -> dict[str, Any]:
    """``vigente explain`` with at most one of ``why_not``, ``rebuild``, ``diff_from``."""
    if sum((why_not is not None, rebuild, diff_from is not None)) > 1:
        raise InvalidInput("give one of why_not, rebuild, diff_from (or none)")
    _assembly(vg, assembly_id)
    if diff_from is not None:
        _assembly(vg, diff_from)
        return vg.assembly.diff(diff_from, assembly_id)
    if why_not is not None:
        return vg.assembly.why_not(assembly_id, why_not)
    if rebuild:
        return vg.assembly.rebuild(assembly_id)
    return vg.assembly.explain(assembly_id)


# -- event log ---------------------------------------------------------------------------------
@router.post("/runtime/events", response_model=RuntimeImportOut, tags=["runtime"])
def events(body: RuntimeEventsIn, vg: TenantStore) -> dict[str, Any]:
    """Apply a batch of runtime events (RUNTIME.md §1) in order, all or nothing; a refused
    event is named by its index (`events[3]: …`) and nothing of the batch is written."""
    return apply_events(vg, [e.model_dump(exclude_none=True) for e in body.events], body.now)


@router.post("/runtime/event", response_model=RuntimeImportOut, tags=["runtime"])
def event(body: RuntimeEventIn, vg: TenantStore) -> dict[str, Any]:
    """Apply one runtime event (RUNTIME.md §1)."""
    return apply_events(vg, [body.model_dump(exclude_none=True)], batch=False)


# -- conversation reads ------------------------------------------------------------------------
@router.get("/conversations", response_model=ConversationsOut, tags=["runtime"])
def conversations(
    vg: TenantStore,
    account: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
) -> dict[str, Any]:
    """The conversations this tenant holds (of one account, with ``account``)."""
    return {
        "conversations": [
            {
                "id": c.id,
                "account": c.account,
                "title": c.title,
                "known_from": c.known_from.isoformat(),
            }
            for c in vg.runtime.conversations(account)
        ]
    }


@router.get(
    "/conversations/{conversation:path}/branches", response_model=BranchesOut, tags=["runtime"]
)
def branches(
    conversation: ConversationId, vg: TenantStore, known_at: KnownAt = None
) -> dict[str, Any]:
    """The branches of a conversation: each one's parent and the message it forks after."""
    _conversation(vg, conversation)
    g = vg.runtime.graph(conversation, known_at=known_at)
    return {
        "conversation": conversation,
        "known_at": g.known_at.isoformat(),
        "branches": [
            {
                "id": b.id,
                "parent": b.parent,
                "fork_after": b.fork_after,
                "known_from": b.known_from.isoformat(),
            }
            for b in g.of_kind("branch")
        ],
    }


@router.get("/conversations/{conversation:path}/runs", response_model=RunsOut, tags=["runtime"])
def runs(
    conversation: ConversationId,
    vg: TenantStore,
    known_at: KnownAt = None,
    branch: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
) -> dict[str, Any]:
    """The model runs of a conversation (of one branch and its ancestry, with ``branch``)."""
    _conversation(vg, conversation)
    g = vg.runtime.graph(conversation, known_at=known_at, branch=branch)
    return {
        "conversation": conversation,
        "known_at": g.known_at.isoformat(),
        "runs": [
            {
                "id": r.id,
                "branch": r.branch_id,
                "participant": r.participant_id,
                "mode": r.mode,
                "parent_run": r.parent_run,
                "known_from": r.known_from.isoformat(),
            }
            for r in g.of_kind("run")
        ],
    }


@router.get(
    "/conversations/{conversation:path}/transcript", response_model=TranscriptOut, tags=["runtime"]
)
def transcript(
    conversation: ConversationId,
    vg: TenantStore,
    branch: Annotated[str, Query(min_length=1, max_length=1024)] = "main",
    known_at: KnownAt = None,
) -> dict[str, Any]:
    """The user-visible transcript of a branch (runtime records never appear in it)."""
    _conversation(vg, conversation)
    messages = vg.runtime.transcript(conversation, branch, known_at=known_at)
    return {
        "conversation": conversation,
        "branch": branch,
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "branch": m.branch_id,
                "known_from": m.known_from.isoformat(),
            }
            for m in messages
        ],
    }


@router.get(
    "/conversations/{conversation:path}/assemblies",
    response_model=AssemblyIdsOut,
    tags=["assembly"],
)
def assemblies(conversation: ConversationId, vg: TenantStore) -> dict[str, Any]:
    """The recorded assemblies of a conversation, oldest first."""
    _conversation(vg, conversation)
    return {"conversation": conversation, "assemblies": vg.store.runtime_assembly_ids(conversation)}


@router.get("/conversations/{conversation:path}", response_model=GraphOut, tags=["runtime"])
def graph(
    conversation: ConversationId,
    vg: TenantStore,
    known_at: KnownAt = None,
    branch: Annotated[
        str | None,
        Query(min_length=1, max_length=1024, description="only this branch and what it inherits"),
    ] = None,
    content: Annotated[bool, Query(description="include message and result content")] = True,
) -> dict[str, Any]:
    """The conversation graph as known at ``known_at``: branches, runs, messages, tool calls,
    artifacts, memories and links, in graph order."""
    _conversation(vg, conversation)
    return vg.runtime.graph(conversation, known_at=known_at, branch=branch).as_dict(content=content)


# -- assemble and explain ----------------------------------------------------------------------
@router.post(
    "/assemble", response_model=AssemblyOut, response_model_by_alias=True, tags=["assembly"]
)
def assemble_endpoint(body: AssembleIn, vg: TenantStore) -> dict[str, Any]:
    """Build (and record) the next model request of ``participant`` on ``branch`` under the
    policy: the messages, what was included as what, what was omitted and why, and its tokens
    against transcript replay (RUNTIME.md §2)."""
    return assemble(vg, body)


@router.get("/assemblies/{assembly_id:path}/why-not", response_model=WhyNotOut, tags=["assembly"])
def why_not(
    assembly_id: AssemblyId,
    vg: TenantStore,
    ref: Annotated[str, Query(min_length=1, max_length=1024, description="a record id")],
) -> dict[str, Any]:
    """Why ``ref`` did not reach the model in this assembly: its reason and rule, or why it
    was never a candidate (``candidate`` false)."""
    return explain(vg, assembly_id, why_not=ref)


@router.get("/assemblies/{assembly_id:path}/rebuild", response_model=RebuildOut, tags=["assembly"])
def rebuild(assembly_id: AssemblyId, vg: TenantStore) -> dict[str, Any]:
    """Assemble again from the stored snapshot and policy (nothing is stored): does the
    selection match?"""
    return explain(vg, assembly_id, rebuild=True)


@router.get("/assemblies/{assembly_id:path}/diff", response_model=DiffOut, tags=["assembly"])
def diff(
    assembly_id: AssemblyId,
    vg: TenantStore,
    before: Annotated[
        str, Query(min_length=1, max_length=1024, description="the earlier assembly's id")
    ],
) -> dict[str, Any]:
    """What changed from assembly ``before`` to this one: added, removed (and why), changed."""
    return explain(vg, assembly_id, diff_from=before)


@router.get(
    "/assemblies/{assembly_id:path}",
    response_model=ExplainOut,
    response_model_by_alias=True,
    tags=["assembly"],
)
def explain_endpoint(assembly_id: AssemblyId, vg: TenantStore) -> dict[str, Any]:
    """A recorded assembly: policy, snapshot, included (as what) and omitted (why), tokens and
    timings (RUNTIME.md §3)."""
    return explain(vg, assembly_id)


# -- erasure -----------------------------------------------------------------------------------
@router.delete("/accounts/{account:path}", response_model=PurgeOut, tags=["runtime"],
               responses={202: {"model": PurgeOut,
                                "description": "rows deleted; the files are not clean yet"}})
def purge_account(
    account: AccountId,
    vg: TenantStore,
    dry_run: Annotated[
        bool, Query(description="say what would be deleted; delete nothing")
    ] = False,
) -> Any:
    """Delete an account's conversations and everything derived from them (artifacts, blobs,
    memories, assemblies), leaving none of their text in the store. 200: done, and the store
    checked its files; 202: the rows are deleted but the files could not yet be cleaned (a
    reader held an old snapshot): `compaction` says why; send the DELETE again to finish."""
    report = vg.runtime.purge_account(account, dry_run=dry_run)
    body: dict[str, Any] = {
        "account": report.account,
        "conversations": list(report.conversations),
        "rows": report.rows,
        "blobs": report.blobs,
        "compaction": report.compaction,
        "dry_run": report.dry_run,
        "complete": report.complete,
    }
    if not report.complete:
        return JSONResponse(body, status_code=202)
    return body


# -- recall ------------------------------------------------------------------------------------
class RecallIn(_In):
    """What to recall (the options of ``vigente recall``, RUNTIME.md section 4)."""

    query: Annotated[str, Field(min_length=1, max_length=10_000)]
    conversation: Id | None = Field(default=None, description="search one conversation")
    account: Id | None = Field(
        default=None, description="search all of an account's conversations together"
    )
    branch: Id | None = Field(
        default=None, description="with participant: only what it could see on this branch"
    )
    participant: Id | None = None
    known_at: Date | None = Field(
        default=None, description="only records known then (default: now)"
    )
    k: Annotated[int, Field(ge=1, le=100)] = 10
    mode: Literal["auto", "lexical", "semantic", "hybrid"] = "auto"


class RecallHitOut(_Out):
    ref: str
    kind: Literal["message", "memory", "artifact"]
    conversation: str
    at: str
    score: float
    text: str
    speaker: str
    participant: str | None
    why: list[str]


class RecallOut(_Out):
    query: str
    known_at: str
    hits: list[RecallHitOut]
    notes: list[str]
    mode: str
    scope: dict[str, Any] = {}


def recall(vg: Vigente, body: RecallIn) -> dict[str, Any]:
    """``vg.runtime.recall`` for one request (HTTP and MCP)."""
    from vigente.retrieval.embed import model_loading

    mode = body.mode
    loading = model_loading()
    if mode in ("semantic", "hybrid") and loading:
        raise ApiError(503, "model_loading", "the embedding model is still loading (it loads "
                       "once, when the server starts): retry in a few seconds, or recall with "
                       '"mode": "lexical"', {"Retry-After": "5"})
    result = vg.runtime.recall(
        body.query, conversation=body.conversation, account=body.account, branch=body.branch,
        participant=body.participant, known_at=body.known_at, k=body.k,
        mode="lexical" if mode == "auto" and loading else mode,
    ).as_dict()
    if mode == "auto" and loading:
        result["notes"].append("ranked by words only: the embedding model is still loading")
    return result


@router.post("/recall", response_model=RecallOut, tags=["runtime"])
def recall_endpoint(body: RecallIn, vg: TenantStore) -> dict[str, Any]:
    """The messages, memories and tool results of a conversation (or of all an account's)
    most relevant to ``query``, as known at ``known_at``: every hit is a record known by
    then, with its knowledge time. While the server loads the embedding model at start,
    ``semantic`` and ``hybrid`` get 503 ``model_loading`` and ``auto`` ranks by words."""
    return recall(vg, body)
