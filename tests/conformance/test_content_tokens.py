"""A large tool result is paid for once, when it is recorded (issue 23), on every backend.

Its replay text's tokens are counted at import and kept beside its bytes
(``runtime_content_tokens``); the assembler's transcript-replay count reads that count and never
tokenizes the result again. The assembly is the one computed the old way (the bytes read and
counted at assembly), token for token and hash for hash. The count goes with the bytes
(retention) and with the account (purge), and an existing store gets the table by migration.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.conformance.rollback import undo_from
from vigente import Vigente
from vigente.assemble import Assembler
from vigente.assemble.tokens import tiktoken_tokenizer
from vigente.runtime import Runtime
from vigente.runtime.content import COUNT_AT_IMPORT, replay_text

C = "big"
T0 = "2026-10-05T08:00:00+00:00"


class CountingTokenizer:
    """tiktoken's o200k_base, remembering the length of every text it was asked to count."""

    name = "o200k_base"

    def __init__(self) -> None:
        self._tok = tiktoken_tokenizer("o200k_base")
        self.lengths: list[int] = []

    def encode(self, text: str) -> list[int]:
        self.lengths.append(len(text))
        return self._tok.encode(text)

    def count(self, text: str) -> int:
        self.lengths.append(len(text))
        return self._tok.count(text)


def orders(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ORD-{i:06d}",
            "status": ("shipped", "pending")[i % 2],
            "total_eur": round(i * 1.37, 2),
            "items": [{"sku": f"S{i % 97}", "qty": i % 5}],
        }
        for i in range(n)
    ]


def events(conversation: str, result: Any, *, status: str = "succeeded") -> list[str]:
    rows: list[dict[str, Any]] = [
        dict(event="conversation", id=conversation, account="acct-big", at=T0),
        dict(event="participant", id="agent", model="gpt-4o"),
        dict(event="branch", id="main"),
        dict(event="message", id="sys", branch="main", role="system", content="You help."),
        dict(event="message", id="u1", branch="main", role="user", content="List the orders."),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="t1", run="r1", name="list_orders", arguments={"all": True}),
        dict(event="tool_result", call="t1", status=status, content=result),
        dict(event="run", id="r2", branch="main", participant="agent", mode="chat"),
        dict(
            event="message",
            id="a1",
            branch="main",
            role="assistant",
            run="r2",
            content="There are many orders.",
        ),
    ]
    return [
        json.dumps(e if e["event"] == "conversation" else dict(e, conversation=conversation))
        for e in rows
    ]


BIG = {"orders": orders(3_000)}  # ~250 KB of JSON: over the import threshold
AS_OF = "2026-10-05T09:00:00+00:00"


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    return {
        key: record[key]
        for key in ("tokens", "included", "omitted", "selection_hash", "messages_hash")
    }


def test_a_large_result_is_counted_at_import_and_not_again_at_assembly(vg: Vigente) -> None:
    vg.runtime.import_events(events(C, BIG))
    (artifact,) = vg.runtime.artifacts("t1", conversation=C)
    ref = artifact.result_ref
    assert ref.bytes > COUNT_AT_IMPORT
    raw = replay_text(vg.runtime.artifact_content(artifact), ref.encoding)
    kept = vg.store.runtime_content_tokens(C, [ref.sha256], "o200k_base")
    assert kept == {ref.sha256: tiktoken_tokenizer("o200k_base").count(raw)}

    counting = CountingTokenizer()
    new = Assembler(vg.runtime, tokenizer=counting).assemble(C, "main", "agent", as_of=AS_OF)
    # the result's text (or a request holding it) was never tokenized at assembly
    assert counting.lengths and max(counting.lengths) < ref.bytes // 10

    # the old way: the same log imported without a count, so the assembler reads and counts it
    old_rt = Runtime(vg.store)
    old_rt.import_events(events("big-old", BIG))
    (old_artifact,) = old_rt.artifacts("t1", conversation="big-old")
    assert vg.store.runtime_content_tokens("big-old", [ref.sha256], "o200k_base") == {}
    counting_old = CountingTokenizer()
    old = Assembler(old_rt, tokenizer=counting_old).assemble(
        "big-old", "main", "agent", as_of=AS_OF
    )
    assert max(counting_old.lengths) >= len(raw)  # this is the cost the import now pays
    assert _comparable(new.record) == _comparable(old.record)
    assert new.record["tokens"]["replay"] > kept[ref.sha256]
    # the count the old way kept for the next assembly (another format reads it too)
    assert vg.store.runtime_content_tokens("big-old", [ref.sha256], "o200k_base") == kept
    again = CountingTokenizer()
    Assembler(old_rt, tokenizer=again).assemble(
        "big-old", "main", "agent", as_of=AS_OF, format="anthropic"
    )
    assert max(again.lengths) < ref.bytes // 10


def test_a_small_result_is_not_counted_at_import(vg: Vigente) -> None:
    vg.runtime.import_events(events(C, {"orders": orders(3)}))
    (artifact,) = vg.runtime.artifacts("t1", conversation=C)
    assert artifact.result_ref.bytes <= COUNT_AT_IMPORT
    assert vg.store.runtime_content_tokens(C, [artifact.result_ref.sha256], "o200k_base") == {}


def test_content_tokens_go_with_the_bytes_and_with_the_account(vg: Vigente) -> None:
    vg.runtime.import_events(events(C, BIG))
    vg.runtime.import_events(events("big-2", BIG))
    (artifact,) = vg.runtime.artifacts("t1", conversation=C)
    sha = artifact.result_ref.sha256
    store = vg.store
    with store.transaction():  # idempotent: a count kept stays
        store.put_runtime_content_tokens(C, [(sha, "o200k_base", 1), (sha, "cl100k_base", 7)])
    assert store.runtime_content_tokens(C, [sha], "cl100k_base") == {sha: 7}
    assert store.runtime_content_tokens(C, [sha, sha, "0" * 64], "o200k_base") != {sha: 1}
    with store.transaction():  # retention erases the bytes: their counts go with them
        assert store.delete_runtime_contents(C, [sha]) == 1
    assert store.runtime_content_tokens(C, [sha], "o200k_base") == {}
    assert store.runtime_content_tokens(C, [sha], "cl100k_base") == {}
    # an erased result counts as no text, as before the counts were kept
    assert vg.assembly.assemble(C, "main", "agent", as_of=AS_OF).record["tokens"]["replay"] < 100
    assert store.runtime_content_tokens("big-2", [sha], "o200k_base")  # the other conversation's
    vg.runtime.purge_account("acct-big")
    assert store.runtime_content_tokens("big-2", [sha], "o200k_base") == {}


def test_an_existing_store_gets_the_table_by_migration(store_url: str) -> None:
    vg = Vigente.open(store_url)
    vg.close()
    # the schema before the token counts: their migration and every one after it undone
    statements = undo_from(store_url, "runtime_content_tokens")
    if store_url.startswith("postgres"):
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)
    else:
        with sqlite3.connect(Path(store_url)) as conn:
            for sql in statements:
                conn.execute(sql)
        conn.close()
    vg = Vigente.open(store_url)
    try:
        vg.runtime.import_events(events(C, BIG))
        (artifact,) = vg.runtime.artifacts("t1", conversation=C)
        assert vg.store.runtime_content_tokens(C, [artifact.result_ref.sha256], "o200k_base")
    finally:
        vg.close()
