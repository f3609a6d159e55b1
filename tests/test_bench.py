"""Smoke test of ``python -m vigente.bench``: the kernel benchmark runs small and prints all its
figures as one JSON object on its last line. No timing is asserted (the machines are shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vigente.api import Vigente
from vigente.bench import MODULES
from vigente.bench._floor import SQLITE_FLOOR, SQLiteFloor
from vigente.bench._lineages import plan_lineage
from vigente.records.values import Scope

REQUIRED = (
    "lookup_p50_ms",
    "lookup_p99_ms",
    "scan_p50_ms",
    "speedup_vs_scan",
    "ingest_versions_per_s",
    "floor_p50_ms",
    "floor_p99_ms",
    "lookup_vs_floor",
)


def run_bench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vigente.bench", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cwd = tmp_path_factory.mktemp("bench")
    proc = run_bench("kernel", "--versions", "2000", "--json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(cwd.iterdir()) == [], "the benchmark left files behind"
    last = proc.stdout.strip().splitlines()[-1]
    result: dict[str, Any] = json.loads(last)
    return result


def test_the_last_line_has_every_required_figure_as_a_positive_number(
    figures: dict[str, Any],
) -> None:
    for key in REQUIRED:
        assert isinstance(figures[key], int | float) and figures[key] > 0, key
    assert figures["lookup_p99_ms"] >= figures["lookup_p50_ms"]


def test_the_store_holds_the_planned_versions_written_by_the_kernel(
    figures: dict[str, Any],
) -> None:
    assert figures["versions"] == figures["snapshot_rows"] == 2000
    assert figures["lineages"] == 20
    # every snapshot was appended by a statement, and corrections closed earlier ones
    assert figures["versions_appended"] == 2000
    assert figures["statements"] == figures["statements_applied"] > figures["lineages"]
    assert figures["versions_closed"] > 0
    assert {"correct", "move", "succeed"} <= set(figures["statement_kinds"])
    assert figures["db_bytes"] > 0


def test_lookups_find_rows_and_every_baseline_agrees(figures: dict[str, Any]) -> None:
    assert figures["lookups"] == 2000
    assert figures["lookup_found"] > figures["lookups"] // 2
    assert figures["lookup_candidate_rows_mean"] > 1
    for baseline in ("floor", "scan", "unindexed", "noindex"):
        assert figures[f"{baseline}_agrees"] is True, baseline
        assert figures[f"{baseline}_lookups"] > 0
    assert figures["unindexed_dropped"] == ["versions_valid"]
    assert figures["machine"]["cpus"] >= 1


def test_the_floor_reads_the_admitted_rows_and_is_the_ratio_of_the_lookup(
    figures: dict[str, Any],
) -> None:
    assert figures["floor_lookups"] == figures["lookups"]
    # about one admitted row per lookup (some answers are missing), fewer than a lookup reads
    assert 0 < figures["floor_rows_mean"] < figures["lookup_candidate_rows_mean"]
    expected = round(figures["lookup_p50_ms"] / figures["floor_p50_ms"], 1)
    assert figures["lookup_vs_floor"] == expected
    assert figures["floor_p99_ms"] >= figures["floor_p50_ms"]


def test_the_floor_statement_uses_the_interval_index_and_returns_what_evidence_admits(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "floor.db")
    with Vigente.open(path) as vg:
        vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-01-01", source="a")
        vg.record("rate", 12, valid_from="2024-06-01", known_at="2024-05-01", source="a")
        # learned late: the first period was 11 from March
        vg.record(
            "rate",
            11,
            valid_from="2024-03-01",
            valid_to="2024-06-01",
            known_at="2024-08-01",
            source="a",
        )
        vg.record(
            "rate",
            9,
            valid_from="2024-01-01",
            known_at="2024-01-01",
            source="a",
            scope={"country": "it"},
        )
    floor = SQLiteFloor(path)
    try:
        plan = floor._conn.execute(
            "EXPLAIN QUERY PLAN " + SQLITE_FLOOR, ("rate", "{}", 0, 0, 0, 0)
        ).fetchall()
        assert any("versions_valid" in str(step) for step in plan), plan
        with Vigente.open(path) as vg:
            for t, k in [
                ("2024-04-01", "2024-07-01"),
                ("2024-04-01", "2024-09-01"),
                ("2024-07-01", "2024-09-01"),
                ("2023-07-01", "2024-09-01"),
                ("2024-04-01", "2023-12-01"),
            ]:
                e = vg.evidence("rate", valid_at=t, known_at=k, now="2024-09-01")
                ti, ki = vg.instant(t).micros, vg.instant(k).micros
                rows = floor.read("rate", Scope().key, *floor.prepare(ti, ki))
                assert floor.version_ids(rows) == {v.version_id for v in e.admitted}, (t, k)
                assert sorted(r[2] for r in rows) == sorted(v.value_json for v in e.admitted)
    finally:
        floor.close()


def test_the_table_is_printed_without_json(tmp_path: Path) -> None:
    proc = run_bench("kernel", "--versions", "300", "--lookups", "50", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "lookup p50" in proc.stdout
    assert "lookup / floor" in proc.stdout
    assert "python -m vigente.bench kernel --versions 300" in proc.stdout


def test_db_keeps_the_store_it_names_with_every_planned_version(tmp_path: Path) -> None:
    # The ingest floor and the copies without indexes are scratch databases: with --db they
    # used to be made at the given path too, so the floor's fresh database wiped the store.
    db = tmp_path / "kernel.db"
    proc = run_bench(
        "kernel", "--versions", "300", "--lookups", "50", "--db", str(db), "--json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["versions"] == 300
    with Vigente.open(db) as vg:
        assert sum(len(vg.history(lineage)) for lineage, _ in vg.lineages()) == 300


def test_every_benchmark_is_a_subcommand(tmp_path: Path) -> None:
    proc = run_bench("--help", cwd=tmp_path)
    assert proc.returncode == 0
    for name in [*MODULES, "all"]:
        assert name in proc.stdout


def test_a_lineage_plan_is_deterministic_and_counts_its_snapshots() -> None:
    first, again = plan_lineage(7, 100), plan_lineage(7, 100)
    assert first.statements == again.statements
    assert first.rows == 100
    knowledge = [s.known for s in first.statements]
    assert knowledge == sorted(knowledge) and len(set(knowledge)) == len(knowledge)


def test_a_db_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "k.db"
    proc = run_bench("kernel", "--versions", "300", "--db", str(missing), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Error: cannot open SQLite database" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_horizon_benchmark_runs_both_phases(tmp_path: Path) -> None:
    proc = run_bench("horizon", "--backend", "sqlite", "--writers", "1", "--askers", "1",
                     "--seconds", "0.3", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["before"]["asks_per_second"] > 0 and figures["after"]["asks_per_second"] > 0
    assert figures["command"].startswith("python -m vigente.bench horizon")
