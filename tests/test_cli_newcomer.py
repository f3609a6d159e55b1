"""What a newcomer meets on the CLI (issue 21, items 1 and 8): each test is one report of the
issue, and fails without its fix."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conformance.test_runtime import session
from vigente.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def trip(tmp_path: Path) -> str:
    db = str(tmp_path / "trip.db")
    log = tmp_path / "trip.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in session()) + "\n")
    assert run("--db", db, "runtime", "import", str(log)).exit_code == 0
    return db


def test_import_openai_says_which_participant_to_assemble_for(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "Hi"},
                                {"role": "assistant", "content": "Hello"}]))
    db = str(tmp_path / "v.db")
    result = run("--db", db, "runtime", "import-openai", str(chat), "--conversation", "c1",
                 "--account", "a")
    assert result.exit_code == 0, result.output
    assert "participant 'assistant'" in result.output
    command = result.output.split("`")[1]  # the command it suggests, run as printed
    assembled = run("--db", db, *shlex.split(command)[1:])
    assert assembled.exit_code == 0, assembled.output


def test_policy_show_prints_toml_that_policy_check_and_assemble_read(
    tmp_path: Path, trip: str,
) -> None:
    shown = run("policy", "show")
    assert shown.exit_code == 0 and not shown.output.lstrip().startswith("{"), shown.output
    path = tmp_path / "mine.toml"
    path.write_text(shown.output.replace('version = "', 'version = "mine-', 1))
    checked = run("policy", "check", str(path))
    assert checked.exit_code == 0, checked.output
    assembled = run("--db", trip, "assemble", "--conversation", "trip-42", "--branch", "main",
                    "--participant", "agent", "--policy", str(path), "--json")
    assert assembled.exit_code == 0, assembled.output


@pytest.mark.parametrize("body", ["deep", "zero", "large"])
def test_policy_check_bounds_what_it_reads(tmp_path: Path, body: str) -> None:
    """Deep TOML raised RecursionError; /dev/zero, MemoryError."""
    if body == "deep":
        path = tmp_path / "deep.toml"
        path.write_text('id = "x"\nversion = "1"\nx = ' + "[" * 5000 + "]" * 5000 + "\n")
        expected = "levels deep"
    elif body == "zero":
        path = Path("/dev/zero")
        expected = "not a regular file"
    else:
        path = tmp_path / "large.toml"
        path.write_text("# " + "x" * (2 << 20) + "\n")
        expected = "larger than"
    result = run("policy", "check", str(path))
    assert result.exit_code == 1 and "Error:" in result.output and expected in result.output, (
        result.output)


def test_db_on_a_service_root_says_what_to_point_at(tmp_path: Path) -> None:
    root = tmp_path / "vigente-data"
    (root / "tenants").mkdir(parents=True)
    (root / "admin.db").write_bytes(b"")
    (root / "tenants" / "acme.db").write_bytes(b"")
    result = run("--db", str(root), "lineages")
    assert result.exit_code == 1
    assert "data folder of `vigente serve`" in result.output and "acme" in result.output
    assert "is a vigente database" not in result.output


def test_an_unknown_branch_lists_the_branches(trip: str) -> None:
    result = run("--db", trip, "assemble", "--conversation", "trip-42", "--branch", "mian",
                 "--participant", "agent")
    assert result.exit_code == 1
    assert "its branches: main, other" in result.output, result.output


def test_assemble_takes_known_at_like_the_other_commands(trip: str) -> None:
    args = ["--db", trip, "assemble", "--conversation", "trip-42", "--branch", "main",
            "--participant", "agent", "--json"]
    one = json.loads(run(*args, "--known-at", "2026-10-05T09:00:00Z").output)
    other = json.loads(run(*args, "--as-of", "2026-10-05T09:00:00Z").stdout)
    assert one["snapshot"] == other["snapshot"] == "2026-10-05T09:00:00Z"


def test_assemble_without_json_shows_the_messages_and_hints_as_of(trip: str) -> None:
    result = run("--db", trip, "assemble", "--conversation", "trip-42", "--branch", "main",
                 "--participant", "agent")
    assert result.exit_code == 0, result.output
    assert "messages (" in result.output
    assert "Trains from Turin to Milan tomorrow?" in result.output  # a message's own text
    # the session is from 2026-10-05: its memories are stale today, and the hint says how to
    # see it as it stood
    assert "--known-at 2026-10-05" in result.stderr, result.stderr
