"""Account purge on PostgreSQL: afterwards no row of any table, read as text, holds the
account's data (the SQLite side scans the store's files: tests/test_runtime_cli.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg

from tests.conformance.test_runtime import session
from vigente import Vigente

MARKERS = ("Turin to Milan", "FR-9512", "IC-0660", "What about Genoa", "acct-demo",
           "zebra-secret-payload")


def holding(url: str) -> dict[str, list[str]]:
    """Tables with a row whose text, or any of whose bytea columns, holds a marker."""
    found: dict[str, list[str]] = {}
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for table in tables:
            binary = [r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                "AND data_type = 'bytea'", (table,))]
            for marker in MARKERS:
                # identifiers come from the catalogue, the marker is bound
                tests = ["t::text LIKE %s"] + [f'position(%s::bytea in t."{c}") > 0'
                                               for c in binary]
                params = [f"%{marker}%"] + [marker.encode()] * len(binary)
                hit = conn.execute(
                    f'SELECT 1 FROM "{table}" t WHERE {" OR ".join(tests)} LIMIT 1',  # noqa: S608
                    params).fetchone()
                if hit:
                    found.setdefault(table, []).append(marker)
    return found


def test_purge_leaves_no_row_with_the_accounts_text(postgres_url: str) -> None:
    with Vigente.open(postgres_url) as vg:
        rt = vg.runtime
        rt.import_events([json.dumps(e) for e in session()])
        big = "zebra-secret-payload " * 10_000  # a blob row
        rt.record_tool_call("trip-42", "t3", run="r1", name="dump", arguments={})
        rt.record_tool_result("trip-42", "t3", status="succeeded", content=big)
        rt.open_conversation("keep", "acct-kept")
        assert set(holding(postgres_url)) >= {"runtime_records", "runtime_contents",
                                              "runtime_conversations"}
        report = rt.purge_account("acct-demo")
        assert report.conversations == ("trip-42",) and report.blobs == 1
        assert "VACUUM FULL" in (report.compaction or "")
        assert holding(postgres_url) == {}
        assert [c.id for c in rt.conversations()] == ["keep"]


# -- issue 21, item 4: a purge proves the files are clean or says it did not finish ------------
def _seeded(vg: Vigente) -> None:
    rt = vg.runtime
    rt.import_events([json.dumps(e) for e in session()])
    rt.record_tool_call("trip-42", "t3", run="r1", name="dump", arguments={})
    rt.record_tool_result("trip-42", "t3", status="succeeded",
                          content="zebra-secret-payload " * 10_000)  # a blob
    vg.assembly.assemble("trip-42", "main", "agent")
    rt.open_conversation("keep", "acct-kept")


def _copies(folder: Path, marker: bytes = b"Turin to Milan") -> dict[str, int]:
    return {p.name: p.read_bytes().count(marker) for p in sorted(folder.iterdir())
            if p.is_file() and p.read_bytes().count(marker)}


def test_a_purge_under_a_reader_says_it_did_not_finish_and_a_retry_finishes(
    tmp_path: Path,
) -> None:
    """With another connection reading, the purge answered success and 194 copies of the
    text stayed in the -wal file (after stalling the tenant for the whole busy timeout)."""
    db = tmp_path / "v.db"
    with Vigente.open(db) as vg:
        _seeded(vg)
        reader = sqlite3.connect(db)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM runtime_records").fetchone()  # an old snapshot
        report = vg.runtime.purge_account("acct-demo")
        assert report.rows > 0 and report.complete is False
        assert "another connection is reading" in (report.compaction or "")
        left = _copies(tmp_path)
        assert left, "the reader kept the old pages: the test would prove nothing"
        reader.close()
        again = vg.runtime.purge_account("acct-demo")  # nothing stored now: finishes
        assert again.complete is True and again.rows == 0, again
        assert _copies(tmp_path) == {}
        assert [c.id for c in vg.runtime.conversations()] == ["keep"]


def test_runtime_gc_finishes_a_purge_a_reader_held_up(tmp_path: Path) -> None:
    db = tmp_path / "v.db"
    with Vigente.open(db) as vg:
        _seeded(vg)
        reader = sqlite3.connect(db)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM runtime_records").fetchone()
        assert vg.runtime.purge_account("acct-demo").complete is False
        reader.close()
        vg.runtime.gc()
        assert _copies(tmp_path) == {}


def test_a_finished_purge_checked_the_files_for_the_text(tmp_path: Path) -> None:
    with Vigente.open(tmp_path / "v.db") as vg:
        _seeded(vg)
        report = vg.runtime.purge_account("acct-demo")
    assert report.complete is True
    assert "none of" in (report.compaction or "") and "sampled erased texts" in (
        report.compaction or "")
    assert _copies(tmp_path) == {}


def test_purging_an_absent_account_rewrites_nothing(tmp_path: Path) -> None:
    """It ran a full VACUUM."""
    with Vigente.open(tmp_path / "v.db") as vg:
        _seeded(vg)
        statements: list[str] = []
        vg.store._conn.set_trace_callback(statements.append)  # type: ignore[attr-defined]
        report = vg.runtime.purge_account("nobody")
        vg.store._conn.set_trace_callback(None)  # type: ignore[attr-defined]
    assert report.rows == 0 and report.conversations == () and report.complete is True
    assert "nothing stored for this account" in (report.compaction or "")
    assert not [s for s in statements if "VACUUM" in s.upper()], statements


def test_a_dry_run_counts_what_the_purge_deletes(store_url: str) -> None:
    """It reported 20 rows and 0 blobs where the purge deleted 63 rows and 1 blob."""
    with Vigente.open(store_url) as vg:
        _seeded(vg)
        dry = vg.runtime.purge_account("acct-demo", dry_run=True)
        assert sorted(c.id for c in vg.runtime.conversations()) == ["keep", "trip-42"]
        real = vg.runtime.purge_account("acct-demo")
    assert dry.dry_run and not real.dry_run
    assert (dry.rows, dry.blobs, dry.conversations) == (real.rows, real.blobs,
                                                        real.conversations)
    assert real.blobs == 1 and real.rows > 20
