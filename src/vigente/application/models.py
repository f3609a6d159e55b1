"""Request and response bodies of the application layer (pydantic): the HTTP API's OpenAPI
schemas and the MCP tools' arguments are these.

Responses are the ``--json`` shapes of the CLI (``as_dict`` of the library's values), typed
here; response models allow extra fields, so a field the library adds later passes through.
Dates are ``YYYY-MM-DD`` or RFC 3339 timestamps with an offset, as everywhere in vigente.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, model_validator

from vigente.errors import unknown_fields_message

__all__ = [
    "AskRequest",
    "DecisionOut",
    "DerivationIn",
    "DerivationOut",
    "DerivedList",
    "DocumentEvidenceOut",
    "DocumentVersionIn",
    "DocumentVersionOut",
    "DocumentVersionsIn",
    "DocumentVersionsOut",
    "EvidenceOut",
    "FactEvidenceOut",
    "HistoryOut",
    "ImportOut",
    "KeyIn",
    "RoleIn",
    "KeyOut",
    "KeysOut",
    "LineageOut",
    "LineagesOut",
    "NewKeyOut",
    "PrecedenceIn",
    "PrecedenceOut",
    "ReviewEditIn",
    "ReviewItemOut",
    "ReviewListOut",
    "ReviewNoteIn",
    "ReviewApproveIn",
    "ReviewSubmitIn",
    "SearchOut",
    "SearchRequest",
    "StatementIn",
    "StatementsIn",
    "TenantIn",
    "TenantOut",
    "TenantsOut",
    "VerdictOut",
    "VerifyRequest",
]

Date = Annotated[
    str,
    Field(
        description="YYYY-MM-DD or an RFC 3339 timestamp with an offset",
        examples=["2026-09-02"],
        max_length=64,
    ),
]
Name = Annotated[str, Field(min_length=1, max_length=1024)]
ScopeIn = Annotated[
    dict[Annotated[str, Field(max_length=256)], str | int],
    Field(
        description='Scope entries, e.g. {"product": "mail"}; {} is the global scope', max_length=32
    ),
]
Language = Literal["en", "it"]


def _has_nul(value: Any) -> bool:
    """Whether any string in ``value`` (JSON values: keys too) holds NUL, found in its
    ``repr`` at C speed: a NUL is written ``\\x00`` there, and a backslash of the text
    ``\\\\``, so with those pairs taken out an ``\\x00`` left is a NUL (twice as fast
    as a walk in Python, which a body of 200,000 members made the costliest step)."""
    return "\\x00" in repr(value).replace("\\\\", "")


#: Set while an outer request model validates its fields: the NUL check of the outer body
#: covers the models nested in it, which then skip their own.
_NUL_CHECKED: ContextVar[bool] = ContextVar("vigente_nul_checked", default=False)


class _In(BaseModel):
    """A request body: a field it does not take is refused, named with the closest one it
    takes and all of them (one error per object, however many fields it holds: a body of
    10,000 unknown keys costs one message, not 10,000)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.model_config.get("extra") == "forbid":
            known = _field_names(cls)
            unknown = [key for key in data if key not in known]
            if unknown:
                raise ValueError(unknown_fields_message(
                    [str(key) for key in unknown], list(known), "this object"))
        return data

    @model_validator(mode="wrap")
    @classmethod
    def _no_nul(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        # PostgreSQL text cannot hold NUL, so no store (of either backend) accepts it. Checked
        # once per body, after the schema (a body it refuses is never walked).
        if _NUL_CHECKED.get():
            return handler(data)
        token = _NUL_CHECKED.set(True)
        try:
            model = handler(data)
        finally:
            _NUL_CHECKED.reset(token)
        if _has_nul(data):
            raise ValueError("a string contains NUL (\\u0000), which no store can hold: remove it")
        return model


def _field_names(model: type[BaseModel]) -> dict[str, None]:
    """The names ``model`` takes in a body, in its order: each field's alias, or its name."""
    names: dict[str, None] = {}
    by_name = bool(model.model_config.get("populate_by_name"))
    for name, field in model.model_fields.items():
        if field.alias is not None:
            names[field.alias] = None
        if field.alias is None or by_name:
            names[name] = None
    return names


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- evidence ----------------------------------------------------------------------------------
class AskRequest(_In):
    """What was ``lineage`` on ``valid_at``, as known on ``known_at``? For a document lineage:
    which version was in force."""

    lineage: Name
    valid_at: Date | None = Field(
        default=None,
        description="t, the date asked about; required for "
        "facts, today by default for document lineages",
    )
    known_at: Date | None = Field(
        default=None, description="k, the knowledge snapshot; default now"
    )
    scope: ScopeIn = {}
    now: Date | None = Field(default=None, description="treat this date as today (replays)")
    language: Language = Field(
        default="en",
        description="the language of the statement and its citations, for a fact or a document "
        "lineage alike (the CLI's --lang)",
    )
    record: bool = Field(default=False, description="store the admissibility decision")


class VersionRow(_Out):
    version_id: str
    value: Any
    source: str
    valid_from: str
    valid_to: str | None
    known_from: str
    known_to: str | None


class ExclusionRow(_Out):
    version_id: str
    reason: str
    successor_id: str | None


class Overruled(_Out):
    version_id: str
    source: str
    value: Any


class PrecedenceApplied(_Out):
    rule_id: str
    sources: list[str]
    kept_source: str
    overruled: list[Overruled]


Status = Literal["supported", "missing", "conflict"]


class FactEvidenceOut(_Out):
    kind: Literal["fact"]
    lineage: str
    scope: dict[str, Any]
    valid_at: str
    known_at: str
    now: str
    status: Status
    values: list[Any]
    interpretation: str
    statement: str
    admitted: list[VersionRow]
    excluded: list[ExclusionRow]
    precedence: PrecedenceApplied | None
    earlier_values: list[Any] | None = None
    decision_id: str | None = None


class DocumentRow(_Out):
    version_id: str
    snapshot_id: str
    external_id: str | None
    reference: str | None
    title: str | None
    relation: str | None
    predecessor_id: str | None
    value: Any
    source: str | None
    valid_from: str
    valid_to: str | None
    known_from: str
    known_to: str | None
    published: str
    superseded: bool
    successor_id: str | None
    successor_reference: str | None
    citation: str
    reason: str | None = None


class DocumentEvidenceOut(_Out):
    kind: Literal["document"]
    lineage: str
    scope: dict[str, Any]
    valid_at: str
    known_at: str
    now: str
    status: Status
    values: list[Any]
    interpretation: str
    statement: str
    revoked_by: str | None
    admitted: list[DocumentRow]
    excluded: list[DocumentRow]
    decision_id: str | None


EvidenceOut = Annotated[FactEvidenceOut | DocumentEvidenceOut, Field(discriminator="kind")]


# -- search ------------------------------------------------------------------------------------
class SearchRequest(_In):
    """Passages about ``query`` admissible on ``valid_at`` as known on ``known_at``."""

    query: Annotated[str, Field(min_length=1, max_length=10_000)]
    valid_at: Date | None = Field(default=None, description="t; required unless date_from_query")
    known_at: Date | None = None
    scope: ScopeIn | None = Field(
        default=None, description="omit for every scope; {} for the global scope only"
    )
    k: Annotated[int, Field(ge=1, le=100)] = 10
    include_superseded: bool = False
    mode: Literal["auto", "lexical", "semantic", "hybrid"] = "auto"
    date_from_query: bool = Field(
        default=False, description='take t from the question ("as of 2015")'
    )
    language: Language = Field(
        default="en", description="the language of each hit's citation and why (search --lang)"
    )
    now: Date | None = None
    record: bool = False


class SearchHit(_Out):
    rank: int
    kind: str
    lineage_id: str
    version_id: str
    citation: str
    valid_from: str
    valid_to: str | None
    score: float
    superseded_by: str | None
    admission: str
    why: str
    passage: str


class SearchExcluded(_Out):
    version_id: str
    reason: str
    lineage_id: str
    similarity_rank: int | None = None


class SearchOut(_Out):
    query: str
    valid_at: str
    known_at: str
    hits: list[SearchHit]
    excluded: list[SearchExcluded]
    mode: str
    notes: list[str]
    decision_id: str | None


# -- lineages, history, statements ------------------------------------------------------------
class LineageOut(_Out):
    lineage: str
    scope: dict[str, Any]
    kind: Literal["fact", "document"]


class LineagesOut(_Out):
    lineages: list[LineageOut]


class HistoryOut(_Out):
    lineage: str
    versions: list[VersionRow]


class BackfillOut(BaseModel):
    backfill_id: str
    recorded_at: str
    kind: str
    reason: str
    statements: int
    earliest: str
    latest: str
    horizon: str | None
    behind_horizon: bool


class BackfillsOut(BaseModel):
    answered_horizon: str | None = Field(
        description="the latest knowledge time this store has answered for; a write must be "
        "dated after it"
    )
    backfills: list[BackfillOut]


class StatementIn(_In):
    """One record/retract statement, as a line of an import file."""

    op: Literal["record", "retract"]
    lineage: Name
    scope: ScopeIn = {}
    value: Any = Field(
        default=None, description="the value a record states (any JSON); a retract takes none"
    )
    source: Name
    valid_from: Date
    valid_to: Date | None = None
    known_at: Date | None = Field(
        default=None,
        description="when this was learned; absent: now, dated by the store as it writes "
        "(after every answer already given)",
    )


class StatementsIn(_In):
    """A batch of statements, applied all or nothing."""

    statements: Annotated[list[StatementIn], Field(min_length=1, max_length=10_000)]
    now: Date | None = None


class ImportOut(_Out):
    statements: int
    applied: int
    versions_appended: int
    versions_closed: int


class PrecedenceIn(_In):
    sources: Annotated[list[Name], Field(min_length=1, max_length=64, description="highest first")]
    known_at: Date | None = Field(None, description="when the rule was adopted (default: now)")
    scope: ScopeIn = {}
    lineage: Name | None = None
    now: Date | None = None
    backfill: Annotated[str, Field(min_length=1, max_length=2048)] | None = Field(
        None, description="why the rule is dated behind answers already given (recorded)")


class PrecedenceOut(_Out):
    rule_id: str
    sources: list[str]
    known_from: str


class DecisionOut(_Out):
    decision_id: str
    kind: str
    subject: str
    recorded_at: str
    candidates: Any
    payload: dict[str, Any]


# -- documents ---------------------------------------------------------------------------------
class DocumentVersionIn(_In):
    """A document version with its metadata (the fields of ``documents import``)."""

    lineage_id: Name
    text: Annotated[str, Field(max_length=5_000_000)]
    valid_from: Date | None = Field(
        default=None, description="entry into force (required unless it corrects a predecessor)"
    )
    published: Date
    reference: Name | None = None
    title: Name | None = None
    external_id: Name | None = None
    source_url: Name | None = None
    valid_to: Date | None = None
    relation: Literal["supersedes", "amends", "supplements", "revokes", "corrects"] | None = None
    predecessor: Name | None = Field(
        default=None, description="version id, external id or reference"
    )
    scope: ScopeIn = {}


class DocumentVersionsIn(_In):
    versions: Annotated[list[DocumentVersionIn], Field(min_length=1, max_length=10_000)]
    now: Date | None = None


class DocumentVersionOut(_Out):
    version_id: str
    lineage_id: str
    scope: dict[str, Any]
    external_id: str | None
    reference: str | None
    title: str | None
    source_url: str | None
    published: str
    valid_from: str
    valid_to: str | None
    relation: str | None
    predecessor_id: str | None
    text: str | None = None


class DocumentVersionsOut(_Out):
    versions: list[DocumentVersionOut]


# -- derivations -------------------------------------------------------------------------------
class DerivationIn(_In):
    kind: Annotated[str, Field(min_length=1, max_length=64)]
    label: Annotated[str, Field(min_length=1, max_length=2048)]
    sources: Annotated[
        list[Name],
        Field(
            min_length=1,
            max_length=1000,
            description=("dv-… (document version), drv-… (derived) or a snapshot id"),
        ),
    ]
    valid_at: Date
    known_at: Date
    content: Annotated[str, Field(max_length=1_000_000)] | None = None


class DerivationOut(_Out):
    derived_id: str
    kind: str
    label: str
    sources: list[dict[str, str]]
    valid_at: str
    known_at: str
    created_at: str
    stale: bool
    reasons: list[str]


class DerivedList(_Out):
    derived: list[DerivationOut]


# -- review ------------------------------------------------------------------------------------
class ReviewSubmitIn(_In):
    text: Annotated[str, Field(min_length=1, max_length=5_000_000)]
    filename: Annotated[str, Field(max_length=1024)] | None = None
    language: Language | None = None


class ReviewEditIn(_In):
    set: dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=2048)]] = {}
    clear: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=32)] = []
    note: Annotated[str, Field(max_length=10_000)] | None = None


