"""The CLI contract, run for real: in-process with click's runner and as the installed script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from vigente.cli import cli

ROOT = Path(__file__).resolve().parent.parent
L = "svc/upload-limit-mb"
NOW = "2026-09-29"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.db")


def run(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


def seed(db: str) -> None:
    for value, valid_from, known_at in (
        ("50", "2026-01-01", "2026-01-01"),
        ("80", "2026-09-01", "2026-09-03"),
        ("100", "2026-10-01", "2026-09-20"),
    ):
        code, out = run(
            db,
            "record",
            L,
            value,
            "--valid-from",
            valid_from,
            "--known-at",
            known_at,
            "--source",
            "policy",
            "--now",
            NOW,
        )
        assert code == 0, out


def test_ask_json_has_the_contract_shape(db: str) -> None:
    seed(db)
    code, out = run(db, "ask", L, "--at", "2026-09-02", "--now", NOW, "--json")
    assert code == 0
    data = json.loads(out)
    assert {
        "lineage",
        "scope",
        "valid_at",
        "known_at",
        "status",
        "values",
        "interpretation",
        "statement",
        "admitted",
        "excluded",
    } <= data.keys()
    assert data["values"] == [80] and data["interpretation"] == "retrospective"
    assert data["valid_at"] == "2026-09-02" and data["known_at"] == NOW
    (row,) = data["admitted"]
    assert set(row) == {
        "version_id",
        "value",
        "source",
        "valid_from",
        "valid_to",
        "known_from",
        "known_to",
    }
    assert row["valid_to"] == "2026-10-01" and row["known_to"] is None
    assert all(set(x) == {"version_id", "reason", "successor_id"} for x in data["excluded"])


def test_ask_human_output_keeps_the_qualifiers(db: str) -> None:
    seed(db)
    code, out = run(db, "ask", L, "--at", "2026-10-02", "--now", NOW)
    assert code == 0
    assert "announced_future" in out and "announced as 100 from 2026-10-01" in out


def test_values_are_json_when_they_parse_and_strings_otherwise(db: str) -> None:
    for lineage, raw in (("a", '{"mb": 80}'), ("b", "eighty"), ("c", "true"), ("d", "NaN")):
        code, out = run(
            db,
            "record",
            lineage,
            raw,
            "--valid-from",
            "2026-01-01",
            "--known-at",
            "2026-01-01",
            "--source",
            "s",
        )
        assert code == 0, out
    values = {}
    for lineage in "abcd":
        _, out = run(db, "ask", lineage, "--at", "2026-02-01", "--json")
        values[lineage] = json.loads(out)["values"]
    assert values == {"a": [{"mb": 80}], "b": ["eighty"], "c": [True], "d": ["NaN"]}


def test_scopes_on_the_command_line(db: str) -> None:
    code, _ = run(
        db,
        "record",
        L,
        "80",
        "--valid-from",
        "2026-01-01",
        "--known-at",
        "2026-01-01",
        "--source",
        "s",
        "--scope",
        "product=mail",
        "--scope",
        "env=prod",
    )
    assert code == 0
    _, out = run(
        db,
        "ask",
        L,
        "--at",
        "2026-02-01",
        "--scope",
        "env=prod",
        "--scope",
        "product=mail",
        "--json",
    )
    assert json.loads(out)["values"] == [80]
    assert json.loads(out)["scope"] == {"env": "prod", "product": "mail"}
    code, out = run(db, "ask", L, "--at", "2026-02-01", "--scope", "product")
    assert code == 2 and "key=value" in out


def test_history_and_lineages(db: str) -> None:
    seed(db)
    code, out = run(db, "history", L, "--json")
    assert code == 0 and len(json.loads(out)["versions"]) == 5
    code, out = run(db, "history", L)
    assert code == 0 and "2026-09-20" in out
    code, out = run(db, "history", "nope")
    assert code == 1 and out.startswith("Error: no lineage 'nope'")
    for extra in ((), ("--json",)):  # never an empty list that reads as "no versions yet"
        code, out = run(db, "history", "nope", *extra)
        assert code == 1 and out.startswith("Error: no lineage 'nope'"), out
    code, out = run(db, "documents", "list", "nope", "--json")
    assert code == 1 and out.startswith("Error: no document lineage 'nope'"), out
    code, out = run(db, "lineages", "--json")
    assert json.loads(out) == {"lineages": [{"lineage": L, "scope": {}}]}


def test_precedence_command_resolves_a_conflict(db: str) -> None:
    seed(db)
    run(
        db,
        "record",
        L,
        "90",
        "--valid-from",
        "2026-09-01",
        "--valid-to",
        "2026-10-01",
        "--known-at",
        "2026-09-25",
        "--source",
        "mirror",
        "--now",
        NOW,
    )
    _, out = run(db, "ask", L, "--at", NOW, "--now", NOW, "--json")
    assert json.loads(out)["status"] == "conflict"
    code, out = run(db, "precedence", "mirror", "policy", "--known-at", "2026-09-28", "--now", NOW)
    assert code == 0, out
    _, out = run(db, "ask", L, "--at", NOW, "--now", NOW, "--json")
    data = json.loads(out)
    assert data["status"] == "supported" and data["values"] == [90]
    assert data["precedence"]["overruled"][0]["value"] == 80


def test_retract_and_import(db: str, tmp_path: Path) -> None:
    seed(db)
    code, out = run(
        db,
        "retract",
        L,
        "--valid-from",
        "2026-10-01",
        "--known-at",
        "2026-09-25",
        "--source",
        "policy",
        "--now",
        NOW,
    )
    assert code == 0 and "1 snapshot(s) closed" in out
    path = tmp_path / "e.jsonl"
    path.write_text(
        json.dumps(
            {
                "op": "record",
                "lineage": "x",
                "value": 1,
                "source": "s",
                "valid_from": "2026-01-01",
                "known_at": "2026-01-01",
            }
        )
        + "\n"
    )
    code, out = run(db, "import", str(path))
    assert code == 0 and "imported 1 statement(s)" in out
    code, out = run(db, "import", str(tmp_path / "missing.jsonl"))
    assert code == 1 and out.startswith("Error: cannot read")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [
                "record",
                L,
                "1",
                "--valid-from",
                "2026-09-01T08:00:00",
                "--known-at",
                "2026-09-01",
                "--source",
                "s",
            ],
            "naive timestamp",
        ),
        (
            [
                "record",
                L,
                "1",
                "--valid-from",
                "2026-09-01",
                "--valid-to",
                "2026-08-01",
                "--known-at",
                "2026-09-01",
                "--source",
                "s",
            ],
            "not after",
        ),
        (["ask", L, "--at", "someday"], "not a date"),
        (["ask", L, "--at", "2026-01-01", "--known-at", "2099-01-01"], "future"),
    ],
)
def test_user_errors_print_error_and_exit_1(db: str, args: list[str], message: str) -> None:
    code, out = run(db, *args)
    assert code == 1
    assert out.startswith("Error: ") and message in out


def test_usage_errors_exit_2(db: str) -> None:
    code, _ = run(db, "record", L)
    assert code == 2
    code, _ = run(db, "frobnicate")
    assert code == 2


def test_a_fact_asked_without_its_date_is_a_usage_error(db: str) -> None:
    """The CLI routes a question as HTTP and MCP do (application.evidence.evidence_for): a fact
    lineage needs --at, a document lineage defaults to today."""
    code, out = run(db, "ask", L, "--now", NOW)
    assert code == 2
    assert "--at is required" in out


def test_the_installed_script_prints_no_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "vigente"
    db = str(tmp_path / "s.db")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"op": "record"}\n\xff\xfe\n')
    not_utf8 = b"x\xff\xfe"  # argv bytes that are not UTF-8
    for args in (
        ["ask", L, "--at", "2026-13-45"],
        ["import", str(bad)],
        [
            "record",
            not_utf8,
            "1",
            "--valid-from",
            "2026-01-01",
            "--known-at",
            "2026-01-01",
            "--source",
            "s",
        ],
    ):
        proc = subprocess.run(
            [str(script), "--db", db, *args], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stderr.startswith("Error: ")
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("these are not the tables you are looking for" * 100)
    proc = subprocess.run(
        [str(script), "--db", str(not_a_db), "lineages"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "vigente database" in proc.stderr


def test_demo_reproduces_the_seed(tmp_path: Path) -> None:
    code, out = run(str(tmp_path / "demo.db"), "demo")
    assert code == 0, out
    assert "all checks match the seed" in out and "✗" not in out
    code, out = run(str(tmp_path / "demo.db"), "demo")
    assert code == 1 and "fresh database" in out


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for name, command in cli.commands.items():
        assert command.help, f"{name} has no help text"
        assert "vigente --db" in readme and f" {name} " in readme, f"{name} not in README"


def test_the_cli_refuses_a_write_behind_an_answer_it_gave(tmp_path: Path) -> None:
    """Issue 20's reproduction, as a user types it: an answer as known on 2026-09-10, then a
    source dated 2026-09-04 is refused with `Error:` naming the horizon, the answer stays, and
    the same fact learned now is accepted."""
    db = str(tmp_path / "h.db")
    code, _ = run(db, "record", "lim", "80", "--valid-from", "2026-09-01", "--known-at",
                  "2026-09-03", "--source", "policy")
    assert code == 0
    ask = ("ask", "lim", "--at", "2026-09-10", "--known-at", "2026-09-10", "--json")
    code, before = run(db, *ask)
    assert code == 0 and json.loads(before)["status"] == "supported"
    code, out = run(db, "record", "lim", "90", "--valid-from", "2026-09-01", "--known-at",
                    "2026-09-04", "--source", "mirror")
    assert code == 1 and out.startswith("Error: ") and "2026-09-10" in out
    code, out = run(db, "precedence", "policy", "mirror", "--known-at", "2026-09-01")
    assert code == 1 and "2026-09-10" in out
    code, after = run(db, *ask)
    assert {k: v for k, v in json.loads(after).items() if k != "now"} == {
        k: v for k, v in json.loads(before).items() if k != "now"}
    code, _ = run(db, "record", "lim", "90", "--valid-from", "2026-09-01", "--source", "mirror")
    assert code == 0  # learned now: dated by the store after every answer given
    code, listed = run(db, "backfills", "--json")
    assert json.loads(listed)["answered_horizon"] == "2026-09-10"
