"""The mixed load of ``python -m vigente.bench serve``: its seeded mix of request kinds, the
concurrent clients that send it (each writing only its own conversation and lineage, and
remembering what was accepted) and the run that times every request."""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx

__all__ = ["FACTS", "MIX", "WORDS", "LoadClient", "Request", "run_load"]

#: request kind -> weight in the mix
MIX: dict[str, int] = {"ask": 35, "search": 15, "event": 30, "record": 10, "assemble": 10}
#: the seeded fact lineages (``bench/fact-<n>``) the asks read
FACTS = 20
#: the topics of the seeded documents, of the searches and of the messages
WORDS = (
    "upload limit",
    "due diligence",
    "identity documents",
    "retention of records",
    "customer verification",
    "transfer threshold",
)

#: One request of the load: (method, path, JSON body).
Request = tuple[str, str, dict[str, Any]]


class LoadClient:
    """One concurrent client: its conversation and lineage, and what it wrote."""

    def __init__(self, n: int, http: httpx.AsyncClient) -> None:
        self.n = n
        self.http = http
        self.conversation = f"load-{n}"
        self.lineage = f"bench/client-{n}/limit"
        self.turn = 0
        self.event_ids: list[tuple[str, str]] = []  # (kind, id) accepted
        self.assemblies: list[str] = []
        self.values: list[int] = []
        #: kind -> (method, path, body) of one request of that kind; writes are remembered only
        #: when accepted (:meth:`accepted`). Bound once here, not on each request of the load.
        self.request_for: dict[str, Callable[[random.Random], Request]] = {
            "ask": self._ask,
            "search": self._search,
            "record": self._record,
            "assemble": self._assemble,
            "event": self._event,
        }

    def _ask(self, rng: random.Random) -> Request:
        return (
            "POST",
            "/v1/ask",
            {
                "lineage": f"bench/fact-{rng.randrange(FACTS)}",
                "valid_at": f"2026-{rng.randrange(1, 13):02d}-15",
            },
        )

    def _search(self, rng: random.Random) -> Request:
        return (
            "POST",
            "/v1/search",
            {"query": rng.choice(WORDS), "valid_at": "2026-06-01", "k": 5},
        )

    def _record(self, rng: random.Random) -> Request:
        value = len(self.values) + 1
        return (
            "POST",
            "/v1/statements",
            {
                "statements": [
                    {
                        "op": "record",
                        "lineage": self.lineage,
                        "value": value,
                        "source": "load",
                        "valid_from": "2026-01-01",
                        # learned now, dated by the store: a client's clock may lag an
                        # answer another client was given as known now
                    }
                ]
            },
        )

    def _assemble(self, rng: random.Random) -> Request:
        return (
            "POST",
            "/v1/assemble",
            {"conversation": self.conversation, "branch": "main", "participant": "agent"},
        )

    def _event(self, rng: random.Random) -> Request:
        """The next turn of the client's conversation: a user message on odd turns, else a
        batch (a run, its tool call and result, the assistant's answer)."""
        self.turn += 1
        t, c = self.turn, self.conversation
        if t % 2:
            return (
                "POST",
                "/v1/runtime/event",
                {
                    "event": "message",
                    "conversation": c,
                    "id": f"u{t}",
                    "branch": "main",
                    "role": "user",
                    "content": f"question {t} about {rng.choice(WORDS)}",
                },
            )
        batch: list[dict[str, Any]] = [
            {
                "event": "run",
                "id": f"r{t}",
                "branch": "main",
                "participant": "agent",
                "mode": "chat",
            },
            {
                "event": "tool_call",
                "id": f"t{t}",
                "run": f"r{t}",
                "name": "lookup",
                "arguments": {"q": rng.choice(WORDS), "turn": t},
            },
            {
                "event": "tool_result",
                "call": f"t{t}",
                "status": "succeeded",
                "content": {
                    "rows": [
                        {"id": f"R-{rng.randrange(10_000)}", "score": rng.random()}
                        for _ in range(10)
                    ]
                },
            },
            {
                "event": "message",
                "id": f"a{t}",
                "branch": "main",
                "role": "assistant",
                "run": f"r{t}",
                "content": f"answer {t}",
            },
        ]
        return "POST", "/v1/runtime/events", {"events": [dict(e, conversation=c) for e in batch]}

    def accepted(self, kind: str, body: dict[str, Any], response: Any) -> None:
        if kind == "record":
            self.values.append(body["statements"][0]["value"])
        elif kind == "assemble":
            self.assemblies.append(response["assembly_id"])
        elif kind == "event":
            events = body["events"] if "events" in body else [body]
            for e in events:
                self.event_ids.append((str(e["event"]), str(e.get("id", e.get("call")))))


async def run_load(
    url: str, headers: dict[str, str], clients: int, requests: int, seed: int
) -> tuple[list[LoadClient], dict[str, list[float]], list[str], float]:
    """``requests`` requests of the seeded mix, sent by ``clients`` clients of one connection
    each: the clients (with what each wrote), latencies in ms by kind, errors and seconds."""
    rng = random.Random(seed)
    kinds = [k for k, w in MIX.items() for _ in range(w)]
    schedule = [rng.choice(kinds) for _ in range(requests)]
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    queue: asyncio.Queue[str] = asyncio.Queue()
    for kind in schedule:
        queue.put_nowait(kind)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    https = [
        httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits)
        for _ in range(clients)
    ]
    workers = [LoadClient(n, h) for n, h in enumerate(https)]

    async def work(client: LoadClient) -> None:
        local = random.Random(seed * 1000 + client.n)
        while True:
            try:
                kind = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            method, path, body = client.request_for[kind](local)
            start = time.perf_counter()
            try:
                response = await client.http.request(method, path, json=body)
                elapsed = (time.perf_counter() - start) * 1000
                if response.status_code // 100 != 2:
                    errors.append(f"{kind} {path}: {response.status_code} {response.text[:300]}")
                    continue
                client.accepted(kind, body, response.json())
                latencies[kind].append(elapsed)
            except httpx.HTTPError as exc:
                errors.append(f"{kind} {path}: {type(exc).__name__}: {exc}")

    start = time.perf_counter()
    try:
        await asyncio.gather(*(work(w) for w in workers))
    finally:
        for h in https:
            await h.aclose()
    return workers, latencies, errors, time.perf_counter() - start
