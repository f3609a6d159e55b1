"""Account purge on PostgreSQL: afterwards no row of any table, read as text, holds the
account's data (the SQLite side scans the store's files: tests/test_runtime_cli.py)."""

from __future__ import annotations

import json

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
