"""The CLI as a new user meets it, run for real (click's runner and the installed script on
SQLite files): ``--json`` on every command that prints data, errors that stay ``Error: …``,
progress bars only on a terminal, shell completion, ``--help`` as a quick reference, every
command in the README's reference, and statements wholly in the language asked for."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.conformance.test_runtime import session
from vigente.cli import cli
from vigente.evidence import verify

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "vigente"
SCENARIOS = ROOT / "tests" / "data" / "scenarios"
L = "svc/upload-limit-mb"
NOW = "2026-09-29"
# Commands that print no data: a demonstration, two servers, a shell script.
NO_DATA = {"demo", "serve", "mcp", "completion"}


def leaves(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[
        tuple[str, click.Command]]:
    """Every runnable command of the tree, as ``"runtime purge-account"`` and the command."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from leaves(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def takes_json(command: click.Command) -> bool:
    return any(p.name == "as_json" and "--json" in p.opts for p in command.params)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_json(*args: str) -> object:
    """Run a command with --json: exit 0 and exactly one JSON document on one stdout line."""
    code, out, err = invoke(*args, "--json")
    assert code == 0, (args, out, err)
    assert out.endswith("\n") and out.count("\n") == 1, (args, out)
    return json.loads(out)


# -- the reference: README and --help ---------------------------------------------------------
def readme_reference() -> dict[str, str]:
    """The rows of the README's command reference, by command path."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Command reference\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `vigente ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)", line)
        if match:
            words = match.group(1).split()
            # "runtime purge-account ACCOUNT" → the longest prefix that names a command
            for n in range(len(words), 0, -1):
                rows.setdefault(" ".join(words[:n]), line)
    return rows


def test_every_command_is_in_the_readme_reference_with_its_json_flag() -> None:
    rows = readme_reference()
    commands = dict(leaves())
    assert len(commands) >= 40
    for path, command in commands.items():
        assert command.help, f"`vigente {path}` has no help text"
        assert path in rows, f"`vigente {path}` is missing from the README's command reference"
        if takes_json(command):
            assert "--json" in rows[path] or "(JSON)" in rows[path], (
                f"the README does not say that `vigente {path}` takes --json"
            )
        else:
            assert "--json" not in rows[path].split("|")[1], path


def test_every_command_that_prints_data_takes_json() -> None:
    missing = [path for path, command in leaves()
               if path not in NO_DATA and not takes_json(command)]
    assert missing == []
    assert all(not takes_json(command) for path, command in leaves() if path in NO_DATA)


def test_help_is_a_quick_reference_one_line_per_command() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    for name in cli.commands:
        listed = [line for line in lines if line.split()[:1] == [name]]
        assert len(listed) == 1, f"{name} is listed {len(listed)} times in vigente --help"
        index = lines.index(listed[0])
        # one line each: the next line starts another command or ends the section
        following = lines[index + 1] if index + 1 < len(lines) else ""
        assert not following.startswith(" " * 5), f"{name}'s summary wraps: {following!r}"
    for title in ("Facts (bitemporal evidence):", "Documents (lineages of versions):",
                  "Search:", "Agent runtime and context assembly:", "Service and shell:",
                  "Examples:"):
        assert title in lines or f"  {title}" in lines, title
    assert "Other:" not in lines  # every command has its section
    assert "vigente --db limits.db ask svc/upload-limit-mb --at 2026-09-02 --json" in out


def test_every_group_lists_its_commands_one_untruncated_line_each() -> None:
    groups = [name for name, command in cli.commands.items() if isinstance(command, click.Group)]
    assert {"documents", "review", "runtime", "decisions", "policy", "scenario"} <= set(groups)
    for name in groups:
        code, out, _ = invoke(name, "--help")
        assert code == 0
        listing = out.split("\nCommands:\n", 1)[1].splitlines()
        group = cli.commands[name]
        assert isinstance(group, click.Group)
        assert len(listing) == len(group.commands), (name, listing)
        assert not [line for line in listing if line.endswith("...")], (name, listing)


# -- completion -------------------------------------------------------------------------------
def test_completion_prints_each_shells_script() -> None:
    marks = {"bash": "_VIGENTE_COMPLETE=bash_complete", "zsh": "#compdef vigente",
             "fish": "_VIGENTE_COMPLETE=fish_complete"}
    for shell, mark in marks.items():
        code, out, _ = invoke("completion", shell)
        assert code == 0 and mark in out, (shell, out[:200])
    code, _, err = invoke("completion", "powershell")
    assert code == 2 and "bash" in err


def test_the_installed_script_completes_commands_and_subcommands() -> None:
    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "_VIGENTE_COMPLETE": "bash_complete", "COMP_WORDS": words,
               "COMP_CWORD": str(cword)}
        proc = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        return [line.split(",", 1)[1] for line in proc.stdout.splitlines()]

    assert complete("vigente doc", 1) == ["documents"]
    assert complete("vigente runtime pu", 2) == ["purge-account"]
    assert "--known-at" in complete("vigente ask cdd --kn", 3)


# -- --json everywhere, errors stay plain -----------------------------------------------------
def test_json_on_every_data_command_end_to_end(tmp_path: Path) -> None:
    db = str(tmp_path / "all.db")
    statements = tmp_path / "s.jsonl"
    statements.write_text("".join(json.dumps(line) + "\n" for line in (
        {"op": "record", "lineage": L, "scope": {}, "value": 50, "source": "policy",
         "valid_from": "2026-01-01", "valid_to": None, "known_at": "2026-01-01"},
        {"op": "record", "lineage": L, "scope": {}, "value": 80, "source": "policy",
         "valid_from": "2026-09-01", "valid_to": None, "known_at": "2026-09-03"},
    )))
    report = one_json("--db", db, "import", str(statements), "--now", NOW)
    # the second statement closes the open-ended first and appends it cut at 2026-09-01
    assert report == {"statements": 2, "applied": 2, "versions_appended": 3,
                      "versions_closed": 1}
    written = one_json("--db", db, "record", L, "100", "--valid-from", "2026-10-01",
                       "--known-at", "2026-09-20", "--source", "policy", "--now", NOW)
    assert isinstance(written, dict) and written["changed"] is True
    assert sorted(v["value"] for v in written["appended"]) == [80, 100]  # 80 cut at 10-01
    assert [v["value"] for v in written["closed"]] == [80] and written["lineage"] == L
    again = one_json("--db", db, "record", L, "100", "--valid-from", "2026-10-01",
                     "--known-at", "2026-09-20", "--source", "policy", "--now", NOW)
    assert again == {"lineage": L, "changed": False, "write_id": None, "appended": [],
                     "closed": []}
    retracted = one_json("--db", db, "retract", L, "--valid-from", "2026-10-01",
                         "--known-at", "2026-09-25", "--source", "policy", "--now", NOW)
    assert isinstance(retracted, dict) and retracted["closed"]
    rule = one_json("--db", db, "precedence", "policy", "mirror", "--known-at", "2026-09-28",
                    "--now", NOW)
    assert isinstance(rule, dict) and rule["sources"] == ["policy", "mirror"]
    assert rule["known_from"] == "2026-09-28" and rule["scope"] == {}
    assert one_json("--db", db, "lineages") == {"lineages": [{"lineage": L, "scope": {}}]}
    history = one_json("--db", db, "history", L)
    assert isinstance(history, dict) and len(history["versions"]) >= 3
    evidence = one_json("--db", db, "ask", L, "--at", "2026-09-02", "--now", NOW)
    assert isinstance(evidence, dict) and evidence["values"] == [80]

    # documents, review, decisions, derivations
    doc = one_json("--db", db, "documents", "add", "cdd", "--text", "Old rules.",
                   "--reference", "Circular 7/2023", "--valid-from", "2023-06-01",
                   "--published", "2023-05-12")
    assert isinstance(doc, dict) and doc["reference"] == "Circular 7/2023"
    versions = tmp_path / "v.jsonl"
    versions.write_text(json.dumps({
        "lineage_id": "cdd", "text": "New rules.", "reference": "Circular 12/2025",
        "valid_from": "2025-03-03", "published": "2025-02-14", "relation": "supersedes",
        "predecessor": "Circular 7/2023"}) + "\n")
    imported = one_json("--db", db, "documents", "import", str(versions))
    assert isinstance(imported, dict)
    assert [v["reference"] for v in imported["versions"]] == ["Circular 12/2025"]
    listed = one_json("--db", db, "documents", "list", "cdd")
    assert isinstance(listed, dict) and len(listed["versions"]) == 2
    shown = one_json("--db", db, "documents", "show", doc["version_id"])
    assert isinstance(shown, dict) and shown["text"] == "Old rules."
    derived = one_json("--db", db, "derive", "chunk", "§3", "--from", doc["version_id"],
                       "--at", "2024-01-01", "--known-at", "2024-01-01")
    assert isinstance(derived, dict) and derived["derived_id"].startswith("drv-")
    stale = one_json("--db", db, "derived", "--stale")
    assert isinstance(stale, dict) and stale["derived"][0]["stale"] is True
    # pinned to NOW and as known at NOW (its present): the review below may still add a version
    # published before it (an answer as known now on the real clock would refuse that)
    answer = one_json("--db", db, "ask", "cdd", "--at", "2025-02-20", "--record", "--now", NOW)
    assert isinstance(answer, dict) and answer["kind"] == "document"
    decisions = one_json("--db", db, "decisions", "list")
    assert isinstance(decisions, dict)
    assert decisions["decisions"][0]["decision_id"] == answer["decision_id"]
    decision = one_json("--db", db, "decisions", "show", answer["decision_id"])
    assert isinstance(decision, dict) and decision["decision_id"] == answer["decision_id"]
    evidence_file = tmp_path / "e.json"
    evidence_file.write_text(json.dumps(answer))
    code, out, _ = invoke("verify", "--evidence", str(evidence_file), "--json",
                          "Circular 12/2025 is in force.")
    assert code == 1 and json.loads(out)["passed"] is False

    bare = tmp_path / "bare.txt"
    bare.write_text("Circular 3/2026\nIn force from 1 March 2026.\nIt replaces Circular "
                    "12/2025.\n")
    submitted = one_json("--db", db, "review", "submit", str(bare))
    assert isinstance(submitted, dict)
    (proposal,) = submitted["proposals"]
    pid = proposal["proposal_id"]
    queue = one_json("--db", db, "review", "list")
    assert isinstance(queue, dict) and [p["proposal_id"] for p in queue["proposals"]] == [pid]
    detail = one_json("--db", db, "review", "show", pid)
    assert isinstance(detail, dict) and detail["proposal_id"] == pid
    edited = one_json("--db", db, "review", "edit", pid, "--set", "lineage=cdd",
                      "--set", "published=2026-02-01")
    assert isinstance(edited, dict) and edited["proposal_id"] == pid
    assert edited["approvable"] is True
    second = one_json("--db", db, "review", "submit", str(bare))
    assert isinstance(second, dict)
    rejected = one_json("--db", db, "review", "reject", second["proposals"][0]["proposal_id"])
    assert isinstance(rejected, dict) and rejected["status"] == "rejected"
    approved = one_json("--db", db, "review", "approve", pid)
    assert isinstance(approved, dict) and approved["reference"] == "Circular 3/2026"
    assert approved["lineage_id"] == "cdd" and approved["relation"] == "supersedes"

    # search and index
    hits = one_json("--db", db, "search", "rules", "--at", "2025-02-20", "--mode", "lexical")
    assert isinstance(hits, dict) and hits["hits"][0]["version_id"] == doc["version_id"]
    indexed = one_json("--db", db, "index", "--no-embed")
    assert isinstance(indexed, dict) and "passages" in indexed

    # runtime and assembly
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in session()))
    events = one_json("--db", db, "runtime", "import", str(log))
    assert isinstance(events, dict) and events["conversations"] == ["trip-42"]
    assert events["events"] == sum(events["by_kind"].values()) == len(session())
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hello"},
                                {"role": "assistant", "content": "hi"}]))
    openai = one_json("--db", db, "runtime", "import-openai", str(chat), "--conversation", "w",
                      "--account", "acct-w")
    assert isinstance(openai, dict) and openai["conversations"] == ["w"]
    graph = one_json("--db", db, "runtime", "show", "trip-42")
    assert isinstance(graph, dict) and graph["records"]
    transcript = one_json("--db", db, "runtime", "transcript", "trip-42")
    assert isinstance(transcript, dict) and transcript["messages"]
    artifact = one_json("--db", db, "runtime", "artifact", "t1")
    assert isinstance(artifact, dict) and artifact["id"] == "t1" and artifact["earlier"] == []
    assembly = one_json("--db", db, "assemble", "--conversation", "trip-42", "--branch", "main",
                        "--participant", "agent")
    assert isinstance(assembly, dict)
    explained = one_json("--db", db, "explain", assembly["assembly_id"])
    assert isinstance(explained, dict) and explained["included"]
    purge = one_json("--db", db, "runtime", "purge-account", "acct-w", "--dry-run")
    assert purge == {"account": "acct-w", "conversations": ["w"], "rows": purge["rows"],
                     "blobs": 0, "compaction": None, "dry_run": True, "complete": True}
    gc = one_json("--db", db, "runtime", "gc", "--dry-run")
    assert isinstance(gc, dict) and gc["dry_run"] is True and "contents" in gc
    policy = one_json("policy", "show")
    assert isinstance(policy, dict)
    policy_file = tmp_path / "p.toml"
    policy_file.write_text('id = "tight"\nversion = 2\n[budget]\ntokens = 60\n')
    checked = one_json("policy", "check", str(policy_file))
    assert isinstance(checked, dict) and (checked["id"], checked["version"]) == ("tight", 2)
    scenario = one_json("scenario", "run", str(SCENARIOS / "branch_isolation.jsonl"))
    assert isinstance(scenario, dict) and scenario["passed"] is True


@pytest.mark.parametrize("args", [
    ("ask", L, "--at", "2026-13-01"),
    ("record", L, "1", "--valid-from", "2026-01-01", "--known-at", "2027-01-01",
     "--source", "x", "--now", NOW),
    ("documents", "show", "dv-nope"),
    ("runtime", "show", "nope"),
    ("import", "missing.jsonl"),
])
def test_errors_stay_plain_text_on_stderr_with_json(tmp_path: Path, args: tuple[str, ...]
                                                    ) -> None:
    code, out, err = invoke("--db", str(tmp_path / "e.db"), *args, "--json")
    assert code == 1 and out == ""
    assert err.startswith("Error: ") and err.count("\n") == 1 and "Traceback" not in err


# -- progress bars: on a terminal's stderr only -----------------------------------------------
def _statements(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({
        "op": "record", "lineage": f"svc/l{i}", "scope": {}, "value": i, "source": "s",
        "valid_from": "2026-01-01", "known_at": "2026-01-01"}) + "\n" for i in range(n)))
    return path


def test_no_progress_bar_in_a_pipe(tmp_path: Path) -> None:
    lines = _statements(tmp_path / "s.jsonl", 300)
    code, out, err = invoke("--db", str(tmp_path / "p.db"), "import", str(lines))
    assert code == 0 and err == ""
    assert out == ("imported 300 statement(s): 300 changed the store, 300 snapshot(s) "
                   "appended, 0 closed\n")
    proc = subprocess.run([str(SCRIPT), "--db", str(tmp_path / "q.db"), "import", str(lines),
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["applied"] == 300


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_stderr_never_on_stdout(tmp_path: Path) -> None:
    import pty

    lines = _statements(tmp_path / "s.jsonl", 300)
    master, slave = pty.openpty()
    terminal = bytearray()

    def drain() -> None:  # read the terminal while the command runs, so it never blocks
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the command closed its end
                return
            if not chunk:
                return
            terminal.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.Popen(
        [str(SCRIPT), "--db", str(tmp_path / "t.db"), "import", str(lines), "--json"],
        stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "TERM": "xterm"},
    )
    os.close(slave)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0
    reader.join(timeout=60)
    os.close(master)
    assert json.loads(out) == {"statements": 300, "applied": 300, "versions_appended": 300,
                               "versions_closed": 0}
    assert b"checking statements" in terminal or b"writing statements" in terminal
    assert b"\x1b" not in out


# -- statements wholly in the language asked for ----------------------------------------------
ITALIAN = re.compile(r"\b(?:in vigore|dal|della|dalla|sostituit[ao]|che|come noto|il \d|"
                     r"nessun[oa]?|fonte|valido|febbraio|giugno|marzo)\b", re.IGNORECASE)
ENGLISH = re.compile(r"\b(?:in force|as known|from|on \d|superseded|replacing|source|valid "
                     r"from|record|the|was|is|learned|announced|past date|conflict)\b",
                     re.IGNORECASE)
RAW_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _without_references(text: str) -> str:
    # Official references and URLs are the documents' own names, not wording.
    text = re.sub(r"Circular \d+/\d{4}|Decree \d+/\d{4}|\(https?://[^)]*\)", "", text)
    return re.sub(r"svc/upload-limit-mb|cdd", "", text)


@pytest.fixture
def regs(tmp_path: Path) -> str:
    db = str(tmp_path / "regs.db")
    for args in (
        ("--text", "Old rules.", "--reference", "Circular 7/2023", "--valid-from", "2023-06-01",
         "--published", "2023-05-12", "--source-url", "https://x.eu/7"),
        ("--text", "New rules.", "--reference", "Circular 12/2025", "--valid-from",
         "2025-03-03", "--published", "2025-02-14", "--relation", "supersedes",
         "--predecessor", "Circular 7/2023"),
    ):
        code, out, err = invoke("--db", db, "documents", "add", "cdd", *args)
        assert code == 0, out + err
    return db


def _evidence(db: str, *args: str) -> dict[str, object]:
    data = one_json("--db", db, "ask", *args)
    assert isinstance(data, dict)
    return data


def _statement(db: str, *args: str) -> str:
    return str(_evidence(db, *args)["statement"])


DOCUMENT_QUESTIONS = [  # (t or None for today, k or None for now, interpretation)
    ("2025-02-20", None, "historical"),
    ("2025-02-20", "2025-02-20", "known_then"),
    ("2025-03-08", "2025-02-20", "announced_future"),  # the successor starts after k
    (None, None, "current"),
    ("2023-01-01", None, "missing"),
]


@pytest.mark.parametrize(("t", "k", "interpretation"), DOCUMENT_QUESTIONS)
@pytest.mark.parametrize("lang", ["en", "it"])
def test_each_document_statement_speaks_one_language(
    regs: str, t: str | None, k: str | None, interpretation: str, lang: str
) -> None:
    args = ("cdd", *(() if t is None else ("--at", t)), *(() if k is None else ("--known-at", k)))
    data = _evidence(regs, *args, "--lang", lang)
    assert data["interpretation"] == interpretation
    text = str(data["statement"])
    verdict = verify(text, data)
    assert verdict.passed, (text, [f.message for f in verdict.findings])
    words = _without_references(text)
    wrong, right = (ITALIAN, ENGLISH) if lang == "en" else (ENGLISH, ITALIAN)
    assert not wrong.search(words), text
    assert right.search(words), text
    assert not RAW_TIMESTAMP.search(text), text
    assert bool(re.search(r"\b(?:now|ora)\b", text)) == (k is None), text


def test_document_statement_in_english_names_now_readably(regs: str) -> None:
    text = _statement(regs, "cdd", "--at", "2025-02-20")
    assert text.startswith("In force on 2025-02-20 (a past date): Circular 7/2023 "
                           "(https://x.eu/7), in force from 1 June 2023, to be superseded on "
                           "3 March 2025 by Circular 12/2025 — as known now (")
    assert re.search(r"as known now \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)\.$", text), text
    assert _statement(regs, "cdd", "--at", "2025-02-20", "--known-at", "2025-02-20") == (
        "As known on 2025-02-20, in force on 2025-02-20: Circular 7/2023 (https://x.eu/7), in "
        "force from 1 June 2023, to be superseded on 3 March 2025 by Circular 12/2025."
    )
    at_minute = _statement(regs, "cdd", "--at", "2025-02-20", "--known-at",
                           "2025-02-20T14:05:30+01:00")
    assert at_minute.startswith("As known on 2025-02-20 13:05 UTC, in force on 2025-02-20")


def test_document_statement_in_italian_is_wholly_italian(regs: str) -> None:
    text = _statement(regs, "cdd", "--at", "2025-02-20", "--lang", "it")
    assert text.startswith(
        "In vigore il 20 febbraio 2025 (una data passata): Circular 7/2023 (https://x.eu/7), "
        "in vigore dal 1° giugno 2023, che sarà sostituita il 3 marzo 2025 dalla Circular "
        "12/2025 — come noto ora ("
    )
    assert re.search(r"come noto ora \(\d{1,2}°? \w+ \d{4}, \d{2}:\d{2} UTC\)\.$", text), text
    assert _statement(regs, "cdd", "--at", "2025-02-20", "--known-at", "2025-02-20",
                      "--lang", "it") == (
        "Come noto al 20 febbraio 2025, in vigore il 20 febbraio 2025: Circular 7/2023 "
        "(https://x.eu/7), in vigore dal 1° giugno 2023, che sarà sostituita il 3 marzo 2025 "
        "dalla Circular 12/2025."
    )
    at_minute = _statement(regs, "cdd", "--at", "2025-02-20", "--known-at",
                           "2025-02-20T14:05:30+01:00", "--lang", "it")
    assert at_minute.startswith("Come noto al 20 febbraio 2025 alle 13:05 UTC, in vigore il "
                                "20 febbraio 2025")


@pytest.mark.parametrize("lang", ["en", "it"])
def test_revoked_and_conflicting_documents_in_the_language_asked(tmp_path: Path,
                                                                 lang: str) -> None:
    db = str(tmp_path / "acts.db")
    for lineage, args in (
        ("x", ("--text", "Rules.", "--reference", "Regulation 3/2020", "--valid-from",
               "2020-01-08", "--published", "2020-01-02")),
        ("x", ("--text", "Repeal.", "--reference", "Decree 9/2025", "--valid-from", "2025-03-01",
               "--published", "2025-02-01", "--relation", "revokes", "--predecessor",
               "Regulation 3/2020")),
        ("y", ("--text", "One text.", "--reference", "Circular 1/2024", "--valid-from",
               "2024-01-01", "--published", "2023-12-01")),
        ("y", ("--text", "Another text.", "--reference", "Circular 2/2024", "--valid-from",
               "2024-02-01", "--published", "2024-01-15")),
    ):
        code, out, err = invoke("--db", db, "documents", "add", lineage, *args)
        assert code == 0, out + err
    revoked = _evidence(db, "x", "--at", "2025-06-01", "--known-at", "2025-06-01",
                        "--lang", lang)
    conflict = _evidence(db, "y", "--at", "2024-03-01", "--known-at", "2024-03-01",
                         "--lang", lang)
    assert (revoked["status"], conflict["status"]) == ("missing", "conflict")
    if lang == "en":
        assert revoked["statement"] == ("No version of x is in force on 2025-06-01: it was "
                                        "revoked by Decree 9/2025 from 2025-03-01 — as known "
                                        "on 2025-06-01.")
        assert str(conflict["statement"]).startswith(
            "Conflict: 2 versions of y claim to be in force on 2024-03-01 as known on "
            "2024-03-01: Circular 1/2024, in force from 1 January 2024; ")
        assert str(conflict["statement"]).endswith(". Report both; do not merge them.")
    else:
        assert revoked["statement"] == ("Nessuna versione di x è in vigore il 1° giugno 2025: "
                                        "è stata abrogata dal Decree 9/2025 a partire dal 1° "
                                        "marzo 2025 — come noto al 1° giugno 2025.")
        assert str(conflict["statement"]).startswith(
            "Conflitto: 2 versioni di y risultano in vigore il 1° marzo 2024, come noto al 1° "
            "marzo 2024: Circular 1/2024, in vigore dal 1° gennaio 2024; ")
        assert str(conflict["statement"]).endswith(". Riportarle entrambe; non unirle.")
    for data in (revoked, conflict):
        assert verify(str(data["statement"]), data).passed, data["statement"]


def _seed_facts(db: str) -> None:
    for value, valid_from, known_at in (("50", "2026-01-01", "2026-01-01"),
                                        ("80", "2026-09-01", "2026-09-03"),
                                        ("100", "2026-10-01", "2026-09-20")):
        code, out, err = invoke("--db", db, "record", L, value, "--valid-from", valid_from,
                                "--known-at", known_at, "--source", "policy", "--now", NOW)
        assert code == 0, out + err


FACT_QUESTIONS = [  # the seed article's table: t, k (None: now), interpretation
    ("2026-09-29", None, "current"),
    ("2026-08-20", None, "historical"),
    ("2026-09-02", None, "retrospective"),
    ("2026-09-02", "2026-09-02", "known_then"),
    ("2026-10-02", None, "announced_future"),
    ("2025-12-01", None, "missing"),
    ("2026-11-02", "2026-09-10", "projected"),
]


@pytest.mark.parametrize(("t", "k", "interpretation"), FACT_QUESTIONS)
@pytest.mark.parametrize("lang", ["en", "it"])
def test_fact_statements_in_both_languages_pass_the_answer_check(
    tmp_path: Path, t: str, k: str | None, interpretation: str, lang: str
) -> None:
    db = str(tmp_path / "facts.db")
    _seed_facts(db)
    known = () if k is None else ("--known-at", k)
    data = one_json("--db", db, "ask", L, "--at", t, *known, "--now", NOW, "--lang", lang)
    assert isinstance(data, dict) and data["interpretation"] == interpretation
    text = data["statement"]
    # the statement a model is handed keeps every qualifier the answer check asks for
    verdict = verify(text, data)
    assert verdict.passed, (text, [f.message for f in verdict.findings])
    words = _without_references(text)
    wrong, right = (ITALIAN, ENGLISH) if lang == "en" else (ENGLISH, ITALIAN)
    assert not wrong.search(words), text
    assert right.search(words), text
    now_word = "as known now (2026-09-29)" if lang == "en" else "come noto ora (29 settembre 2026)"
    assert (now_word in text) == (k is None), text


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_conflict_and_its_precedence_are_worded_in_the_language_asked(
    tmp_path: Path, lang: str
) -> None:
    db = str(tmp_path / "c.db")
    _seed_facts(db)
    code, out, err = invoke("--db", db, "record", L, "90", "--valid-from", "2026-09-01",
                            "--valid-to", "2026-10-01", "--known-at", "2026-09-25", "--source",
                            "mirror", "--now", NOW)
    assert code == 0, out + err
    conflict = one_json("--db", db, "ask", L, "--at", "2026-09-28", "--now", NOW,
                        "--lang", lang)
    assert isinstance(conflict, dict) and conflict["status"] == "conflict"
    assert verify(conflict["statement"], conflict).passed
    assert ("Conflitto" if lang == "it" else "Conflict") in conflict["statement"]
    code, out, err = invoke("--db", db, "precedence", "policy", "mirror", "--known-at", NOW,
                            "--now", NOW)
    assert code == 0, out + err
    resolved = one_json("--db", db, "ask", L, "--at", "2026-09-28", "--now", NOW,
                        "--lang", lang)
    assert isinstance(resolved, dict) and resolved["values"] == [80]
    text = resolved["statement"]
    assert ("scartato 90 (fonte: mirror)" if lang == "it" else "overruled 90 (source: mirror)"
            ) in text
    wrong = ENGLISH if lang == "it" else ITALIAN
    assert not wrong.search(_without_references(text).replace("mirror", "")), text


def test_the_terminal_header_reads_k_as_now(regs: str) -> None:
    code, out, _ = invoke("--db", regs, "ask", "cdd", "--at", "2025-02-20")
    assert code == 0
    first = out.splitlines()[0]
    assert re.fullmatch(r"supported · historical · t=2025-02-20 · k=now \(\d{4}-\d{2}-\d{2} "
                        r"\d{2}:\d{2} UTC\)", first), first
