"""``vigente serve --workers 2``: two server processes on one port, on SQLite and PostgreSQL.

What a client must not be able to tell: which process answered. A fact recorded through one
connection is read back on new connections (which the kernel hands to either process), and a
key revoked through one is refused on every new connection from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from pathlib import Path

import httpx
import pytest

from tests.http_server import service_root
from vigente.bench._loadgen import Connection
from vigente.bench.serve import _Server

NEW_CONNECTIONS = 12
SPREAD_CONNECTIONS = 64


def _listening(port: int) -> int:
    """How many TCP sockets listen on ``port`` (Linux /proc/net/tcp, state 0A)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in rows
               if row.split()[1].endswith(f":{port:04X}") and row.split()[3] == "0A")


def _server_side_inode(port: int, client_port: int) -> str | None:
    """The inode of the server's end of the connection from ``client_port`` to ``port``
    (Linux /proc/net/tcp: local and remote addresses, state 01 = established)."""
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if (fields[1].endswith(f":{port:04X}") and fields[2].endswith(f":{client_port:04X}")
                and fields[3] == "01"):
            return fields[9]
    return None


def _holder(processes: list[int], inode: str) -> int | None:
    """Which of ``processes`` holds the socket ``inode`` open."""
    for pid in processes:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
    return None


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(params=["sqlite", "postgres"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return service_root(request, tmp_path)


def test_two_worker_processes_answer_as_one(root: str, tmp_path: Path) -> None:
    admin_key = secrets.token_urlsafe(32)
    server = _Server(root, admin_key, tmp_path / "server.log", workers=2)
    try:
        workers = _children(server._proc.pid)
        # uvicorn's supervisor, with its two workers (and the multiprocessing helper, if any)
        assert len(workers) >= 2, server.log()[-2000:]
        admin = {"Authorization": f"Bearer {admin_key}"}
        with httpx.Client(base_url=server.url, timeout=60) as c:
            assert c.post("/v1/admin/tenants", json={"name": "acme"},
                          headers=admin).status_code == 201
            created = c.post("/v1/admin/tenants/acme/keys",
                json={"role": "service"}, headers=admin).json()
            key = {"Authorization": f"Bearer {created['key']}"}
            recorded = c.post("/v1/statements", headers=key, json={"statements": [
                {"op": "record", "lineage": "limits/upload", "value": 25, "source": "circular",
                 "valid_from": "2026-01-01"}]})
            assert recorded.status_code == 200, recorded.text
            revoked_id = created["key_id"]
        # new connections each time: either process may answer
        for _ in range(NEW_CONNECTIONS):
            with httpx.Client(base_url=server.url, timeout=60, headers=key) as fresh:
                answer = fresh.post("/v1/ask", json={"lineage": "limits/upload",
                                                     "valid_at": "2026-06-01"})
                assert answer.status_code == 200 and answer.json()["values"] == [25]
        with httpx.Client(base_url=server.url, timeout=60) as c:
            assert c.delete(f"/v1/admin/keys/{revoked_id}", headers=admin).status_code == 200
        for _ in range(NEW_CONNECTIONS):
            with httpx.Client(base_url=server.url, timeout=60, headers=key) as fresh:
                refused = fresh.post("/v1/ask", json={"lineage": "limits/upload",
                                                      "valid_at": "2026-06-01"})
                assert refused.status_code == 401, refused.text
    finally:
        server.stop()


def test_a_worker_without_its_configuration_says_how_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vigente.http import CONFIG_VARIABLE, app_from_environment

    monkeypatch.delenv(CONFIG_VARIABLE, raising=False)
    with pytest.raises(RuntimeError, match="vigente serve --workers N"):
        app_from_environment()
    monkeypatch.setenv(CONFIG_VARIABLE, '{"root": "x", "no_such_setting": 1}')
    with pytest.raises(RuntimeError, match="does not hold a service configuration"):
        app_from_environment()


def test_the_configuration_a_worker_reads_is_the_one_given(tmp_path: Path) -> None:
    from vigente.http import ServiceConfig

    config = ServiceConfig(tmp_path / "data", admin_key="k" * 20, rate=3.5, burst=7, mcp=False)
    assert ServiceConfig(**json.loads(config.to_environment())) == ServiceConfig(
        str(tmp_path / "data"), admin_key="k" * 20, rate=3.5, burst=7, mcp=False)


def test_a_key_check_reads_the_registry_without_writing_to_it(root: str) -> None:
    """Checking a key at every request must not write: fixing the registry's answered horizon
    (what an answer to a client does) would be a write transaction per request, and one taken
    at a later instant than a concurrent key creation would refuse that creation as rewriting
    history. (The check reads at a pinned present, which fixes nothing.)"""
    from vigente.http import TenantRegistry

    registry = TenantRegistry(root, admin_key="k" * 20)
    try:
        registry.create_tenant("acme")
        new = registry.create_key("acme")
        horizon = registry._admin.answered_horizon()
        for _ in range(3):
            caller = registry.authenticate(new.token)
            assert caller is not None and caller.tenant == "acme"
        wrong = new.token[:-1] + ("A" if new.token[-1] != "A" else "B")
        assert registry.authenticate(wrong) is None
        assert registry._admin.answered_horizon() == horizon
        registry.revoke_key(new.key.key_id)
        assert registry.authenticate(new.token) is None  # the next check after a revocation
    finally:
        registry.close()


def test_connections_opened_at_once_are_spread_over_the_workers(tmp_path: Path) -> None:
    """Each worker listens on a socket of its own, so the kernel spreads new connections over
    them. (On one shared socket an idle worker accepted every waiting connection at once: 16
    keep-alive connections opened together went 16 to 0 or 15 to 1, and one process did all
    the work while they lived.)"""
    admin_key = secrets.token_urlsafe(32)
    server = _Server(str(tmp_path / "data"), admin_key, tmp_path / "server.log", workers=2)
    try:
        admin = {"Authorization": f"Bearer {admin_key}"}
        with httpx.Client(base_url=server.url, timeout=60, headers=admin) as c:
            assert c.post("/v1/admin/tenants", json={"name": "acme"}).status_code == 201
            key = c.post("/v1/admin/tenants/acme/keys", json={"role": "service"}).json()["key"]
        processes = _children(server._proc.pid)
        host, port = server.url.removeprefix("http://").split(":")
        ask = json.dumps({"lineage": "limits/upload", "valid_at": "2026-06-01"}).encode()

        async def open_together() -> dict[int, int]:
            """Which worker holds each connection, looked up the moment its answer arrives
            (counting each worker's sockets afterwards raced the server's keep-alive timeout:
            on a slow machine the first connections were closed before the last were answered)."""
            held = dict.fromkeys(processes, 0)

            async def ask_on(connection: Connection) -> int:
                answer = await connection.post("/v1/ask", ask)
                assert connection.local_port is not None
                inode = _server_side_inode(int(port), connection.local_port)
                assert inode is not None, "the server closed a connection it had just answered"
                holder = _holder(processes, inode)
                assert holder is not None
                held[holder] += 1
                return answer.status

            connections = [Connection(host, int(port), key) for _ in range(SPREAD_CONNECTIONS)]
            statuses = await asyncio.gather(*(ask_on(c) for c in connections))
            assert set(statuses) == {200}
            for c in connections:
                await c.close()
            return held

        # a listening socket per worker, not one shared by both
        assert _listening(int(port)) == 2
        for _ in range(3):
            held = sorted(asyncio.run(open_together()).values(), reverse=True)
            # the two workers (and a helper process holding none); by a hash of the addresses,
            # a worker gets fewer than a quarter of 64 with a probability below 1 in 10,000
            assert sum(held) == SPREAD_CONNECTIONS, held
            assert held[0] >= held[1] >= SPREAD_CONNECTIONS // 4, held
    finally:
        server.stop()
