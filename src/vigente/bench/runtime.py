"""``python -m vigente.bench runtime``: ingest of the runtime graph and one participant's
candidate read as the conversation grows.

* events/s: an event log of agent turns (message, run, call, JSON result of ~1 KiB with its
  derived memory) imported through ``vg.runtime.import_events`` (validation included);
* artifact bytes/s: tool results of 256 KiB (the blob store) recorded one call each;
* candidates: one conversation per size, each with N artifacts owned by other participants
  (10,000 and 100,000 by default) plus the same 50 turns of the measured participant, in one
  database; the p50 of ``vg.runtime.candidates`` for that participant, read in turns (one read
  of each conversation per round, so noise falls on every size alike), beside reading the
  whole conversation's records (what a transcript-style scan pays);
* a large result (``--big-mb``, 5 by default; issue 23): the import and assembly of a
  conversation with one tool result of that many MB, against the same conversation with a
  small result, the old way (nothing counted at import) and parsing the raw once
  (bench/_big_result.py). ``--big-only`` runs that part alone.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._backends import BACKENDS, open_backend
from vigente.bench._util import machine, percentile, positive, rate, ratio
from vigente.records.runtime import RuntimeRecord, ToolArtifact, ToolCall, to_record
from vigente.runtime.content import raw_bytes, reference
from vigente.time import parse_instant

__all__ = ["BENCHMARK", "RuntimeBenchmark"]

C = "bench"
T0 = "2026-10-01T08:00:00Z"


def _turn_events(turns: int, seed: int, conversation: str = C) -> list[str]:
    rng = random.Random(seed)
    events: list[dict[str, Any]] = [
        {"event": "conversation", "id": conversation, "account": "acct-bench", "at": T0},
        {"event": "participant", "id": "agent", "model": "gpt-4o"},
        {"event": "branch", "id": "main"},
    ]
    for n in range(turns):
        rows = [{"id": f"FR-{rng.randrange(10_000):04d}", "dep": f"{rng.randrange(24):02d}:00",
                 "price": rng.randrange(20, 200)} for _ in range(20)]
        events += [
            {"event": "message", "id": f"u{n}", "branch": "main", "role": "user",
             "content": f"question {n}"},
            {"event": "run", "id": f"r{n}", "branch": "main", "participant": "agent",
             "mode": "chat"},
            {"event": "tool_call", "id": f"t{n}", "run": f"r{n}", "name": "train_search",
             "arguments": {"from": "TRN", "to": "MIL", "n": n}},
            {"event": "tool_result", "call": f"t{n}", "status": "succeeded",
             "content": {"trains": rows}},
            {"event": "message", "id": f"a{n}", "branch": "main", "role": "assistant",
             "run": f"r{n}", "content": f"answer {n}"},
        ]
    return [json.dumps(e if e["event"] == "conversation" else dict(e, conversation=conversation))
            for e in events]


def _ingest(vg: Vigente, turns: int, seed: int) -> dict[str, Any]:
    lines = _turn_events(turns, seed, "ingest")
    start = time.perf_counter()
    report = vg.runtime.import_events(lines, now=None)
    seconds = time.perf_counter() - start
    return {"ingest_events": report.events, "ingest_s": round(seconds, 2),
            "events_per_s": rate(report.events, seconds)}


def _artifact_bytes(vg: Vigente, count: int, size: int) -> dict[str, Any]:
    rt = vg.runtime
    rt.start_run("ingest", "big", branch="main", participant="agent", mode="chat")
    payload = "x" * size
    start = time.perf_counter()
    for n in range(count):
        rt.record_tool_call("ingest", f"big{n}", run="big", name="dump", arguments={"n": n})
        rt.record_tool_result("ingest", f"big{n}", status="succeeded", content=f"{n}:{payload}",
                              derive=False)
    seconds = time.perf_counter() - start
    return {"artifact_count": count, "artifact_bytes": count * size,
            "artifact_mb_per_s": round(count * size / seconds / 1e6, 1)}


def _read(vg: Vigente, conversations: dict[int, str], reads: int) -> list[dict[str, Any]]:
    """Read each conversation's candidates in turns (one read of each per round), so that the
    machine's noise falls on every size alike; then a few whole-conversation scans of each."""
    rt = vg.runtime
    own: dict[int, list[float]] = {size: [] for size in conversations}
    scan: dict[int, list[float]] = {size: [] for size in conversations}
    returned: dict[int, int] = {}
    for _ in range(reads):
        for size, c in conversations.items():
            start = time.perf_counter_ns()
            found = rt.candidates(c, "main", "agent")
            own[size].append((time.perf_counter_ns() - start) / 1e6)
            returned[size] = len(found.records)
    for _ in range(3):  # the linear baseline: a few reads are enough
        for size, c in conversations.items():
            start = time.perf_counter_ns()
            vg.store.runtime_records(c)
            scan[size].append((time.perf_counter_ns() - start) / 1e6)
    return [{"artifacts": size, "candidates_p50_ms": round(percentile(own[size], 50), 3),
             "candidates_p99_ms": round(percentile(own[size], 99), 3),
             "candidates_returned": returned[size],
             "scan_p50_ms": round(percentile(scan[size], 50), 2)} for size in conversations]


