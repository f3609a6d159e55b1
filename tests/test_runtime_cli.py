"""The runtime CLI run for real (click's runner on a SQLite file): import, show, transcript,
artifact --raw, a refused line, tau-bench transcripts, purge and gc. Also the purge guarantee:
after ``purge-account`` no file the store wrote holds a byte of the account's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conformance.test_runtime import session
from tests.conftest import SHARED_DATA
from vigente.cli import cli

TAU = SHARED_DATA / "tau-bench" / "airline.trials01.json.xz"


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in session()))
    return path


def test_import_show_transcript_and_artifact(tmp_path: Path, log: Path) -> None:
    db = tmp_path / "r.db"
    code, out = run(db, "runtime", "import", str(log))
    assert code == 0 and "imported 15 event(s) into trip-42" in out
    code, out = run(db, "runtime", "show", "trip-42", "--json")
    graph = json.loads(out)
    assert {r["id"] for r in graph["records"] if r["kind"] == "artifact"} == {"t1", "t2"}
    t1 = next(r for r in graph["records"] if r["kind"] == "tool_call" and r["id"] == "t1")
    assert t1["status"] == "succeeded"
    code, out = run(db, "runtime", "show", "trip-42", "--branch", "other", "--json")
    assert "m3" not in {r["id"] for r in json.loads(out)["records"]}
    code, out = run(db, "runtime", "show", "trip-42")
    assert code == 0 and "t1#memory" in out
    code, out = run(db, "runtime", "show", "--json")
    assert json.loads(out)["conversations"][0]["account"] == "acct-demo"
    assert run(db, "runtime", "show")[1].startswith("trip-42  account acct-demo")
    code, out = run(db, "runtime", "transcript", "trip-42", "--branch", "other")
    assert out.splitlines() == ["[system] You book trains.",
                                "[user] Trains from Turin to Milan tomorrow?",
                                "[assistant] FR-9512 leaves at 07:10; RV-2011 at 07:25.",
                                "[user] What about Genoa?"]
    code, out = run(db, "runtime", "artifact", "t1", "--raw")
    assert json.loads(out)["trains"][1]["id"] == "RV-2011"
    code, out = run(db, "runtime", "artifact", "t1", "--json")
    assert json.loads(out)["result"]["bytes"] == 82


def test_bad_line_exits_1_naming_the_line_and_writes_nothing(tmp_path: Path) -> None:
    db, bad = tmp_path / "r.db", tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"event": "conversation", "id": "bad-1", "account": "x"}) + "\n"
                   + json.dumps({"event": "tool_result", "conversation": "bad-1",
                                 "call": "ghost", "status": "succeeded", "content": "x"}) + "\n")
    code, out = run(db, "runtime", "import", str(bad))
    assert code == 1 and "Error: line 2: unknown call id 'ghost'" in out
    code, out = run(db, "runtime", "show", "bad-1")
    assert code == 1 and "unknown conversation 'bad-1'" in out
    bad.write_text(json.dumps({"event": "message", "conversation": "nope", "id": "m",
                               "branch": "main", "role": "user", "content": "hi"}) + "\n")
    code, out = run(db, "runtime", "import", str(bad))
    assert code == 1 and "line 1: unknown conversation 'nope'" in out
    bad.write_bytes(b'{"event": "conversation", "id": "c", "account": "\xff"}\n')
    code, out = run(db, "runtime", "import", str(bad))
    assert code == 1 and "line 1: not valid UTF-8" in out


@pytest.mark.skipif(not TAU.exists(), reason=f"{TAU} is missing: put the shared data beside "
                    "the repository")
def test_tau_bench_transcript_pairs_repeated_call_ids_by_position(tmp_path: Path) -> None:
    db = tmp_path / "tau.db"
    code, out = run(db, "runtime", "import-openai", str(TAU), "--conversation", "tau",
                    "--account", "a")
    assert code == 1 and "choose one with --trial N" in out
    code, out = run(db, "runtime", "import-openai", str(TAU), "--conversation", "tau",
                    "--account", "a", "--trial", "0")
    assert code == 0, out
    graph = json.loads(run(db, "runtime", "show", "tau", "--json")[1])
    artifacts = {r["id"]: r for r in graph["records"] if r["kind"] == "artifact"}
    # trial 0 reuses two call ids: each call still gets its own result, in order
    assert artifacts["call_HGn16KZh9oNCruxsMJ4gYXan"]["tool_name"] == "search_direct_flight"
    assert artifacts["call_HGn16KZh9oNCruxsMJ4gYXan#2"]["tool_name"] == "search_onestop_flight"
    assert artifacts["call_oIHazX6yQrB8hUwl4cRilFKj#2"]["tool_name"] == "calculate"
    assert all(r["status"] == "succeeded" for r in graph["records"] if r["kind"] == "tool_call")
    raw = run(db, "runtime", "artifact", "call_oIHazX6yQrB8hUwl4cRilFKj", "--raw")[1]
    assert json.loads(raw)["name"] == {"first_name": "Mia", "last_name": "Li"}


def test_openai_transcript_object_with_messages(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "weather in Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"temp_c\": 21}"},
        {"role": "assistant", "content": "21 °C in Rome."},
    ]}))
    db = tmp_path / "o.db"
    assert run(db, "runtime", "import-openai", str(path), "--conversation", "w",
               "--account", "a")[0] == 0
    assert run(db, "runtime", "artifact", "c1", "--raw", "--arguments")[1] == '{"city": "Rome"}'
    graph = json.loads(run(db, "runtime", "show", "w", "--json")[1])
    memory = next(r for r in graph["records"] if r["kind"] == "memory")
    assert memory["facts"] == {"temp_c": 21}


MARKERS = ("Turin to Milan", "FR-9512", "IC-0660", "What about Genoa", "acct-demo",
           "zebra-secret-payload")


def test_purge_leaves_no_byte_of_the_account_in_any_file(tmp_path: Path, log: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "r.db"
    assert run(db, "runtime", "import", str(log))[0] == 0
    extra = tmp_path / "extra.jsonl"
    big = "zebra-secret-payload " * 10_000  # over the inline limit: a blob file
    extra.write_text("".join(json.dumps(dict(e, conversation="trip-42")) + "\n" for e in [
        {"event": "tool_call", "id": "t3", "run": "r1", "name": "dump", "arguments": {}},
        {"event": "tool_result", "call": "t3", "status": "succeeded", "content": big},
        {"event": "memory", "id": "mx", "sources": ["t3"], "summary": "zebra-secret-payload"},
    ]))
    assert run(db, "runtime", "import", str(extra))[0] == 0
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"event": "conversation", "id": "keep", "account": "acct-kept"})
                     + "\n")
    assert run(db, "runtime", "import", str(other))[0] == 0

    def holding() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                hits = [m for m in MARKERS if m.encode() in data]
                if hits:
                    found[str(path.relative_to(folder))] = hits
        return found

    assert any("blobs" in name for name in holding())  # the scan can see what it looks for
    code, out = run(db, "runtime", "purge-account", "acct-demo", "--dry-run")
    assert code == 0 and "would delete 1 conversation(s) (trip-42)" in out and holding()
    code, out = run(db, "runtime", "purge-account", "acct-demo")
    assert code == 0 and "deleted 1 conversation(s)" in out, out
    assert holding() == {}
    assert run(db, "runtime", "show", "keep")[0] == 0
    assert run(db, "runtime", "show", "trip-42")[0] == 1


def test_gc_dry_run_then_erase(tmp_path: Path) -> None:
    db, log = tmp_path / "r.db", tmp_path / "old.jsonl"
    aged = [dict(e, at=e["at"].replace("2026-", "2025-")) if "at" in e else e for e in session()]
    log.write_text("".join(json.dumps(e) + "\n" for e in aged))  # a year old: past retention
    run(db, "runtime", "import", str(log))
    code, out = run(db, "runtime", "gc", "--dry-run", "--now", "2027-06-01")
    assert code == 1 and "after the store's clock" in out  # no clock ahead of the store's
    code, out = run(db, "runtime", "gc", "--dry-run")
    assert code == 0 and out.startswith("would erase 4 raw content(s)")
    code, out = run(db, "runtime", "gc")
    assert code == 0 and out.startswith("erased 4 raw content(s)")
    code, out = run(db, "runtime", "artifact", "t1", "--raw")
    assert code == 1 and "erased by retention" in out


RUN_ORDER = [
    {"event": "conversation", "id": "c", "account": "a", "at": "2026-10-01T08:00:00Z"},
    {"event": "participant", "conversation": "c", "id": "p", "model": "m"},
    {"event": "branch", "conversation": "c", "id": "main"},
    {"event": "run", "conversation": "c", "id": "r1", "branch": "main", "participant": "p",
     "mode": "chat"},
    {"event": "message", "conversation": "c", "id": "pre", "branch": "main",
     "role": "assistant", "content": "Let me look.", "run": "r1"},  # with its calls: fine
    {"event": "tool_call", "conversation": "c", "id": "t1", "run": "r1", "name": "trains",
     "arguments": {}},
    {"event": "tool_result", "conversation": "c", "call": "t1", "status": "succeeded",
     "content": "IC-0660 at 08:10"},
    {"event": "message", "conversation": "c", "id": "answer", "branch": "main",
     "role": "assistant", "content": "Take IC-0660.", "run": "r1"},  # after its results
]


def test_an_answer_after_its_runs_results_is_flagged(tmp_path: Path) -> None:
    """A run is one model response (docs/runtime.md): the answer written after tool results
    belongs to a new run. The log is stored, and the import names the line and the fix."""
    log = tmp_path / "order.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in RUN_ORDER) + "\n")
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "v.db"), "runtime", "import",
                                      str(log)])
    assert result.exit_code == 0, result.output
    assert "warning: line 8: assistant message 'answer' of run 'r1'" in result.stderr
    assert "line 5" not in result.stderr  # the text that comes with its calls is fine
    fixed = [*RUN_ORDER[:-1],
             {"event": "run", "conversation": "c", "id": "r2", "branch": "main",
              "participant": "p", "mode": "chat"}, dict(RUN_ORDER[-1], run="r2")]
    log.write_text("\n".join(json.dumps(e) for e in fixed) + "\n")
    again = CliRunner().invoke(cli, ["--db", str(tmp_path / "w.db"), "runtime", "import",
                                     str(log)])
    assert again.exit_code == 0 and "warning" not in again.stderr, again.output


def test_the_openai_importer_writes_runs_in_order(tmp_path: Path) -> None:
    """Real tau-bench transcripts (through import-openai) never trip the run-order warning."""
    if not TAU.exists():
        pytest.skip(f"needs the tau-bench transcripts at {TAU}")
    for trial in ("0", "1", "2"):
        result = CliRunner().invoke(cli, ["--db", str(tmp_path / f"{trial}.db"), "runtime",
                                          "import-openai", str(TAU), "--conversation", "t",
                                          "--account", "a", "--trial", trial])
        assert result.exit_code == 0, result.output
        assert "warning" not in result.stderr, result.stderr
