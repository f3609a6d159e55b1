"""Titles and references as search fields: their text, how a query is scored against them,
and a store indexed before they were searchable (its fields are indexed by the next search)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vigente import Vigente
from vigente.evidence.documents import NewVersion
from vigente.retrieval.fields import STRONG, close_words, field_similarity
from vigente.retrieval.text import field_terms, field_text

NOW = "2026-09-29"


def test_field_text_folds_words_and_joins_numbers_in_order() -> None:
    assert field_text("Circolare n. 12/2025") == "circolare n 12 2025 12n2025"
    assert field_text("Circular 2025/12") == "circular 2025 12 2025n12"
    assert field_text("Määrus nr 1.2-3") == "maarus nr 1 2 3 1n2n3"
    assert field_text("Decree 12 2025") == "decree 12 2025"  # a space separates two numbers
    assert field_text("Ｎｏ．１２/2025") == "no 12 2025 12n2025"  # full-width forms
    assert field_terms("Policy 1/2026 policy") == ["policy", "1", "2026", "1n2026"]


@pytest.mark.parametrize(
    ("a", "b", "close"),
    [
        ("circolare", "circular", True),
        ("arengukavade", "arengukava", True),
        ("regolamento", "regulation", False),  # too far apart
        ("kord", "korra", False),  # too short to tell
        ("2025", "2026", False),  # numbers match only when identical
        ("vallas", "valla", True),
    ],
)
def test_close_words(a: str, b: str, close: bool) -> None:
    assert close_words(a, b) is close


def test_field_similarity_is_one_only_for_the_same_words() -> None:
    def score(query: str, field: str) -> float:
        return field_similarity(field_terms(query), field_terms(field))

    assert score("Circular 12/2025", "circular 12/2025") == 1.0
    assert STRONG <= score("Circolare 12/2025", "Circular 12/2025") < 1.0
    assert score("Circular 2025/12", "Circular 12/2025") < STRONG
    assert score("circular", "Circular 12/2025") == 0.25
    assert score("Kadrina valla arengukavade menetlemise kord",
                 "Kadrina valla soojamajanduse arengukava 2016-2026 kinnitamine") < 0.5
    assert score("a b c d e", "a b c d e f g") < STRONG  # a longer title is another title
    # Two acts titled with the same words: the one in the query's order is the better match.
    asked = "Eluasemekulude piirmäärade kehtestamine toimetulekutoetuse määramiseks"
    other = "Toimetulekutoetuse määramiseks eluasemekulude piirmäärade kehtestamine"
    assert STRONG < score(asked, other) < score(asked, asked) == 1.0
    assert score("", "x") == score("x", "") == 0.0


def test_a_store_indexed_before_fields_existed_gets_them_at_the_next_search(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with Vigente.open(path) as vg:
        doc = vg.documents.add(NewVersion(
            lineage_id="cdd", reference="Circular 12/2025", title="Customer due diligence",
            text="Banks must verify the identity of every customer.", valid_from="2025-03-03",
            published="2025-02-20"), now=NOW)
        vg.retrieval.index(embed=False)
    # What the field migration leaves in a store indexed by an older vigente: no field rows,
    # and every claim numbered below ``fields_from``.
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO retrieval_fields_fts (retrieval_fields_fts) VALUES "
                     "('delete-all')")
        conn.execute("DELETE FROM retrieval_fields")
        conn.execute("DELETE FROM retrieval_field_terms")
        conn.execute("UPDATE retrieval_state SET value = (SELECT max(claim_id) + 1 FROM "
                     "retrieval_claims) WHERE key = 'fields_from'")
    with Vigente.open(path) as vg:
        result = vg.search("Circolare 12/2025", valid_at="2025-04-01", now=NOW, mode="lexical")
        assert [h.version_id for h in result.hits] == [doc.version_id]
        assert result.hits[0].matched_field == "reference"
        (note,) = result.notes
        assert note.startswith("titles and references of 1 version(s) indexed by an older")
        again = vg.search("customer due diligence", valid_at="2025-04-01", now=NOW,
                          mode="lexical")
        assert again.notes == () and again.hits[0].matched_field == "title"
        vg.retrieval.index(embed=False, rechunk=True)  # a rebuilt index has them too
        assert vg.search("Circular 12/2025", valid_at="2025-04-01", now=NOW,
                         mode="lexical").hits[0].matched_field == "reference"


def test_only_fields_long_enough_to_match_strongly_are_kept_when_passages_fill_the_list() -> None:
    from vigente.records.retrieval import FieldMatch
    from vigente.retrieval.fields import could_be_strong

    query = field_terms("one two three four five six seven eight nine ten")
    matches = [FieldMatch(1, "title", "one two three"),  # 3 words: at most 0.3
               FieldMatch(2, "title", "one two three four five six seven eight"),
               FieldMatch(3, "title", "one two three four five"),  # 5 + 3 words together
               FieldMatch(3, "reference", "six seven eight")]
    assert [(m.claim_id, m.field) for m in could_be_strong(query, matches)] == [
        (2, "title"), (3, "title"), (3, "reference")]
