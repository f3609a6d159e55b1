"""Passages, folding and dates in questions: deterministic, and the retrieval package's public
API."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import vigente.retrieval as retrieval
from vigente import InvalidInput
from vigente.retrieval import chunk_text, date_from_query, fold, query_terms


def test_the_package_exports_its_public_api() -> None:
    assert set(retrieval.__all__) == {
        "ALL_SCOPES", "BUILTIN_MODELS", "MAX_PASSAGE_CHARS", "MINILM", "AllScopes",
        "Candidate", "CandidateQuery", "Claim", "Embedder", "EmbeddingUnavailable", "Excluded",
        "Hit", "IndexReport", "MiniLMEmbedder", "Mode", "PassageRecord", "QueryDate", "Ranked",
        "Retrieval", "RetrievalStats", "SearchResult", "builtin_embedder", "chunk_text",
        "date_from_query", "embedding_available", "fold", "fuse", "query_terms",
    }
    assert all(hasattr(retrieval, name) for name in retrieval.__all__)


def test_fold_matches_fts5_remove_diacritics() -> None:
    assert fold("Määrus ÕPETAJATE città perché") == "maarus opetajate citta perche"
    assert query_terms("Upload upload LIMIT, limit?") == ["upload", "limit"]


def test_chunks_cut_at_headings_and_paragraphs() -> None:
    text = "# Title\n\nIntro.\n\n## § 1\n\n" + "Sentence one. " * 100 + "\n\n## § 2\n\nShort."
    chunks = chunk_text(text, max_chars=300)
    assert chunks[0] == "# Title\n\nIntro."
    assert chunks[-1] == "## § 2\n\nShort."
    assert all(len(c) <= 300 for c in chunks)
    assert "".join(c.replace("\n\n", " ") for c in chunks).count("Sentence one.") == 100


def test_an_amended_section_leaves_the_other_passages_unchanged() -> None:
    sections = [f"## § {n}\n\n" + f"Rule {n} applies. " * 20 for n in range(1, 6)]
    before = chunk_text("\n\n".join(sections))
    sections[2] = "## § 3\n\nRule 3 is repealed."
    after = chunk_text("\n\n".join(sections))
    assert len(set(before) & set(after)) == len(before) - 1


@given(st.text(max_size=3000))
def test_chunking_is_deterministic_and_bounded(text: str) -> None:
    chunks = chunk_text(text, max_chars=200)
    assert chunks == chunk_text(text, max_chars=200)
    assert all(0 < len(c) <= 200 for c in chunks)


@pytest.mark.parametrize(
    ("question", "day", "phrase", "rest"),
    [
        ("upload limit as of 2015", "2015-12-31", "as of 2015", "upload limit"),
        ("upload limit on 2 September 2026?", "2026-09-02", "on 2 September 2026",
         "upload limit?"),
        ("limite allegati in vigore al 3 marzo 2025", "2025-03-03",
         "in vigore al 3 marzo 2025", "limite allegati"),
        ("who won as of March 2020", "2020-03-31", "as of March 2020", "who won"),
        ("seisuga 1. jaanuar 2020 kehtiv määrus", "2020-01-01", "seisuga 1. jaanuar 2020",
         "kehtiv määrus"),
        ("2015. aastal kehtinud kord", "2015-12-31", "2015. aastal", "kehtinud kord"),
    ],
)
def test_dates_in_questions(question: str, day: str, phrase: str, rest: str) -> None:
    found = date_from_query(question)
    assert found is not None
    assert (str(found.valid_at), found.phrase, found.text) == (day, phrase, rest)


def test_questions_without_a_date_or_with_two() -> None:
    assert date_from_query("Law 2015/3 on attachments") is None
    assert date_from_query("upload limit") is None
    with pytest.raises(InvalidInput, match="several dates"):
        date_from_query("limit on 1 March 2025 or on 2 March 2025")
    with pytest.raises(InvalidInput, match="not a calendar date"):
        date_from_query("limite al 31 febbraio 2025")
