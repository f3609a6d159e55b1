"""The ``search`` and ``index`` commands: the ``--json`` contract, human output, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vigente import Vigente
from vigente.cli import cli
from vigente.evidence.documents import NewVersion

NOW = "2026-09-29"
HIT_KEYS = {"rank", "lineage_id", "version_id", "external_id", "title", "citation",
            "valid_from", "valid_to", "score", "superseded_by"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "cli.db")
    with Vigente.open(path) as vg:
        for ref, text, start, published, extra in (
            ("Policy 1/2026", "The upload limit for attachments is 50 MB.", "2026-01-01",
             "2025-12-15", {}),
            ("Policy 2/2026", "The upload limit for attachments is 80 MB.", "2026-09-01",
             "2026-09-03", {"relation": "amends", "predecessor": "Policy 1/2026"}),
            ("Policy 3/2026", "From 1 October the upload limit for attachments is 100 MB.",
             "2026-10-01", "2026-09-20", {"relation": "amends",
                                          "predecessor": "Policy 2/2026"}),
        ):
            vg.documents.add(NewVersion(lineage_id="mail/attachments", text=text,
                                        valid_from=start, published=published, reference=ref,
                                        external_id=ref.split()[1], title="Attachments",
                                        **extra),  # type: ignore[arg-type]
                             now=NOW)
        vg.documents.add(NewVersion(lineage_id="hr/leave", text="Twenty-five days of leave.",
                                    valid_from="2020-01-01", published="2019-12-01"), now=NOW)
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_search_json_contract(db: str) -> None:
    code, out = run("--db", db, "search", "upload limit for attachments", "--at", "2026-09-29",
                    "--now", NOW, "--k", "5", "--mode", "lexical", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert {"query", "valid_at", "known_at", "hits", "excluded"} <= data.keys()
    assert data["query"] == "upload limit for attachments"
    assert data["valid_at"] == "2026-09-29" and data["known_at"] == NOW
    (hit,) = data["hits"]
    assert HIT_KEYS <= hit.keys()
    assert hit["rank"] == 1 and hit["lineage_id"] == "mail/attachments"
    assert hit["external_id"] == "2/2026" and hit["title"] == "Attachments"
    assert hit["valid_from"] == "2026-09-01" and hit["valid_to"] == "2026-10-01"
    assert isinstance(hit["score"], float) and hit["superseded_by"].startswith("dv-")
    assert "80 MB" in hit["passage"] and hit["citation"].startswith("Policy 2/2026")
    assert {(e["reason"]) for e in data["excluded"]} == {"superseded", "not_yet_valid"}
    assert all({"version_id", "reason"} <= e.keys() for e in data["excluded"])


def test_search_date_from_the_question_and_superseded(db: str) -> None:
    code, out = run("--db", db, "search", "upload limit for attachments as of 2026-08-20",
                    "--date-from-query", "--now", NOW, "--include-superseded", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["valid_at"] == "2026-08-20" and data["date_from_query"] == "as of 2026-08-20"
    assert [h["external_id"] for h in data["hits"]] == ["1/2026"]  # never 80 or 100


def test_search_human_output_and_index(db: str) -> None:
    code, out = run("--db", db, "index", "--no-embed")
    assert code == 0 and "passage(s) in all" in out
    code, out = run("--db", db, "search", "upload limit", "--at", "2026-10-02", "--now", NOW,
                    "--mode", "lexical")
    assert code == 0 and "Policy 3/2026" in out and "1 hit(s)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "limit", "--now", NOW], "give --at"),
        (["search", "", "--at", NOW, "--now", NOW], "empty"),
        (["search", "limit", "--at", NOW, "--k", "0", "--now", NOW], "k must be"),
        (["search", "limit", "--at", "2026-09-29T10:00", "--now", NOW], "not a date"),
        (["search", "limit", "--at", "2026-09-29T10:00:00", "--now", NOW], "naive"),
        (["search", "limit", "--at", NOW, "--known-at", "2027-01-01", "--now", NOW], "future"),
    ],
)
def test_search_bad_input(db: str, args: list[str], message: str) -> None:
    code, out = run("--db", db, *args)
    assert code in (1, 2) and message in out and "Traceback" not in out


def test_search_on_a_store_never_indexed_indexes_first_and_says_so(db: str) -> None:
    code, out = run("--db", db, "search", "upload limit", "--at", "2026-09-29", "--now", NOW,
                    "--mode", "lexical")
    flat = " ".join(out.split())
    assert code == 0 and "1 hit(s)" in flat and "Policy 2/2026" in flat
    assert "note: the search index was behind the store: 4 version(s)" in flat
    assert "run `vigente index`" in flat
    code, out = run("--db", db, "search", "upload limit", "--at", "2026-09-29", "--now", NOW,
                    "--mode", "lexical", "--json")
    assert code == 0 and json.loads(out)["notes"] == []  # indexed now: nothing to say


def test_search_by_reference_and_by_title(db: str) -> None:
    code, out = run("--db", db, "search", "Policy 3/2026", "--at", "2026-10-02", "--now", NOW,
                    "--k", "1", "--json")
    assert code == 0, out
    (hit,) = json.loads(out)["hits"]
    assert hit["external_id"] == "3/2026" and hit["matched_field"] == "reference"
    code, out = run("--db", db, "search", "attachments", "--at", "2026-09-29", "--now", NOW,
                    "--k", "1", "--json")
    (hit,) = json.loads(out)["hits"]
    assert hit["external_id"] == "2/2026" and hit["matched_field"] == "title"
