"""The throughput phase of ``python -m vigente.bench serve``: one operation at a time, over
HTTP and in process, on the same tenant's data in one run.

For each of ask, search, an event write and assemble, ``clients`` keep-alive connections send
that request only, each as soon as its last is answered, for ``seconds``
(:mod:`vigente.bench._loadgen`). Then the same calls are made in this process, one after
another, on the tenant's own store through the public API: the rate a caller without HTTP gets.
Reported per operation: ``serve_<op>_rps``, ``serve_<op>_p50_ms``, ``serve_<op>_p99_ms``,
``serve_<op>_errors``, ``serve_<op>_cpu_ms`` (the server's CPU time per answered request: what
a request costs, which other work on the machine barely changes, unlike a rate),
``inprocess_<op>_rps`` and ``serve_<op>_vs_inprocess`` (HTTP's rate over the in-process rate).
Every acknowledged event write is then read back through the API.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from vigente.bench._loadgen import closed_loop
from vigente.bench._util import percentile, rate

__all__ = ["OPERATIONS", "conversation_opening", "measure_throughput", "seed_throughput"]

OPERATIONS = ("ask", "search", "event", "assemble")
FACTS = 20
WORDS = ("upload limit", "due diligence", "identity documents", "retention of records")
#: a few seconds of in-process calls are enough for a rate (no queueing to wait out)
INPROCESS_SECONDS = 2.0


def _written(n: int) -> str:
    return f"tput-write-{n}"


def _assembled(n: int) -> str:
    return f"tput-read-{n}"


def conversation_opening(c: str) -> list[dict[str, Any]]:
    """A conversation's first events: the conversation, its agent, branch and system prompt."""
    events: list[dict[str, Any]] = [
        {"event": "conversation", "id": c, "account": f"acct-{c}"},
        {"event": "participant", "id": "agent", "model": "gpt-4o"},
        {"event": "branch", "id": "main"},
        {"event": "message", "id": "sys", "branch": "main", "role": "system",
         "content": "You answer compliance questions."},
    ]
    return [e if e["event"] == "conversation" else dict(e, conversation=c) for e in events]


def _conversation(c: str) -> list[dict[str, Any]]:
    """A small conversation: its opening and a tool exchange."""
    events: list[dict[str, Any]] = [
        {"event": "message", "id": "u1", "branch": "main", "role": "user",
         "content": "What is the upload limit for identity documents?"},
        {"event": "run", "id": "r1", "branch": "main", "participant": "agent", "mode": "chat"},
        {"event": "tool_call", "id": "t1", "run": "r1", "name": "lookup",
         "arguments": {"q": "upload limit"}},
        {"event": "tool_result", "call": "t1", "status": "succeeded",
         "content": {"rows": [{"id": f"R-{i}", "limit_mb": 10 + i} for i in range(10)]}},
        {"event": "message", "id": "a1", "branch": "main", "role": "assistant", "run": "r1",
         "content": "The limit is 10 MB."},
    ]
    return conversation_opening(c) + [dict(e, conversation=c) for e in events]


def seed_throughput(c: httpx.Client, clients: int) -> None:
    """The conversations the phase writes to and assembles, one of each per client (the facts
    and documents it reads are the mixed load's)."""
    events: list[dict[str, Any]] = []
    for n in range(clients):
        events += _conversation(_written(n)) + _conversation(_assembled(n))
    response = c.post("/v1/runtime/events", json={"events": events})
    response.raise_for_status()


def _http_request(op: str, tag: str) -> tuple[str, Callable[[int, int], dict[str, Any]]]:
    """The path of ``op`` and the body of a client's ``n``-th request (event ids start with
    ``tag``, so that two runs never send the same id)."""
    if op == "ask":
        return "/v1/ask", lambda client, n: {
            "lineage": f"bench/fact-{(client + n) % FACTS}",
            "valid_at": f"2026-{(n % 12) + 1:02d}-15",
        }
    if op == "search":
        return "/v1/search", lambda client, n: {
            "query": WORDS[(client + n) % len(WORDS)], "valid_at": "2026-06-01", "k": 5,
        }
    if op == "event":
        return "/v1/runtime/event", lambda client, n: {
            "event": "message", "conversation": _written(client), "id": f"{tag}{n}",
            "branch": "main", "role": "user", "content": f"question {n} about the limit",
        }
    return "/v1/assemble", lambda client, n: {
        "conversation": _assembled(client), "branch": "main", "participant": "agent",
    }


