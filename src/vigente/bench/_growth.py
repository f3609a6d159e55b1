"""The context benchmark's growth part: generated agent sessions of 10 to 100,000 tool calls.

A session is a system prompt, then agent turns: a user message, a run, ten tool calls each
answered by a JSON result of varied size (a search, a record, a list of rows: 200 B to 6 KiB,
with the memory the default extractor derives from it) and the assistant's answer. Per size it
is imported into a fresh database of the backend, assembled once (the first assembly fills the
read index and the replay token counts), then assembled ``reads`` more times; the figures are
the p50 of those, the replay tokens (every message, call and raw result) and the assembled
tokens against the budget, and whether the trace accounts for every context record. With
``--backend both`` each size runs on SQLite and PostgreSQL in one run, their assemblies taken in
turn, and ``postgres_vs_sqlite_<size>`` is the ratio of the two p50s (:func:`run_growth_pair`).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from typing import Any

from vigente.api import Vigente
from vigente.bench._backends import Backend

__all__ = ["SIZES", "accounted", "growth_events", "run_growth", "run_growth_cli", "run_growth_pair"]

SIZES = (10, 100, 1_000, 10_000, 100_000)
CALLS_PER_TURN = 10
_TOOLS = ("flight_search", "get_reservation", "list_bookings", "seat_map", "fare_rules")
_CITIES = ("TRN", "MIL", "GEN", "ROM", "NAP", "VCE", "BLQ", "FLR", "PSA", "CAG", "PMO")


def _result(rng: random.Random, tool: str, i: int) -> dict[str, Any]:
    """A realistic tool result: its size varies from a line to a few KiB."""
    if tool == "get_reservation":
        return {
            "reservation_id": f"R{i:07d}",
            "status": rng.choice(["confirmed", "on_hold", "cancelled"]),
            "passengers": [
                {"first": f"P{j}", "last": f"Name{rng.randint(1, 999)}", "dob": f"1990-01-0{j + 1}"}
                for j in range(rng.randint(1, 4))
            ],
            "total_eur": round(rng.uniform(40, 900), 2),
        }
    rows = rng.choice((1, 3, 8, 20, 40))
    return {
        "query": {"from": rng.choice(_CITIES), "to": rng.choice(_CITIES), "call": i},
        "results": [
            {
                "id": f"{tool[:2].upper()}-{i}-{j}",
                "dep": f"{rng.randint(5, 22):02d}:{rng.choice(('05', '20', '35', '50'))}",
                "fare_eur": rng.randint(19, 480),
                "seats_left": rng.randint(0, 60),
                "conditions": rng.choice(("changeable", "non-refundable", "flex")),
            }
            for j in range(rows)
        ],
    }


def growth_events(conversation: str, calls: int, *, seed: int = 7) -> Iterator[list[str]]:
    """The event log of a session of ``calls`` tool calls, in chunks (one import each)."""
    rng = random.Random(seed)
    chunk: list[dict[str, Any]] = [
        {"event": "conversation", "id": conversation, "account": "bench"},
        {"event": "participant", "id": "agent", "model": "gpt-4o", "provider": "openai"},
        {"event": "branch", "id": "main"},
        {
            "event": "message",
            "id": "sys",
            "branch": "main",
            "role": "system",
            "content": "You are a travel agent. Use the tools; never invent a fare or a seat.",
        },
    ]
    done = 0
    turn = 0
    while done < calls:
        turn += 1
        run = f"r{turn}"
        chunk += [
            {
                "event": "message",
                "id": f"u{turn}",
                "branch": "main",
                "role": "user",
                "content": f"Request {turn}: find options from {rng.choice(_CITIES)} and hold "
                "the cheapest.",
            },
            {"event": "run", "id": run, "branch": "main", "participant": "agent", "mode": "chat"},
        ]
        for _ in range(min(CALLS_PER_TURN, calls - done)):
            done += 1
            tool = rng.choice(_TOOLS)
            chunk += [
                {
                    "event": "tool_call",
                    "id": f"c{done}",
                    "run": run,
                    "name": tool,
                    "arguments": {"from": rng.choice(_CITIES), "to": rng.choice(_CITIES)},
                },
                {
                    "event": "tool_result",
                    "call": f"c{done}",
                    "status": "succeeded",
                    "content": _result(rng, tool, done),
                },
            ]
        chunk.append(
            {
                "event": "message",
                "id": f"a{turn}",
                "branch": "main",
                "role": "assistant",
                "run": run,
                "content": f"Turn {turn}: held option {rng.randint(1, 9)}.",
            }
        )
        if done % 2_000 == 0 or done >= calls:
            yield [
                json.dumps(
                    dict(e, conversation=conversation) if e["event"] != "conversation" else e
                )
                for e in chunk
            ]
            chunk = []


def accounted(record: dict[str, Any]) -> int:
    """How many context refs an assembly's trace accounts for: one decision each, and the
    records counted below its read horizon."""
    return int(
        len(record["included"])
        + len(record["omitted"])
        + sum(r["records"] for r in record["horizon"]["not_read"])
    )


_LABELS = {10: "10", 100: "100", 1_000: "1k", 10_000: "10k", 100_000: "100k"}


class _Session:
    """One size's session in a fresh database of ``backend``: imported, settled and assembled
    once (the first assembly fills the caches), then timed one assembly at a time."""

    def __init__(self, backend: Backend, size: int) -> None:
        self.backend = backend
        self.url = backend.fresh(f"growth{size}")
        self.vg: Vigente | None = None
        self.times: list[float] = []
        try:
            self.vg = Vigente.open(self.url)
            started = time.perf_counter()
            for lines in growth_events("growth", size):
                self.vg.runtime.import_events(lines)
            self.imported = time.perf_counter() - started
            backend.settle(self.url)
            started = time.perf_counter()
            self.first = self.vg.assembly.assemble("growth", "main", "agent")
            self.cold = time.perf_counter() - started
        except BaseException:
            self.close()
            raise
        self.last = self.first

    def assemble(self) -> None:
        assert self.vg is not None
        started = time.perf_counter()
        self.last = self.vg.assembly.assemble("growth", "main", "agent")
        self.times.append((time.perf_counter() - started) * 1000)

    def figures(self, label: str, suffix: str = "") -> dict[str, Any]:
        assert self.vg is not None
        a = self.last
        rebuilt = self.vg.assembly.rebuild(a.id)
        assert self.first.record["selection_hash"] == a.record["selection_hash"]
        tokens = a.record["tokens"]
        return {
            f"assembly_p50_ms_{label}{suffix}": round(statistics.median(self.times), 2),
            f"replay_tokens_{label}{suffix}": tokens["replay"],
            f"assembled_tokens_{label}{suffix}": tokens["assembled"],
            f"budget_{label}{suffix}": a.record["budget"],
            f"trace_refs_{label}{suffix}": accounted(a.record),
            f"not_read_{label}{suffix}": sum(r["records"] for r in a.record["horizon"]["not_read"]),
            f"first_assembly_s_{label}{suffix}": round(self.cold, 2),
            f"import_s_{label}{suffix}": round(self.imported, 1),
            f"rebuild_matches_{label}{suffix}": rebuilt["matches"],
        }

    def close(self) -> None:
        try:
            if self.vg is not None:
                self.vg.close()
        finally:
            self.backend.discard(self.url)


def run_growth(backend: Backend, sizes: Sequence[int], reads: int, log: Any) -> dict[str, Any]:
    figures: dict[str, Any] = {"growth_backend": backend.name, "growth_reads": reads}
    for size in sizes:
        label = _LABELS.get(size, str(size))
        session = _Session(backend, size)
        try:
            for _ in range(reads):
                session.assemble()
            figures |= session.figures(label)
        finally:
            session.close()
        tokens = session.last.record["tokens"]
        log.print(
            f"  {size} tool calls: p50 {figures[f'assembly_p50_ms_{label}']} ms, "
            f"replay {tokens['replay']} / assembled {tokens['assembled']} tokens, "
            f"import {session.imported:.1f} s, first assembly {session.cold:.2f} s"
        )
    if "assembly_p50_ms_1k" in figures and "assembly_p50_ms_100k" in figures:
        figures["assembly_growth_100k_over_1k"] = round(
            figures["assembly_p50_ms_100k"] / figures["assembly_p50_ms_1k"], 2
        )
    return figures


def run_growth_pair(
    sqlite: Backend, postgres: Backend, sizes: Sequence[int], reads: int, log: Any
) -> dict[str, Any]:
    """The growth part on both backends in one run: per size the same session in a fresh
    database of each, then ``reads`` assemblies taken in turn (SQLite, PostgreSQL, SQLite,
    ...), so that the machine's load weighs on both alike; ``postgres_vs_sqlite_<size>`` is
    the ratio of their p50s, and ``same_selection_<size>`` whether both assembled the same
    selection (the selection hash of the record)."""
    figures: dict[str, Any] = {"growth_backend": "sqlite+postgres", "growth_reads": reads}
    for size in sizes:
        label = _LABELS.get(size, str(size))
        sessions = []
        try:
            for backend in (sqlite, postgres):
                sessions.append(_Session(backend, size))
            for _ in range(reads):
                for session in sessions:
                    session.assemble()
            for session in sessions:
                figures |= session.figures(label, f"_{session.backend.name}")
        finally:
            for session in sessions:
                session.close()
        lite, pg = (figures[f"assembly_p50_ms_{label}_{b}"] for b in ("sqlite", "postgres"))
        figures[f"postgres_vs_sqlite_{label}"] = round(pg / lite, 2)
        figures[f"same_selection_{label}"] = (
            sessions[0].last.record["selection_hash"] == sessions[1].last.record["selection_hash"]
        )
        log.print(
            f"  {size} tool calls: p50 SQLite {lite} ms, PostgreSQL {pg} ms: "
            f"{figures[f'postgres_vs_sqlite_{label}']}x; first assembly "
            f"{sessions[0].cold:.2f} / {sessions[1].cold:.2f} s"
        )
    return figures


def run_growth_cli(args: Any, log: Any) -> dict[str, Any]:
    """``python -m vigente.bench context --growth SIZES [--backend postgres|both]
    [--reads N]``."""
    from vigente.bench._backends import open_backend

    sizes = [int(x.replace("_", "")) for x in args.growth.split(",") if x.strip()]
    if args.backend == "both":
        sqlite = open_backend("sqlite", sqlite_path=None, postgres_url=None)
        try:
            postgres = open_backend("postgres", sqlite_path=None, postgres_url=args.postgres_url)
            try:
                return run_growth_pair(sqlite, postgres, sizes, args.reads, log)
            finally:
                postgres.close()
        finally:
            sqlite.close()
    backend = open_backend(args.backend, sqlite_path=None, postgres_url=args.postgres_url)
    try:
        return run_growth(backend, sizes, args.reads, log)
    finally:
        backend.close()
