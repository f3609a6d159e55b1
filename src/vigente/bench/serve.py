"""``python -m vigente.bench serve``: a bounded load test of the HTTP API on loopback.

``vigente serve`` runs in a subprocess (a real uvicorn server on a free port) on SQLite (a
temporary folder) or PostgreSQL (``--backend postgres``: an embedded server, or
``--postgres-url``). One tenant is seeded with fact lineages, a document and one conversation
per client; then ``--clients`` concurrent httpx clients send ``--requests`` requests in all,
a fixed, seeded mix of evidence reads (``/v1/ask``), searches, runtime event writes (one event
or a batch), fact records and assemblies, each client writing only its own conversation and
lineage. Reported: throughput, p50/p99 latency overall and per kind, and errors (any response
that is not a 2xx, or a failed connection) — there should be none.

Then the contention run: ``--contention-clients`` clients (default 16) post events without
``at`` to one conversation at once; every one must be accepted (a refusal is false), found
afterwards (none lost) and stored in an order whose knowledge times never go back.

Afterwards, through the same API: every accepted write is there (each event's record in its
conversation's graph, each assembly in its conversation's list, each fact record in its
lineage's history with the last one current), and the history invariant holds: every answer
taken at the knowledge time ``k0`` before the load (each conversation's graph, each fact's
evidence, a pre-load assembly's rebuild) is identical after it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from vigente.bench._backends import BACKENDS, PostgresBackend
from vigente.bench._mixed_load import FACTS, MIX, WORDS, LoadClient, run_load
from vigente.bench._throughput import (
    OPERATIONS,
    conversation_opening,
    measure_throughput,
    seed_throughput,
)
from vigente.bench._util import machine, percentile, rate
from vigente.store.tenancy import TenantStores

__all__ = ["BENCHMARK", "ServeBenchmark"]

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


class _Server:
    """``vigente serve`` on loopback in a subprocess, until :meth:`stop`."""

    def __init__(self, root: str, admin_key: str, log_path: Path, workers: int = 1) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log_path.open("wb")
        command = [
            sys.executable,
            "-c",
            "from vigente.cli import main; main()",
            "serve",
            "--db",
            root,
            "--port",
            str(self.port),
            "--rate",
            "1000000",
            "--burst",
            "1000000",
            "--no-mcp",
            *(["--workers", str(workers)] if workers > 1 else []),
        ]
        env = {**os.environ, "VIGENTE_ADMIN_KEY": admin_key}
        self._proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self._log_path = log_path
        deadline = time.monotonic() + 120
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"vigente serve exited: {self.log()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):  # not listening yet: wait and ask again
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"vigente serve did not start: {self.log()[-2000:]}")
            time.sleep(0.1)

    def log(self) -> str:
        return self._log_path.read_text("utf-8", "replace")

    def cpu_seconds(self) -> float | None:
        """CPU time the server's processes (the supervisor and its workers) have used so far,
        from Linux's /proc; None elsewhere. Unlike a rate, it barely moves when other work
        shares the cores, so the cost of a request can be compared across runs."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        found = False
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            pid = int(stat.parent.name)
            if pid == self._proc.pid or int(fields[1]) == self._proc.pid:
                total += int(fields[11]) + int(fields[12])  # utime + stime
                found = True
        return total / tick if found else None

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(30)
        self._log.close()


def _ok(response: httpx.Response) -> Any:
    if response.status_code // 100 != 2:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:500]}"
        )
    return response.json()


CONTENDED = "contended"


async def _contend(
    url: str, headers: dict[str, str], clients: int, events: int
) -> tuple[list[tuple[int, str]], dict[str, list[float]], float]:
    """``clients`` clients each post ``events`` messages without ``at`` to one conversation, at
    once: (refusals and errors as (status, text), latencies by outcome, seconds)."""
    refused: list[tuple[int, str]] = []
    latencies: dict[str, list[float]] = defaultdict(list)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    https = [httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits)
             for _ in range(clients)]

    async def work(n: int, http: httpx.AsyncClient) -> None:
        for i in range(events):
            body = {"event": "message", "conversation": CONTENDED, "id": f"c{n}-{i}",
                    "branch": "main", "role": "user", "content": f"client {n}, message {i}"}
            start = time.perf_counter()
            try:
                response = await http.post("/v1/runtime/event", json=body)
            except httpx.HTTPError as exc:
                refused.append((0, f"{type(exc).__name__}: {exc}"))
                continue
            latencies["event"].append((time.perf_counter() - start) * 1000)
            if response.status_code != 200:
                refused.append((response.status_code, response.text[:300]))

    start = time.perf_counter()
    try:
        await asyncio.gather(*(work(n, h) for n, h in enumerate(https)))
    finally:
        for h in https:
            await h.aclose()
    return refused, latencies, time.perf_counter() - start


