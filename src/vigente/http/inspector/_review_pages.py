"""The review queue: proposed metadata of bare documents, to approve, edit or reject.

Each form posts to the inspector, which calls ``vg.review`` and redirects back (303) to the
proposal; a refusal (a bad date, a proposal that cannot be approved as it stands) shows the
page again with vigente's message and changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from vigente.errors import VigenteError
from vigente.evidence.proposal import FIELDS
from vigente.http.inspector._auth import Viewer, check_origin, viewer
from vigente.http.inspector._render import PageRoute, blank, form_of, page

__all__ = ["router"]

router = APIRouter(include_in_schema=False, route_class=PageRoute)

ProposalId = Annotated[str, Path(min_length=1, max_length=200)]
Form = Annotated[dict[str, str], Depends(form_of)]
_DONE = {
    "edited": "Saved.",
    "approved": "Approved: the version was added.",
    "rejected": "Rejected.",
}


@router.get("/review", response_class=HTMLResponse)
def queue(
    request: Request,
    status: Annotated[str | None, Query(max_length=16)] = None,
) -> HTMLResponse:
    """The proposals (pending first), or those with one status."""
    who = viewer(request)
    wanted = blank(status)
    try:
        items = [i.as_dict() for i in who.vg.review.list(wanted)]
    except VigenteError as exc:
        return page(
            "review.html",
            status=400,
            tenant=who.tenant,
            active="review",
            error=str(exc),
            items=[],
            status_filter=wanted or "",
        )
    order = {"pending": 0, "approved": 1, "rejected": 2}
    items.sort(key=lambda i: (order.get(i["status"], 3), i["created_at"]))
    return page(
        "review.html",
        tenant=who.tenant,
        active="review",
        error=None,
        items=items,
        status_filter=wanted or "",
    )


def _marked(text: str, fields: dict[str, dict[str, Any]]) -> list[tuple[str, str | None]]:
    """The document's text cut into pieces, each piece a field's span (marked with the field's
    name) or plain text; a span overlapping an earlier one is left unmarked."""
    spans = sorted(
        (f["span"]["start"], f["span"]["end"], name)
        for name, f in fields.items()
        if f.get("span") and 0 <= f["span"]["start"] < f["span"]["end"] <= len(text)
    )
    pieces: list[tuple[str, str | None]] = []
    at = 0
    for start, end, name in spans:
        if start < at:
            continue
        if start > at:
            pieces.append((text[at:start], None))
        pieces.append((text[start:end], name))
        at = end
    pieces.append((text[at:], None))
    return pieces


def _item_page(
    who: Viewer,
    proposal_id: str,
    *,
    status: int = 200,
    error: str | None = None,
    done: str | None = None,
    values: dict[str, str] | None = None,
) -> HTMLResponse:
    try:
        item = who.vg.review.show(proposal_id).as_dict(with_text=True)
    except VigenteError as exc:
        return page(
            "review_item.html",
            status=404,
            tenant=who.tenant,
            active="review",
            error=str(exc),
            item=None,
            proposal_id=proposal_id,
        )
    fields = item["proposal"]["fields"]
    current = {name: (fields[name]["value"] if name in fields else "") for name in FIELDS}
    return page(
        "review_item.html",
        status=status,
        tenant=who.tenant,
        active="review",
        error=error,
        done=_DONE.get(done or ""),
        item=item,
        proposal_id=proposal_id,
        field_names=FIELDS,
        values={**current, **(values or {})},
        pieces=_marked(item["text"], fields),
    )


@router.get("/review/{proposal_id}", response_class=HTMLResponse)
def show(
    request: Request,
    proposal_id: ProposalId,
    done: Annotated[str | None, Query(max_length=16)] = None,
) -> HTMLResponse:
    """One proposal: its text, the proposed fields with their spans and confidences, its
    problems and history, and the forms."""
    return _item_page(viewer(request), proposal_id, done=done)


def _back(proposal_id: str, done: str) -> RedirectResponse:
    return RedirectResponse(f"/review/{proposal_id}?done={done}", status_code=303)


@router.post("/review/{proposal_id}/edit")
def edit(request: Request, proposal_id: ProposalId, form: Form) -> Response:
    """Save the fields a reviewer changed: a changed field is set, an emptied one removed."""
    who = viewer(request)
    check_origin(request)
    try:
        item = who.vg.review.show(proposal_id)
        fields = item.proposal.as_dict()["fields"]
        values: dict[str, str | None] = {}
        for name in FIELDS:
            if name not in form:
                continue
            new = blank(form[name])
            old = fields[name]["value"] if name in fields else None
            if new != old:
                values[name] = new
        if not values:
            return _item_page(
                who,
                proposal_id,
                status=400,
                error="nothing to save: change a field (or empty it to remove it) first",
            )
        who.vg.review.edit(proposal_id, note=blank(form.get("note")), **values)
    except VigenteError as exc:
        kept = {name: form[name] for name in FIELDS if name in form}
        return _item_page(who, proposal_id, status=400, error=str(exc), values=kept)
    return _back(proposal_id, "edited")


def _decide(request: Request, proposal_id: str, action: str, form: dict[str, str]) -> Response:
    who = viewer(request)
    check_origin(request)
    note = blank(form.get("note"))
    try:
        if action == "approve":
            who.vg.review.approve(proposal_id, note=note)
        else:
            who.vg.review.reject(proposal_id, note=note)
    except VigenteError as exc:
        return _item_page(who, proposal_id, status=400, error=str(exc))
    return _back(proposal_id, "approved" if action == "approve" else "rejected")


@router.post("/review/{proposal_id}/approve")
def approve(request: Request, proposal_id: ProposalId, form: Form) -> Response:
    """Approve a pending proposal: its version is added and becomes admissible."""
    return _decide(request, proposal_id, "approve", form)


@router.post("/review/{proposal_id}/reject")
def reject(request: Request, proposal_id: ProposalId, form: Form) -> Response:
    """Reject a pending proposal: nothing is added."""
    return _decide(request, proposal_id, "reject", form)
