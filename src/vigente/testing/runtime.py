"""Conformance of the agent runtime's contracts (:mod:`vigente.store.contracts.runtime`): its
append-only records read with their knowledge time, their raw contents and blobs, and the read
index derived from them.

Records are appended as the runtime stores them (:class:`~vigente.records.runtime.
RuntimeRecord`); the indexed reads are checked against the same filter applied to every record
of the conversation, the read index through the runtime service that fills it."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

import pytest

from vigente.records.runtime import Conversation, RuntimeRecord
from vigente.runtime import Runtime
from vigente.store.base import Store
from vigente.store.contracts import RuntimeContent, RuntimeIndex, RuntimeLog
from vigente.testing.base import RUNTIME, Abort, Conformance, Contracts, at
from vigente.time import Instant

__all__ = [
    "RuntimeContentConformance",
    "RuntimeIndexConformance",
    "RuntimeLogConformance",
    "conversation",
    "minute",
]

C = "kit-conversation"


def minute(n: int) -> Instant:
    """Minute ``n`` of the runtime checks' morning (5 October 2024, 08:00 UTC)."""
    return at(f"2024-10-05T08:{n:02d}:00Z")


def conversation(store: RuntimeLog, conversation_id: str = C, account: str = "kit-account"
                 ) -> Conversation:
    """Store a new conversation (records and contents belong to one)."""
    found = Conversation(conversation_id, account, minute(0))
    with store.transaction():
        store.append_runtime_conversation(found)
    return found


def record(record_id: str, known: int, *, kind: str = "message", branch: str | None = "main",
           participant: str | None = None, visibility: str | None = "branch",
           target: str | None = None, anchor: int | None = None,
           conversation_id: str = C) -> RuntimeRecord:
    """A record as the runtime stores one (the payload is JSON the backend keeps as is)."""
    payload = {"content": f"{record_id}: Zoë, 東京", "n": [1, 2.5, None, True]}
    return RuntimeRecord(conversation_id, kind, record_id, minute(known), payload, branch,
                         participant, None, target, visibility, anchor)


def append(store: RuntimeLog, records: Sequence[RuntimeRecord]) -> list[RuntimeRecord]:
    """Append ``records``; them as read back, with the ``seq`` the store gave each."""
    with store.transaction():
        seqs = store.append_runtime_records(records)
    return [replace(r, seq=seq) for r, seq in zip(records, seqs, strict=True)]


def _graph() -> list[RuntimeRecord]:
    """Two branches, two participants and every visibility, learned over twelve minutes."""
    return [
        record("u1", 1), record("a1", 2, participant="alice", visibility="participant"),
        record("b1", 3, participant="bob", visibility="participant"),
        record("all", 4, visibility="conversation", participant="alice"),
        record("side", 5, branch="side", anchor=2),
        record("call", 6, kind="tool_call", participant="alice", visibility="participant"),
        record("art", 7, kind="artifact", participant="alice", visibility="participant",
               target="call", anchor=6),
        record("share", 8, kind="share", branch=None, participant="bob", visibility=None,
               target="a1"),
        record("u2", 12),
    ]


def _ids(records: Sequence[RuntimeRecord]) -> list[str]:
    return [r.record_id for r in records]


