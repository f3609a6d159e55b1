"""The agent runtime's commands and queries, shared by the HTTP API and the MCP tools: the
event log of RUNTIME.md (a batch, atomic), ``assemble``, ``explain`` (why-not, rebuild, diff)
and ``recall``, with their request and response models. Transport-neutral: a surface hands in
the caller's store and a validated model, and renders the dict or the :class:`ApiError`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from vigente.api import Vigente
from vigente.application.errors import ApiError, found, http_advice
from vigente.application.models import Date, _In, _Out
from vigente.application.roles import (
    SERVICE,
    Principal,
    check_assemble,
    check_assembly,
    check_scope,
    claimed_events,
    recall_scope,
)
from vigente.assemble import policy_from_document
from vigente.errors import ImportFileError, InvalidInput, RuntimeHistoryConflict
from vigente.runtime.events import EVENT_FIELDS, check_fields

__all__ = [
    "AssembleIn",
    "AssemblyOut",
    "EventKind",
    "Format",
    "Id",
    "Mode",
    "RecallIn",
    "RecallOut",
    "RuntimeEventIn",
    "RuntimeEventsIn",
    "RuntimeImportOut",
    "apply_events",
    "assemble",
    "explain",
    "known_conversation",
    "recall",
]

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


# -- models ------------------------------------------------------------------------------------
class RuntimeEventIn(_In):
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

    @model_validator(mode="before")
    @classmethod
    def _kind_fields(cls, data: Any) -> Any:
        # the runtime refuses them too; refused here, a wide event costs one error, not a
        # copy of every unknown key before the refusal
        if isinstance(data, dict) and data.get("event") in EVENT_FIELDS:
            check_fields(data)
        return data
    at: Date | None = Field(
        default=None,
        description="when it happened (knowledge time); default: the previous event's, or now",
    )


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
    """One message of a transcript; ``speaker`` (present only then) says who said it, when
    several people share a role."""

    id: str
    role: str
    content: str
    branch: str | None
    known_from: str
    speaker: str | None = None
    claimed_by: str | None = None


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
    """One decision; ``claimed_by`` (present only then) names the model-facing writer (an
    agent key, ``vigente mcp``) whose claim the record is, not logged by the application."""

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




# -- commands and queries --------------------------------------------------------------------
def apply_events(
    vg: Vigente,
    events: list[dict[str, Any]],
    now: str | None = None,
    *,
    batch: bool = True,
    trusted: bool = True,
    principal: Principal | None = None,
) -> dict[str, Any]:
    """Import ``events`` atomically as ``principal`` writes them (application/roles.py); in a
    ``batch`` a refused event is named by its index. Without a principal, ``trusted`` false
    stands for an unnamed model-facing writer: no instructions from it, and what it logs is
    its claim."""
    if principal is None:
        principal = SERVICE if trusted else Principal("agent", "a model-facing writer")
    check_scope(principal, events, batch=batch, run_owner=lambda c, r: _run_owner(vg, c, r))
    lines = [json.dumps(e, ensure_ascii=False) for e in claimed_events(principal, events)]
    try:
        report = vg.runtime.import_events(lines, now=now, trusted=principal.trusted,
                                          writer=principal.name)
    except ImportFileError as exc:
        message = str(exc).removeprefix(f"line {exc.line_number}: ")
        where = f"events[{exc.line_number - 1}]: " if batch else ""
        raise ApiError(400, "import_file_error",
                       f"{where}{http_advice(message)}; nothing was written") from None
    except RuntimeHistoryConflict as exc:  # another writer got there first: a client may retry
        line = exc.line_number or 1
        where = f"events[{line - 1}]: " if batch else ""
        raise ApiError(409, "history_rewrite",  # (the cause: counted as a refusal)
                       f"{where}{http_advice(exc.reason)}; nothing was written") from exc
    return {
        "events": report.events,
        "by_kind": report.by_kind,
        "conversations": list(report.conversations),
        "warnings": list(report.warnings),
    }


def _run_owner(vg: Vigente, conversation: str, run: str) -> str | None:
    """The participant of a stored run (None: no such run, the runtime refuses it then)."""
    found = vg.store.runtime_records(conversation, kinds=["run"], record_ids=[run])
    return found[-1].participant_id if found else None


def known_conversation(vg: Vigente, conversation: str) -> None:
    """404 for a conversation this store does not hold (another tenant's, or none)."""
    found(lambda: vg.runtime.conversation(conversation))


def _assembly(vg: Vigente, assembly_id: str) -> dict[str, Any]:
    return found(lambda: vg.assembly.record(assembly_id))


def assemble(vg: Vigente, body: AssembleIn, principal: Principal = SERVICE) -> dict[str, Any]:
    """Assemble and record the request ``body`` describes (``/v1/assemble`` and MCP), for
    ``principal`` (an agent only within its scope, under the application's policy)."""
    check_assemble(principal, body.conversation, body.participant, body.policy)
    known_conversation(vg, body.conversation)
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
    principal: Principal = SERVICE,
) -> dict[str, Any]:
    """``vigente explain`` with at most one of ``why_not``, ``rebuild``, ``diff_from``, of
    an assembly in ``principal``'s scope."""
    if sum((why_not is not None, rebuild, diff_from is not None)) > 1:
        raise InvalidInput("give one of why_not, rebuild, diff_from (or none)")
    check_assembly(principal, _assembly(vg, assembly_id))
    if diff_from is not None:
        check_assembly(principal, _assembly(vg, diff_from))
        return vg.assembly.diff(diff_from, assembly_id)
    if why_not is not None:
        return vg.assembly.why_not(assembly_id, why_not)
    if rebuild:
        return vg.assembly.rebuild(assembly_id)
    return vg.assembly.explain(assembly_id)



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
    speaker: str  # the message's speaker when it has one, else its role (a memory's kind, a tool)
    role: str  # the message's role (a memory's kind, the tool's name)
    participant: str | None
    why: list[str]


class RecallOut(_Out):
    query: str
    known_at: str
    hits: list[RecallHitOut]
    notes: list[str]
    mode: str
    scope: dict[str, Any] = {}


def recall(vg: Vigente, body: RecallIn, principal: Principal = SERVICE) -> dict[str, Any]:
    """``vg.runtime.recall`` for one request (HTTP and MCP): an agent recalls only what one
    participant may see on one branch (application/roles.py)."""
    from vigente.retrieval.embed import model_loading

    conversation, account, branch, participant = recall_scope(
        principal, body.conversation, body.account, body.branch, body.participant)
    body = body.model_copy(update={"conversation": conversation, "account": account,
                                   "branch": branch, "participant": participant})
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
    _label_claims(vg, result["hits"])
    return result


def _label_claims(vg: Vigente, hits: list[dict[str, Any]]) -> None:
    """A hit whose record a model-facing writer logged names it (``claimed_by``) and its text
    opens with the claim's label, as in an assembled request: a claimed "user" message is
    not the user's word."""
    from vigente.assemble.render import claim_label

    refs: dict[str, set[str]] = {}
    for hit in hits:
        refs.setdefault(hit["conversation"], set()).add(hit["ref"])
    claims: dict[tuple[str, str], str] = {}
    for conversation, ids in refs.items():
        for r in vg.store.runtime_records(conversation, record_ids=sorted(ids)):
            if r.payload.get("claimed_by"):
                claims[(conversation, r.record_id)] = str(r.payload["claimed_by"])
    for hit in hits:
        who = claims.get((hit["conversation"], hit["ref"]))
        if who is not None:
            hit["claimed_by"] = who
            hit["text"] = f"{claim_label(who)}\n{hit['text']}"
