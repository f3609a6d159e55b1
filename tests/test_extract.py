"""The extractor on real-looking English and Italian circulars, bad input, and round trips."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vigente.errors import InvalidInput, InvalidInterval
from vigente.evidence import (
    InvalidProposal,
    Proposal,
    Relation,
    UnknownRelation,
    extract,
    format_date,
)

DOCUMENTS = Path(__file__).parent / "data" / "documents"
EXPECTED: dict[str, dict[str, Any]] = json.loads((DOCUMENTS / "expected.json").read_text())[
    "documents"
]


def read(name: str) -> str:
    return (DOCUMENTS / name).read_text(encoding="utf-8")


def test_every_document_has_an_expectation() -> None:
    on_disk = {p.name for p in DOCUMENTS.iterdir() if p.suffix in (".txt", ".md")}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_documents_yield_the_expected_proposal(name: str) -> None:
    text = read(name)
    want = EXPECTED[name]
    proposal = extract(text)
    got = {
        field: proposal.fields[field].value for field in want["fields"] if field in proposal.fields
    }
    assert got == want["fields"]
    for field in want["absent"]:
        assert field not in proposal.fields, f"{field} should not be proposed"
    assert sorted(p.code for p in proposal.problems) == sorted(want["problems"])
    assert proposal.approvable is want["approvable"]
    assert proposal.language == want["language"]
    for field in proposal.fields.values():
        # Every proposed value points at the text it was read from.
        assert field.span is not None
        assert text[field.span.start : field.span.end] == field.span.text
        assert 0 < field.confidence <= 1


def test_the_seed_circular_cites_its_evidence() -> None:
    proposal = extract(read("en_circular_12_2025.md"))
    valid_from = proposal.fields["valid_from"]
    assert valid_from.span is not None
    assert valid_from.span.text == "shall enter into force on 3 March 2025"
    assert proposal.valid_from is not None and proposal.valid_from.isoformat() == "2025-03-03"
    assert proposal.relation is Relation.SUPERSEDES
    predecessor = proposal.fields["predecessor"]
    assert predecessor.span is not None and predecessor.span.text == "replaces Circular 7/2023"


def test_a_date_that_does_not_exist_is_a_problem_not_a_crash() -> None:
    proposal = extract(read("it_data_impossibile.txt"))
    problem = next(p for p in proposal.problems if p.code == "invalid_date")
    assert problem.field == "valid_from" and problem.severity == "error"
    assert "'31 febbraio 2025'" in problem.message
    assert "February 2025 has 28 days" in problem.message
    assert "enter the date by hand" in problem.message
    assert problem.span is not None and problem.span.text == "entra in vigore il 31 febbraio 2025"
    assert "valid_from" in proposal.missing


def test_no_date_means_the_field_is_missing_and_flagged() -> None:
    proposal = extract(read("en_no_dates.txt"))
    assert proposal.missing == ("reference", "valid_from")
    messages = [p.message for p in proposal.problems if p.field == "valid_from"]
    assert messages and "enter the date by hand" in messages[0]


def test_the_predecessors_own_date_is_not_taken_for_the_documents() -> None:
    text = (
        "Circular 12/2025\nSeries: Payments\n\n"
        "This Circular replaces Circular 7/2023, in force from 1 June 2023. "
        "It enters into force on 3 March 2025."
    )
    proposal = extract(text)
    assert proposal.fields["valid_from"].value == "2025-03-03"
    assert proposal.fields["predecessor"].value == "Circular 7/2023"


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Effective as of March 3, 2025.", "2025-03-03"),
        ("With effect from 3rd March 2025.", "2025-03-03"),
        ("In vigore dal 3 marzo 2025.", "2025-03-03"),
        ("Con decorrenza dal 03/03/2025.", "2025-03-03"),
        ("A decorrere dal 1° aprile 2025 si applica la nuova disciplina.", "2025-04-01"),
        ("The rules apply from 2025-03-03.", "2025-03-03"),
        ("Entrerà in vigore il 3.3.2025.", "2025-03-03"),
    ],
)
def test_entry_into_force_phrases(sentence: str, expected: str) -> None:
    proposal = extract(f"Circular 1/2025\nSeries: Payments\n\n{sentence}")
    assert proposal.fields["valid_from"].value == expected


@pytest.mark.parametrize(
    ("sentence", "relation", "predecessor"),
    [
        ("This circular supersedes Circular 7/2023.", "supersedes", "Circular 7/2023"),
        ("Circular 7/2023 is hereby repealed.", "revokes", "Circular 7/2023"),
        ("This circular repeals and replaces Circular 7/2023.", "supersedes", "Circular 7/2023"),
        ("La presente circolare abroga la Circolare n. 7/2023.", "revokes", "Circolare n. 7/2023"),
        ("La presente revoca il Provvedimento n. 4/2022.", "revokes", "Provvedimento n. 4/2022"),
        ("La presente integra la Circolare n. 7/2023.", "supplements", "Circolare n. 7/2023"),
        ("Si rettifica la Circolare n. 7/2023 al punto 2.", "corrects", "Circolare n. 7/2023"),
        ("This circular corrects Circular 7/2023.", "corrects", "Circular 7/2023"),
        ("Amending Regulation (EU) 2016/679.", "amends", "Regulation (EU) 2016/679"),
    ],
)
def test_relation_phrases(sentence: str, relation: str, predecessor: str) -> None:
    proposal = extract(
        f"Circular 1/2025\nSeries: Payments\n\n{sentence}\nIn force from 1 May 2025."
    )
    assert proposal.fields["relation"].value == relation
    assert proposal.fields["predecessor"].value == predecessor


def test_a_negated_or_noun_use_is_no_relation() -> None:
    text = (
        "Circolare n. 1/2025\nSerie: Pagamenti\n\nLa presente non modifica la Circolare n. "
        "7/2023. Ogni modifica ai dati va comunicata. In vigore dal 1° maggio 2025."
    )
    assert "relation" not in extract(text).fields


def test_a_relation_without_an_act_is_flagged() -> None:
    proposal = extract(
        "Circular 1/2025\nSeries: X\n\n"
        "This circular replaces the old rules. In force from 1 May 2025."
    )
    assert proposal.fields["relation"].value == "supersedes"
    assert [p.code for p in proposal.problems if p.severity == "error"] == [
        "predecessor_reference_missing"
    ]


def test_two_different_entry_dates_are_reported() -> None:
    text = (
        "Circular 1/2025\nSeries: X\n\nThis Circular enters into force on 3 March 2025.\n\n"
        "Annex: the Circular shall enter into force on 10 March 2025."
    )
    proposal = extract(text)
    assert proposal.fields["valid_from"].value == "2025-03-03"
    problem = next(p for p in proposal.problems if p.code == "ambiguous_date")
    assert "2025-03-10" in problem.message and problem.severity == "warning"


def test_an_end_before_the_start_is_a_problem() -> None:
    text = "Circular 1/2025\nSeries: X\n\nIn force from 3 March 2025 until 1 January 2025."
    proposal = extract(text)
    assert "valid_to" not in proposal.fields
    assert [p.code for p in proposal.problems if p.severity == "error"] == ["end_before_start"]


# -- serialisation ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_proposals_round_trip_through_json(name: str) -> None:
    proposal = extract(read(name))
    data = json.loads(json.dumps(proposal.as_dict()))
    again = Proposal.from_dict(data)
    assert again == proposal
    assert again.as_dict() == proposal.as_dict()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_a_proposal_and_never_a_crash(text: str) -> None:
    proposal = extract(text)
    assert Proposal.from_dict(json.loads(json.dumps(proposal.as_dict()))) == proposal


words = st.sampled_from(
    [
        "Circolare",
        "n.",
        "12/2025",
        "in vigore dal",
        "31 febbraio 2025",
        "sostituisce",
        "Circular",
        "7/2023",
        "replaces",
        "until",
        "fino al",
        "3 March 2025",
        "Oggetto:",
        "\n",
        "errata corrige",
        "abroga",
        "01/13/2025",
        "2025-02-30",
        "effective as of",
        ".",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, max_size=40))
def test_document_like_noise_never_crashes(parts: list[str]) -> None:
    proposal = extract(" ".join(parts))
    for problem in proposal.problems:
        assert problem.message


@given(
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2090, 12, 31)),
    st.sampled_from(["en", "it"]),
)
def test_a_rendered_entry_date_is_read_back(day: dt.date, language: str) -> None:
    phrase = "enters into force on" if language == "en" else "entra in vigore il"
    text = f"Circular 1/2025\nSeries: X\n\nThis act {phrase} {format_date(day, language)}."
    assert extract(text).fields["valid_from"].value == day.isoformat()


def test_reviewers_can_edit_and_the_result_is_checked() -> None:
    proposal = extract(read("it_data_impossibile.txt"))
    assert not proposal.approvable
    fixed = proposal.edited(valid_from="2025-02-28")
    assert fixed.approvable
    assert fixed.fields["valid_from"].confidence == 1.0 and fixed.fields["valid_from"].span is None
    assert proposal.fields.get("valid_from") is None  # the original is unchanged
    with pytest.raises(InvalidInterval, match="is not after valid_from"):
        fixed.edited(valid_to="2025-01-01")
    with pytest.raises(UnknownRelation):
        fixed.edited(relation="replaced-ish")
    with pytest.raises(InvalidProposal, match="unknown field 'colour'"):
        fixed.edited(colour="blue")
    assert "relation" not in fixed.edited(relation=None).fields


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a proposal is a JSON object"),
        ({"fields": {}, "extra": 1}, "unknown proposal keys"),
        ({"language": "fr"}, "language 'fr' is not 'en' or 'it'"),
        ({"fields": {"colour": {"value": "x"}}}, "unknown field 'colour'"),
        ({"fields": {"lineage": {}}}, "needs at least a 'value'"),
        ({"fields": {"lineage": {"value": ""}}}, "non-empty text"),
        ({"fields": {"lineage": {"value": "x", "confidence": 2}}}, "is not in \\[0, 1\\]"),
        ({"fields": {"valid_from": {"value": "3 March"}}}, "is not a date: use YYYY-MM-DD"),
        ({"fields": {"lineage": {"value": "x", "span": {"text": "x"}}}}, "a span is"),
        ({"problems": [{"code": 1}]}, "'code' and 'message' must be text"),
        ({"problems": [{"code": "x", "message": "y", "severity": "fatal"}]}, "severity"),
    ],
)
def test_bad_serialised_proposals_are_refused_clearly(data: Any, message: str) -> None:
    with pytest.raises(InvalidProposal, match=message):
        Proposal.from_dict(data)
    assert issubclass(InvalidProposal, InvalidInput)


def test_bad_arguments() -> None:
    with pytest.raises(InvalidProposal, match="use 'en' or 'it'"):
        extract("Circular 1/2025", language="de")
    with pytest.raises(InvalidProposal, match="a document is text"):
        extract(b"Circular 1/2025")  # type: ignore[arg-type]
    assert [p.code for p in extract("   \n").problems][0] == "empty_document"