class RuntimeLogConformance(Conformance):
    """Conversations and their records: append-only, read with their knowledge time."""

    contracts: ClassVar[Contracts] = (RuntimeLog,)

    def test_conversations_read_back_sorted_by_id(self, store: RuntimeLog) -> None:
        trip = Conversation("c3", "other", at("2024-10-05T08:00:00.000001Z"), title="Trip: 東京")
        with store.transaction():
            for found in (Conversation("c2", "acct", minute(1)), trip,
                          Conversation("c1", "acct", minute(2))):
                store.append_runtime_conversation(found)
        assert [c.id for c in store.runtime_conversations()] == ["c1", "c2", "c3"]
        assert [c.id for c in store.runtime_conversations(account="acct")] == ["c1", "c2"]
        assert store.runtime_conversations(ids=["c3", "unknown"]) == [trip]

    def test_records_read_back_with_increasing_seqs(self, store: RuntimeLog) -> None:
        conversation(store)
        first = append(store, _graph()[:4])
        later = append(store, _graph()[4:])
        seqs = [r.seq for r in first + later]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert store.runtime_records(C) == first + later
        assert store.runtime_records("unknown") == []

    def test_record_reads_filter_by_kind_id_target_and_knowledge(self, store: RuntimeLog
                                                                 ) -> None:
        conversation(store)
        every = append(store, _graph())

        read = store.runtime_records
        assert _ids(read(C, kinds=["tool_call", "artifact"])) == ["call", "art"]
        assert _ids(read(C, record_ids=["u2", "u1"])) == ["u1", "u2"]
        assert _ids(read(C, target_ids=["call"])) == ["art"]
        assert _ids(read(C, record_ids=["call"], target_ids=["call"])) == ["call", "art"]
        assert _ids(read(C, kinds=["message"], known_at=minute(4))) == ["u1", "a1", "b1", "all"]
        assert _ids(read(C, known_at=minute(0))) == []
        assert read(C, known_at=minute(59)) == every

    def test_branch_records_are_what_a_participant_sees_there(self, store: RuntimeLog) -> None:
        conversation(store)
        every = append(store, _graph())
        for branch, participant, known, upto, since in itertools.product(
            ("main", "side"), ("alice", "bob"), (3, 7, 59), (None, every[2].seq),
            (0, every[3].seq),
        ):
            expected = [r for r in every
                        if r.branch_id == branch and r.known_from <= minute(known)
                        and (upto is None or r.position <= upto) and r.seq >= since
                        and (r.participant_id == participant
                             or r.visibility in ("branch", "conversation"))]  # fmt: skip
            got = store.runtime_branch_records(C, branch, upto, participant, minute(known),
                                               since)
            assert got == expected, (branch, participant, known, upto, since)

    def test_reachable_records_are_the_conversations_and_the_shares(self, store: RuntimeLog
                                                                    ) -> None:
        conversation(store)
        every = append(store, _graph())
        for participant, known, since in itertools.product(("alice", "bob"), (3, 8, 59),
                                                           (0, every[5].seq)):
            expected = [r for r in every if r.known_from <= minute(known) and (
                r.visibility == "conversation" and r.seq >= since
                or r.kind in ("share", "promotion") and r.participant_id == participant)]
            assert store.runtime_reachable(C, participant, minute(known), since) == expected

    def test_the_homes_of_a_record_and_the_latest_knowledge(self, store: RuntimeLog) -> None:
        conversation(store)
        conversation(store, "kit-other")
        append(store, [record("u1", 1), record("u1", 3, conversation_id="kit-other"),
                       record("t1", 2, kind="tool_call", participant="alice")])
        assert store.runtime_record_homes("u1") == [("kit-conversation", "message"),
                                                    ("kit-other", "message")]
        assert store.runtime_record_homes("unknown") == []
        assert store.runtime_latest_knowledge(C) == minute(2)
        conversation(store, "kit-empty")
        assert store.runtime_latest_knowledge("kit-empty") is None

    def test_erasing_records_and_conversations(self, store: RuntimeLog) -> None:
        conversation(store)
        conversation(store, "kit-other")
        every = append(store, _graph())
        kept = append(store, [record("o1", 1, conversation_id="kit-other")])
        with store.transaction():
            assert store.delete_runtime_records(C, [every[0].seq, every[1].seq]) == 2
        assert store.runtime_records(C) == every[2:]
        with store.transaction():
            assert store.delete_runtime_conversations([C]) >= len(every) - 2 + 1
        assert store.runtime_records(C) == [] and store.runtime_conversations(ids=[C]) == []
        assert store.runtime_records("kit-other") == kept