def _in_process(vg: Any, op: str, n: int) -> None:
    """The call the endpoint of ``op`` makes, with the same arguments, through the public API."""
    if op == "ask":
        vg.evidence(f"bench/fact-{n % FACTS}", valid_at=f"2026-{(n % 12) + 1:02d}-15")
    elif op == "search":
        vg.retrieval.search(WORDS[n % len(WORDS)], valid_at="2026-06-01", k=5, mode="auto")
    elif op == "event":
        line = json.dumps({
            "event": "message", "conversation": _written(0), "id": f"p{n}", "branch": "main",
            "role": "user", "content": f"question {n} about the limit",
        })
        vg.runtime.import_events([line])
    else:
        vg.assembly.assemble(_assembled(0), "main", "agent")


def _inprocess_rate(url: str, op: str) -> float:
    from vigente.api import Vigente

    with Vigente.open(url) as vg:
        _in_process(vg, op, 0)  # caches warm, as the server's are after its first requests
        calls = 0
        start = time.perf_counter()
        while time.perf_counter() - start < INPROCESS_SECONDS:
            calls += 1
            _in_process(vg, op, calls)
        return rate(calls, time.perf_counter() - start)


def _unread_events(c: httpx.Client, acknowledged: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """The acknowledged event writes the API does not give back."""
    held: dict[str, set[str]] = {}
    missing = []
    for _, body in acknowledged:
        conversation = body["conversation"]
        if conversation not in held:
            graph = c.get(f"/v1/conversations/{conversation}", params={"content": "false"})
            graph.raise_for_status()
            held[conversation] = {r["id"] for r in graph.json()["records"]
                                  if r["kind"] == "message"}
        if body["id"] not in held[conversation]:
            missing.append(f"{conversation}/{body['id']}")
    return missing


def measure_throughput(
    c: httpx.Client, url: str, key: str, tenant_url: str, clients: int, seconds: float,
    log: Callable[[str], None], cpu_seconds: Callable[[], float | None],
) -> dict[str, Any]:
    """The figures of the phase (module docstring), flat, for ``--json``."""
    figures: dict[str, Any] = {"throughput_clients": clients, "throughput_seconds": seconds}
    for op in OPERATIONS:
        path, warm = _http_request(op, "warm")
        closed_loop(url, key, clients, min(1.0, seconds), path, warm)  # warm-up, not counted
        path, body_of = _http_request(op, "h")
        log(f"throughput: {op}, {clients} clients for {seconds:g} s")
        cpu_before = cpu_seconds()
        result = closed_loop(url, key, clients, seconds, path, body_of)
        cpu_after = cpu_seconds()
        served = rate(len(result.latencies_ms), result.seconds)
        figures[f"serve_{op}_cpu_ms"] = (
            round((cpu_after - cpu_before) * 1000 / len(result.latencies_ms), 3)
            if cpu_before is not None and cpu_after is not None and result.latencies_ms
            else None
        )
        inprocess = _inprocess_rate(tenant_url, op)
        figures[f"serve_{op}_rps"] = served
        figures[f"serve_{op}_p50_ms"] = (
            round(percentile(result.latencies_ms, 50), 2) if result.latencies_ms else None
        )
        figures[f"serve_{op}_p99_ms"] = (
            round(percentile(result.latencies_ms, 99), 2) if result.latencies_ms else None
        )
        figures[f"serve_{op}_errors"] = len(result.errors)
        figures[f"serve_{op}_error_samples"] = result.errors[:3]
        figures[f"inprocess_{op}_rps"] = inprocess
        figures[f"serve_{op}_vs_inprocess"] = round(served / inprocess, 3) if inprocess else None
        if op == "event":
            missing = _unread_events(c, result.acknowledged)
            figures["serve_event_acknowledged"] = len(result.acknowledged)
            figures["serve_event_unread"] = len(missing)
            figures["serve_event_unread_samples"] = missing[:3]
    return figures
