"""Smoke test of ``python -m vigente.bench serve`` on both backends: a small load through a real
``vigente serve`` on loopback; no error, every accepted write found afterwards, the history
invariant holds, and every figure is reported. No timing is asserted (the machines are shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from vigente.bench import MODULES


def _run(tmp_path: Path, *options: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "vigente.bench", "serve", "--clients", "3",
         "--contention-events", "3", "--throughput-clients", "4", "--throughput-seconds", "0.5",
         *options, "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def _check(figures: dict[str, Any], requests: int) -> None:
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["writes_verified"] is True, figures["writes_missing"]
    assert figures["history_invariant_holds"] is True, figures["history_invariant"]
    by_kind = figures["by_kind"]
    assert set(by_kind) == {"ask", "search", "event", "record", "assemble"}
    assert sum(k["count"] for k in by_kind.values()) == requests == figures["latency"]["count"]
    writes = figures["accepted_writes"]
    assert writes["assemblies"] == by_kind["assemble"]["count"]
    assert writes["records"] == by_kind["record"]["count"]
    assert writes["events"] >= by_kind["event"]["count"]  # a batch holds several events
    assert figures["throughput_rps"] > 0
    contention = figures["contention"]
    assert contention["clients"] == 16 and contention["events"] == 16 * 3
    assert contention["false_refusals"] == 0 and contention["errors"] == 0, contention
    assert contention["lost_writes"] == 0 and contention["knowledge_in_order"] is True
    assert figures["latency"]["p99_ms"] >= figures["latency"]["p50_ms"] > 0
    # the throughput phase: each operation alone, over HTTP and in process
    assert figures["throughput_clients"] == 4
    for op in ("ask", "search", "event", "assemble"):
        assert figures[f"serve_{op}_errors"] == 0, figures[f"serve_{op}_error_samples"]
        assert figures[f"serve_{op}_rps"] > 0 and figures[f"inprocess_{op}_rps"] > 0
        assert figures[f"serve_{op}_p99_ms"] >= figures[f"serve_{op}_p50_ms"] > 0
        assert figures[f"serve_{op}_vs_inprocess"] > 0
        assert figures[f"serve_{op}_cpu_ms"] > 0  # Linux: the server's CPU time per request
    assert figures["serve_event_acknowledged"] > 0
    assert figures["serve_event_unread"] == 0, figures["serve_event_unread_samples"]


def test_serve_benchmark_on_sqlite(tmp_path: Path) -> None:
    assert MODULES["serve"] == "vigente.bench.serve"
    figures = _run(tmp_path, "--requests", "80")
    assert figures["backend"] == "sqlite" and figures["clients"] == 3
    _check(figures, 80)


def test_serve_benchmark_with_two_worker_processes(tmp_path: Path) -> None:
    """``vigente serve --workers 2`` on SQLite: two processes, each with its own connection to a
    tenant's file, and still no error, no lost write and no false refusal of writers racing
    for one conversation from both processes."""
    figures = _run(tmp_path, "--requests", "60", "--workers", "2")
    assert figures["workers"] == 2
    _check(figures, 60)


def test_serve_benchmark_on_postgres(tmp_path: Path, postgres_server: Any) -> None:
    figures = _run(
        tmp_path,
        "--requests",
        "60",
        "--backend",
        "postgres",
        "--postgres-url",
        postgres_server.get_uri(),
        "--workers",
        "2",
    )
    assert figures["backend"] == "postgres" and "postgresql" in figures["machine"]
    assert figures["workers"] == 2
    _check(figures, 60)


def test_serve_benchmark_refuses_a_bad_count(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vigente.bench", "serve", "--requests", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 1 and "Error: --requests" in proc.stderr
