"""Pages of the evidence store: the lineages, a lineage's timeline at ``(t, k)``, search.

Every figure on these pages comes from the public API (``history``, ``evidence``,
``documents``, ``retrieval.search``); the timeline only draws what they return.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from vigente.api import Vigente
from vigente.errors import InvalidInput, VigenteError
from vigente.http.inspector._auth import Viewer, viewer
from vigente.http.inspector._render import PageRoute, blank, page
from vigente.http.inspector._timeline import Span, Timeline, layout
from vigente.kernel.statement import format_value
from vigente.records.values import Scope
from vigente.records.versions import Version
from vigente.retrieval import ALL_SCOPES

__all__ = ["router"]

router = APIRouter(include_in_schema=False, route_class=PageRoute)

Text = Annotated[str | None, Query(max_length=1024)]
#: The chain of a lineage asks the evidence at each start date: at most this many.
CHAIN_LIMIT = 60


def _today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def _scope(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise InvalidInput(
            f"scope {text!r} is not a JSON object: give it as on the lineages page, "
            'e.g. {"product": "mail"}'
        )
    return Scope.of(value).as_dict()


def _scope_text(scope: dict[str, Any]) -> str:
    return json.dumps(scope, sort_keys=True, ensure_ascii=False) if scope else ""


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> HTMLResponse:
    """The tenant's lineages, conversations and review queue at a glance."""
    who = viewer(request)
    vg = who.vg
    documents = vg.documents
    lineages = [
        {
            "name": name,
            "scope": scope.as_dict(),
            "scope_text": _scope_text(scope.as_dict()),
            "kind": "document" if documents.is_document_lineage(name) else "fact",
        }
        for name, scope in vg.lineages()
    ]
    return page(
        "home.html",
        tenant=who.tenant,
        active="lineages",
        lineages=lineages,
        conversations=vg.runtime.conversations(),
        pending=len(vg.review.list("pending")),
    )


def _evidence(
    vg: Vigente, name: str, document: bool, t: str | None, k: str | None, scope: dict[str, Any]
) -> dict[str, Any]:
    if document:
        return vg.documents.evidence(name, valid_at=t, known_at=k, scope=scope).as_dict()
    fact = vg.evidence(name, valid_at=t or _today(), known_at=k, scope=scope)
    return {"kind": "fact", **fact.as_dict()}


def _admitted_ids(evidence: dict[str, Any]) -> frozenset[str]:
    key = "snapshot_id" if evidence.get("kind") == "document" else "version_id"
    return frozenset(str(row[key]) for row in evidence["admitted"])


def _labels(vg: Vigente, name: str, scope: dict[str, Any]) -> dict[str, str]:
    return {v.version_id: v.label for v in vg.documents.versions(name, scope=scope)}


def _snapshot_label(value: Any, labels: dict[str, str]) -> str:
    if isinstance(value, dict) and "document_version" in value:
        label = labels.get(str(value["document_version"]), str(value["document_version"]))
        role = value.get("role")
        return label if role in (None, "text") else f"{label} ({role})"
    return format_value(value)


def _chain(
    vg: Vigente,
    name: str,
    document: bool,
    starts: list[str],
    k: str | None,
    scope: dict[str, Any],
) -> list[dict[str, Any]]:
    """What the lineage held at each date a snapshot starts, as known on ``k``: the versions in
    force (or values) with their citations, in valid-time order."""
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    for start in starts[:CHAIN_LIMIT]:
        evidence = _evidence(vg, name, document, start, k, scope)
        key = "snapshot_id" if document else "version_id"
        rows = [r for r in evidence["admitted"] if str(r[key]) not in seen]
        if not rows:
            continue
        seen.update(str(r[key]) for r in rows)
        chain.append({"at": start, "status": evidence["status"], "rows": rows})
    return chain


@router.get("/lineage", response_class=HTMLResponse)
def lineage(
    request: Request,
    name: Annotated[str, Query(min_length=1, max_length=1024)],
    t: Text = None,
    k: Text = None,
    scope: Text = None,
) -> HTMLResponse:
    """A lineage's snapshots on both axes, the evidence at the picked ``(t, k)`` and the
    chain of versions with their citations."""
    who = viewer(request)
    vg = who.vg
    t, k = blank(t), blank(k)
    context: dict[str, Any] = {"name": name, "t": t or "", "k": k or "", "scope_text": scope or ""}
    try:
        the_scope = _scope(scope)
        history = vg.history(name, scope=the_scope)
        if not history:
            error = f"no lineage {name!r} in this tenant's store (scope {the_scope or 'global'})"
            return _lineage_refused(who, 404, error, context)
        document = vg.documents.is_document_lineage(name)
        evidence = _evidence(vg, name, document, t, k, the_scope)
        labels = _labels(vg, name, the_scope) if document else {}
        chain = _chain(vg, name, document, _starts(vg, history), k, the_scope)
    except VigenteError as exc:
        return _lineage_refused(who, 400, str(exc), context)
    if not document:
        _show_excluded_snapshots(evidence, history)
    timeline = _timeline(vg, history, labels, evidence)
    return page(
        "lineage.html",
        tenant=who.tenant,
        active="lineages",
        error=None,
        document=document,
        evidence=evidence,
        timeline=timeline,
        history=[dict(v.as_row(), label=_snapshot_label(v.value, labels)) for v in history],
        chain=chain,
        **context,
    )