def _contention(c: httpx.Client, url: str, headers: dict[str, str], clients: int,
                events: int) -> dict[str, Any]:
    """The contention run: many writers of one conversation; every write must be accepted
    (a refusal is false: no event gives an ``at``) and found afterwards, in an order whose
    knowledge times never go back."""
    _ok(c.post("/v1/runtime/events", json={"events": [
        {"event": "conversation", "id": CONTENDED, "account": "acct-contended"},
        {"event": "branch", "conversation": CONTENDED, "id": "main"}]}))
    refused, latencies, seconds = asyncio.run(_contend(url, headers, clients, events))
    graph = _ok(c.get(f"/v1/conversations/{CONTENDED}", params={"content": "false"}))
    messages = [r for r in graph["records"] if r["kind"] == "message"]
    held = {r["id"] for r in messages}
    sent = {f"c{n}-{i}" for n in range(clients) for i in range(events)}
    ordered = sorted(messages, key=lambda r: r["seq"])
    times = [r["known_from"] for r in ordered]
    every = latencies["event"]
    return {
        "clients": clients,
        "events": clients * events,
        "false_refusals": sum(1 for status, _ in refused if status in (400, 409)),
        "errors": len(refused),
        "error_samples": [f"{status}: {text}" for status, text in refused[:3]],
        "lost_writes": len(sent - held),
        "knowledge_in_order": times == sorted(times),
        "seconds": round(seconds, 3),
        "throughput_eps": rate(len(held), seconds),
        "latency": _summary(every) if every else {"count": 0},
    }


def _seed(c: httpx.Client, clients: int) -> None:
    statements = []
    for n in range(FACTS):
        lineage = f"bench/fact-{n}"
        statements += [
            {
                "op": "record",
                "lineage": lineage,
                "value": 10 + n,
                "source": "circular",
                "valid_from": "2026-01-01",
                "valid_to": "2026-07-01",
                "known_at": "2026-01-01",
            },
            {
                "op": "record",
                "lineage": lineage,
                "value": 20 + n,
                "source": "circular",
                "valid_from": "2026-07-01",
                "known_at": "2026-06-01",
            },
        ]
    _ok(c.post("/v1/statements", json={"statements": statements}))
    for n, word in enumerate(WORDS):
        _ok(
            c.post(
                "/v1/documents",
                json={
                    "lineage_id": f"doc-{n}",
                    "text": f"Circular {n}/2025 on {word}: the rules apply "
                    f"to every {word} case reviewed by the office.",
                    "reference": f"Circular {n}/2025",
                    "valid_from": "2025-03-01",
                    "published": "2025-02-01",
                },
            )
        )
    events: list[dict[str, Any]] = []
    for n in range(clients):
        events += conversation_opening(f"load-{n}")
    _ok(c.post("/v1/runtime/events", json={"events": events}))


def _wait_for_model(c: httpx.Client) -> None:
    """Until every worker has loaded the embedding model (a ``semantic`` search answers 503
    ``model_loading`` before), so that the throughput phase measures requests, not the load."""
    deadline = time.monotonic() + 300
    ready = 0
    while ready < 20 and time.monotonic() < deadline:  # 20 in a row: every worker is ready
        response = c.post("/v1/search", json={"query": "limit", "mode": "semantic", "k": 1,
                                              "valid_at": "2026-06-01"},
                          headers={"Connection": "close"})  # a new connection: any worker
        if response.status_code == 503:
            ready = 0
            time.sleep(0.5)
        else:
            ready += 1


