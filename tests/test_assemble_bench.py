"""``python -m vigente.bench context`` on two real tau-bench sessions: every figure is there,
replay keeps every required fact, and the baselines are LangChain's own (skipped without the
``bench`` extra)."""

from __future__ import annotations

import pytest
from rich.console import Console

from tests.conftest import SHARED_DATA, shared_file


def test_context_benchmark_on_two_sessions() -> None:
    pytest.importorskip("langchain")
    from vigente.bench.context import METHODS, run_tau

    path = shared_file(SHARED_DATA / "tau-bench" / "airline.trials01.json.xz")
    figures = run_tau(path, 2, Console(quiet=True))
    assert figures["tau_points"] > 0 and figures["tau_required_facts"] > 0
    assert figures["tau_availability_replay"] == 1.0
    for name in METHODS:
        assert 0 <= figures[f"tau_availability_{name}"] <= 1
        assert figures[f"tau_history_tokens_{name}"] > 0
    for name in ("replay", "masking", "vigente"):
        assert figures[f"tau_cache_cost_{name}"] > 0
    # masking clears old tool results: never more history than replay
    assert figures["tau_history_tokens_masking"] <= figures["tau_history_tokens_replay"]
