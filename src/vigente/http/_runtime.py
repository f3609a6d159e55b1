"""Endpoints of the agent runtime and its context assembly: the event log of RUNTIME.md (one
event or a batch, atomic like ``vigente runtime import``), the conversation graph with its
branches, runs and transcript, ``assemble``, ``explain`` (why-not, rebuild, diff) and the purge
of an account. Each calls ``vg.runtime`` / ``vg.assembly`` of the caller's tenant store, so a
conversation or an assembly of another tenant is, to this tenant, an id it does not hold: 404.
The key's role and scope are checked by the application layer (application/roles.py), as MCP's
are: an agent key's writes are its claims, and it reads only what its participant may see.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from vigente.api import Vigente
from vigente.application.roles import check_conversation, service_only
from vigente.application.runtime import (
    AssembleIn,
    AssemblyIdsOut,
    AssemblyOut,
    BranchesOut,
    ConversationsOut,
    DiffOut,
    ExplainOut,
    GraphOut,
    PurgeOut,
    RebuildOut,
    RecallIn,
    RecallOut,
    RunsOut,
    RuntimeEventIn,
    RuntimeEventsIn,
    RuntimeImportOut,
    TranscriptOut,
    WhyNotOut,
    apply_events,
    assemble,
    explain,
    known_conversation,
    recall,
)
from vigente.http._deps import TenantAccess
from vigente.http._errors import ERROR_RESPONSES
from vigente.http._paths import IdRoute

__all__ = ["router"]

# Ids in paths may hold "/", raw or as %2F (vigente.http._paths): each id is declared
# `{name:path}`, and a route with a suffix (`/branches`, `/why-not` …) comes before the bare one.
router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, route_class=IdRoute)

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




def _scoped(access: TenantAccess, conversation: str) -> Vigente:
    """The store, for a conversation in the key's scope that this tenant holds (else 403 or
    404)."""
    check_conversation(access.principal, conversation)
    known_conversation(access.store, conversation)
    return access.store


# -- event log ---------------------------------------------------------------------------------
@router.post("/runtime/events", response_model=RuntimeImportOut, tags=["runtime"])
def events(body: RuntimeEventsIn, access: TenantAccess) -> dict[str, Any]:
    """Apply a batch of runtime events (RUNTIME.md §1) in order, all or nothing; a refused
    event is named by its index (`events[3]: …`) and nothing of the batch is written. An agent
    key writes no instruction, share or promotion, and what it logs is its claim."""
    return apply_events(access.store, [e.model_dump(exclude_none=True) for e in body.events],
                        body.now, principal=access.principal)


@router.post("/runtime/event", response_model=RuntimeImportOut, tags=["runtime"])
def event(body: RuntimeEventIn, access: TenantAccess) -> dict[str, Any]:
    """Apply one runtime event (RUNTIME.md §1)."""
    return apply_events(access.store, [body.model_dump(exclude_none=True)], batch=False,
                        principal=access.principal)


# -- conversation reads ------------------------------------------------------------------------
@router.get("/conversations", response_model=ConversationsOut, tags=["runtime"])
def conversations(
    access: TenantAccess,
    account: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
) -> dict[str, Any]:
    """The conversations this tenant holds (of one account, with ``account``; an agent key
    scoped to a conversation sees that one only)."""
    vg, scope = access.store, access.principal.conversation
    return {
        "conversations": [
            {
                "id": c.id,
                "account": c.account,
                "title": c.title,
                "known_from": c.known_from.isoformat(),
            }
            for c in vg.runtime.conversations(account)
            if scope is None or c.id == scope
        ]
    }


@router.get(
    "/conversations/{conversation:path}/branches", response_model=BranchesOut, tags=["runtime"]
)
def branches(
    conversation: ConversationId, access: TenantAccess, known_at: KnownAt = None
) -> dict[str, Any]:
    """The branches of a conversation: each one's parent and the message it forks after."""
    vg = _scoped(access, conversation)
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
    access: TenantAccess,
    known_at: KnownAt = None,
    branch: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
) -> dict[str, Any]:
    """The model runs of a conversation (of one branch and its ancestry, with ``branch``)."""
    vg = _scoped(access, conversation)
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
    "/conversations/{conversation:path}/transcript", response_model=TranscriptOut,
    response_model_exclude_none=True, tags=["runtime"]
)
def transcript(
    conversation: ConversationId,
    access: TenantAccess,
    branch: Annotated[str, Query(min_length=1, max_length=1024)] = "main",
    known_at: KnownAt = None,
) -> dict[str, Any]:
    """The user-visible transcript of a branch (runtime records never appear in it)."""
    vg = _scoped(access, conversation)
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
                **({"speaker": m.speaker} if m.speaker else {}),
                **({"claimed_by": m.claimed_by} if m.claimed_by else {}),
            }
            for m in messages
        ],
    }