def _answer(evidence: dict[str, Any]) -> dict[str, Any]:
    """What an answer at ``k0`` decides: its status, values, statement and admitted versions
    (the rest of the evidence also describes what became known later, such as the versions
    excluded as not yet known, and so legitimately grows)."""
    return {
        "status": evidence["status"],
        "values": evidence["values"],
        "statement": evidence["statement"],
        "admitted": [(v["version_id"], v["value"]) for v in evidence["admitted"]],
    }


def _snapshot(c: httpx.Client, clients: int, k0: str, assembly: str) -> dict[str, Any]:
    """Every answer the invariant compares, as known at ``k0``."""
    graphs = {
        f"load-{n}": _ok(c.get(f"/v1/conversations/load-{n}", params={"known_at": k0}))
        for n in range(clients)
    }
    facts = {}
    for n in range(FACTS):
        for valid in ("2026-03-01", "2026-09-01"):
            facts[f"{n}@{valid}"] = _answer(
                _ok(
                    c.post(
                        "/v1/ask",
                        json={"lineage": f"bench/fact-{n}", "valid_at": valid, "known_at": k0},
                    )
                )
            )
    own = {
        n: _answer(
            _ok(
                c.post(
                    "/v1/ask",
                    json={
                        "lineage": f"bench/client-{n}/limit",
                        "valid_at": "2026-06-01",
                        "known_at": k0,
                    },
                )
            )
        )
        for n in range(clients)
    }
    rebuilt = _ok(c.get(f"/v1/assemblies/{assembly}/rebuild"))
    return {
        "graphs": graphs,
        "facts": facts,
        "own": own,
        "rebuild": {k: rebuilt[k] for k in ("matches", "snapshot", "differences")},
    }


def _verify(c: httpx.Client, workers: list[LoadClient]) -> dict[str, Any]:
    """Is every accepted write there? The counts checked and the problems found."""
    problems: list[str] = []
    events = assemblies = records = 0
    for w in workers:
        graph = _ok(c.get(f"/v1/conversations/{w.conversation}", params={"content": "false"}))
        held = {(r["kind"], r["id"]) for r in graph["records"]}
        for kind, key in w.event_ids:
            stored_kind = {"tool_result": "artifact"}.get(kind, kind)
            if (stored_kind, key) not in held:
                problems.append(f"{w.conversation}: accepted {kind} {key} is missing")
        events += len(w.event_ids)
        listed = _ok(c.get(f"/v1/conversations/{w.conversation}/assemblies"))["assemblies"]
        missing = set(w.assemblies) - set(listed)
        problems += [f"{w.conversation}: accepted assembly {a} is missing" for a in missing]
        assemblies += len(w.assemblies)
        if w.values:
            history = _ok(c.get("/v1/history", params={"lineage": w.lineage}))["versions"]
            stored = {v["value"] for v in history}
            problems += [
                f"{w.lineage}: accepted value {v} is missing" for v in w.values if v not in stored
            ]
            current = _ok(c.post("/v1/ask", json={"lineage": w.lineage, "valid_at": "2026-06-01"}))
            if current["values"] != [w.values[-1]]:
                problems.append(
                    f"{w.lineage}: current {current['values']}, last accepted {w.values[-1]}"
                )
            records += len(w.values)
    return {"events": events, "assemblies": assemblies, "records": records, "problems": problems}


def _summary(samples: list[float]) -> dict[str, Any]:
    return {
        "count": len(samples),
        "p50_ms": round(percentile(samples, 50), 2),
        "p99_ms": round(percentile(samples, 99), 2),
    }


def _check_counts(args: argparse.Namespace) -> None:
    if args.requests < 1 or args.clients < 1:
        raise SystemExit("Error: --requests and --clients must be at least 1")
    if args.workers < 1 or args.throughput_clients < 1 or args.throughput_seconds < 0:
        raise SystemExit("Error: --workers and --throughput-clients must be at least 1, "
                         "--throughput-seconds at least 0")


@dataclass
class _Measured:
    """What one run of the benchmark measured through the server."""

    latencies: dict[str, list[float]]
    errors: list[str]
    seconds: float
    verified: dict[str, Any]
    invariant: dict[str, bool]
    contention: dict[str, Any] | None
    throughput: dict[str, Any]