def _content(text: str) -> tuple[str, bytes]:
    data = text.encode("utf-8")
    return hashlib.sha256(data).hexdigest(), data


class RuntimeContentConformance(Conformance):
    """Raw contents, inline or in the blob store; their erasure and compaction."""

    contracts: ClassVar[Contracts] = (RuntimeLog, RuntimeContent)

    def test_contents_read_back_inline_and_from_blobs(self, store: Store) -> None:
        conversation(store)
        (small_sha, small), (big_sha, big) = _content("small"), _content("big " * 10_000)
        with store.transaction():
            store.put_runtime_content(C, small_sha, small, inline=True)
            store.put_runtime_content(C, big_sha, big, inline=False)
        store.end_runtime_blobs(True)
        assert store.runtime_content(C, small_sha) == small
        assert store.runtime_content(C, big_sha) == big
        assert store.runtime_contents(C, [big_sha, "0" * 64, small_sha]) == {
            big_sha: big, "0" * 64: None, small_sha: small}
        assert store.runtime_blob_digests() == [big_sha]
        assert store.runtime_blob_referenced(big_sha)

    def test_contents_belong_to_their_conversation_and_keep_once(self, store: Store) -> None:
        conversation(store)
        conversation(store, "kit-other")
        sha, data = _content("kept once")
        for _ in range(2):
            with store.transaction():
                store.put_runtime_content(C, sha, data, inline=True)
        assert store.runtime_content(C, sha) == data
        assert store.runtime_content("kit-other", sha) is None

    def test_an_erased_content_is_gone_and_its_blob_goes_when_deleted(self, store: Store
                                                                      ) -> None:
        conversation(store)
        conversation(store, "kit-other")
        sha, data = _content("secret-marker " * 1000)
        for owner in (C, "kit-other"):
            with store.transaction():
                store.put_runtime_content(owner, sha, data, inline=False)
            store.end_runtime_blobs(True)
        with store.transaction():
            assert store.delete_runtime_contents(C, [sha]) == 1
        assert store.runtime_content(C, sha) is None
        assert store.runtime_content("kit-other", sha) == data
        assert store.runtime_blob_referenced(sha)  # the other conversation still holds it
        with store.transaction():
            assert store.delete_runtime_contents("kit-other", [sha, "0" * 64]) == 1
        assert not store.runtime_blob_referenced(sha)
        with store.transaction():
            assert store.delete_runtime_blobs([sha]) == 1
        assert store.runtime_blob_digests() == []
        compaction = store.runtime_compact(samples=[b"secret-marker"])
        assert isinstance(compaction.complete, bool) and compaction.message

    def test_the_blobs_of_a_rolled_back_transaction_are_forgotten(self, store: Store) -> None:
        conversation(store)
        sha, data = _content("written, then rolled back " * 1000)
        with pytest.raises(Abort), store.transaction():
            store.put_runtime_content(C, sha, data, inline=False)
            raise Abort
        store.end_runtime_blobs(False)
        assert store.runtime_content(C, sha) is None
        assert store.runtime_blob_digests() == []

    def test_token_counts_of_contents_go_with_the_bytes(self, store: Store) -> None:
        if type(store).put_runtime_content_tokens is RuntimeContent.put_runtime_content_tokens:
            pytest.skip(f"{type(store).__name__} keeps no token counts of contents (an "
                        "optional capability, detected by override)")
        conversation(store)
        sha, data = _content("counted")
        with store.transaction():
            store.put_runtime_content(C, sha, data, inline=True)
            store.put_runtime_content_tokens(C, [(sha, "o200k_base", 3), (sha, "cl100k", 4)])
            store.put_runtime_content_tokens(C, [(sha, "o200k_base", 99)])  # a count stays
        assert store.runtime_content_tokens(C, [sha, "0" * 64], "o200k_base") == {sha: 3}
        assert store.runtime_content_tokens(C, [sha], "cl100k") == {sha: 4}
        with store.transaction():
            store.delete_runtime_contents(C, [sha])
        assert store.runtime_content_tokens(C, [sha], "o200k_base") == {}


