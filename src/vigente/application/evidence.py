"""The evidence queries shared by the HTTP API and the MCP tools: :func:`ask` (a fact's or a
document lineage's evidence) and :func:`verify_answer` (a draft answer against evidence)."""

from __future__ import annotations

from typing import Any

from vigente.api import Vigente
from vigente.application import models as m
from vigente.errors import InvalidInput

__all__ = ["ask", "verify_answer"]


def ask(vg: Vigente, body: m.AskRequest) -> dict[str, Any]:
    """The evidence for a question: a document lineage's versions in force, or a fact's
    values, its statement worded in ``body.language`` either way (shared by ``/v1/ask``,
    ``/v1/verify`` and the MCP tools)."""
    if vg.documents.is_document_lineage(body.lineage):
        return vg.documents.evidence(
            body.lineage,
            valid_at=body.valid_at,
            known_at=body.known_at,
            scope=body.scope,
            now=body.now,
            language=body.language,
            record=body.record,
        ).as_dict()
    if body.valid_at is None:
        raise InvalidInput(
            f"valid_at is required for the fact lineage {body.lineage!r}: give the date the "
            "question is about (document lineages default to today)"
        )
    evidence = vg.evidence(
        body.lineage,
        valid_at=body.valid_at,
        known_at=body.known_at,
        scope=body.scope,
        now=body.now,
        record=body.record,
        language=body.language,
    )
    return {"kind": "fact", **evidence.as_dict()}


def verify_answer(vg: Vigente, body: m.VerifyRequest) -> dict[str, Any]:
    """The verdict on an answer, against given evidence or the evidence of a question."""
    from vigente.evidence.verify import verify

    if (body.evidence is None) == (body.ask is None):
        raise InvalidInput(
            'give exactly one of "evidence" (an /v1/ask response) and "ask" '
            "(the question to check the answer against)"
        )
    evidence = body.evidence if body.ask is None else ask(vg, body.ask)
    assert evidence is not None
    return verify(body.answer, evidence, language=body.language).as_dict()
