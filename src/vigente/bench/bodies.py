"""``python -m vigente.bench bodies``: what hostile request bodies cost everyone else.

``vigente serve`` runs in a subprocess (a real uvicorn server on loopback, one tenant on
SQLite). Measured: the time to refuse one hostile 8 MB body (one object of 700,000 keys: on
the commit before issue 35, 5–6 s of CPU before its 422), and ``/v1/health``'s latency, alone
and while ``--clients`` clients (default 8) send the worst bodies found, one after the other,
for ``--seconds``: that object; a million tiny values; 600,000 empty objects; and the costliest
bodies still within the bounds (an ``ask`` of 10,000 unknown keys, and a batch of events of
100,000 members). ``--server-src`` runs the server from another source tree (the commit
before, for the comparison in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from vigente.bench._util import machine, percentile

__all__ = ["BENCHMARK", "BodiesBenchmark", "hostile_bodies"]

ADMIN_KEY = "bench-admin-key-0123456789abcdef"


def _members(n: int, start: int = 0) -> str:
    return ",".join(f'"k{i}":1' for i in range(start, start + n))


def hostile_bodies() -> dict[str, tuple[str, bytes]]:
    """Name -> (path, body) of the worst bodies found, each at most 8 MB."""
    events_wide = ('{"events":[' + ",".join(
        '{"event":"conversation","id":"c' + str(j) + '","account":"a",'
        + _members(9_990, j * 10_000) + "}" for j in range(10)) + "]}")
    return {
        "700,000 keys in one object (8 MB)": (
            "/v1/runtime/events",
            ('{"events":[{"event":"conversation",' + _members(700_000) + "}]}").encode()),
        "a million tiny values": (
            "/v1/runtime/events", ('{"x":[' + ",".join(["0"] * 1_000_000) + "]}").encode()),
        "600,000 empty objects": (
            "/v1/statements", ('{"x":[' + ",".join(["{}"] * 600_000) + "]}").encode()),
        "ask with 10,000 unknown keys (within the bounds)": (
            "/v1/ask", ("{" + _members(10_000) + "}").encode()),
        "events of 100,000 members (within the bounds)": (
            "/v1/runtime/events", events_wide.encode()),
    }


class _Server:
    """``vigente serve`` in a subprocess, from ``src`` when given."""

    def __init__(self, root: str, src: str | None, log_path: Path) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "VIGENTE_ADMIN_KEY": ADMIN_KEY}
        if src is not None:
            env["PYTHONPATH"] = src
        self._log = log_path.open("wb")
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from vigente.cli import main; main()", "serve", "--db",
             root, "--port", str(self.port), "--rate", "1000000", "--burst", "1000000",
             "--no-mcp"], stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"vigente serve exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("vigente serve did not start")
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (Linux's /proc; 0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(30)
        self._log.close()


# The prober runs in a process of its own: in the attackers' process its requests would wait
# for the attackers' own event loop and share their interpreter lock, and the figure would be
# the load generator's, not the server's.
_PROBER = """
import json, sys, time
import httpx
url, seconds, every = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
out = []
until = time.monotonic() + seconds
with httpx.Client(base_url=url, timeout=120) as client:
    while time.monotonic() < until:
        started = time.perf_counter()
        client.get("/v1/health")
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(every)
print(json.dumps(out))
"""


async def _health(url: str, seconds: float, every: float) -> list[float]:
    """``/v1/health`` latencies (ms) from a prober process, one probe every ``every`` seconds
    for ``seconds``."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _PROBER, url, str(seconds), str(every),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    latencies: list[float] = json.loads(out)
    return latencies