class RuntimeBenchmark:
    name = "runtime"
    help = "runtime graph: events/s, artifact bytes/s, one participant's candidates vs size"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
        parser.add_argument("--postgres-url", help="server for --backend postgres")
        parser.add_argument("--turns", type=positive, default=1000,
                            help="agent turns in the ingest log (5 events each; default 1000)")
        parser.add_argument("--artifacts", type=positive, default=40,
                            help="large artifacts for bytes/s (default 40)")
        parser.add_argument("--artifact-kib", type=positive, default=256)
        parser.add_argument("--sizes", type=positive, nargs="+", default=[10_000, 100_000],
                            help="artifacts in the conversation (default 10000 100000)")
        parser.add_argument("--own", type=positive, default=50,
                            help="the measured participant's own turns (default 50)")
        parser.add_argument("--reads", type=positive, default=100)
        parser.add_argument("--seed", type=int, default=20261201)
        parser.add_argument("--big-mb", type=float, default=5.0,
                            help="MB of the large tool result (default 5; 0: skip that part)")
        parser.add_argument("--big-reads", type=positive, default=20,
                            help="assemblies timed after the first, large result (default 20)")
        parser.add_argument("--big-only", action="store_true",
                            help="run the large-result part alone")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        figures: dict[str, Any] = {"machine": machine(), "backend": args.backend,
                                   "seed": args.seed}
        backend = open_backend(args.backend, sqlite_path=None, postgres_url=args.postgres_url)
        if args.big_mb > 0:
            from vigente.bench._big_result import run_big_result

            try:
                url = backend.fresh("big")
                figures.update(run_big_result(url, args.big_mb, args.big_reads, log))
                backend.discard(url)
            finally:
                if args.big_only:
                    backend.close()
        if args.big_only:
            return figures
        try:
            url = backend.fresh("runtime")
            with Vigente.open(url) as vg:
                log.print(f"ingest: {args.turns} turns")
                figures.update(_ingest(vg, args.turns, args.seed))
                log.print(f"artifacts: {args.artifacts} x {args.artifact_kib} KiB")
                figures.update(_artifact_bytes(vg, args.artifacts, args.artifact_kib * 1024))
                conversations: dict[int, str] = {}
                for size in sorted(set(args.sizes)):
                    c = conversations[size] = f"bench-{size}"
                    log.print(f"conversation {c}: {args.own} own turns, {size:,} other artifacts")
                    vg.runtime.import_events(_turn_events(args.own, args.seed + 1, c))
                    _background_range(vg, c, size)
                backend.settle(url)
                figures["own_turns"] = args.own
                figures["reads"] = _read(vg, conversations, args.reads)
            backend.discard(url)
        finally:
            backend.close()
        reads = figures["reads"]
        if len(reads) > 1:
            figures["candidates_growth"] = ratio(reads[-1]["candidates_p50_ms"],
                                                 reads[0]["candidates_p50_ms"])
            figures["scan_growth"] = ratio(reads[-1]["scan_p50_ms"], reads[0]["scan_p50_ms"])
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        if "big_result_mb" in figures:
            _render_big(figures, console)
        if "events_per_s" not in figures:
            return
        table = Table(title=f"vigente runtime benchmark ({figures['backend']})")
        table.add_column("measure")
        table.add_column("value", justify="right")
        table.add_row("events imported / s", f"{figures['events_per_s']:,}")
        table.add_row("artifact MB / s", str(figures["artifact_mb_per_s"]))
        console.print(table)
        reads = Table(title="one participant's candidates as the conversation grows")
        for column in ("artifacts", "candidates p50 ms", "p99 ms", "returned",
                       "whole-conversation scan p50 ms"):
            reads.add_column(column, justify="right")
        for row in figures["reads"]:
            reads.add_row(f"{row['artifacts']:,}", str(row["candidates_p50_ms"]),
                          str(row["candidates_p99_ms"]), str(row["candidates_returned"]),
                          str(row["scan_p50_ms"]))
        console.print(reads)
        if "candidates_growth" in figures:
            console.print(f"growth, largest / smallest: candidates {figures['candidates_growth']}"
                          f"x, scan {figures['scan_growth']}x")