def _measure(
    args: argparse.Namespace, server: _Server, root: str, admin_key: str, log: Console
) -> _Measured:
    """The phases, in order: a tenant and its seed, the answers at ``k0``, the load, the
    verification of its writes and of those answers, the contention run and the throughput
    phase."""
    admin = {"Authorization": f"Bearer {admin_key}"}
    with httpx.Client(base_url=server.url, timeout=120) as c:
        _ok(c.post("/v1/admin/tenants", json={"name": "load"}, headers=admin))
        # the application's own key: the load logs system messages as the application does
        key = _ok(c.post("/v1/admin/tenants/load/keys", json={"role": "service"},
                         headers=admin))["key"]
        auth = {"Authorization": f"Bearer {key}"}
        c.headers.update(auth)
        log.print(
            f"seeding: {FACTS} fact lineages, {len(WORDS)} documents, "
            f"{args.clients} conversations"
        )
        _seed(c, args.clients)
        seed_throughput(c, args.throughput_clients)
        first = _ok(
            c.post(
                "/v1/assemble",
                json={"conversation": "load-0", "branch": "main", "participant": "agent"},
            )
        )
        time.sleep(0.01)
        k0 = _now()
        time.sleep(0.01)
        before = _snapshot(c, args.clients, k0, first["assembly_id"])
        log.print(f"load: {args.requests} requests from {args.clients} clients")
        workers, latencies, errors, seconds = asyncio.run(
            run_load(server.url, auth, args.clients, args.requests, args.seed)
        )
        log.print("verifying the accepted writes and the history invariant")
        verified = _verify(c, workers)
        after = _snapshot(c, args.clients, k0, first["assembly_id"])
        contention = None
        if args.contention_clients > 0:
            log.print(f"contention: {args.contention_clients} clients x "
                      f"{args.contention_events} events on one conversation")
            contention = _contention(c, server.url, auth, args.contention_clients,
                                     args.contention_events)
        throughput: dict[str, Any] = {}
        if args.throughput_seconds > 0:
            _wait_for_model(c)
            throughput = measure_throughput(
                c, server.url, key, TenantStores(root).tenant_url("load"),
                args.throughput_clients, args.throughput_seconds, log.print,
                server.cpu_seconds)
    invariant = {part: before[part] == after[part] for part in before}
    return _Measured(latencies, errors, seconds, verified, invariant, contention, throughput)


def _figures(
    args: argparse.Namespace, measured: _Measured, described: dict[str, Any]
) -> dict[str, Any]:
    """The reported figures of a run (``described``: the PostgreSQL server, if one)."""
    latencies, seconds, verified = measured.latencies, measured.seconds, measured.verified
    every = [x for samples in latencies.values() for x in samples]
    return {
        "backend": args.backend,
        "requests": args.requests,
        "clients": args.clients,
        "mix": MIX,
        "seconds": round(seconds, 3),
        "throughput_rps": rate(len(every), seconds),
        "latency": _summary(every) if every else {"count": 0},
        "by_kind": {k: _summary(v) for k, v in sorted(latencies.items())},
        "errors": len(measured.errors),
        "error_samples": measured.errors[:5],
        "accepted_writes": {k: verified[k] for k in ("events", "assemblies", "records")},
        "writes_missing": verified["problems"][:5],
        "writes_verified": not verified["problems"],
        "history_invariant": measured.invariant,
        "history_invariant_holds": all(measured.invariant.values()),
        "contention": measured.contention,
        "workers": args.workers,
        **measured.throughput,
        "machine": {**machine(), **described},
    }


