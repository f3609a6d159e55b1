"""The answer check against real evidence: the seed scenario from a real store, document
evidence in the ``ask --json`` shape, English and Italian answers, and bad evidence files."""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vigente import Evidence, Vigente
from vigente.errors import InvalidInput
from vigente.evidence import (
    EvidenceFileError,
    FindingCode,
    InvalidEvidence,
    load_evidence,
    verify,
    verify_file,
)

DATA = Path(__file__).parent / "data"
SEED = json.loads((DATA / "seed_upload_limit.json").read_text())
DOCUMENTS = DATA / "documents"
L, NOW = SEED["lineage"], SEED["now"]


@pytest.fixture(scope="module")
def seeded() -> Iterator[Vigente]:
    """The seed article's upload limit in a real (in-memory SQLite) store, with its conflict."""
    vg = Vigente.open(":memory:")
    for event in SEED["events"]:
        fields = {k: v for k, v in event.items() if k not in ("op", "value")}
        vg.record(L, event["value"], now=NOW, **fields)
    yield vg
    vg.close()


def ask(vg: Vigente, t: str, k: str) -> Evidence:
    return vg.evidence(L, valid_at=t, known_at=k, now=NOW)


def codes(text: str, evidence: Any) -> list[str]:
    return [f.code.value for f in verify(text, evidence).findings]


@pytest.mark.parametrize(
    "question", SEED["questions"], ids=lambda q: f"{q['interpretation']}-t={q['valid_at']}"
)
def test_the_stores_own_statement_passes(seeded: Vigente, question: dict[str, Any]) -> None:
    e = ask(seeded, question["valid_at"], question["known_at"])
    verdict = verify(e.statement, e)
    assert verdict.passed, verdict.findings
    assert verdict.status == question["status"]


# (t, k, answer, expected finding codes) — the seed's questions answered well and badly.
SEED_ANSWERS = [
    ("2026-09-29", "2026-09-29", "The upload limit is 80 MB.", []),
    ("2026-09-29", "2026-09-29", "Il limite di caricamento è di 80 MB.", []),
    ("2026-09-29", "2026-09-29", "The upload limit is eighty megabytes.", []),
    ("2026-09-29", "2026-09-29", "Il limite è di ottanta MB.", []),
    ("2026-09-29", "2026-09-29", "The upload limit is 100 MB.", ["value_not_admitted"]),
    ("2026-09-29", "2026-09-29", "The limit is 80 MB, up from 50 MB.", ["value_not_admitted"]),
    ("2026-09-29", "2026-09-29", "Il limite è di 80,5 MB.", ["value_not_admitted"]),
    ("2026-10-02", "2026-09-29", "The upload limit is 100 MB.", ["missing_date_qualifier"]),
    ("2026-10-02", "2026-09-29", "Announced, from 1 October: 100 MB.", []),
    ("2026-10-02", "2026-09-29", "From October 1, 2026 the limit will be 100 MB.", []),
    ("2026-10-02", "2026-09-29", "Il limite sarà di 100 MB dal 1° ottobre.", []),
    ("2026-10-02", "2026-09-29", "È stato annunciato un limite di 100 MB.", []),
    ("2026-10-02", "2026-09-29", "Il limite è di 100 MB.", ["missing_date_qualifier"]),
    ("2026-08-20", "2026-09-29", "The limit was 50 MB.", ["missing_date_qualifier"]),
    ("2026-08-20", "2026-09-29", "On 20 August 2026 the limit was 50 MB.", []),
    ("2026-08-20", "2026-09-29", "In August 2026 the limit was 50 MB.", []),
    ("2026-08-20", "2026-09-29", "Al 20/08/2026 il limite era di 50 MB.", []),
    ("2026-08-20", "2026-09-29", "The limit was 50 MB until 1 September 2026.", []),
    ("2026-09-02", "2026-09-02", "The limit is 50 MB.", ["missing_date_qualifier"]),
    ("2026-09-02", "2026-09-02", "As known on 2 September 2026, the limit was 50 MB.", []),
    (
        "2026-09-02",
        "2026-09-02",
        "Secondo quanto noto al 2 settembre 2026 il limite era 50 MB.",
        [],
    ),
    ("2025-12-01", "2026-09-29", "The limit was 50 MB.", ["number_without_evidence"]),
    (
        "2025-12-01",
        "2026-09-29",
        "Non risulta alcun limite registrato per il 1° dicembre 2025.",
        [],
    ),
    ("2025-12-01", "2026-09-29", "No record for that date — which does not mean zero.", []),
    ("2025-12-01", "2026-09-29", "The limit was zero.", ["number_without_evidence"]),
    ("2026-09-15", "2026-09-10", "The limit will be 80 MB.", ["missing_date_qualifier"]),
    ("2026-09-15", "2026-09-10", "If nothing changes, on 15 September it will be 80 MB.", []),
]


