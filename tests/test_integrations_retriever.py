"""VigenteRetriever: LangChain's retriever interface over ``vg.search`` — the version in force
at the reference date, superseded versions marked with their successor, citations and the
recorded decision in the metadata."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "langchain_core", reason="langchain-core is not installed (the integrations extra)"
)

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from vigente import Vigente
from vigente.evidence.documents import NewVersion
from vigente.integrations.retriever import VigenteRetriever

NOW = "2026-09-29"


@pytest.fixture
def vg(sqlite_vg: Vigente) -> Vigente:
    for ref, text, start, published, extra in (
        (
            "Policy 1/2026",
            "The upload limit for attachments is 50 MB.",
            "2026-01-01",
            "2025-12-15",
            {},
        ),
        (
            "Policy 2/2026",
            "The upload limit for attachments is 80 MB.",
            "2026-09-01",
            "2026-09-03",
            {"relation": "supersedes", "predecessor": "Policy 1/2026"},
        ),
    ):
        sqlite_vg.documents.add(
            NewVersion(
                lineage_id="mail/attachments",
                text=text,
                valid_from=start,
                published=published,
                reference=ref,
                title="Attachments",
                **extra,
            ),  # type: ignore[arg-type]
            now=NOW,
        )
    return sqlite_vg


def test_the_version_in_force_at_the_reference_date(vg: Vigente) -> None:
    retriever = VigenteRetriever(vg=vg, valid_at="2026-09-20", mode="lexical")
    assert isinstance(retriever, BaseRetriever)
    (doc,) = retriever.invoke("upload limit for attachments")
    assert isinstance(doc, Document) and "80 MB" in doc.page_content
    meta = doc.metadata
    assert meta["citation"].startswith("Policy 2/2026")
    assert meta["valid_from"] == "2026-09-01" and meta["valid_to"] is None
    assert meta["valid_at"] == "2026-09-20" and meta["superseded"] is False
    assert doc.id == meta["version_id"]
    decision = vg.decision(meta["decision_id"])  # the admissibility decision is recorded
    assert decision.kind


def test_a_date_in_the_question_and_superseded_versions_with_their_successor(
    vg: Vigente,
) -> None:
    retriever = VigenteRetriever(
        vg=vg, valid_at="2026-09-20", mode="lexical", include_superseded=True
    )
    docs = retriever.invoke("upload limit for attachments as of 2026-08-20")
    assert [d.metadata["reference"] for d in docs] == ["Policy 1/2026"]  # in force then
    assert docs[0].metadata["valid_at"] == "2026-08-20"
    assert docs[0].metadata["superseded_by"] is not None  # replaced since, and says by what
    later = retriever.invoke("upload limit for attachments")
    by_ref = {d.metadata["reference"]: d.metadata for d in later}
    assert by_ref["Policy 1/2026"]["superseded"] is True
    assert by_ref["Policy 1/2026"]["superseded_by"] == by_ref["Policy 2/2026"]["version_id"]
    assert by_ref["Policy 1/2026"]["superseded_by_label"]
    assert by_ref["Policy 2/2026"]["superseded"] is False
