"""One name per concept (issue 37, docs/vocabulary.md): the canonical spellings ``assemble
--known-at``, ``runtime import-openai --known-at`` and ``documents add --source-url`` behave
exactly as the earlier ``--as-of``, ``--at`` and ``--url``, which still work, warn on stderr, and
are refused when given beside the canonical one with another value."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests.conformance.test_assemble import _events, session
from vigente.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _trip(tmp_path: Path) -> list[str]:
    db = str(tmp_path / "r.db")
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join(_events(session())) + "\n")
    assert run("--db", db, "runtime", "import", str(log)).exit_code == 0
    return ["--db", db, "assemble", "--conversation", "trip-42", "--branch", "main",
            "--participant", "agent", "--json"]


def _selection(result: Result) -> list[object]:
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return [data["snapshot"], data["selection_hash"], data["messages_hash"]]


def test_assemble_known_at_and_its_deprecated_spelling_as_of(tmp_path: Path) -> None:
    base = _trip(tmp_path)
    canonical = run(*base, "--known-at", "2026-10-05T08:05:00+00:00")
    deprecated = run(*base, "--as-of", "2026-10-05T08:05:00+00:00")
    assert _selection(canonical) == _selection(deprecated)
    assert "deprecated" not in canonical.stderr
    assert "Warning: --as-of is deprecated; use --known-at" in deprecated.stderr
    later = run(*base, "--as-of", "2026-10-05T08:05:00+00:00", "--known-at", "2026-10-06")
    assert later.exit_code == 2 and "--as-of and --known-at disagree" in later.output
    same = run(*base, "--as-of", "2026-10-06", "--known-at", "2026-10-06")
    assert same.exit_code == 0, same.output


def test_import_openai_known_at_and_its_deprecated_spelling_at(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "Hi"},
                                {"role": "assistant", "content": "Hello"}]))
    shown = []
    for option, db in (("--known-at", "a.db"), ("--at", "b.db")):
        path = str(tmp_path / db)
        imported = run("--db", path, "runtime", "import-openai", str(chat), "--conversation",
                       "c1", "--account", "a", option, "2026-05-04")
        assert imported.exit_code == 0, imported.output
        assert ("Warning: --at is deprecated; use --known-at" in imported.stderr) == (
            option == "--at")
        show = run("--db", path, "runtime", "show", "c1", "--known-at", "2026-05-04", "--json")
        assert show.exit_code == 0, show.output
        shown.append(json.loads(show.stdout))
    assert shown[0] == shown[1] and shown[0]["records"]
    early = run("--db", str(tmp_path / "b.db"), "runtime", "show", "c1", "--known-at",
                "2026-05-03", "--json")
    assert not json.loads(early.stdout)["records"]  # imported as known at 4 May, not before


def test_documents_add_source_url_and_its_deprecated_spelling_url(tmp_path: Path) -> None:
    db = str(tmp_path / "d.db")
    urls = []
    for n, option in enumerate(("--source-url", "--url")):
        added = run("--db", db, "documents", "add", f"cdd{n}", "--text", "Limits: 80 MB.",
                    "--reference", f"Circular {n}/2026", "--valid-from", "2026-06-01",
                    "--published", "2026-05-12", option, f"https://example.org/c{n}", "--json")
        assert added.exit_code == 0, added.output
        assert ("Warning: --url is deprecated; use --source-url" in added.stderr) == (
            option == "--url")
        urls.append(json.loads(added.stdout))
    assert [u["source_url"] for u in urls] == ["https://example.org/c0", "https://example.org/c1"]
    both = run("--db", db, "documents", "add", "cdd9", "--text", "x", "--valid-from",
               "2026-06-01", "--published", "2026-05-12", "--url", "https://a.example",
               "--source-url", "https://b.example")
    assert both.exit_code == 2 and "disagree" in both.output