def _render_big(figures: dict[str, Any], console: Console) -> None:
    table = Table(title=f"one {figures['big_result_mb']} MB tool result ({figures['backend']})")
    for column in ("conversation", "import s", "first assembly ms", "assembly p50 ms"):
        table.add_column(column, justify="right")
    table.add_row("large result", str(figures["big_import_s"]),
                  str(figures["big_first_assembly_ms"]), str(figures["big_assembly_p50_ms"]))
    table.add_row("small result", str(figures["small_import_s"]),
                  str(figures["small_first_assembly_ms"]), str(figures["small_assembly_p50_ms"]))
    table.add_row("large, old way", str(figures["old_way_import_s"]),
                  str(figures["old_way_first_assembly_ms"]), "")
    console.print(table)
    console.print(f"floors: parse the raw once {figures['parse_raw_once_ms']} ms, tokenize it "
                  f"once {figures['tokenize_raw_once_ms']} ms; first assembly: large / small "
                  f"{figures['big_over_small_first']}x, old way / now "
                  f"{figures['old_way_over_big_first']}x; same assembly as the old way: "
                  f"{figures['big_same_as_old_way']}")


def _background_range(vg: Vigente, conversation: str, count: int) -> None:
    """``count`` artifacts (and their calls) of 50 other participants, appended as records in
    bulk through the Store contract: the fixture of the read measurement, not a measured
    path."""
    store = vg.store
    k = parse_instant("2026-10-02T00:00:00Z")
    data, encoding = raw_bytes({"rows": [[1, "a"], [2, "b"]]})
    ref = reference(data, encoding, 1 << 20)
    with store.transaction():
        store.put_runtime_content(conversation, ref.sha256, data, inline=True)
    batch = 5000
    for first in range(0, count, batch):
        records: list[RuntimeRecord] = []
        for n in range(first, min(first + batch, count)):
            owner = f"other{n % 50}"
            records.append(to_record(ToolCall(conversation, f"bg{n}", k, "bgrun", "main", owner,
                                              "lookup", {"n": n})))
            records.append(to_record(ToolArtifact(
                conversation, f"bg{n}", k, f"bg{n}", "bgrun", "main", owner, "lookup",
                "succeeded", ref, ref, 0, "chat")))
        with store.transaction():
            store.append_runtime_records(records)


BENCHMARK = RuntimeBenchmark()
