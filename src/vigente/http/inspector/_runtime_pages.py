"""Pages of the agent runtime: conversations, a conversation's branches and runs, and each
recorded assembly with what it included (as what), what it omitted and why, its tokens
against transcript replay, "why not this record?" and the diff from the model call before.

The data is the runtime graph (``vg.runtime.graph``) and the assembler's audit
(``vg.assembly.explain`` / ``why_not`` / ``diff``); nothing is decided here.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse

from vigente.api import Vigente
from vigente.errors import VigenteError
from vigente.http.inspector._auth import viewer
from vigente.http.inspector._refusals import NoPage
from vigente.http.inspector._render import PageRoute, blank, page
from vigente.http.inspector._timeline import Span, Timeline, layout
from vigente.runtime import Branch, ModelRun, Participant

__all__ = ["router"]

router = APIRouter(include_in_schema=False, route_class=PageRoute)

Text = Annotated[str | None, Query(max_length=1024)]
_TIMELINE_KINDS = (
    "message",
    "run",
    "tool_call",
    "memory",
    "user_memory",
    "skill_state",
    "checkpoint",
    "promotion",
    "share",
)


@router.get("/runtime", response_class=HTMLResponse)
def conversations(request: Request) -> HTMLResponse:
    """The tenant's conversations."""
    who = viewer(request)
    return page(
        "runtime.html",
        tenant=who.tenant,
        active="runtime",
        conversations=who.vg.runtime.conversations(),
    )


def _summary(vg: Vigente, assembly_id: str) -> dict[str, Any]:
    record = vg.assembly.explain(assembly_id)
    return {
        "id": assembly_id,
        "branch": record["branch"],
        "participant": record["participant"],
        "mode": record["mode"],
        "format": record["format"],
        "created_at": record["created_at"],
        "snapshot": record["snapshot"],
        "included": len(record["included"]),
        "omitted": len(record["omitted"]),
        "included_list": record["included"],
        "omitted_list": record["omitted"],
        "tokens": record["tokens"],
    }


def _assembly_ids(vg: Vigente, conversation: str) -> list[str]:
    # The Store contract lists a conversation's assemblies (oldest first); the facade has no
    # listing of its own.
    return vg.store.runtime_assembly_ids(conversation)


@router.get("/runtime/conversation", response_class=HTMLResponse)
def conversation(
    request: Request,
    id: Annotated[str, Query(min_length=1, max_length=1024)],  # noqa: A002
    k: Text = None,
) -> HTMLResponse:
    """A conversation's branches (with their fork points), runs, records and assemblies."""
    who = viewer(request)
    vg = who.vg
    k = blank(k)
    try:
        graph = vg.runtime.graph(id, known_at=k)
        rows = graph.as_dict()["records"]  # (as a client reads them: no credential)
        summaries = [_summary(vg, a) for a in _assembly_ids(vg, id)]
    except VigenteError as exc:
        return page(
            "conversation.html",
            status=404 if "unknown conversation" in str(exc) else 400,
            tenant=who.tenant,
            active="runtime",
            error=str(exc),
            conversation_id=id,
            k=k or "",
        )
    texts = {r["id"]: str(r.get("content", "")) for r in rows if r["kind"] == "message"}
    for r in rows:
        r["text"] = _record_text(r, texts)
    branches = [n for n in graph.nodes if isinstance(n, Branch)]
    runs = [n for n in graph.nodes if isinstance(n, ModelRun)]
    participants = [n for n in graph.nodes if isinstance(n, Participant)]
    lanes = []
    for b in branches:
        lanes.append(
            {
                "branch": b,
                "depth": _depth(b, {x.id: x for x in branches}),
                "records": [
                    r for r in rows if r.get("branch_id") == b.id and r["kind"] in _TIMELINE_KINDS
                ],
            }
        )
    run_rows = [
        {
            "run": r,
            "calls": [c for c in rows if c["kind"] == "tool_call" and c.get("run_id") == r.id],
            "assemblies": [
                a
                for a in summaries
                if a["branch"] == r.branch_id and a["participant"] == r.participant_id
            ],
        }
        for r in runs
    ]
    memories = _memory_timeline(vg, rows, summaries[-1] if summaries else None)
    return page(
        "conversation.html",
        tenant=who.tenant,
        active="runtime",
        error=None,
        conversation_id=id,
        k=k or "",
        memory_timeline=memories,
        graph=graph,
        lanes=lanes,
        runs=run_rows,
        participants=participants,
        assemblies=summaries,
    )