class ServeBenchmark:
    name = "serve"
    help = (
        "load test of the HTTP API on loopback: concurrent clients mixing reads, searches, "
        "event writes and assemblies; throughput, p50/p99, errors, writes verified"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
        parser.add_argument(
            "--postgres-url",
            help="a server that may CREATE DATABASE "
            "(default: an embedded one, started and removed)",
        )
        parser.add_argument(
            "--requests", type=int, default=2000, help="requests in all (default 2000)"
        )
        parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--contention-clients", type=int, default=16,
            help="writers of one conversation in the contention run (default 16; 0: skip it)")
        parser.add_argument(
            "--contention-events", type=int, default=20,
            help="events each of them posts (default 20)")
        parser.add_argument(
            "--workers", type=int, default=1,
            help="server processes (vigente serve --workers; default 1)")
        parser.add_argument(
            "--throughput-clients", type=int, default=16,
            help="connections of the throughput phase, one operation at a time (default 16)")
        parser.add_argument(
            "--throughput-seconds", type=float, default=10.0,
            help="seconds of load per operation in the throughput phase (default 10; 0: skip)")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        _check_counts(args)
        folder = Path(tempfile.mkdtemp(prefix="vigente-bench-serve-"))
        backend = None
        server = None
        root = None
        try:
            if args.backend == "postgres":
                backend = PostgresBackend(args.postgres_url)
                root = backend.fresh("serve")
                described = backend.describe()
            else:
                root = str(folder / "data")
                described = {}
            admin_key = secrets.token_urlsafe(32)
            log.print(f"starting vigente serve on {args.backend}")
            server = _Server(root, admin_key, folder / "server.log", args.workers)
            measured = _measure(args, server, root, admin_key, log)
        finally:
            if server is not None:
                server.stop()
            if backend is not None:
                if args.backend == "postgres" and root is not None:
                    backend.discard(root)
                backend.close()
            shutil.rmtree(folder, ignore_errors=True)
        return _figures(args, measured, described)

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(
            title=f"vigente serve load test ({figures['backend']}, "
            f"{figures['clients']} clients, {figures['requests']} requests)"
        )
        for column in ("kind", "requests", "p50 ms", "p99 ms"):
            table.add_column(column, justify="right")
        for kind, row in figures["by_kind"].items():
            table.add_row(kind, str(row["count"]), str(row["p50_ms"]), str(row["p99_ms"]))
        lat = figures["latency"]
        if lat["count"]:
            table.add_row("all", str(lat["count"]), str(lat["p50_ms"]), str(lat["p99_ms"]))
        console.print(table)
        console.print(
            f"throughput {figures['throughput_rps']} requests/s over "
            f"{figures['seconds']} s; errors {figures['errors']}"
        )
        for sample in figures["error_samples"]:
            console.print(f"  error: {sample}", markup=False)
        w = figures["accepted_writes"]
        console.print(
            f"accepted writes: {w['events']} events, {w['assemblies']} assemblies, "
            f"{w['records']} fact records — "
            + (
                "all there"
                if figures["writes_verified"]
                else f"MISSING: {figures['writes_missing']}"
            ),
            markup=False,
        )
        console.print(
            "history invariant at k0: "
            + (
                "holds"
                if figures["history_invariant_holds"]
                else f"BROKEN: {figures['history_invariant']}"
            ),
            markup=False,
        )
        con = figures.get("contention")
        if con:
            lat = con["latency"]
            console.print(
                f"contention: {con['clients']} clients x one conversation, {con['events']} "
                f"events without `at`: {con['false_refusals']} false refusals, "
                f"{con['lost_writes']} lost writes, errors {con['errors']}, knowledge "
                f"{'in order' if con['knowledge_in_order'] else 'OUT OF ORDER'}; "
                f"{con['throughput_eps']} events/s, p50 {lat.get('p50_ms')} ms, "
                f"p99 {lat.get('p99_ms')} ms",
                markup=False,
            )
            for sample in con["error_samples"]:
                console.print(f"  contention error: {sample}", markup=False)
        if "throughput_clients" in figures:
            table = Table(title=f"one operation at a time: {figures['throughput_clients']} "
                          f"connections, {figures['throughput_seconds']:g} s each, "
                          f"{figures['workers']} server process(es)")
            for column in ("operation", "requests/s", "p50 ms", "p99 ms", "errors",
                           "server CPU ms / request", "in process /s", "HTTP / in process"):
                table.add_column(column, justify="right")
            for op in OPERATIONS:
                table.add_row(op, *(str(figures[f"{prefix}_{op}_{name}"]) for prefix, name in (
                    ("serve", "rps"), ("serve", "p50_ms"), ("serve", "p99_ms"),
                    ("serve", "errors"), ("serve", "cpu_ms"), ("inprocess", "rps"),
                    ("serve", "vs_inprocess"))))
            console.print(table)
            console.print(f"event writes acknowledged {figures['serve_event_acknowledged']}, "
                          f"not read back {figures['serve_event_unread']}", markup=False)


BENCHMARK = ServeBenchmark()