@router.get(
    "/conversations/{conversation:path}/assemblies",
    response_model=AssemblyIdsOut,
    tags=["assembly"],
)
def assemblies(conversation: ConversationId, access: TenantAccess) -> dict[str, Any]:
    """The recorded assemblies of a conversation, oldest first."""
    vg = _scoped(access, conversation)
    return {"conversation": conversation, "assemblies": vg.store.runtime_assembly_ids(conversation)}


@router.get("/conversations/{conversation:path}", response_model=GraphOut, tags=["runtime"])
def graph(
    conversation: ConversationId,
    access: TenantAccess,
    known_at: KnownAt = None,
    branch: Annotated[
        str | None,
        Query(min_length=1, max_length=1024, description="only this branch and what it inherits"),
    ] = None,
    content: Annotated[bool, Query(description="include message and result content")] = True,
) -> dict[str, Any]:
    """The conversation graph as known at ``known_at``: branches, runs, messages, tool calls,
    artifacts, memories and links, in graph order: every participant's (a service key's
    read)."""
    service_only(access.principal, "the conversation graph")
    vg = _scoped(access, conversation)
    return vg.runtime.graph(conversation, known_at=known_at, branch=branch).as_dict(content=content)


# -- assemble and explain ----------------------------------------------------------------------
@router.post(
    "/assemble", response_model=AssemblyOut, response_model_by_alias=True, tags=["assembly"]
)
def assemble_endpoint(body: AssembleIn, access: TenantAccess) -> dict[str, Any]:
    """Build (and record) the next model request of ``participant`` on ``branch`` under the
    policy: the messages, what was included as what, what was omitted and why, and its tokens
    against transcript replay (RUNTIME.md §2)."""
    return assemble(access.store, body, access.principal)


@router.get("/assemblies/{assembly_id:path}/why-not", response_model=WhyNotOut, tags=["assembly"])
def why_not(
    assembly_id: AssemblyId,
    access: TenantAccess,
    ref: Annotated[str, Query(min_length=1, max_length=1024, description="a record id")],
) -> dict[str, Any]:
    """Why ``ref`` did not reach the model in this assembly: its reason and rule, or why it
    was never a candidate (``candidate`` false)."""
    return explain(access.store, assembly_id, why_not=ref, principal=access.principal)


@router.get("/assemblies/{assembly_id:path}/rebuild", response_model=RebuildOut, tags=["assembly"])
def rebuild(assembly_id: AssemblyId, access: TenantAccess) -> dict[str, Any]:
    """Assemble again from the stored snapshot and policy (nothing is stored): does the
    selection match?"""
    return explain(access.store, assembly_id, rebuild=True, principal=access.principal)


@router.get("/assemblies/{assembly_id:path}/diff", response_model=DiffOut, tags=["assembly"])
def diff(
    assembly_id: AssemblyId,
    access: TenantAccess,
    before: Annotated[
        str, Query(min_length=1, max_length=1024, description="the earlier assembly's id")
    ],
) -> dict[str, Any]:
    """What changed from assembly ``before`` to this one: added, removed (and why), changed."""
    return explain(access.store, assembly_id, diff_from=before, principal=access.principal)


@router.get(
    "/assemblies/{assembly_id:path}",
    response_model=ExplainOut,
    response_model_by_alias=True,
    tags=["assembly"],
)
def explain_endpoint(assembly_id: AssemblyId, access: TenantAccess) -> dict[str, Any]:
    """A recorded assembly: policy, snapshot, included (as what) and omitted (why), tokens and
    timings (RUNTIME.md §3); a claim's decision names its writer (``claimed_by``)."""
    return explain(access.store, assembly_id, principal=access.principal)


# -- erasure -----------------------------------------------------------------------------------
@router.delete("/accounts/{account:path}", response_model=PurgeOut, tags=["runtime"],
               responses={202: {"model": PurgeOut,
                                "description": "rows deleted; the files are not clean yet"}})
def purge_account(
    account: AccountId,
    access: TenantAccess,
    dry_run: Annotated[
        bool, Query(description="say what would be deleted; delete nothing")
    ] = False,
) -> Any:
    """Delete an account's conversations and everything derived from them (artifacts, blobs,
    memories, assemblies), leaving none of their text in the store. 200: done, and the store
    checked its files; 202: the rows are deleted but the files could not yet be cleaned (a
    reader held an old snapshot): `compaction` says why; send the DELETE again to finish."""
    service_only(access.principal, "an account's purge")
    report = access.store.runtime.purge_account(account, dry_run=dry_run)
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


@router.post("/recall", response_model=RecallOut, tags=["runtime"])
def recall_endpoint(body: RecallIn, access: TenantAccess) -> dict[str, Any]:
    """The messages, memories and tool results of a conversation (or of all an account's)
    most relevant to ``query``, as known at ``known_at``: every hit is a record known by
    then, with its knowledge time. While the server loads the embedding model at start,
    ``semantic`` and ``hybrid`` get 503 ``model_loading`` and ``auto`` ranks by words. An
    agent key recalls one participant's view of one branch (its scope fills what is left
    out)."""
    return recall(access.store, body, access.principal)
