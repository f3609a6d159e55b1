"""Concurrent writers of one conversation (issue 21, item 5): events without `at` sent at once
are all stored, none refused as "would rewrite history", in an order whose knowledge times
never go back. Each writer has its own connection (its own Vigente), on every backend."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from vigente import Vigente
from vigente.errors import RuntimeHistoryConflict

WRITERS = 16
EACH = 6


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event)


def test_writers_without_at_are_never_refused(store_url: str) -> None:
    setup = Vigente.open(store_url)
    try:
        setup.runtime.import_events([_line(e) for e in [
            {"event": "conversation", "id": "c", "account": "acme"},
            {"event": "branch", "conversation": "c", "id": "main"},
        ]])
    finally:
        setup.close()
    errors: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def writer(n: int) -> None:
        vg = Vigente.open(store_url)
        try:
            start.wait()
            for i in range(EACH):
                vg.runtime.import_events([_line({
                    "event": "message", "conversation": "c", "id": f"m-{n}-{i}",
                    "branch": "main", "role": "user", "content": f"writer {n}, message {i}"})])
        except BaseException as exc:
            errors.append(exc)
        finally:
            vg.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []  # 0 false refusals
    vg = Vigente.open(store_url)
    try:
        records = [r for r in vg.store.runtime_records("c", kinds=["message"])]
    finally:
        vg.close()
    assert len(records) == WRITERS * EACH  # 0 lost writes
    times = [r.known_from for r in sorted(records, key=lambda r: r.seq)]
    assert times == sorted(times)  # in store order, knowledge never goes back


def test_an_at_before_what_the_conversation_holds_is_a_conflict(vg: Vigente) -> None:
    """A real conflict is a HistoryRewriteError a client can tell from bad input (HTTP 409)."""
    vg.runtime.import_events([_line(e) for e in [
        {"event": "conversation", "id": "c", "account": "acme", "at": "2026-10-05T08:00:00Z"},
        {"event": "branch", "conversation": "c", "id": "main"},
    ]])
    with pytest.raises(RuntimeHistoryConflict, match="line 1: .*would rewrite history"):
        vg.runtime.import_events([_line({
            "event": "message", "conversation": "c", "id": "late", "branch": "main",
            "role": "user", "content": "x", "at": "2026-10-05T07:00:00Z"})])
