"""Endpoints of the evidence store: ask, search, lineages and history, statements, precedence,
decisions, document versions. Each calls the public :class:`~vigente.Vigente` API of the
caller's tenant store and returns its ``as_dict`` shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Query

from vigente.application import models as m
from vigente.application.errors import ApiError, NotFound, found, http_advice
from vigente.application.evidence import ask
from vigente.errors import ImportFileError
from vigente.http._deps import TenantStore
from vigente.http._errors import ERROR_RESPONSES
from vigente.retrieval import ALL_SCOPES
from vigente.retrieval.embed import model_loading

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


@router.post("/ask", response_model=m.EvidenceOut, tags=["evidence"])
def ask_endpoint(body: m.AskRequest, vg: TenantStore) -> dict[str, Any]:
    """Evidence: what a lineage was on ``valid_at`` as known on ``known_at`` — status,
    values, admitted and excluded versions with reasons, and the statement to hand a model,
    worded in ``language`` ("en", the default, or "it"; facts and documents alike)."""
    return ask(vg, body)


@router.post("/search", response_model=m.SearchOut, tags=["evidence"])
def search(body: m.SearchRequest, vg: TenantStore) -> dict[str, Any]:
    """Passages about the query that are admissible on ``valid_at`` (relevance ranks topics,
    validity picks the period), with the most similar excluded versions and why. While the
    server loads the embedding model at start, ``semantic`` and ``hybrid`` get 503
    ``model_loading`` with Retry-After (``lexical`` is served at once)."""
    if body.mode in ("semantic", "hybrid") and model_loading():
        raise ApiError(503, "model_loading", "the embedding model is still loading (it loads "
                       "once, when the server starts): retry in a few seconds, or search with "
                       '"mode": "lexical"', {"Retry-After": "5"})
    result = vg.retrieval.search(
        body.query,
        valid_at=body.valid_at,
        known_at=body.known_at,
        scope=ALL_SCOPES if body.scope is None else body.scope,
        k=body.k,
        include_superseded=body.include_superseded,
        mode=body.mode,
        date_from_query=body.date_from_query,
        now=body.now,
        language=body.language,
        record=body.record,
    )
    data = result.as_dict()
    if isinstance(data.get("notes"), list):
        data["notes"] = [http_advice(n) if isinstance(n, str) else n for n in data["notes"]]
    return data


@router.get("/lineages", response_model=m.LineagesOut, tags=["lineages"])
def lineages(vg: TenantStore) -> dict[str, Any]:
    """Every lineage (and scope) in the store, facts and document lineages."""
    documents = vg.documents
    items = [
        {
            "lineage": name,
            "scope": scope.as_dict(),
            "kind": "document" if documents.is_document_lineage(name) else "fact",
        }
        for name, scope in vg.lineages()
    ]
    return {"lineages": items}


@router.get("/history", response_model=m.HistoryOut, tags=["lineages"])
def history(
    vg: TenantStore, lineage: Annotated[str, Query(min_length=1, max_length=1024)]
) -> dict[str, Any]:
    """Every snapshot of a lineage on both time axes (every scope)."""
    versions = vg.history(lineage)
    if not versions:
        raise NotFound(f"no lineage {lineage!r} in this store: list them with GET /v1/lineages")
    return {
        "lineage": lineage,
        "versions": [dict(v.as_row(), scope=v.scope.as_dict()) for v in versions],
    }


def _import_error(exc: ImportFileError, what: str) -> ApiError:
    message = str(exc).removeprefix(f"line {exc.line_number}: ")
    return ApiError(
        400, "import_file_error", f"{what}[{exc.line_number - 1}]: {message}; nothing was written"
    )


def as_lines(items: Sequence[Any], *, exclude_unset: bool = False) -> list[str]:
    """The import-file lines of validated bodies (statements leave out what was not sent: a
    retract takes no ``value``, not even null)."""
    return [
        json.dumps(item.model_dump(exclude_unset=exclude_unset), ensure_ascii=False)
        for item in items
    ]


@router.post("/statements", response_model=m.ImportOut, tags=["statements"])
def statements(body: m.StatementsIn, vg: TenantStore) -> dict[str, Any]:
    """Record or retract a batch of statements, all or nothing (the lines of
    ``vigente import``); a refused statement is named by its index."""
    try:
        report = vg.import_lines(as_lines(body.statements, exclude_unset=True), now=body.now)
    except ImportFileError as exc:
        raise _import_error(exc, "statements") from None
    return {
        "statements": report.statements,
        "applied": report.applied,
        "versions_appended": report.versions_appended,
        "versions_closed": report.versions_closed,
    }


@router.post("/precedence", response_model=m.PrecedenceOut, status_code=201, tags=["statements"])
def precedence(body: m.PrecedenceIn, vg: TenantStore) -> dict[str, Any]:
    """An explicit, dated precedence of sources (highest first) that resolves conflicts."""
    rule = vg.set_precedence(
        body.sources, known_at=body.known_at, scope=body.scope, lineage=body.lineage, now=body.now,
        backfill=body.backfill,
    )
    return {
        "rule_id": rule.rule_id,
        "sources": list(rule.sources),
        "known_from": rule.known_from.isoformat(),
    }


@router.get("/backfills", response_model=m.BackfillsOut, tags=["statements"])
def backfills(vg: TenantStore) -> dict[str, Any]:
    """The answered horizon (a write must be dated after it) and every recorded backfill
    (writes allowed behind it), oldest first."""
    horizon = vg.answered_horizon()
    return {"answered_horizon": None if horizon is None else horizon.isoformat(),
            "backfills": [b.as_dict() for b in vg.backfills()]}


@router.get("/decisions", response_model=list[m.DecisionOut], tags=["evidence"])
def decisions(
    vg: TenantStore, limit: Annotated[int, Query(ge=1, le=1000)] = 20
) -> list[dict[str, Any]]:
    """The latest recorded admissibility decisions."""
    return [d.as_dict() for d in vg.decisions(limit)]


@router.get("/decisions/{decision_id}", response_model=m.DecisionOut, tags=["evidence"])
def decision(decision_id: str, vg: TenantStore) -> dict[str, Any]:
    """One recorded decision: the question, t, k, candidates, admitted and excluded."""
    return found(lambda: vg.decision(decision_id)).as_dict()


# -- documents ---------------------------------------------------------------------------------
def _new_version(body: m.DocumentVersionIn) -> Any:
    from vigente.evidence.documents import NewVersion

    return NewVersion.from_dict(body.model_dump())


@router.get("/documents", response_model=m.DocumentVersionsOut, tags=["documents"])
def documents(
    vg: TenantStore, lineage: Annotated[str, Query(min_length=1, max_length=1024)]
) -> dict[str, Any]:
    """Every version of a document lineage, in the order they were added."""
    versions = vg.documents.versions(lineage)
    if not versions:
        raise NotFound(
            f"no document lineage {lineage!r} in this store: list them with GET /v1/lineages"
        )
    return {"versions": [v.as_dict() for v in versions]}


@router.get("/documents/{version_id}", response_model=m.DocumentVersionOut, tags=["documents"])
def document(version_id: str, vg: TenantStore) -> dict[str, Any]:
    """One version with its text."""
    return found(lambda: vg.documents.get(version_id)).as_dict(with_text=True)


@router.post("/documents", response_model=m.DocumentVersionOut, status_code=201, tags=["documents"])
def add_document(
    body: m.DocumentVersionIn,
    vg: TenantStore,
    now: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """Add a version and apply its relation to its predecessor (atomic)."""
    return vg.documents.add(_new_version(body), now=now).as_dict()


@router.post(
    "/documents/import", response_model=m.DocumentVersionsOut, status_code=201, tags=["documents"]
)
def import_documents(body: m.DocumentVersionsIn, vg: TenantStore) -> dict[str, Any]:
    """Add versions with metadata in any order, all or nothing (a version after the
    predecessor it names)."""
    try:
        added = vg.documents.import_lines(as_lines(body.versions), now=body.now)
    except ImportFileError as exc:
        raise _import_error(exc, "versions") from None
    return {"versions": [v.as_dict() for v in added]}
