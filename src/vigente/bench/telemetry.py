"""``python -m vigente.bench telemetry``: what telemetry costs an assembly and an ask.

One database (a conversation of ``--turns`` agent turns with their tool results, and a fact)
is read by measuring processes (bench/_telemetry_worker.py), each with telemetry set up one
way:

* ``off``: no SDK: vigente's spans and metrics are the OpenTelemetry API's no-ops (the
  default of every install);
* ``noop``: the SDK installed, every span and metric recorded and handed to exporters that
  drop them (batched spans; metrics collected each second);
* ``memory``: the SDK with its in-memory span exporter (synchronous) and metric reader.

The set-ups take turns over ``--rounds`` rounds (off, noop, memory, off, …) so that the
machine's noise falls on each alike; the figures are the p50 and p99 of all rounds' samples,
and each set-up's p50 over ``off``'s (the issue's target: at most 1.05 for the assembly with
the SDK on).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._backends import BACKENDS, open_backend
from vigente.bench._util import machine, percentile, positive
from vigente.bench.runtime import _turn_events

__all__ = ["BENCHMARK", "TelemetryBenchmark"]

MODES = ("off", "noop", "memory")
CONVERSATION = "bench-telemetry"
LINEAGE = "bench/limit"


def _prepare(url: str, turns: int, seed: int) -> None:
    with Vigente.open(url) as vg:
        vg.runtime.import_events(_turn_events(turns, seed, CONVERSATION))
        vg.record(LINEAGE, 100, source="bench", valid_from="2026-01-01",
                  known_at="2026-01-02")


def _measure(mode: str, url: str, reads: int) -> dict[str, list[float]]:
    command = [sys.executable, "-m", "vigente.bench._telemetry_worker", "--mode", mode,
               "--url", url, "--conversation", CONVERSATION, "--lineage", LINEAGE,
               "--reads", str(reads)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {mode} worker failed:\n{done.stderr[-2000:]}")
    samples: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return samples


class TelemetryBenchmark:
    name = "telemetry"
    help = "assembly and ask latency with telemetry off, on with no-op exporters, in memory"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
        parser.add_argument("--postgres-url", help="server for --backend postgres")
        parser.add_argument("--turns", type=positive, default=100,
                            help="agent turns in the conversation assembled (default 100)")
        parser.add_argument("--reads", type=positive, default=60,
                            help="assemblies and asks timed per process (default 60)")
        parser.add_argument("--rounds", type=positive, default=4,
                            help="processes per set-up, taking turns (default 4)")
        parser.add_argument("--seed", type=int, default=20261204)

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        figures: dict[str, Any] = {"machine": machine(), "backend": args.backend,
                                   "turns": args.turns, "reads": args.reads,
                                   "rounds": args.rounds}
        backend = open_backend(args.backend, sqlite_path=None, postgres_url=args.postgres_url)
        try:
            url = backend.fresh("telemetry")
            log.print(f"telemetry: a conversation of {args.turns} turns")
            _prepare(url, args.turns, args.seed)
            backend.settle(url)
            samples: dict[str, dict[str, list[float]]] = {
                m: {"assemble": [], "ask": []} for m in MODES}
            for n in range(args.rounds):
                for mode in MODES:
                    log.print(f"round {n + 1}/{args.rounds}: {mode}")
                    for op, taken in _measure(mode, url, args.reads).items():
                        samples[mode][op] += taken
            backend.discard(url)
        finally:
            backend.close()
        for mode in MODES:
            for op in ("assemble", "ask"):
                figures[f"{op}_{mode}_p50_ms"] = round(percentile(samples[mode][op], 50), 3)
                figures[f"{op}_{mode}_p99_ms"] = round(percentile(samples[mode][op], 99), 3)
        for mode in ("noop", "memory"):
            for op in ("assemble", "ask"):
                figures[f"{op}_{mode}_vs_off"] = round(
                    figures[f"{op}_{mode}_p50_ms"] / figures[f"{op}_off_p50_ms"], 3)
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title=f"telemetry's cost ({figures['backend']}, {figures['turns']} turns, "
                            f"{figures['reads'] * figures['rounds']} reads per set-up)")
        table.add_column("set-up")
        for op in ("assemble", "ask"):
            table.add_column(f"{op} p50 ms", justify="right")
            table.add_column(f"{op} p99 ms", justify="right")
            table.add_column(f"{op} vs off", justify="right")
        for mode in MODES:
            row = [mode]
            for op in ("assemble", "ask"):
                row += [str(figures[f"{op}_{mode}_p50_ms"]), str(figures[f"{op}_{mode}_p99_ms"]),
                        "1.0" if mode == "off" else f"{figures[f'{op}_{mode}_vs_off']}×"]
            table.add_row(*row)
        console.print(table)


BENCHMARK = TelemetryBenchmark()
