"""``python -m vigente.bench integrations`` on two real tau-bench sessions: the middleware's
every model call selects what the assembler selects on the same transcript, and every figure
is there (skipped without langchain)."""

from __future__ import annotations

import pytest
from rich.console import Console

from tests.conftest import SHARED_DATA, shared_file


def test_the_middleware_selects_what_the_assembler_selects() -> None:
    pytest.importorskip("langchain", reason="langchain is not installed (the integrations extra)")
    from vigente.bench.integrations import METHODS, run_integrations

    path = shared_file(SHARED_DATA / "tau-bench" / "airline.trials01.json.xz")
    figures = run_integrations(path, 2, Console(quiet=True))
    assert figures["model_calls"] > 0 and figures["tau_required_facts"] > 0
    assert figures["same_selection_calls"] == figures["model_calls"]
    assert figures["tau_availability_middleware"] == figures["tau_availability_assembler"]
    for name in METHODS:
        assert figures[f"tau_history_tokens_{name}"] > 0
        assert figures[f"tau_tokens_per_call_{name}"] > 0
    for key in ("overhead_ms_p50", "overhead_cpu_ms_p50", "overhead_ms_p95"):
        assert key in figures
    assert figures["overhead_target_ms"] == 5.0