class ReviewNoteIn(_In):
    note: Annotated[str, Field(max_length=10_000)] | None = None


class ReviewApproveIn(ReviewNoteIn):
    now: Date | None = None


class ReviewItemOut(_Out):
    proposal_id: str
    status: Literal["pending", "approved", "rejected"]
    filename: str | None
    created_at: str
    proposal: dict[str, Any]
    approvable: bool
    version_id: str | None
    events: list[dict[str, Any]]
    text: str | None = None


class ReviewListOut(_Out):
    proposals: list[ReviewItemOut]


# -- verify ------------------------------------------------------------------------------------
class VerifyRequest(_In):
    """Check a generated answer against evidence: either the evidence itself (an ``ask``
    response) or the question to compute it from (``ask``)."""

    answer: Annotated[str, Field(min_length=1, max_length=100_000)]
    evidence: dict[str, Any] | None = Field(default=None, description="an /v1/ask response")
    ask: AskRequest | None = Field(default=None, description="or the question: the server asks it")
    language: Language = Field(
        default="en", description="the language of the findings' messages (verify --lang)"
    )


class Finding(_Out):
    code: str
    message: str
    span: dict[str, Any] | None


class VerdictOut(_Out):
    passed: bool
    status: str
    interpretation: str | None
    findings: list[Finding]