@pytest.mark.parametrize(("t", "k", "answer", "expected"), SEED_ANSWERS)
def test_seed_answers(seeded: Vigente, t: str, k: str, answer: str, expected: list[str]) -> None:
    e = ask(seeded, t, k)
    verdict = verify(answer, e)
    assert [f.code.value for f in verdict.findings] == expected, verdict.findings
    assert verdict.passed is (not expected)
    for finding in verdict.findings:
        assert finding.span is not None
        assert answer[finding.span.start : finding.span.end] == finding.span.text
        assert finding.message


def test_findings_say_what_is_wrong_and_how_to_fix_it(seeded: Vigente) -> None:
    verdict = verify("The upload limit is 100 MB.", ask(seeded, "2026-10-02", "2026-09-29"))
    (finding,) = verdict.findings
    assert finding.code is FindingCode.MISSING_DATE_QUALIFIER
    assert finding.span is not None and finding.span.text == "100"
    assert "announced_future" in finding.message and "keep the qualifier" in finding.message
    assert verdict.as_dict()["findings"][0]["span"] == {"text": "100", "start": 20, "end": 23}


@pytest.fixture(scope="module")
def conflict(seeded: Vigente) -> Evidence:
    c = SEED["conflict"]
    fields = {k: v for k, v in c["event"].items() if k not in ("op", "value")}
    with Vigente.open(":memory:") as vg:
        for event in [*SEED["events"], c["event"]]:
            f = {k: v for k, v in event.items() if k not in ("op", "value")}
            vg.record(L, event["value"], now=NOW, **f)
        assert fields
        return vg.evidence(L, now=NOW, **c["question"])


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The limit is 80 MB.", ["conflict_as_single_value"]),
        ("Il limite è di 90 MB.", ["conflict_as_single_value"]),
        ("The limit is 85 MB.", ["conflict_as_single_value", "value_not_admitted"]),
        ("The limit is 80 MB and 90 MB.", ["conflict_as_single_value"]),
        ("The sources conflict: 80 MB or 90 MB.", []),
        ("Le fonti non concordano: 80 MB oppure 90 MB.", []),
        ("The sources disagree about the limit; ask the service owner.", []),
    ],
)
def test_a_conflict_must_be_reported_as_one(
    conflict: Evidence, answer: str, expected: list[str]
) -> None:
    assert conflict.status.value == "conflict"
    assert codes(answer, conflict) == expected
    assert verify(conflict.statement, conflict).passed


def test_numbers_in_every_common_spelling() -> None:
    evidence = {"status": "supported", "values": [1000.5], "interpretation": "current"}
    for ok in ("EUR 1,000.50", "1.000,50 €", "1000,50 euro", "1\u00a0000,50 EUR"):
        assert verify(f"The fee is {ok}.", evidence).passed, ok
    assert codes("The fee is 1,000.05 EUR.", evidence) == ["value_not_admitted"]
    # Dates, references, articles, times and list numbers are not value claims.
    text = "Under Circular 12/2025, art. 5, from 3 March 2025 at 08:30, the fee is 1.000,50 €."
    assert verify(text, evidence).passed


# -- document evidence ----------------------------------------------------------------------
def document(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DOCUMENTS / name).read_text())
    return data


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Circular 12/2025 is in force; it replaced Circular 7/2023.", []),
        ("Circular 7/2023 is in force.", ["superseded_as_in_force"]),
        (
            "Under the current Circular 7/2023, turnover above EUR 15,000 needs checks.",
            ["superseded_as_in_force"],
        ),
        ("La Circolare n. 7/2023 è vigente.", ["superseded_as_in_force"]),
        ("La Circolare n. 7/2023 non è più in vigore: vale la Circolare n. 12/2025.", []),
        ("Circular 7/2023 was superseded on 3 March 2025.", []),
        ("The Circular 7/2023 applies, as does Circular 12/2025.", []),
        ("The threshold is EUR 10,000 under Circular 12/2025.", []),
    ],
)
def test_a_superseded_version_cited_as_in_force(answer: str, expected: list[str]) -> None:
    evidence = document("evidence_circular_current.json")
    assert codes(answer, evidence) == expected
    assert verify(evidence["statement"], evidence).passed


