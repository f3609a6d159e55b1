"""The evidence queries every surface shares: :func:`evidence_for` (a fact's or a document
lineage's evidence; the CLI renders it), :func:`ask` (the same as a dict, for the HTTP API and
the MCP tools) and :func:`verify_answer` (a draft answer against evidence)."""

from __future__ import annotations

from typing import Any

from vigente.api import ScopeLike, Vigente
from vigente.application import models as m
from vigente.errors import InvalidInput
from vigente.evidence.in_force import DocumentEvidence
from vigente.kernel.answer import Evidence
from vigente.kernel.horizon import is_back_dated
from vigente.time import current_instant

__all__ = ["ValidDateRequired", "ask", "evidence_for", "verify_answer"]


class ValidDateRequired(InvalidInput):
    """A fact's question without the date it is about (a document lineage defaults to today);
    each surface says so in its own words. Over HTTP it is plain ``invalid_input``."""

    code = "invalid_input"


def evidence_for(vg: Vigente, lineage: str, *, valid_at: str | None, known_at: str | None,
                 scope: ScopeLike, now: str | None, language: str,
                 record: bool) -> DocumentEvidence | Evidence:
    """The evidence for a question, as every surface routes it: a document lineage's versions
    in force, or a fact's values, the statement worded in ``language`` either way."""
    if vg.documents.is_document_lineage(lineage):
        return vg.documents.evidence(lineage, valid_at=valid_at, known_at=known_at, scope=scope,
                                     now=now, language=language, record=record)
    if valid_at is None:
        raise ValidDateRequired(
            f"valid_at is required for the fact lineage {lineage!r}: give the date the "
            "question is about (document lineages default to today)"
        )
    return vg.evidence(lineage, valid_at=valid_at, known_at=known_at, scope=scope, now=now,
                       record=record, language=language)


def model_learned_at(vg: Vigente, known_at: str | None) -> str | None:
    """The knowledge time a model-facing writer (MCP ``record_fact``) may give a fact: now
    (omitted, or within the clock skew). A model cannot back-date what it learned: that would
    rewrite what the store held before the model said it."""
    if known_at is not None and is_back_dated(vg.instant(known_at), current_instant()):
        raise InvalidInput(
            f"known_at {known_at} is before now: a model records what it learns now. Omit "
            "known_at (learned now); a statement dated in the past is recorded by the "
            "application (`vigente import`, POST /v1/statements)"
        )
    return known_at


def ask(vg: Vigente, body: m.AskRequest) -> dict[str, Any]:
    """The evidence for a question as a dict (shared by ``/v1/ask``, ``/v1/verify`` and the MCP
    tools): a fact's carries ``"kind": "fact"``."""
    evidence = evidence_for(vg, body.lineage, valid_at=body.valid_at, known_at=body.known_at,
                            scope=body.scope, now=body.now, language=body.language,
                            record=body.record)
    if isinstance(evidence, Evidence):
        return {"kind": "fact", **evidence.as_dict()}
    return evidence.as_dict()


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
