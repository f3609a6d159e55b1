"""The evidence tools: ask what may be treated as true (``ask_evidence``), find it
(``search``), quote it (``cite``), record it (``record_fact``) and check a draft answer against
it (``verify_answer``). Each calls the application layer on the request's store."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from vigente.api import Vigente
from vigente.application import models as m
from vigente.application.evidence import ask, model_learned_at, verify_answer
from vigente.errors import InvalidInput
from vigente.evidence.wording import fact_citation
from vigente.kernel.ledger import WriteResult
from vigente.mcp_server._arguments import (
    Date,
    FindingsLanguage,
    Language,
    Now,
    Scope,
    SearchLanguage,
)
from vigente.mcp_server._calls import READ, WRITE, Tool, ToolResult, result_of, store
from vigente.records.values import JSONValue
from vigente.retrieval import ALL_SCOPES

__all__ = ["EVIDENCE_TOOLS"]


def ask_evidence(
    ctx: Context,
    lineage: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            description=(
                "the lineage asked about: a fact key such as svc/upload-limit-mb or a document "
                "lineage such as cdd"
            ),
        ),
    ],
    valid_at: Annotated[
        Date | None,
        Field(
            description=(
                "t, the date the question is about; required for facts, today by default for "
                "document lineages"
            )
        ),
    ] = None,
    known_at: Annotated[
        Date | None, Field(description=("k, what the store knew then (audits); default: now"))
    ] = None,
    scope: Scope | None = None,
    language: Language = "en",
    now: Now = None,
    record: Annotated[
        bool,
        Field(
            description=("store the admissibility decision (its id comes back as decision_id)")
        ),
    ] = False,
) -> ToolResult:
    """Evidence for one question: status (supported, missing or conflict), the admitted
    values or document versions, the excluded ones with reasons and successors, and
    `statement`, the wording to answer from. Never answer a `missing` with a value, nor a
    `conflict` with one side."""
    def answer() -> dict[str, Any]:
        body = m.AskRequest(
            lineage=lineage,
            valid_at=valid_at,
            known_at=known_at,
            scope=scope or {},
            now=now,
            language=language,
            record=record,
        )  # inside result_of: a value the request model refuses is a tool error, not a crash
        return ask(store(ctx), body)

    return result_of(answer)


def search(
    ctx: Context,
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=10_000,
            description=("what to look for, in words; may name its date with date_from_query"),
        ),
    ],
    valid_at: Annotated[
        Date | None,
        Field(description=("reference date t: only what was in force then is returned")),
    ] = None,
    known_at: Annotated[Date | None, Field(description="k; default: now")] = None,
    k: Annotated[int, Field(ge=1, le=50, description="how many passages")] = 5,
    include_superseded: Annotated[
        bool,
        Field(
            description=(
                "also return versions that had ended by valid_at, marked, with their successor"
            )
        ),
    ] = False,
    date_from_query: Annotated[
        bool,
        Field(
            description=('take t from the query ("as of 2015", "in vigore al 3 marzo 2025")')
        ),
    ] = False,
    scope: Annotated[
        dict[str, str | int] | None,
        Field(description=("omit for every scope; {} for the global scope only")),
    ] = None,
    language: SearchLanguage = "en",
    now: Now = None,
) -> ToolResult:
    """Passages of documents and facts about `query` that are admissible on `valid_at`
    (relevance ranks topics, validity picks the period), each with its citation and why
    it was admitted, plus the most similar versions that were excluded and why. Use it to
    find the lineage to ask about; cite hits by their `citation`."""

    return result_of(
        lambda: store(ctx)
        .retrieval.search(
            query,
            valid_at=valid_at,
            known_at=known_at,
            k=k,
            include_superseded=include_superseded,
            date_from_query=date_from_query,
            scope=ALL_SCOPES if scope is None else scope,
            language=language,
            now=now,
        )
        .as_dict()
    )


def cite(
    ctx: Context,
    lineage: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            description=("the document (or fact) lineage to cite"),
        ),
    ],
    valid_at: Annotated[
        Date | None, Field(description=("the date the citation is for; default: today"))
    ] = None,
    known_at: Annotated[Date | None, Field(description="k; default: now")] = None,
    scope: Scope | None = None,
    language: Language = "en",
    now: Now = None,
) -> ToolResult:
    """The citations to quote for a lineage on a date: each version in force with its
    reference, entry into force and the chain of versions it replaces or that replace it
    ("Circular 12/2025, in force from 3 March 2025, replacing Circular 7/2023"), and the
    statement. Quote `citations[].citation` verbatim."""

    question: dict[str, Any] = {
        "known_at": known_at,
        "scope": scope or {},
        "now": now,
        "language": language,
    }
    return result_of(lambda: _citations(store(ctx), lineage, valid_at, question))


def _citations(
    vg: Vigente, lineage: str, valid_at: str | None, question: dict[str, Any]
) -> dict[str, Any]:
    """What ``cite`` answers: a document lineage's versions in force, or a fact's value."""
    if not vg.documents.is_document_lineage(lineage):
        return _fact_citations(vg, lineage, valid_at, question)
    doc = vg.documents.evidence(lineage, valid_at=valid_at, **question)
    return {
        "lineage": lineage,
        "status": doc.status.value,
        "statement": doc.statement,
        "citations": [
            {
                "version_id": r.version.version_id,
                "reference": r.version.label,
                "citation": r.citation,
                "url": r.version.source_url,
                "superseded_by": None if r.successor is None else r.successor.label,
            }
            for r in doc.admitted
        ],
    }


def _fact_citations(
    vg: Vigente, lineage: str, valid_at: str | None, question: dict[str, Any]
) -> dict[str, Any]:
    """A fact's value on ``valid_at`` and its sources; a fact has no default date to cite."""
    if valid_at is None:
        raise InvalidInput(
            f"{lineage!r} is a fact lineage: give valid_at, the "
            "date to cite its value for"
        )
    fact = vg.evidence(lineage, valid_at=valid_at, **question)
    return {
        "lineage": lineage,
        "status": fact.status.value,
        "statement": fact.statement,
        "citations": [
            {
                "version_id": v.version_id,
                "source": v.source,
                "citation": fact_citation(v, question["language"]),
            }
            for v in fact.admitted
        ],
    }