def test_the_successor_is_found_through_the_citation_when_not_among_the_rows() -> None:
    evidence = document("evidence_circular_current.json")
    evidence["admitted"] = []  # only the superseded row and its citation are left
    evidence["status"], evidence["values"] = "missing", []
    (finding,) = verify("Circular 7/2023 is in force.", evidence).findings
    assert "cite Circular 12/2025 as the version in force" in finding.message


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("On 10 February 2025 Circular 7/2023 was in force.", []),
        ("Il 10 febbraio 2025 era in vigore la Circolare n. 7/2023.", []),
        ("Circular 7/2023 is in force.", ["missing_date_qualifier"]),
        # The successor was not yet in force on the date asked.
        ("Circular 12/2025 is in force.", ["value_not_admitted"]),
        ("La Circolare 12/2025 è vigente.", ["value_not_admitted"]),
        ("Circular 12/2025 will be in force from 3 March 2025.", []),
    ],
)
def test_a_historical_document_answer_keeps_its_date(answer: str, expected: list[str]) -> None:
    evidence = document("evidence_circular_february_2025.json")
    assert codes(answer, evidence) == expected


def test_no_version_in_force_means_none_may_be_cited_as_in_force() -> None:
    evidence = document("evidence_circular_february_2025.json")
    evidence.update(valid_at="2023-01-01", status="missing", values=[], interpretation="missing")
    evidence["excluded"] = [
        {**row, "reason": "not_yet_valid"} for row in [*evidence["admitted"], *evidence["excluded"]]
    ]
    evidence["admitted"] = []
    assert codes("Circular 7/2023 is in force.", evidence) == ["value_not_admitted"]
    assert codes("Circular 9/2022 is the current one.", evidence) == ["value_not_admitted"]
    assert verify("No circular was in force on 1 January 2023.", evidence).passed


def test_optional_document_fields_and_excluded_values_are_used() -> None:
    evidence = {
        "status": "supported",
        "values": ["strict"],
        "interpretation": "current",
        "admitted": [{"version_id": "2.1", "value": "strict"}],
        "excluded": [
            {
                "version_id": "1.1",
                "value": "lenient",
                "reason": "no_longer_valid",
                "successor_id": "2.1",
            }
        ],
    }
    assert verify("The policy is strict.", evidence).passed
    assert codes("The policy is lenient.", evidence) == ["value_not_admitted"]


# -- properties ------------------------------------------------------------------------------
days = st.dates(min_value=dt.date(2025, 11, 1), max_value=dt.date(2027, 3, 1))


@settings(max_examples=60, deadline=None)
@given(days, st.dates(min_value=dt.date(2026, 1, 1), max_value=dt.date(2026, 9, 29)))
def test_every_statement_of_the_store_passes_its_own_check(
    seeded: Vigente, t: dt.date, k: dt.date
) -> None:
    e = ask(seeded, t.isoformat(), k.isoformat())
    assert verify(e.statement, e).passed


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=10_000).filter(lambda n: n != 80))
def test_any_other_number_for_a_current_value_is_caught(seeded: Vigente, n: int) -> None:
    e = ask(seeded, NOW, NOW)
    assert codes(f"The upload limit is {n} MB.", e) == ["value_not_admitted"]
    assert codes(f"The upload limit is {n:,} MB.", e) == ["value_not_admitted"]


# -- bad input -------------------------------------------------------------------------------
def test_verify_file_reads_what_ask_json_writes(seeded: Vigente, tmp_path: Path) -> None:
    path = tmp_path / "evidence.json"
    e = ask(seeded, "2026-10-02", "2026-09-29")
    path.write_text(json.dumps(e.as_dict()))
    assert verify_file(path, "Announced: 100 MB from 1 October 2026.").passed
    assert not verify_file(str(path), "The limit is 100 MB.").passed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist: write it with `vigente ask"),
        (b"{not json", "is not valid JSON"),
        (b"\xff\xfe", "is not UTF-8 text"),
        (b"[1, 2]", "holds a JSON list, not an evidence object"),
    ],
)
def test_bad_evidence_files(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "evidence.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(EvidenceFileError, match=message):
        verify_file(path, "The limit is 80 MB.")
    with pytest.raises(EvidenceFileError, match="is a directory"):
        load_evidence(tmp_path)
    assert issubclass(EvidenceFileError, InvalidInput)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "unknown"}, "is not supported, missing or conflict"),
        ({"values": "80"}, "'values' must be a list"),
        ({"admitted": {"a": 1}}, "'admitted' must be a list of row objects"),
        ({"valid_at": "29/09/2026"}, "valid_at: .* is not a date"),
        ({"interpretation": 3}, "'interpretation' must be text"),
    ],
)
def test_evidence_of_the_wrong_shape(seeded: Vigente, change: dict[str, Any], message: str) -> None:
    data = copy.deepcopy(ask(seeded, NOW, NOW).as_dict())
    data.update(change)
    with pytest.raises(InvalidEvidence, match=message):
        verify("The limit is 80 MB.", data)
    with pytest.raises(InvalidEvidence, match="must be an Evidence or the dict"):
        verify("The limit is 80 MB.", [data])  # type: ignore[arg-type]
    with pytest.raises(InvalidEvidence, match="the answer must be text"):
        verify(None, data)  # type: ignore[arg-type]