# -- admin -------------------------------------------------------------------------------------
class TenantIn(_In):
    name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=40,
            pattern=r"^[a-z][a-z0-9_]*$",
            description="lowercase letters, digits, underscores",
        ),
    ]


class TenantOut(_Out):
    name: str
    created_at: str


class TenantsOut(_Out):
    tenants: list[TenantOut]


class RoleIn(_In):
    """A key's role and scope (application/roles.py)."""

    role: Literal["service", "agent"] = Field(
        default="agent",
        description="`service`: the application's own logging (trusted: writes instructions, "
        "reads every participant's records); `agent`: a model-facing client (what it logs is "
        "its claim; it reads only what one participant may see)",
    )
    conversation: Annotated[str, Field(min_length=1, max_length=1024)] | None = Field(
        default=None, description="an agent key only: the one conversation it may use"
    )
    participant: Annotated[str, Field(min_length=1, max_length=1024)] | None = Field(
        default=None, description="an agent key scoped to a conversation: the one participant "
        "it acts as"
    )


class KeyIn(RoleIn):
    label: Annotated[str, Field(max_length=256)] | None = None


class KeyOut(_Out):
    key_id: str
    tenant: str
    label: str | None
    created_at: str
    revoked_at: str | None
    role: str = Field(description="service or agent")
    conversation: str | None = None
    participant: str | None = None
    legacy: bool = Field(
        default=False, description="recorded before keys had roles, and read as agent until "
        "an admin sets its role (PUT /v1/admin/keys/{key_id}/role)")


class NewKeyOut(KeyOut):
    key: str = Field(description="the API key: shown this once, stored only as its SHA-256")


class KeysOut(_Out):
    keys: list[KeyOut]