def record_fact(
    ctx: Context,
    lineage: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            description=("the fact key, e.g. svc/upload-limit-mb"),
        ),
    ],
    value: Annotated[JSONValue, Field(description="the value stated (any JSON)")],
    valid_from: Annotated[Date, Field(description="first date the value applies")],
    source: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            description=("who states it: a document, a tool, a person"),
        ),
    ],
    valid_to: Annotated[
        Date | None, Field(description=("first date it no longer applies; omit when open"))
    ] = None,
    scope: Scope | None = None,
    known_at: Annotated[
        Date | None,
        Field(description=("omit: learned now (a model cannot date what it learned in the "
                           "past or the future)")),
    ] = None,
) -> ToolResult:
    """Record that `source` states `lineage` is `value` over [valid_from, valid_to), as
    learned now. History is kept: what it replaces is closed, never overwritten. Recording
    the same statement again changes nothing."""

    return result_of(
        lambda: _written(
            store(ctx).record(
                lineage,
                value,
                valid_from=valid_from,
                valid_to=valid_to,
                known_at=model_learned_at(store(ctx), known_at),
                source=source,
                scope=scope or {},
            )
        )
    )


def _written(result: WriteResult) -> dict[str, Any]:
    """What ``record_fact`` answers: whether the statement changed anything, and what."""
    return {
        "changed": result.changed,
        "write_id": result.write_id,
        "appended": [v.as_row() for v in result.appended],
        "closed": [v.as_row() for v in result.closed],
    }


def verify_answer_tool(
    ctx: Context,
    answer: Annotated[
        str, Field(min_length=1, max_length=100_000, description=("the draft answer to check"))
    ],
    lineage: Annotated[
        str | None,
        Field(
            max_length=1024,
            description=("the lineage the answer is about (the server asks for the evidence)"),
        ),
    ] = None,
    valid_at: Date | None = None,
    known_at: Date | None = None,
    scope: Scope | None = None,
    evidence: Annotated[
        dict[str, Any] | None,
        Field(description=("or the evidence object from ask_evidence, instead of lineage")),
    ] = None,
    language: FindingsLanguage = "en",
    now: Now = None,
) -> ToolResult:
    """Check a draft answer against the evidence before sending it: a value not admitted,
    a dropped date qualifier ("from 1 October", "as known on"), a conflict stated as one
    value, a number where there is no record, a superseded version cited as in force.
    `passed` false: rewrite the answer following each finding's message (worded in
    `language`)."""

    def run() -> dict[str, Any]:
        question = (
            None
            if lineage is None
            else m.AskRequest(
                lineage=lineage,
                valid_at=valid_at,
                known_at=known_at,
                scope=scope or {},
                now=now,
            )
        )
        body = m.VerifyRequest(
            answer=answer, evidence=evidence, ask=question, language=language
        )
        return verify_answer(store(ctx), body)

    return result_of(run)


#: The evidence tools, in the order a client lists them.
EVIDENCE_TOOLS = (
    Tool(ask_evidence, READ),
    Tool(search, READ),
    Tool(cite, READ),
    Tool(record_fact, WRITE),
    Tool(verify_answer_tool, READ, name="verify_answer"),
)