def _memory_timeline(vg: Vigente, rows: list[dict[str, Any]],
                     last: dict[str, Any] | None) -> Timeline | None:
    """The conversation's memories on both axes, as the lineage pages draw snapshots: fresh
    over ``[observed_at, stale_after)`` across, held over ``[known_from, the known_from of the
    memory that superseded it)`` up. The red point is the last assembly's snapshot, and the
    memories it included are outlined."""
    memories = [r for r in rows if r["kind"] in ("memory", "user_memory")]
    if not memories:
        return None
    known = {r["id"]: vg.instant(r["known_from"]).micros for r in memories}
    spans = []
    for r in memories:
        start = vg.instant(r.get("observed_at") or r["known_from"]).micros
        stale = r.get("stale_after")
        later = [known[m] for m in r.get("superseded_by") or [] if m in known]
        label = ", ".join(r.get("source_tools") or []) or r["kind"]
        spans.append(Span(
            r["id"], label, label, start, None if stale is None else vg.instant(stale).micros,
            known[r["id"]], min(later) if later else None,
            f"{r['id']}: {r.get('summary') or ''} (fresh from {r.get('observed_at') or '?'}"
            f" until {stale or 'no end'}; known from {r['known_from']})"))
    point = None
    admitted: frozenset[str] = frozenset()
    if last is not None:
        at = vg.instant(last["snapshot"]).micros
        point = (at, at)
        admitted = frozenset(d["ref"] for d in last["included_list"] if d["kind"] == "memory")
    now = max(s.known_from for s in spans) if point is None else point[1]
    return layout(spans, point=point, now=now, admitted=admitted)


def _record_text(row: dict[str, Any], messages: dict[str, str]) -> str:
    """What a record says, for a reader: a message's text, a memory's summary, a call with
    its arguments, a result's tool and status (raw bytes stay on the artifact's own page)."""
    kind = row["kind"]
    if kind == "message":
        return messages.get(row["id"], "")
    if kind == "memory":
        return str(row.get("summary") or "")
    if kind == "tool_call":
        args = json.dumps(row.get("arguments"), ensure_ascii=False, separators=(",", ":"))
        return f"{row.get('name')}({args})"
    if kind == "artifact":
        return f"result of {row.get('tool_name')}: {row.get('status')}"
    return ""


def _depth(branch: Branch, by_id: dict[str, Branch]) -> int:
    depth, seen = 0, {branch.id}
    while branch.parent is not None and branch.parent in by_id and branch.parent not in seen:
        branch = by_id[branch.parent]
        seen.add(branch.id)
        depth += 1
    return depth


@router.get("/assembly/{assembly_id:path}", response_class=HTMLResponse)
def assembly(
    request: Request,
    assembly_id: Annotated[str, Path(max_length=200)],
    why_not: Text = None,
    before: Text = None,
    rebuild: Annotated[str | None, Query(max_length=8)] = None,
) -> HTMLResponse:
    """One recorded assembly: included (as what), omitted by reason, tokens against replay,
    why a record was left out, the diff from the consecutive model call before it and, on
    request, whether assembling again from its snapshot and policy selects the same."""
    if not assembly_id:  # `/assembly/` names no assembly: no such page, key or none
        raise NoPage(
            "an assembly's page is /assembly/ID: open one from its conversation on the Runtime page"
        )
    who = viewer(request)
    vg = who.vg
    why_not, before = blank(why_not), blank(before)
    try:
        record = vg.assembly.explain(assembly_id)
    except VigenteError as exc:
        return page(
            "assembly.html",
            status=404,
            tenant=who.tenant,
            active="runtime",
            error=str(exc),
            assembly_id=assembly_id,
        )
    ids = _assembly_ids(vg, record["conversation"])
    at = ids.index(assembly_id) if assembly_id in ids else -1
    previous = ids[at - 1] if at > 0 else None
    following = ids[at + 1] if 0 <= at < len(ids) - 1 else None
    others = [i for i in ids if i != assembly_id]
    error = None
    status = 200
    answer = None
    diff = None
    rebuilt = None
    try:
        if rebuild:
            rebuilt = vg.assembly.rebuild(assembly_id)
        if why_not is not None:
            answer = vg.assembly.why_not(assembly_id, why_not)
        base = before or previous
        if base is not None:
            diff = vg.assembly.diff(base, assembly_id)
    except VigenteError as exc:
        error, status = str(exc), 400
    omitted_by_reason: dict[str, list[dict[str, Any]]] = {}
    for d in record["omitted"]:
        omitted_by_reason.setdefault(str(d["reason"]), []).append(d)
    tokens = record["tokens"]
    saved = (
        None
        if not tokens["replay"]
        else round(100 * (tokens["replay"] - tokens["assembled"]) / tokens["replay"], 1)
    )
    return page(
        "assembly.html",
        status=status,
        tenant=who.tenant,
        active="runtime",
        error=error,
        assembly_id=assembly_id,
        record=record,
        omitted_by_reason=sorted(omitted_by_reason.items()),
        saved=saved,
        bar=_bars(tokens["assembled"], tokens["replay"]),
        why_not=why_not or "",
        answer=answer,
        diff=diff,
        rebuilt=rebuilt,
        before=before or previous or "",
        previous=previous,
        following=following,
        others=others,
    )


def _bars(assembled: int, replay: int) -> dict[str, float]:
    """Widths (pixels) of the tokens chart: the longer of the two fills the bar."""
    full = 520.0
    top = max(assembled, replay, 1)
    return {
        "assembled": round(full * assembled / top, 1),
        "replay": round(full * replay / top, 1),
        "full": full,
    }