def _lineage_refused(
    who: Viewer, status: int, error: str, context: dict[str, Any]
) -> HTMLResponse:
    """The lineage page with only its form and why it shows nothing."""
    return page(
        "lineage.html",
        status=status,
        tenant=who.tenant,
        active="lineages",
        error=error,
        **context,
    )


def _starts(vg: Vigente, history: list[Version]) -> list[str]:
    """The distinct dates a snapshot of the lineage starts, in valid-time order."""
    return sorted({v.valid_from.isoformat() for v in history}, key=lambda s: vg.instant(s).micros)


def _show_excluded_snapshots(evidence: dict[str, Any], history: list[Version]) -> None:
    """A fact's exclusions name their snapshot only: put its value and intervals beside it."""
    rows = {str(v.version_id): v.as_row() for v in history}
    evidence["excluded"] = [
        {**rows.get(str(r["version_id"]), {}), **r} for r in evidence["excluded"]
    ]


def _timeline(
    vg: Vigente, history: list[Version], labels: dict[str, str], evidence: dict[str, Any]
) -> Timeline:
    """The lineage's snapshots laid out on both axes, with the evidence's ``(t, k)`` marked
    and its admitted snapshots picked out."""
    spans = [_span(v, labels) for v in history]
    point = (vg.instant(evidence["valid_at"]).micros, vg.instant(evidence["known_at"]).micros)
    return layout(
        spans,
        point=point,
        now=vg.instant(evidence["now"]).micros,
        admitted=_admitted_ids(evidence),
    )


def _span(v: Version, labels: dict[str, str]) -> Span:
    """One snapshot as the timeline draws it, with its full description as the title."""
    return Span(
        v.version_id,
        _snapshot_label(v.value, labels),
        v.source,
        v.valid_from.micros,
        None if v.valid_to is None else v.valid_to.micros,
        v.known_from.micros,
        None if v.known_to is None else v.known_to.micros,
        f"snapshot {v.version_id}: {_snapshot_label(v.value, labels)} from {v.source}; "
        f"valid [{v.valid_from.isoformat()}, {v.valid_to.isoformat() if v.valid_to else '∞'})"
        f", known [{v.known_from.isoformat()}, "
        f"{v.known_to.isoformat() if v.known_to else 'now'})",
    )


@router.get("/search", response_class=HTMLResponse)
def search(
    request: Request,
    q: Text = None,
    t: Text = None,
    k: Text = None,
    mode: Annotated[str | None, Query(max_length=16)] = None,
    superseded: Annotated[str | None, Query(max_length=8)] = None,
    date_from_query: Annotated[str | None, Query(max_length=8)] = None,
) -> HTMLResponse:
    """Search with a reference date: the admitted hits and what was excluded, and why."""
    who = viewer(request)
    query, t, k = blank(q), blank(t), blank(k)
    form = {
        "q": query or "",
        "t": t or "",
        "k": k or "",
        "mode": mode or "auto",
        "superseded": bool(superseded),
        "date_from_query": bool(date_from_query),
    }
    result = None
    error = None
    status = 200
    if query is not None:
        try:
            if form["mode"] not in ("auto", "lexical", "semantic", "hybrid"):
                raise InvalidInput(
                    f"unknown mode {form['mode']!r}: use auto, lexical, semantic or hybrid"
                )
            result = who.vg.retrieval.search(
                query,
                valid_at=t or (None if form["date_from_query"] else _today()),
                known_at=k,
                scope=ALL_SCOPES,
                include_superseded=bool(form["superseded"]),
                mode=form["mode"],
                date_from_query=bool(form["date_from_query"]),
            ).as_dict()
        except VigenteError as exc:
            error, status = str(exc), 400
    return page(
        "search.html",
        status=status,
        tenant=who.tenant,
        active="search",
        form=form,
        result=result,
        error=error,
    )
