"""The document-lineage commands, run for real through click."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vigente.cli import cli

DOCS = Path(__file__).parent / "data" / "documents"
TODAY = "2026-11-29"


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


def test_documents_ask_derived_and_decisions(tmp_path: Path) -> None:
    db = tmp_path / "regs.db"
    code, out = run(
        db,
        "documents",
        "add",
        "cdd",
        "--text-file",
        str(DOCS / "en_circular_7_2023.md"),
        "--reference",
        "Circular 7/2023",
        "--valid-from",
        "2023-06-01",
        "--published",
        "2023-05-12",
        "--source-url",
        "https://x.eu/7",
        "--external-id",
        "c7",
    )
    assert code == 0, out
    old_id = out.split()[1].rstrip(":")
    code, out = run(
        db,
        "documents",
        "add",
        "cdd",
        "--text",
        "New rules.",
        "--reference",
        "Circular 12/2025",
        "--valid-from",
        "2025-03-03",
        "--published",
        "2025-02-14",
        "--relation",
        "supersedes",
        "--predecessor",
        "c7",
    )
    assert code == 0, out
    code, out = run(
        db,
        "derive",
        "chunk",
        "§3",
        "--from",
        old_id,
        "--at",
        "2024-01-01",
        "--known-at",
        "2024-01-01",
    )
    assert code == 0, out
    code, out = run(db, "derived", "--stale", "--json")
    (item,) = json.loads(out)["derived"]
    assert item["stale"] and "superseded by Circular 12/2025" in item["reasons"][0]

    code, out = run(db, "ask", "cdd", "--at", "2025-02-20", "--now", TODAY, "--record", "--json")
    data = json.loads(out)
    assert data["status"] == "supported" and data["values"] == [old_id]
    (row,) = data["admitted"]
    assert {"external_id", "reference", "relation", "citation", "successor_id"} <= row.keys()
    assert row["external_id"] == "c7" and row["superseded"] is True
    assert "superseded on 3 March 2025 by Circular 12/2025" in row["citation"]
    code, out = run(db, "decisions", "show", data["decision_id"])
    assert json.loads(out)["payload"]["values"] == [old_id]

    code, out = run(db, "ask", "cdd", "--now", TODAY, "--lang", "it")
    assert code == 0 and "in vigore dal 3 marzo 2025" in out
    code, out = run(db, "documents", "list", "cdd", "--json")
    assert [v["reference"] for v in json.loads(out)["versions"]] == [
        "Circular 7/2023",
        "Circular 12/2025",
    ]
    code, out = run(db, "documents", "show", old_id)
    assert json.loads(out)["text"].startswith("# Circular 7/2023")

    evidence = tmp_path / "e.json"
    evidence.write_text(run(db, "ask", "cdd", "--now", TODAY, "--json")[1])
    code, out = run(
        db, "verify", "--evidence", str(evidence), "Circular 7/2023 is in force and applies."
    )
    assert code == 1 and "fail" in out


def test_review_queue_commands(tmp_path: Path) -> None:
    db = tmp_path / "rq.db"
    code, out = run(
        db,
        "review",
        "submit",
        str(DOCS / "en_circular_7_2023.md"),
        str(DOCS / "it_data_impossibile.txt"),
    )
    assert code == 0, out
    first, second = (line.split(":")[0] for line in out.splitlines())
    assert "needs edits" in out.splitlines()[1]
    code, out = run(db, "review", "list", "--json")
    assert [p["status"] for p in json.loads(out)["proposals"]] == ["pending", "pending"]
    code, out = run(db, "review", "approve", second, "--now", TODAY)
    assert code == 1 and out.startswith("Error: proposal") and "review edit" in out
    code, out = run(
        db,
        "review",
        "edit",
        second,
        "--set",
        "valid_from=2025-03-01",
        "--set",
        "published=2025-02-20",
        "--clear",
        "relation",
        "--clear",
        "predecessor",
    )
    assert code == 0 and "ready to approve" in out
    code, out = run(db, "review", "approve", second, "--now", TODAY)
    assert code == 0 and "approved as dv-" in out
    code, out = run(db, "review", "reject", first, "--note", "duplicate")
    assert code == 0
    code, out = run(db, "review", "show", first)
    assert json.loads(out)["status"] == "rejected"
    code, out = run(db, "review", "edit", first, "--set", "title=x")
    assert code == 1 and "already rejected" in out


def test_an_import_line_without_text_or_entry_into_force_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "regs.db"
    good = {"lineage_id": "cdd", "text": "Rules.", "valid_from": "2025-03-03",
            "published": "2025-02-14", "reference": "Circular 12/2025"}
    for missing, message in (("text", "text is required"),
                             ("valid_from", "valid_from (entry into force) is required")):
        path = tmp_path / f"no_{missing}.jsonl"
        bad = {k: v for k, v in good.items() if k != missing}
        path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        code, out = run(db, "documents", "import", str(path))
        assert code == 1 and out.startswith("Error: line 2") and message in out, out
        code, out = run(db, "documents", "list", "cdd")  # all or nothing: not even line 1
        assert code == 1 and "no document lineage 'cdd'" in out
