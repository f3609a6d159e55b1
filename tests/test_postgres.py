"""What only the PostgreSQL backend has: its schema, its connection handling, its error messages.

Behaviour shared with SQLite is tested by the conformance suite (``tests/conformance``), which
runs on both backends.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from vigente import StoreError, Vigente
from vigente.cli import cli
from vigente.records.values import Scope
from vigente.store.base import Timeline
from vigente.store.postgres import MIGRATIONS, WRITERS_KEY, PostgresStore, redact
from vigente.store.postgres.connection import _lock_key

NOW = "2026-09-29"
DEPLOYMENT = Path(__file__).resolve().parent.parent / "docs" / "deployment.md"


def catalog(url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(query, params).fetchall()


def test_intervals_are_tstzrange_columns_with_gist_indexes(postgres_url: str) -> None:
    Vigente.open(postgres_url).close()
    columns = dict(
        catalog(
            postgres_url,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'versions' AND column_name IN ('valid', 'known')",
        )
    )
    assert columns == {"valid": "tstzrange", "known": "tstzrange"}
    indexes = dict(catalog(postgres_url, "SELECT indexname, indexdef FROM pg_indexes"))
    assert "USING gist (subject_id, valid)" in indexes["versions_valid"]
    assert "USING gist (subject_id, known)" in indexes["versions_known"]
    assert catalog(postgres_url, "SELECT extname FROM pg_extension WHERE extname = 'btree_gist'")


def test_open_ends_are_unbounded_ranges_and_same_instant_closes_are_empty(
    postgres_url: str,
) -> None:
    with Vigente.open(postgres_url) as vg:
        vg.record("l", 1, valid_from="2026-01-01", known_at="2026-02-01", source="s", now=NOW)
        vg.record("l", 2, valid_from="2026-01-01", known_at="2026-02-01", source="s", now=NOW)
        rows = [v.as_row() for v in vg.history("l")]
    assert [(r["value"], r["valid_to"], r["known_from"], r["known_to"]) for r in rows] == [
        (1, None, "2026-02-01", "2026-02-01"),  # replaced at the instant it was written
        (2, None, "2026-02-01", None),
    ]
    ranges = catalog(
        postgres_url,
        "SELECT upper_inf(valid), isempty(known), upper_inf(known) FROM versions ORDER BY seq",
    )
    assert ranges == [(True, True, False), (True, False, True)]


def test_migrations_run_once_and_are_recorded(postgres_url: str) -> None:
    for _ in range(2):
        PostgresStore(postgres_url).close()
    versions = catalog(postgres_url, "SELECT version FROM vigente_migrations ORDER BY version")
    assert versions == [(n,) for n in range(1, len(MIGRATIONS) + 1)]


def test_a_database_from_a_newer_vigente_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        conn.execute("INSERT INTO vigente_migrations VALUES (%s)", (len(MIGRATIONS) + 1,))
    with pytest.raises(StoreError, match="newer vigente .* upgrade vigente"):
        PostgresStore(postgres_url)


def test_a_missing_database_is_a_clear_error_without_the_password(postgres_server: Any) -> None:
    url = postgres_server.get_uri("no_such_db").replace("postgres:@", "postgres:s3cret@")
    with pytest.raises(StoreError) as caught:
        Vigente.open(url)
    message = str(caught.value)
    assert 'database "no_such_db" does not exist' in message
    assert "s3cret" not in message and "postgres:***@" in message
    assert "check that the server is running" in message


def test_the_cli_reports_an_unreachable_server_as_an_error() -> None:
    url = "postgresql://someone:pw@/vigente?host=/nonexistent-socket-dir&connect_timeout=2"
    result = CliRunner().invoke(cli, ["--db", url, "ask", "l", "--at", "2026-01-01"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot connect to PostgreSQL database")
    assert "pw@" not in result.output


def test_a_dropped_connection_is_replaced(postgres_url: str) -> None:
    """Pooled connections killed behind the store's back (a server restart, a failover) are
    tested on checkout and replaced; the caller sees no error."""
    with Vigente.open(postgres_url) as vg:
        vg.record("l", 1, valid_from="2026-01-01", known_at="2026-01-01", source="s", now=NOW)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        assert vg.evidence("l", valid_at="2026-05-01", now=NOW).values == (1,)


def test_passwords_are_redacted_from_urls() -> None:
    assert redact("postgresql://u:pw@db.example:5432/v") == "postgresql://u:***@db.example:5432/v"
    assert redact("postgresql://u@h/v?password=pw&sslmode=require") == (
        "postgresql://u@h/v?password=***&sslmode=require"
    )
    assert redact("postgresql://u@h/v") == "postgresql://u@h/v"


def test_each_schema_on_the_search_path_is_a_separate_store(postgres_url: str) -> None:
    """One database, one schema per tenant (``options=-csearch_path=…`` in the URL): the shape
    schema-based sharding (Citus) and shared servers use. btree_gist is created once, up front,
    in a schema every tenant can see."""
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION btree_gist SCHEMA public")
        admin.execute("CREATE SCHEMA tenant_a")
        admin.execute("CREATE SCHEMA tenant_b")
    urls = {t: f"{postgres_url}&options=-csearch_path%3D{t}" for t in ("tenant_a", "tenant_b")}
    for tenant, url in urls.items():
        with Vigente.open(url) as vg:
            vg.record("l", tenant, valid_from="2026-01-01", known_at="2026-01-01", source="s")
    for tenant, url in urls.items():
        with Vigente.open(url) as vg:
            assert vg.evidence("l", valid_at="2026-05-01", now=NOW).values == (tenant,)
    tables = catalog(
        postgres_url,
        "SELECT table_schema, count(*) FROM information_schema.tables "
        "WHERE table_name IN ('versions', 'vigente_migrations') GROUP BY 1 ORDER BY 1",
    )
    assert tables == [("tenant_a", 2), ("tenant_b", 2)]


@pytest.fixture
def roles(postgres_url: str) -> Iterator[dict[str, str]]:
    """URLs of the database for two new roles: its owner and an application role."""
    suffix = uuid.uuid4().hex[:8]
    names = {"owner": f"vigente_owner_{suffix}", "app": f"vigente_app_{suffix}"}
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        for name in names.values():
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
        admin.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(admin.info.dbname), sql.Identifier(names["owner"])
            )
        )
    yield {role: postgres_url.replace("postgres:@", f"{name}:@") for role, name in names.items()}
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        for name in names.values():
            for statement in (
                "REASSIGN OWNED BY {} TO postgres",
                "DROP OWNED BY {}",
                "DROP ROLE {}",
            ):
                admin.execute(sql.SQL(statement).format(sql.Identifier(name)))


def test_the_documented_grants_are_enough_and_keep_the_store_append_only(
    roles: dict[str, str],
) -> None:
    with pytest.raises(StoreError, match="needs CREATE on the schema"):
        Vigente.open(roles["app"])  # a role that may not create tables cannot migrate
    Vigente.open(roles["owner"]).close()  # the owner migrates (and creates btree_gist)
    # the GRANT statements of docs/deployment.md, as written there (the vector table is
    # created the first time vectors are stored, which this test does not do)
    grants = [
        line
        for line in DEPLOYMENT.read_text().splitlines()
        if line.startswith("GRANT ") and "retrieval_vectors" not in line
    ]
    assert len(grants) == 8
    app = psycopg.conninfo.conninfo_to_dict(roles["app"])["user"]
    with psycopg.connect(roles["owner"], autocommit=True) as owner:
        for grant in grants:
            owner.execute(grant.replace("vigente_app", app).encode())
    with Vigente.open(roles["app"]) as vg:
        for value, day in ((1, "2026-01-01"), (2, "2026-02-01")):
            vg.record("l", value, valid_from=day, known_at=day, source="s", now=NOW)
        vg.set_precedence(["s"], known_at="2026-02-01", now=NOW)
        vg.set_precedence(["t", "s"], known_at="2026-02-02", now=NOW)
        assert vg.evidence("l", valid_at="2026-03-01", now=NOW).values == (2,)
        vg.retrieval.index(embed=False)
        vg.retrieval.index(embed=False, rechunk=True)  # the index is derived: it may be rebuilt
        vg.runtime.open_conversation("c", "acct", at="2026-01-01")  # appended (first grant)
        vg.runtime.add_participant("c", "p", model="m")
        vg.runtime.fork_branch("c", "main")
        vg.runtime.start_run("c", "r", branch="main", participant="p")
        vg.runtime.record_tool_call("c", "t", run="r", name="lookup", arguments={})
        vg.assembly.assemble("c", "main", "p")  # fills the read caches (the last grant)
        vg.runtime.record_tool_result("c", "t", status="succeeded", content={"ok": 1})
        vg.assembly.assemble("c", "main", "p")  # the call's index row is marked resolved
        purged = vg.runtime.purge_account("acct")
        assert purged.conversations == ("c",) and purged.compaction is not None
        assert "owner" in purged.compaction  # VACUUM FULL is the owner's
        assert vg.runtime.conversations() == []
    with psycopg.connect(roles["app"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM versions")


def test_crossing_transactions_fail_whole_with_a_retry_hint(postgres_url: str) -> None:
    """Two transactions that lock the same two timelines in opposite orders deadlock; the
    server aborts one, which is rolled back as a whole and says to retry. (SQLite has one write
    lock per database, so the same pair simply runs one after the other.)"""
    meet = threading.Barrier(2, timeout=60)
    outcomes: dict[str, str] = {}
    with Vigente.open(postgres_url) as vg:

        def write(name: str, first: str, second: str) -> None:
            try:
                day: dict[str, Any] = {"valid_from": "2026-01-01", "known_at": "2026-01-01"}
                with vg.transaction():
                    vg.record(first, name, source="s", now=NOW, **day)
                    meet.wait()  # both hold their first timeline now
                    vg.record(second, name, source="s", now=NOW, **day)
                outcomes[name] = "committed"
            except StoreError as exc:
                outcomes[name] = str(exc)

        threads = [
            threading.Thread(target=write, args=("a", "x", "y")),
            threading.Thread(target=write, args=("b", "y", "x")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winner = next(name for name, outcome in outcomes.items() if outcome == "committed")
        (loser,) = set(outcomes) - {winner}
        assert "deadlock detected" in outcomes[loser] and "retry it" in outcomes[loser]
        for lineage in ("x", "y"):
            assert [v.value for v in vg.history(lineage)] == [winner]


def test_a_write_that_fails_on_the_server_fails_its_whole_transaction(postgres_url: str) -> None:
    """Writes run in pipeline mode (their results are not awaited one by one); a statement the
    server refuses must still fail the transaction it belongs to, and nothing of it stays."""
    with Vigente.open(postgres_url) as vg:
        lineage = f"pipeline-{uuid.uuid4().hex[:8]}"
        day: dict[str, Any] = {"valid_from": "2026-01-01", "known_at": "2026-01-01"}
        vg.record(lineage, 1, source="s", now=NOW, **day)
        (existing,) = vg.history(lineage)
        with pytest.raises(StoreError, match="duplicate key"), vg.transaction():
            vg.record(
                lineage, 2, source="s", now=NOW, valid_from="2026-01-01", known_at="2026-02-01"
            )
            vg.store.append_versions([existing])  # the same version id again: refused
            vg.record(f"{lineage}-other", 3, source="s", now=NOW, **day)
        assert vg.history(lineage) == [existing]
        assert vg.history(f"{lineage}-other") == []


def test_lock_timelines_holds_every_lock_until_the_transaction_ends(postgres_url: str) -> None:
    """The locks of a bulk write, taken in one statement, are the same advisory locks a single
    writer of each timeline takes, and they last until the transaction ends."""
    timelines = [Timeline("a", Scope(), "s"), Timeline("b", Scope.of({"env": "prod"}), "s")]
    keys = [_lock_key("timeline", t.lineage, t.scope.key, t.source) for t in timelines]
    free = _lock_key("timeline", "c", Scope().key, "s")

    def try_lock(key: int) -> bool:
        with psycopg.connect(postgres_url, autocommit=True) as other:
            row = other.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            assert row is not None
            return bool(row[0])

    with Vigente.open(postgres_url) as vg:
        with vg.store.transaction():
            vg.store.lock_timelines(timelines)
            vg.store.latest_knowledge_many(timelines)  # a read: the pipeline has sent the lock
            assert [try_lock(key) for key in keys] == [False, False]
            assert try_lock(free)
        assert [try_lock(key) for key in keys] == [True, True]


def _try_lock(url: str, key: int, *, shared: bool = False) -> bool:
    """Whether another session can take the advisory lock ``key`` now (released at once)."""
    function = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
    with psycopg.connect(url, autocommit=True) as other:
        row = other.execute(f"SELECT {function}(%s)", (key,)).fetchone()  # a fixed name
        assert row is not None
        return bool(row[0])


def test_a_writer_of_a_few_timelines_shares_the_writers_lock(postgres_url: str) -> None:
    with Vigente.open(postgres_url) as vg, vg.transaction():
        vg.record("a", 1, valid_from="2026-01-01", known_at="2026-01-01", source="s", now=NOW)
        assert not _try_lock(postgres_url, WRITERS_KEY)  # a bulk writer would wait
        assert _try_lock(postgres_url, WRITERS_KEY, shared=True)  # other writers would not
        assert not _try_lock(postgres_url, _lock_key("timeline", "a", Scope().key, "s"))


def test_an_import_of_many_timelines_writes_alone_without_a_lock_each(
    postgres_url: str,
) -> None:
    """Beyond ``bulk_locks`` timelines a transaction takes the writers' lock exclusively instead
    of one lock per timeline (the server's lock table has a few thousand slots)."""
    lines = [
        f'{{"op": "record", "lineage": "bulk/{i}", "value": {i}, "source": "s", '
        f'"valid_from": "2026-01-01", "known_at": "2026-01-01"}}'
        for i in range(5)
    ]
    with Vigente.open(postgres_url) as vg:
        vg.store.bulk_locks = 3  # type: ignore[attr-defined]
        with vg.transaction():
            vg.import_lines(lines, now=NOW)
            assert not _try_lock(postgres_url, WRITERS_KEY, shared=True)  # writers wait
            timeline = _lock_key("timeline", "bulk/0", Scope().key, "s")
            assert _try_lock(postgres_url, timeline)  # no lock of its own
            vg.record("bulk/9", 9, valid_from="2026-01-01", known_at="2026-01-01", source="s",
                      now=NOW)  # fmt: skip
        assert _try_lock(postgres_url, WRITERS_KEY)
        assert [len(vg.history(f"bulk/{i}")) for i in (0, 4, 9)] == [1, 1, 1]


def test_an_import_of_more_timelines_than_the_lock_table_holds(postgres_url: str) -> None:
    """20,000 timelines in one import: more locks than a default server's lock table holds
    (max_locks_per_transaction 64 x max_connections 100, plus some slack)."""
    lines = [
        f'{{"op": "record", "lineage": "many/{i}", "value": {i}, "source": "s", '
        f'"valid_from": "2026-01-01", "known_at": "2026-01-01"}}'
        for i in range(20_000)
    ]
    with Vigente.open(postgres_url) as vg:
        report = vg.import_lines(lines, now=NOW)
        assert report.applied == report.versions_appended == 20_000
        assert vg.evidence("many/19999", valid_at="2026-02-01", now=NOW).values == (19_999,)
