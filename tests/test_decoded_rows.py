"""Runtime rows decoded once (store/record_rows.DecodedRows): a row is reused only when the
database returns the very same row, and a purge forgets every row, typed node and memory text
kept by node."""

from __future__ import annotations

import json

from vigente.records.runtime import from_record
from vigente.store.record_rows import DecodedRows
from vigente.store.sqlite.runtime import _record


def _row(seq: int, content: str) -> tuple[object, ...]:
    payload = json.dumps({"role": "user", "content": content}, sort_keys=True)
    return (
        seq,
        "conv",
        "message",
        f"m{seq}",
        "main",
        "p",
        None,
        None,
        "branch",
        None,
        1_700_000_000_000_000,
        0,
        payload,
    )


def test_same_row_is_reused_and_a_changed_row_is_decoded_again() -> None:
    rows = DecodedRows()
    first = rows.decode(_row(7, "hello"), _record)
    assert rows.decode(_row(7, "hello"), _record) is first
    # the same seq with other columns (a rolled-back insert's seq reused): decoded anew
    other = rows.decode(_row(7, "bye"), _record)
    assert other is not first
    assert other.payload["content"] == "bye"
    assert rows.decode(_row(7, "bye"), _record) is other


def test_oldest_rows_are_forgotten_past_the_bound() -> None:
    rows = DecodedRows(max_chars=len(_row(1, "x")[-1]) * 3)  # type: ignore[arg-type]
    kept = [rows.decode(_row(i, "x"), _record) for i in range(1, 6)]
    assert rows.decode(_row(5, "x"), _record) is kept[-1]
    assert rows.decode(_row(1, "x"), _record) is not kept[0]  # forgotten: decoded again


def test_purge_forgets_rows_and_typed_nodes() -> None:
    from vigente.runtime import Runtime
    from vigente.store import open_store
    from vigente.store.record_rows import DECODED

    store = open_store(":memory:")
    try:
        rt = Runtime(store)
        lines = [
            json.dumps(e)
            for e in (
                {"event": "conversation", "id": "c1", "account": "a1"},
                {
                    "event": "participant",
                    "conversation": "c1",
                    "id": "p",
                    "model": "gpt-4o",
                    "provider": "openai",
                },
                {"event": "branch", "conversation": "c1", "id": "main"},
                {
                    "event": "message",
                    "conversation": "c1",
                    "id": "m1",
                    "branch": "main",
                    "role": "user",
                    "content": "secret words",
                },
            )
        ]
        rt.import_events(lines)
        (before,) = store.runtime_records("c1", kinds=["message"])
        (again,) = store.runtime_records("c1", kinds=["message"])
        assert again is before  # the same row, decoded once
        assert from_record(again) is from_record(before)
        from vigente.assemble import pipeline

        pipeline._MEMORY_TEXTS[(0, False, 0, ())] = (None, None, "secret words")
        store.delete_runtime_conversations(["c1"])
        assert not pipeline._MEMORY_TEXTS  # memory texts are kept by node: forgotten too
        assert not any("secret words" in str(row) for row, _, _ in DECODED._rows.values())
        assert store.runtime_records("c1", kinds=["message"]) == []
    finally:
        store.close()
