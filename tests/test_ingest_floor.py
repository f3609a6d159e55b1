"""The kernel benchmark's ingest floor stores exactly the rows an import stored, on both backends:
the copy answers every history question as the imported store does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from vigente import HistoryRewriteError, Vigente
from vigente.bench._ingest_floor import ingest_floor
from vigente.bench._lineages import NOW, plan_lineage


@pytest.fixture
def copy_url(store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A second empty database on the backend of ``store_url``."""
    if not store_url.startswith("postgresql"):
        yield str(tmp_path / "floor.db")
        return
    server = request.getfixturevalue("postgres_server")
    name = f"t_{uuid.uuid4().hex}"
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')  # a generated name, never input
    try:
        yield str(server.get_uri(name))
    finally:
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_floor_stores_the_same_rows_as_the_import(store_url: str, copy_url: str) -> None:
    plans = [plan_lineage(i, 30, 7) for i in range(4)]
    lines = [s.line(p.lineage) for p in plans for s in p.statements]
    with Vigente.open(store_url) as vg:
        report = vg.import_lines(lines, now=NOW)
        vg.record("other", {"x": 1}, valid_from="2026-01-01", known_at="2026-01-02",
                  source="s", scope={"env": "prod"}, now=NOW)  # fmt: skip
        lineages = vg.lineages()
        history = {name: vg.history(name) for name, _ in lineages}
    floor = ingest_floor("postgres" if store_url.startswith("postgresql") else "sqlite",
                         store_url, copy_url)  # fmt: skip
    assert floor["agrees"] is True and floor["seconds"] > 0
    assert floor["versions"] == report.versions_appended + 1 == sum(map(len, history.values()))
    with Vigente.open(copy_url) as copy:
        assert copy.lineages() == lineages
        assert {name: copy.history(name) for name, _ in lineages} == history
        # the journal came along: knowledge cannot go back on the copy either
        with pytest.raises(HistoryRewriteError, match="knowledge recorded on 2026-01-02"):
            copy.record("other", 2, valid_from="2026-01-01", known_at="2026-01-01",
                        source="s", scope={"env": "prod"}, now=NOW)  # fmt: skip