def _at(n: int) -> str:
    return minute(n).isoformat()


def _events() -> list[str]:
    """A short session of the runtime's event log: two tool calls, one answered late."""
    events: list[dict[str, Any]] = [
        dict(event="participant", id="agent", model="m", provider="openai", at=_at(0)),
        dict(event="branch", id="main", at=_at(0)),
        dict(event="message", id="sys", branch="main", role="system", content="Be exact.",
             at=_at(1)),
        dict(event="message", id="u1", branch="main", role="user", content="Go.", at=_at(1)),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat",
             at=_at(1)),
        dict(event="tool_call", id="ok", run="r1", name="search", arguments={}, at=_at(2)),
        dict(event="tool_result", call="ok", status="succeeded", content={"a": 1},
             at=_at(2)),
        dict(event="tool_call", id="late", run="r1", name="search", arguments={},
             at=_at(3)),
        dict(event="message", id="u2", branch="main", role="user", content="Again.",
             at=_at(4)),
        dict(event="tool_result", call="late", status="succeeded", content={"b": 2},
             at=_at(5)),
    ]
    head = dict(event="conversation", id=C, account="kit-account", at=_at(0))
    return [json.dumps(head)] + [json.dumps(dict(e, conversation=C)) for e in events]


class RuntimeIndexConformance(Conformance):
    """The runtime's read index, filled by the runtime service as an assembly fills it."""

    contracts: ClassVar[Contracts] = RUNTIME

    def _indexed(self, runtime: Runtime) -> list[RuntimeRecord]:
        runtime.import_events(_events())
        runtime.catch_up_index(C)
        return runtime.store.runtime_records(C)

    def test_records_after_a_seq_in_order(self, store: Store) -> None:
        conversation(store)
        every = append(store, _graph())
        assert store.runtime_records_after(C, 0, 100) == every
        assert store.runtime_records_after(C, every[2].seq, 2) == every[3:5]
        assert store.runtime_records_after(C, every[-1].seq, 10) == []

    def test_the_index_mark_moves_with_the_index(self, runtime: Runtime, store: Store) -> None:
        conversation(store, "kit-other")
        assert store.runtime_cache_mark("kit-other", "index") == 0
        every = self._indexed(runtime)
        assert store.runtime_cache_mark(C, "index") == every[-1].seq
        assert store.runtime_records_after_mark(C, "index", 10) == (every[-1].seq, [])
        assert (store.runtime_records_after_mark(C, "kit-cache", 3)
                == RuntimeIndex.runtime_records_after_mark(store, C, "kit-cache", 3))

    def test_open_calls_are_the_calls_unanswered_as_known_then(self, runtime: Runtime,
                                                               store: Store) -> None:
        self._indexed(runtime)
        assert [_ids(store.runtime_open_calls(C, minute(n))) for n in (1, 2, 4, 9)] == [
            [], [], ["late"], []]

    def test_reads_in_one_go_equal_their_parts(self, runtime: Runtime, store: Store) -> None:
        """A backend's own combined reads return what the contract's defaults compose."""
        every = self._indexed(runtime)
        for known in (1, 3, 9):
            requests = [("user", "main", None, 1), ("instruction", None, None, None),
                        ("user", "main", every[4].seq, 5)]
            assert (store.runtime_protected(C, minute(known), requests)
                    == RuntimeIndex.runtime_protected(store, C, minute(known), requests))
            for count, below in itertools.product((1, 2, 50), (None, every[-2].seq)):
                args = (C, [("main", None)], minute(known), count, below, 100)
                assert (store.runtime_horizon_records(*args)
                        == RuntimeIndex.runtime_horizon_records(store, *args)), (known, count)
        assert store.runtime_group_counts(C, [("no such group", 1 << 40)]) == [0]
