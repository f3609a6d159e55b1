"""Smoke test of ``python -m vigente.bench runtime``: it runs small and prints every figure as
one JSON object on its last line. No timing is asserted (the machines are shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vigente.bench import MODULES


def test_runtime_benchmark_runs_small_and_reports_its_figures(tmp_path: Path) -> None:
    assert MODULES["runtime"] == "vigente.bench.runtime"
    proc = subprocess.run(
        [sys.executable, "-m", "vigente.bench", "runtime", "--turns", "20", "--artifacts", "2",
         "--artifact-kib", "80", "--sizes", "50", "200", "--own", "5", "--reads", "3",
         "--big-mb", "0.3", "--big-reads", "2", "--json"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["ingest_events"] == 3 + 20 * 5
    assert figures["events_per_s"] > 0 and figures["artifact_mb_per_s"] > 0
    assert [r["artifacts"] for r in figures["reads"]] == [50, 200]
    # the measured participant's candidates do not grow with the other participants' artifacts
    assert {r["candidates_returned"] for r in figures["reads"]} == {figures["reads"][0][
        "candidates_returned"]}
    assert "candidates_growth" in figures and "scan_growth" in figures
    # the large result (issue 23): the assembly is the old way's, its figures are there
    assert figures["big_same_as_old_way"] is True
    assert figures["big_result_mb"] > 0.2 and figures["big_first_assembly_ms"] > 0
    assert figures["big_replay_tokens"] > figures["big_assembled_tokens"]
