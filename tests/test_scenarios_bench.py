"""The scenario benchmark (``python -m vigente.bench context``, figures ``scenario_*``): every
fixture replayed, counted against transcript replay, its required facts kept and no forbidden
string leaked; a fixture that leaks is counted as such, not hidden."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from vigente.bench._scenarios import DEFAULT_SCENARIOS, render_scenarios, run_scenarios


def test_every_fixture_keeps_its_facts_and_leaks_nothing() -> None:
    figures = run_scenarios(DEFAULT_SCENARIOS, Console(quiet=True))
    rows = {r["scenario"]: r for r in figures["scenario_rows"]}
    assert len(rows) == figures["scenario_fixtures"] == len(list(DEFAULT_SCENARIOS.glob("*.jsonl")))
    assert figures["scenario_failed"] == []
    assert figures["scenario_leaks"] == 0
    assert figures["scenario_facts_kept"] == figures["scenario_required_facts"] > 0
    for r in rows.values():
        assert r["requests"] >= 1 and r["replay_tokens"] > 0 and r["assembled_tokens"] > 0
        assert r["reduction"] == round(1 - r["assembled_tokens"] / r["replay_tokens"], 4)
    assert figures["scenario_replay_tokens"] == sum(r["replay_tokens"] for r in rows.values())
    assert "debate/1" in rows["debate_attribution"]["modes"]
    console = Console(record=True, width=160)
    render_scenarios(figures, console)
    assert "debate_attribution" in console.export_text()


def test_a_leaking_fixture_is_counted(tmp_path: Path) -> None:
    events = [
        dict(event="conversation", id="c", account="a", at="2026-10-05T08:00:00+00:00"),
        dict(event="participant", id="agent", model="gpt-4o"),
        dict(event="branch", id="main"),
        dict(event="message", id="u1", branch="main", role="user", content="Book SEAT-12A."),
        dict(
            event="expect",
            branch="main",
            participant="agent",
            as_of="2026-10-05T08:01:00+00:00",
            must=["SEAT-12A", "SEAT-99Z"],
            must_not=["Book"],
            mode_contract={"contract": "debate/1"},
        ),
    ]
    lines = [
        json.dumps(e if e["event"] == "conversation" else dict(e, conversation="c")) for e in events
    ]
    (tmp_path / "leak.jsonl").write_text("\n".join(lines) + "\n")
    figures = run_scenarios(tmp_path, Console(quiet=True))
    (row,) = figures["scenario_rows"]
    assert (row["facts_kept"], row["required_facts"]) == (1, 2)
    assert (row["leaks"], row["forbidden"]) == (1, 1)
    assert not row["passed"] and figures["scenario_failed"] == ["leak"]
    assert row["checks"] == 4  # two musts, one must_not, the mode contract (chat/1, not debate)
