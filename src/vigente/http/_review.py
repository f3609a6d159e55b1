"""Endpoints of the review queue, derived items (and what is stale) and the answer check."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from vigente.api import Vigente
from vigente.application import models as m
from vigente.application.errors import found
from vigente.application.evidence import verify_answer
from vigente.errors import InvalidInput
from vigente.evidence.review import ReviewItem
from vigente.http._deps import TenantStore
from vigente.http._errors import ERROR_RESPONSES

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


# -- review queue ------------------------------------------------------------------------------
def _item(vg: Vigente, proposal_id: str) -> ReviewItem:
    return found(lambda: vg.review.show(proposal_id))


@router.get("/review", response_model=m.ReviewListOut, tags=["review"])
def review_list(
    vg: TenantStore,
    status: Annotated[Literal["pending", "approved", "rejected"] | None, Query()] = None,
) -> dict[str, Any]:
    """Proposals in the review queue (all, or those with one status)."""
    return {"proposals": [i.as_dict() for i in vg.review.list(status)]}


@router.post("/review", response_model=m.ReviewItemOut, status_code=201, tags=["review"])
def review_submit(body: m.ReviewSubmitIn, vg: TenantStore) -> dict[str, Any]:
    """Queue a bare document: the extractor proposes lineage, reference, validity and
    relation; nothing is admissible until a person approves."""
    return vg.review.submit(body.text, filename=body.filename, language=body.language).as_dict()


@router.get("/review/{proposal_id}", response_model=m.ReviewItemOut, tags=["review"])
def review_show(proposal_id: str, vg: TenantStore) -> dict[str, Any]:
    """One proposal with its text, spans, confidences, problems and history."""
    return _item(vg, proposal_id).as_dict(with_text=True)


@router.post("/review/{proposal_id}/edit", response_model=m.ReviewItemOut, tags=["review"])
def review_edit(proposal_id: str, body: m.ReviewEditIn, vg: TenantStore) -> dict[str, Any]:
    """Set (``set``) or remove (``clear``) fields of a pending proposal."""
    _item(vg, proposal_id)
    values: dict[str, str | None] = dict(body.set)
    values.update({name: None for name in body.clear})
    if not values:
        raise InvalidInput('nothing to edit: give "set": {"FIELD": "VALUE"} or "clear": ["FIELD"]')
    return vg.review.edit(proposal_id, note=body.note, **values).as_dict()


@router.post("/review/{proposal_id}/approve", response_model=m.DocumentVersionOut, tags=["review"])
def review_approve(proposal_id: str, body: m.ReviewApproveIn, vg: TenantStore) -> dict[str, Any]:
    """Approve a pending proposal: its version is added and becomes admissible."""
    _item(vg, proposal_id)
    return vg.review.approve(proposal_id, note=body.note, now=body.now).as_dict()


@router.post("/review/{proposal_id}/reject", response_model=m.ReviewItemOut, tags=["review"])
def review_reject(proposal_id: str, body: m.ReviewNoteIn, vg: TenantStore) -> dict[str, Any]:
    """Reject a pending proposal: nothing is added."""
    _item(vg, proposal_id)
    return vg.review.reject(proposal_id, note=body.note).as_dict()


# -- derived -----------------------------------------------------------------------------------
@router.post("/derived", response_model=m.DerivationOut, status_code=201, tags=["derived"])
def derive(body: m.DerivationIn, vg: TenantStore) -> dict[str, Any]:
    """Record a derived item (chunk, summary, cached answer, memory) and its sources."""
    record = vg.derivations.record(
        body.kind,
        body.label,
        sources=body.sources,
        valid_at=body.valid_at,
        known_at=body.known_at,
        content=body.content,
    )
    return {**record.as_dict(), "stale": False, "reasons": []}


@router.get("/derived", response_model=m.DerivedList, tags=["derived"])
def derived(vg: TenantStore, stale: bool = False) -> dict[str, Any]:
    """Derived items; with ``stale=true`` only those a later change made stale, and why."""
    stale_items = {s.derivation.derived_id: s for s in vg.derivations.stale()}
    if stale:
        return {"derived": [s.as_dict() for s in stale_items.values()]}
    rows = []
    for record in vg.derivations.all():
        item = stale_items.get(record.derived_id)
        rows.append(
            {
                **record.as_dict(),
                "stale": item is not None,
                "reasons": [] if item is None else list(item.reasons),
            }
        )
    return {"derived": rows}


# -- verify ------------------------------------------------------------------------------------
@router.post("/verify", response_model=m.VerdictOut, tags=["evidence"])
def verify_endpoint(body: m.VerifyRequest, vg: TenantStore) -> dict[str, Any]:
    """Check a generated answer against the evidence: dropped date qualifiers, values not
    admitted, a conflict stated as one value, numbers without evidence, superseded versions
    cited as in force; each finding's message worded in ``language`` ("en" or "it")."""
    return verify_answer(vg, body)