async def _attack(url: str, headers: dict[str, str], bodies: list[tuple[str, bytes]],
                  start: int, until: float, statuses: Counter[str]) -> None:
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
        i = start
        while time.monotonic() < until:
            path, body = bodies[i % len(bodies)]
            try:
                response = await client.post(path, content=body)
                statuses[str(response.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
            i += 1


async def _under_load(url: str, headers: dict[str, str], clients: int, seconds: float,
                      chosen: str | None) -> tuple[list[float], Counter[str]]:
    wanted = None if chosen is None else [w.strip() for w in chosen.split(",")]
    bodies = [b for name, b in hostile_bodies().items()
              if wanted is None or any(name.startswith(w) for w in wanted)]
    until = time.monotonic() + seconds
    statuses: Counter[str] = Counter()
    attackers = [_attack(url, headers, bodies, n, until, statuses) for n in range(clients)]
    probes, *_ = await asyncio.gather(_health(url, seconds, 0.05), *attackers)
    assert probes is not None
    return probes, statuses


class BodiesBenchmark:
    name = "bodies"
    help = "what hostile request bodies cost: the refusal, and /v1/health under 8 attackers"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--clients", type=int, default=8)
        parser.add_argument("--seconds", type=float, default=20.0)
        parser.add_argument("--bodies", default=None,
                            help="the attack's bodies: names' first words, comma-separated "
                                 "(default: all)")
        parser.add_argument("--server-src", default=None,
                            help="run the server from this source tree (its src folder)")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            server = _Server(str(Path(tmp) / "data"), args.server_src, Path(tmp) / "serve.log")
            try:
                admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
                with httpx.Client(base_url=server.url, timeout=120) as client:
                    client.post("/v1/admin/tenants", json={"name": "bench"},
                                headers=admin).raise_for_status()
                    key = client.post("/v1/admin/tenants/bench/keys", json={},
                                      headers=admin).json()["key"]
                    headers = {"Authorization": f"Bearer {key}",
                               "content-type": "application/json"}
                    refusals: dict[str, dict[str, Any]] = {}
                    for name, (path, body) in hostile_bodies().items():
                        times, status = [], 0
                        for _ in range(3):
                            started = time.perf_counter()
                            status = client.post(path, content=body,
                                                 headers=headers).status_code
                            times.append(time.perf_counter() - started)
                        refusals[name] = {"status": status, "bytes": len(body),
                                          "seconds": round(statistics.median(times), 3)}
                        log.print(f"{name}: {status} in {statistics.median(times):.3f} s")
                idle = asyncio.run(_health(server.url, 3, 0.05))
                cpu_before, started = server.cpu_seconds(), time.monotonic()
                loaded, statuses = asyncio.run(
                    _under_load(server.url, headers, args.clients, args.seconds, args.bodies))
                server_cores = (server.cpu_seconds() - cpu_before) / (time.monotonic() - started)
            finally:
                server.stop()
        return {
            "machine": machine(),
            "server_src": args.server_src,
            "clients": args.clients,
            "bodies": args.bodies or "all",
            "seconds": args.seconds,
            "refusals": refusals,
            "health_idle_ms": {"p50": round(percentile(idle, 50), 1),
                               "p95": round(percentile(idle, 95), 1)},
            "health_under_attack_ms": {"p50": round(percentile(loaded, 50), 1),
                                       "p95": round(percentile(loaded, 95), 1),
                                       "probes": len(loaded)},
            "attack_responses": dict(statuses),
            # the server's CPU during the attack, in cores (1.0: its one event loop saturated)
            "server_cores_under_attack": round(server_cores, 2),
        }

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title="hostile bodies")
        table.add_column("body")
        table.add_column("status", justify="right")
        table.add_column("seconds", justify="right")
        for name, r in figures["refusals"].items():
            table.add_row(name, str(r["status"]), f"{r['seconds']:.3f}")
        console.print(table)
        idle, loaded = figures["health_idle_ms"], figures["health_under_attack_ms"]
        console.print(f"/v1/health alone: p50 {idle['p50']} ms, p95 {idle['p95']} ms")
        console.print(f"/v1/health with {figures['clients']} attackers: p50 {loaded['p50']} ms, "
                      f"p95 {loaded['p95']} ms ({loaded['probes']} probes); attack responses "
                      f"{figures['attack_responses']}; the server used "
                      f"{figures['server_cores_under_attack']} cores")


BENCHMARK = BodiesBenchmark()
