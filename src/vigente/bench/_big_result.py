"""The runtime benchmark's large-result part (issue 23): one tool result of a few MB.

One conversation (a system prompt, a user message, one call answered by a JSON list of order
records of ``mb`` MB, the answer) is imported; its first assembly (the one that fills the read
caches and the replay count) and the p50 of the next ones are timed, in a process whose
tokenizer is already loaded. Beside it, on the same database:

* ``small``: the same conversation with a result of 20 records: what the large result adds;
* ``old_way``: the same log imported without the token count kept at import (as before
  issue 23), so that the first assembly reads and tokenizes the result: the before figure;
* the floors: parsing the raw result once (``json.loads``) and tokenizing it once, what any
  assembly that reads the result pays at least.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any

from vigente.api import Vigente
from vigente.assemble import Assembler
from vigente.assemble.tokens import DEFAULT_ENCODING, tiktoken_tokenizer
from vigente.bench._util import ratio
from vigente.runtime import Runtime

__all__ = ["big_result_events", "orders", "run_big_result"]

_AS_OF = "2026-10-01T09:00:00Z"


def orders(count: int, seed: int = 23) -> list[dict[str, Any]]:
    """``count`` order records, about 250 bytes of JSON each."""
    rng = random.Random(seed)
    return [
        {
            "id": f"ORD-{i:07d}",
            "customer": {
                "name": f"Customer {rng.randint(1, 99_999)}",
                "tier": rng.choice(("gold", "silver", "bronze")),
            },
            "items": [
                {
                    "sku": f"SKU-{rng.randint(1, 9_999):04d}",
                    "qty": rng.randint(1, 5),
                    "price_eur": round(rng.uniform(1, 300), 2),
                }
                for _ in range(rng.randint(1, 3))
            ],
            "status": rng.choice(("shipped", "pending", "delivered")),
            "created": f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
        }
        for i in range(count)
    ]


def big_result_events(conversation: str, result: Any) -> list[str]:
    """The event log of the measured conversation, with ``result`` as the tool's output."""
    rows: list[dict[str, Any]] = [
        {
            "event": "conversation",
            "id": conversation,
            "account": "bench-big",
            "at": "2026-10-01T08:00:00Z",
        },
        {"event": "participant", "id": "agent", "model": "gpt-4o"},
        {"event": "branch", "id": "main"},
        {
            "event": "message",
            "id": "sys",
            "branch": "main",
            "role": "system",
            "content": "You help with orders. Never invent an order.",
        },
        {
            "event": "message",
            "id": "u1",
            "branch": "main",
            "role": "user",
            "content": "List every order of this year.",
        },
        {"event": "run", "id": "r1", "branch": "main", "participant": "agent", "mode": "chat"},
        {
            "event": "tool_call",
            "id": "t1",
            "run": "r1",
            "name": "list_orders",
            "arguments": {"year": 2026},
        },
        {"event": "tool_result", "call": "t1", "status": "succeeded", "content": result},
        {"event": "run", "id": "r2", "branch": "main", "participant": "agent", "mode": "chat"},
        {
            "event": "message",
            "id": "a1",
            "branch": "main",
            "role": "assistant",
            "run": "r2",
            "content": "Here are the orders.",
        },
    ]
    return [
        json.dumps(e if e["event"] == "conversation" else dict(e, conversation=conversation))
        for e in rows
    ]


def _measure(rt: Runtime, conversation: str, lines: list[str], reads: int) -> dict[str, Any]:
    assembler = Assembler(rt)
    started = time.perf_counter()
    rt.import_events(lines)
    imported = time.perf_counter() - started
    started = time.perf_counter()
    first = assembler.assemble(conversation, "main", "agent", as_of=_AS_OF)
    cold = (time.perf_counter() - started) * 1000
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        a = assembler.assemble(conversation, "main", "agent", as_of=_AS_OF)
        times.append((time.perf_counter() - started) * 1000)
    assert a.record["selection_hash"] == first.record["selection_hash"]
    return {
        "import_s": round(imported, 2),
        "first_ms": round(cold, 1),
        "p50_ms": round(statistics.median(times), 2),
        "record": first.record,
    }


def run_big_result(url: str, mb: float, reads: int, log: Any) -> dict[str, Any]:
    """The figures of a conversation with one ``mb`` MB result, on the database at ``url``."""
    per_record = len(json.dumps(orders(200))) / 200
    result = orders(int(mb * 1_000_000 / per_record))
    raw = json.dumps(result)
    tok = tiktoken_tokenizer(DEFAULT_ENCODING)
    tok.count("load the encoding before anything is timed")
    with Vigente.open(url) as vg:
        log.print(f"large result: {len(raw) / 1e6:.1f} MB of JSON ({len(result):,} records)")
        big = _measure(vg.runtime, "big", big_result_events("big", result), reads)
        small = _measure(vg.runtime, "small", big_result_events("small", result[:20]), reads)
        # before issue 23: nothing counted at import, the first assembly tokenizes the result
        old = _measure(Runtime(vg.store), "old-way", big_result_events("old-way", result), reads)
    started = time.perf_counter()
    json.loads(raw)
    parse_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    tok.count(raw)
    tokenize_ms = (time.perf_counter() - started) * 1000
    same = all(
        big["record"][k] == old["record"][k] for k in ("tokens", "selection_hash", "messages_hash")
    )
    figures = {
        "big_result_mb": round(len(raw) / 1e6, 2),
        "big_import_s": big["import_s"],
        "big_first_assembly_ms": big["first_ms"],
        "big_assembly_p50_ms": big["p50_ms"],
        "small_import_s": small["import_s"],
        "small_first_assembly_ms": small["first_ms"],
        "small_assembly_p50_ms": small["p50_ms"],
        "old_way_import_s": old["import_s"],
        "old_way_first_assembly_ms": old["first_ms"],
        "parse_raw_once_ms": round(parse_ms, 1),
        "tokenize_raw_once_ms": round(tokenize_ms, 1),
        "big_over_small_first": ratio(big["first_ms"], small["first_ms"]),
        "old_way_over_big_first": ratio(old["first_ms"], big["first_ms"]),
        "big_first_over_parse_floor": round(big["first_ms"] / parse_ms, 3) if parse_ms else 0.0,
        "big_replay_tokens": big["record"]["tokens"]["replay"],
        "big_assembled_tokens": big["record"]["tokens"]["assembled"],
        "big_same_as_old_way": same,
    }
    log.print(
        f"  import {big['import_s']} s (old way {old['import_s']} s); first assembly "
        f"{big['first_ms']} ms (old way {old['first_ms']} ms, small result "
        f"{small['first_ms']} ms); parse once {parse_ms:.0f} ms, tokenize once "
        f"{tokenize_ms:.0f} ms; same assembly: {same}"
    )
    return figures
