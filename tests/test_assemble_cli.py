"""The assembly CLI: RUNTIME.md's contract script, ``vigente policy show|check``, text output,
``explain --why-not`` / ``--rebuild``, and bad input (``Error: …``, exit 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tests.conformance.test_assemble import _events, session
from tests.conftest import ROOT
from vigente.cli import cli

CONTRACT = ROOT.parent / "shared" / "contract" / "runtime_contract.py"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_runtime_contract_script_passes() -> None:
    import pytest

    if not CONTRACT.exists():
        pytest.skip(f"{CONTRACT} is missing")
    vigente = Path(sys.executable).with_name("vigente")
    p = subprocess.run(
        [sys.executable, str(CONTRACT), str(vigente)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-3000:]
    assert p.stdout.strip().splitlines()[-1].startswith("39/39")  # with who spoke (issue 42)


def test_policy_show_and_check(tmp_path: Path) -> None:
    code, out = run("policy", "show", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "vigente-default" and len(data["hash"]) == 64
    f = tmp_path / "p.toml"
    f.write_text('id = "team"\nversion = 3\n[budget]\ntokens = 900\n')
    code, out = run("policy", "check", str(f))
    assert code == 0 and "team version 3" in out
    f.write_text('id = "team"\nversion = 3\n[budget]\ntokens = -1\n')
    code, out = run("policy", "check", str(f))
    assert code == 1 and out.startswith("Error: ") and "budget.tokens" in out
    code, out = run("policy", "check", str(tmp_path / "none.toml"))
    assert code == 1 and "not found" in out


def test_assemble_explain_and_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join(_events(session())) + "\n")
    assert run("--db", db, "runtime", "import", str(log))[0] == 0
    base = [
        "--db",
        db,
        "assemble",
        "--conversation",
        "trip-42",
        "--branch",
        "main",
        "--participant",
        "agent",
    ]
    policy = tmp_path / "p.toml"
    policy.write_text('id = "tight"\nversion = 1\n[budget]\ntokens = 60\n')
    code, out = run(*base, "--policy", str(policy), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["policy"]["id"] == "tight" and data["budget"] == 60
    assert any(d["reason"] == "budget" for d in data["omitted"])
    aid = data["assembly_id"]
    code, out = run(*base)
    assert code == 0 and "+ m0 (message) as instruction" in out and "- t2 (artifact)" in out
    code, out = run("--db", db, "explain", aid, "--why-not", "m1")
    assert code == 0 and ("budget" in out or "reached the model" in out)
    code, out = run("--db", db, "explain", aid, "--rebuild")
    assert code == 0 and "matches" in out
    code, out = run(
        "--db", db, "explain", "--diff", aid, json.loads(run(*base, "--json")[1])["assembly_id"]
    )
    assert code == 0 and "tokens" in out and "+ m1" in out
    code, out = run("--db", db, "explain", aid, "--json")
    assert code == 0 and "messages" not in json.loads(out)
    for args, message in [
        ((*base, "--known-at", "2999-01-01T00:00:00+00:00"), "in the future"),
        ((*base, "--known-at", "2026-10-05T08:00:00"), "Error: "),
        ((*base, "--rehydrate", "ghost"), "no tool exchange"),
        (("--db", db, "explain", "asm_x"), "unknown assembly"),
        (
            (
                "--db",
                db,
                "assemble",
                "--conversation",
                "nope",
                "--branch",
                "main",
                "--participant",
                "agent",
            ),
            "unknown conversation",
        ),
    ]:
        code, out = run(*args)
        assert code == 1 and out.startswith("Error: ") and message in out, (args, out)
        assert "Traceback" not in out


def test_scenario_run() -> None:
    path = ROOT / "tests" / "data" / "scenarios" / "branch_isolation.jsonl"
    code, out = run("scenario", "run", str(path))
    assert code == 0 and "12/12 checks pass" in out
    code, out = run("scenario", "run", str(path), "--json")
    assert code == 0 and json.loads(out)["passed"] is True


def test_scenario_run_reports_failures_and_bad_files(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    lines = _events(session()) + [
        json.dumps(
            {"event": "expect", "branch": "main", "participant": "agent", "must": ["IC-0660"]}
        )
    ]
    f.write_text("\n".join(lines) + "\n")
    code, out = run("scenario", "run", str(f))
    assert code == 1 and "FAIL" in out and "'IC-0660' did not reach the model" in out
    f.write_text("\n".join(_events(session())) + "\n")
    code, out = run("scenario", "run", str(f))
    assert code == 1 and out.startswith("Error: ") and "no expect line" in out
