"""``python -m vigente.bench horizon``: asks as known now beside concurrent writers.

Before issue 35 every ask as known now fixed the store's answered horizon at that moment: a
write transaction of its own (``BEGIN IMMEDIATE`` on SQLite; the writers' lock taken
exclusively on PostgreSQL), so questions queued behind writers and writers behind questions.
Now an ask as known now reads the writes in flight and writes nothing. Both run in one process
on one store: the *fixing* asks give ``known_at`` = this moment explicitly, which is exactly what
an ask as known now did before (it fixes the horizon there); the *reading* asks give no
``known_at``. ``--writers`` threads record facts learned now to lineages of their own for the
whole run, ``--askers`` threads ask; each phase runs ``--seconds``. Reported: asks/s, writes/s
and the ask latency percentiles of each phase, and their ratios.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._backends import open_backend
from vigente.time import current_instant

__all__ = ["BENCHMARK"]

LINEAGES = 20


class _HorizonBenchmark:
    name = "horizon"
    help = "asks as known now beside concurrent writers: no write per question (issue 35)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
        parser.add_argument("--postgres-url", help="a server that may CREATE DATABASE "
                            "(default: a throwaway embedded server)")
        parser.add_argument("--writers", type=int, default=8)
        parser.add_argument("--askers", type=int, default=4)
        parser.add_argument("--seconds", type=float, default=8.0)

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        backend = open_backend(args.backend, sqlite_path=None, postgres_url=args.postgres_url)
        try:
            phases = {}
            for phase in ("fixing", "reading"):
                url = backend.fresh(f"horizon-{phase}")
                log.print(f"{phase}: {args.writers} writers, {args.askers} askers, "
                          f"{args.seconds} s on {backend.name}")
                phases[phase] = _phase(url, phase == "fixing", args.writers, args.askers,
                                       args.seconds)
                backend.discard(url)
        finally:
            backend.close()
        before, after = phases["fixing"], phases["reading"]
        return {
            "backend": args.backend, "writers": args.writers, "askers": args.askers,
            "seconds": args.seconds, "before": before, "after": after,
            "asks_per_second_ratio": round(after["asks_per_second"]
                                           / max(before["asks_per_second"], 1e-9), 2),
            "writes_per_second_ratio": round(after["writes_per_second"]
                                             / max(before["writes_per_second"], 1e-9), 2),
            "command": f"python -m vigente.bench horizon --backend {args.backend} "
                       f"--writers {args.writers} --askers {args.askers} "
                       f"--seconds {args.seconds}",
        }

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table("asks as known now", "asks/s", "writes/s", "ask p50 ms", "ask p95 ms",
                      title=f"{figures['writers']} writers, {figures['askers']} askers, "
                            f"{figures['backend']}")
        for label, key in (("fix the horizon (before)", "before"),
                           ("read in-flight writes (after)", "after")):
            f = figures[key]
            table.add_row(label, f"{f['asks_per_second']:.0f}", f"{f['writes_per_second']:.0f}",
                          f"{f['ask_p50_ms']:.2f}", f"{f['ask_p95_ms']:.2f}")
        console.print(table)
        console.print(f"asks/s ×{figures['asks_per_second_ratio']}, writes/s "
                      f"×{figures['writes_per_second_ratio']}   ({figures['command']})")


def _phase(url: str, fixing: bool, writers: int, askers: int, seconds: float
           ) -> dict[str, float]:
    with Vigente.open(url) as seed:
        for n in range(LINEAGES):
            seed.record(f"bench/{n}", n, valid_from="2026-01-01", source="seed")
    stop = threading.Event()
    writes = [0] * writers
    latencies: list[list[float]] = [[] for _ in range(askers)]

    def write(i: int) -> None:
        with Vigente.open(url) as vg:
            while not stop.is_set():
                vg.record(f"bench/w{i}", writes[i], valid_from="2026-01-01", source=f"w{i}")
                writes[i] += 1

    def ask(i: int) -> None:
        with Vigente.open(url) as vg:
            n = 0
            while not stop.is_set():
                known_at = current_instant() if fixing else None
                started = time.perf_counter()
                vg.evidence(f"bench/{n % LINEAGES}", valid_at="2026-06-01", known_at=known_at)
                latencies[i].append(time.perf_counter() - started)
                n += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    threads += [threading.Thread(target=ask, args=(i,)) for i in range(askers)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    every = sorted(x for each in latencies for x in each)
    return {
        "asks_per_second": round(len(every) / seconds, 1),
        "writes_per_second": round(sum(writes) / seconds, 1),
        "ask_p50_ms": round(statistics.median(every) * 1000, 3) if every else 0.0,
        "ask_p95_ms": round(every[int(len(every) * 0.95)] * 1000, 3) if every else 0.0,
    }


BENCHMARK = _HorizonBenchmark()
