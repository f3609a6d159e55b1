"""Smoke test of ``python -m vigente.bench``: the kernel benchmark runs small and prints all its
figures as one JSON object on its last line. No timing is asserted (the machines are shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vigente.bench import MODULES
from vigente.bench._lineages import plan_lineage

REQUIRED = (
    "lookup_p50_ms",
    "lookup_p99_ms",
    "scan_p50_ms",
    "speedup_vs_scan",
    "ingest_versions_per_s",
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
    for baseline in ("scan", "unindexed", "noindex"):
        assert figures[f"{baseline}_agrees"] is True, baseline
        assert figures[f"{baseline}_lookups"] > 0
    assert figures["unindexed_dropped"] == ["versions_valid"]
    assert figures["machine"]["cpus"] >= 1


def test_the_table_is_printed_without_json(tmp_path: Path) -> None:
    proc = run_bench("kernel", "--versions", "300", "--lookups", "50", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "lookup p50" in proc.stdout
    assert "python -m vigente.bench kernel --versions 300" in proc.stdout


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
