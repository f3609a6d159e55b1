"""The scenario benchmark (issue 11, benchmark 3): every fixture of ``tests/data/scenarios``
replayed into a fresh in-memory store and assembled at each of its ``expect`` lines, beside
transcript replay of the same request.

Per fixture: replay and assembled tokens (summed over its requests, ``o200k_base``), the
reduction, the required facts (``must`` strings) that reached the model and the forbidden ones
(``must_not``) that leaked. A fixture's requests include the ones that are meant to see more
(a Google model seeing Google data, asked-for raw evidence, a child seeing its own workspace),
so its reduction is what the whole scenario costs, not its best request.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.assemble.scenario import run_scenario

__all__ = ["DEFAULT_SCENARIOS", "render_scenarios", "run_scenarios"]

DEFAULT_SCENARIOS = Path(__file__).resolve().parents[3] / "tests" / "data" / "scenarios"


def _reduction(replay: int, assembled: int) -> float | None:
    return round(1 - assembled / replay, 4) if replay else None


def run_scenarios(directory: Path, log: Console) -> dict[str, Any]:
    """Figures under ``scenario_*``; ``scenario_rows`` holds one row per fixture."""
    paths = sorted(Path(directory).glob("*.jsonl"))
    log.print(f"scenarios: {len(paths)} fixtures in {directory}")
    rows: list[dict[str, Any]] = []
    for path in paths:
        result = run_scenario(path)
        reqs = result.requests
        replay = sum(r["tokens"]["replay"] for r in reqs)
        assembled = sum(r["tokens"]["assembled"] for r in reqs)
        rows.append(
            {
                "scenario": path.stem,
                "requests": len(reqs),
                "modes": sorted({r["mode_contract"] for r in reqs}),
                "replay_tokens": replay,
                "assembled_tokens": assembled,
                "reduction": _reduction(replay, assembled),
                "required_facts": sum(r["required"] for r in reqs),
                "facts_kept": sum(r["kept"] for r in reqs),
                "forbidden": sum(r["forbidden"] for r in reqs),
                "leaks": sum(r["leaks"] for r in reqs),
                "checks": result.checks,
                "passed": result.passed,
            }
        )
    replay = sum(r["replay_tokens"] for r in rows)
    assembled = sum(r["assembled_tokens"] for r in rows)
    reductions = [r["reduction"] for r in rows if r["reduction"] is not None]
    return {
        "scenario_fixtures": len(rows),
        "scenario_requests": sum(r["requests"] for r in rows),
        "scenario_replay_tokens": replay,
        "scenario_assembled_tokens": assembled,
        "scenario_reduction": _reduction(replay, assembled),
        "scenario_reduction_median": round(statistics.median(reductions), 4)
        if reductions
        else None,
        "scenario_reduction_min": min(reductions) if reductions else None,
        "scenario_reduction_max": max(reductions) if reductions else None,
        "scenario_required_facts": sum(r["required_facts"] for r in rows),
        "scenario_facts_kept": sum(r["facts_kept"] for r in rows),
        "scenario_forbidden": sum(r["forbidden"] for r in rows),
        "scenario_leaks": sum(r["leaks"] for r in rows),
        "scenario_failed": [r["scenario"] for r in rows if not r["passed"]],
        "scenario_rows": rows,
    }


def render_scenarios(figures: dict[str, Any], console: Console) -> None:
    if "scenario_rows" not in figures:
        return
    table = Table(title="vigente scenario benchmark (tests/data/scenarios, seed 9.2)")
    for column in ("scenario", "requests", "replay", "assembled", "reduction", "facts", "leaks"):
        table.add_column(column, justify="left" if column == "scenario" else "right")
    for r in figures["scenario_rows"]:
        reduction = "-" if r["reduction"] is None else f"{100 * r['reduction']:.1f} %"
        table.add_row(
            r["scenario"] + ("" if r["passed"] else " (FAILED)"),
            str(r["requests"]),
            str(r["replay_tokens"]),
            str(r["assembled_tokens"]),
            reduction,
            f"{r['facts_kept']}/{r['required_facts']}",
            f"{r['leaks']}/{r['forbidden']}",
        )
    console.print(table)
    total = figures["scenario_reduction"]
    console.print(
        f"{figures['scenario_fixtures']} fixtures, {figures['scenario_requests']} requests: "
        f"{figures['scenario_replay_tokens']} replay tokens -> "
        f"{figures['scenario_assembled_tokens']} assembled"
        + ("" if total is None else f" ({100 * total:.1f} % fewer)")
        + f"; {figures['scenario_facts_kept']}/{figures['scenario_required_facts']} required "
        f"facts kept, {figures['scenario_leaks']} leaks"
    )
