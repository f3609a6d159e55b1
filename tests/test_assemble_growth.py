"""Growth (benchmark 4) in small: generated sessions assembled with a read horizon. The
assembled request stays within the budget, the trace accounts for every context record (one
decision each, or a count below the horizon), ``why_not`` answers for a record never read, a
rebuild matches, and replay tokens equal a count of the whole transcript."""

from __future__ import annotations

from typing import Any

import pytest

from vigente import Vigente
from vigente.assemble import count_message_tokens, tiktoken_tokenizer
from vigente.assemble.blocks import Block
from vigente.assemble.serialize import serializer
from vigente.bench._growth import accounted, growth_events
from vigente.records.runtime import Message, ToolArtifact, ToolCall

REF_KINDS = ("message", "tool_call", "memory", "user_memory", "skill_state", "checkpoint")


def _replay_by_hand(vg: Vigente, fmt: str) -> int:
    """Replay counted the slow way: every message, call and latest raw result, serialized."""
    graph = vg.runtime.graph("growth", branch="main")
    results = {n.target_id: n for n in graph.nodes if isinstance(n, ToolArtifact)}
    blocks = []
    for n in graph.nodes:
        if isinstance(n, Message):
            kind = {"system": "system", "user": "user"}.get(n.role, "assistant")
            blocks.append(Block(kind, n.content, n.id))
        elif isinstance(n, ToolCall):
            a = results.get(n.id)
            text = "" if a is None else vg.runtime.artifact_content(a).decode()
            blocks.append(Block("exchange", text, n.id, n.id, n.name, dict(n.arguments)))
    request = serializer(fmt).serialize(blocks)
    tok = tiktoken_tokenizer("o200k_base")
    return count_message_tokens(tok, request.messages) + (
        tok.count(request.system) if request.system else 0
    )


@pytest.mark.parametrize("calls", [10, 300])
def test_growth_session_fits_its_budget_and_accounts_for_every_record(
    vg: Vigente, calls: int
) -> None:
    for lines in growth_events("growth", calls):
        vg.runtime.import_events(lines)
    graph = vg.runtime.graph("growth")
    refs = {n.id for n in graph.nodes if n.KIND in REF_KINDS}
    for budget in (600, 4_000):
        a = vg.assembly.assemble("growth", "main", "agent", budget=budget)
        record = a.record
        assert record["tokens"]["assembled"] <= budget
        assert accounted(record) == len(refs)
        listed = [d["ref"] for d in record["included"] + record["omitted"]]
        assert len(listed) == len(set(listed)) and set(listed) <= refs
        not_read = sum(r["records"] for r in record["horizon"]["not_read"])
        assert sum(record["omission_counts"].values()) == len(record["omitted"]) + not_read
        assert vg.assembly.rebuild(a.id)["matches"]
        if calls == 300:
            assert record["horizon"]["before_seq"] > 0 and not_read > 0
            # the system prompt and the latest user message are read whatever their age
            included = {d["ref"]: d["as"] for d in record["included"]}
            assert included["sys"] == "instruction" and "u30" in included
            oldest = "c1"  # below the horizon: never read, answered from its group
            assert oldest not in listed
            why = vg.assembly.why_not(a.id, oldest)
            assert why["reason"] == "budget" and why["read"] is False
    roomy = vg.assembly.assemble("growth", "main", "agent", budget=10_000_000)
    assert roomy.record["horizon"]["before_seq"] == 0  # everything fits: everything is read
    assert accounted(roomy.record) == len(refs)
    for fmt in ("openai-chat", "openai-responses", "langchain"):
        a = vg.assembly.assemble("growth", "main", "agent", format=fmt, persist=False)
        assert a.record["tokens"]["replay"] == _replay_by_hand(vg, fmt)


def test_replay_tokens_grow_with_the_session(vg: Vigente) -> None:
    sizes = []
    for calls in (20, 40):
        for lines in growth_events(f"g{calls}", calls):
            vg.runtime.import_events(lines)
        a = vg.assembly.assemble(f"g{calls}", "main", "agent", budget=2_000, persist=False)
        sizes.append((a.record["tokens"]["replay"], a.record["tokens"]["assembled"]))
    assert sizes[1][0] > 1.6 * sizes[0][0]
    assert all(assembled <= 2_000 for _, assembled in sizes)


def test_growth_on_both_backends_in_one_run_reports_their_ratio(postgres_server: Any) -> None:
    """``context --growth --backend both``: the same session on SQLite and PostgreSQL, the
    same figures on each, the same selection, and the ratio of their p50s."""
    from rich.console import Console

    from vigente.bench._backends import PostgresBackend, SQLiteBackend
    from vigente.bench._growth import run_growth_pair

    sqlite, postgres = SQLiteBackend(), PostgresBackend(postgres_server.get_uri())
    try:
        figures = run_growth_pair(sqlite, postgres, [10], 2, Console(quiet=True))
    finally:
        postgres.close()
        sqlite.close()
    assert figures["growth_backend"] == "sqlite+postgres" and figures["same_selection_10"]
    lite, pg = figures["assembly_p50_ms_10_sqlite"], figures["assembly_p50_ms_10_postgres"]
    assert figures["postgres_vs_sqlite_10"] == round(pg / lite, 2)
    for name in ("replay_tokens", "assembled_tokens", "trace_refs", "not_read", "budget"):
        assert figures[f"{name}_10_sqlite"] == figures[f"{name}_10_postgres"]
    assert figures["trace_refs_10_sqlite"] == 23
    assert figures["rebuild_matches_10_sqlite"] and figures["rebuild_matches_10_postgres"]
