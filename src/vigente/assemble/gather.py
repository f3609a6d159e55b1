"""What an assembly reads, bounded by what can fit: the protected state whole, the newest
records down to a read horizon, and counts (never rows) for everything older.

An assembly does not read the whole graph. The store keeps a read index of the context
records (``Store.append_runtime_index``, filled here on first need) and running token sums of
the replay (``Store.append_runtime_token_counts``); from them:

* the protected state is read whole by indexed look-ups: instructions, unresolved calls,
  failed, deferred and retry-critical results, the latest user message, the latest skill state
  and checkpoint on the ancestry;
* the other candidates are read newest first down to a horizon ``since`` (a ``seq``), which
  the assembler lowers until the budget binds (:func:`horizon`);
* every context record older than the horizon that was not read is accounted for by group
  (branch, owner, visibility) and ranges (:func:`below`), from ranks the index keeps, so the
  trace's omission counts stay exact and ``why_not`` answers for any ref (:func:`classify`);
* transcript replay's tokens are running sums per branch (:func:`replay_tokens`), each record
  counted once per encoding and format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vigente.assemble.blocks import Block
from vigente.assemble.serialize import serializer
from vigente.assemble.speakers import NAMED_FORMATS, spoken
from vigente.assemble.tokens import Tokenizer, count_message_tokens
from vigente.records.runtime import (
    VISIBILITY,
    ContentRef,
    Conversation,
    RuntimeRecord,
    from_record,
)
from vigente.runtime.content import COUNT_AT_IMPORT, replay_text
from vigente.runtime.reader import Graph, group_key
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime
    from vigente.store.base import Store

__all__ = [
    "FIRST_PAGE",
    "CountCache",
    "Range",
    "below",
    "classify",
    "Horizon",
    "horizon",
    "protected_ids",
    "replay_tokens",
    "structure",
    "structure_graph",
]

#: Refs read in the first round (the newest); later rounds read as many as the budget asks.
FIRST_PAGE = 64
_BATCH = 2_000
#: Kinds a ref of the trace comes from (an artifact shares its call's ref).
_REF_KINDS = {
    "message": "message",
    "tool_call": "artifact",
    "memory": "memory",
    "user_memory": "memory",
    "skill_state": "skill_state",
    "checkpoint": "checkpoint",
}


def branch_rule(branch: str, windows: dict[str, int | None]) -> str:
    """The rule that keeps a record of ``branch`` from a reader whose ancestry is
    ``windows``: a branch it does not descend from, or its own ancestor after the point
    where the reader's line forked from it."""
    if branch in windows and windows[branch] is not None:
        return f"branch.after_fork_point:{branch}"
    return f"branch.not_in_ancestry:{branch}"


class CountCache:
    """A tokenizer that remembers the texts it counted (one assembly renders the same keys and
    the same units many times: every budget round, every round of the read horizon)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self.name = tokenizer.name
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = self._tokenizer.count(text)
        return found

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text)


@dataclass(frozen=True, slots=True)
class Range:
    """Records older than the read horizon, never read, counted by group: ``records`` of
    ``branch`` (owner ``participant``, ``visibility``) at ``seq`` in ``[after, before)``,
    omitted for ``reason`` by ``rule``."""

    branch: str
    participant: str
    visibility: str
    after: int
    before: int
    records: int
    reason: str
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch or None,
            "participant": self.participant or None,
            "visibility": self.visibility or None,
            "seq": [self.after, self.before],
            "records": self.records,
            "reason": self.reason,
            "rule": self.rule,
        }


def structure_graph(rt: Runtime, conversation: str, k: Instant, *, mode: str) -> Graph:
    """The structure a runtime mode's contract reads (participants; branches, runs and
    promotions for modes other than chat), read by kind, not the whole graph."""
    return structure(rt, rt.conversation(conversation), k, mode=mode)[0]


def structure(
    rt: Runtime, conversation: Conversation, k: Instant, *, mode: str
) -> tuple[Graph, list[RuntimeRecord], list[RuntimeRecord], list[RuntimeRecord]]:
    """:func:`structure_graph`'s graph, the conversation's branch records, its share and
    promotion records and its tool declarations known at ``k`` (each in ``seq`` order), read
    with it in one statement."""
    kinds = ["participant"]
    if mode not in ("chat", "multi_model"):
        kinds += ["branch", "run", "promotion"]
    records = rt.store.runtime_records(
        conversation.id,
        kinds=sorted({*kinds, "branch", "share", "promotion", "tool"}),
        known_at=k,
    )
    branches = [r for r in records if r.kind == "branch"]
    granted = [r for r in records if r.kind in ("share", "promotion")]
    tools = [r for r in records if r.kind == "tool"]
    records = [r for r in records if r.kind in kinds]
    promoted: dict[str, list[str]] = {}
    for r in records:
        if r.kind == "promotion" and r.target_id:
            promoted.setdefault(r.target_id, []).append(r.payload["as_"])
    graph = Graph(
        conversation,
        k,
        tuple(from_record(r) for r in records if r.kind != "promotion"),
        promoted={m: tuple(v) for m, v in promoted.items()},
    )
    return graph, branches, granted, tools


def protected_ids(
    store: Store, conversation: str, chain: Sequence[tuple[str, int | None]], k: Instant
) -> list[str]:
    """Ids of the records an assembly reads whatever their age: the instructions, every
    call without a result and every call with a failed, deferred or retry-critical result,
    the latest user message, skill state and checkpoint of each branch of the ancestry (one
    read of the store: :meth:`~vigente.store.base.Store.runtime_protected`)."""
    windows = dict(chain)

    def on(r: RuntimeRecord) -> bool:
        if r.branch_id not in windows:
            return False
        upto = windows[r.branch_id]
        return upto is None or r.position <= upto

    latest = [(flag, b, upto, 1) for flag in ("user", "skill_state", "checkpoint")
              for b, upto in chain]  # fmt: skip
    open_calls, (instructions, troubled, *newest) = store.runtime_protected(
        conversation, k, [("instruction", None, None, None), ("troubled", None, None, None),
                          *latest]
    )  # fmt: skip
    ids = {r.record_id for r in instructions if on(r)}
    ids |= {r.record_id for r in open_calls if on(r)}
    ids |= {r.target_id for r in troubled if on(r) and r.target_id is not None}
    for found in newest:
        ids |= {r.record_id for r in found}
    return sorted(ids)


def horizon(
    store: Store, conversation: str, chain: Sequence[tuple[str, int | None]], k: Instant, count: int
) -> int:
    """The read horizon that takes in the ``count`` newest refs of the ancestry: the lowest
    ``seq`` read (0: everything is read)."""
    found = [store.runtime_horizon(conversation, b, upto, None, k, count) for b, upto in chain]
    # the newest of the branches' count-th newest refs: at least count refs are above it
    seqs = [s for s in found if s is not None]
    return max(seqs) if seqs else 0


class Horizon:
    """The records of one assembly at ``seq >= since`` known at ``k`` (every branch), read
    once: lowering the horizon reads only the records between the old and the new one."""

    def __init__(self, store: Store, conversation: str, k: Instant) -> None:
        self._store = store
        self._conversation = conversation
        self._k = k
        self._low: int | None = None  # the lowest seq read so far
        self._records: list[RuntimeRecord] = []

    def lower(self, chain: Sequence[tuple[str, int | None]], count: int) -> int:
        """:func:`horizon` of ``count`` refs, and the records above it read with it (one read
        of the store: :meth:`~vigente.store.base.Store.runtime_horizon_records`): the next
        :meth:`since` of it reads no more unless they were more than a batch."""
        since, batch = self._store.runtime_horizon_records(
            self._conversation, chain, self._k, count, self._low, _BATCH
        )
        if self._low is None or since < self._low:
            self._take(since, batch)
        return since

    def since(self, since: int) -> list[RuntimeRecord]:
        if self._low is not None and since >= self._low:
            return [r for r in self._records if r.seq >= since]
        self._take(since, None)
        return list(self._records)

    def _take(self, since: int, first: list[RuntimeRecord] | None) -> None:
        """Read the records from ``since`` up to those held (``first``: the first batch of
        them, read already)."""
        older: list[RuntimeRecord] = []
        mark = since - 1
        while True:
            # below the rows held, at most one row per seq: never fetch (and parse) them again
            limit = _BATCH if self._low is None else min(_BATCH, self._low - 1 - mark)
            if limit <= 0:
                break
            if first is not None:
                batch, first = first, None
            else:
                batch = self._store.runtime_records_after(self._conversation, mark, limit)
            for r in batch:
                if r.known_from > self._k or (self._low is not None and r.seq >= self._low):
                    batch = []  # knowledge only grows with seq within a conversation
                    break
                older.append(r)
            if len(batch) < limit:
                break
            mark = batch[-1].seq
        self._records = older + self._records
        self._low = since


def classify(
    branch: str | None,
    participant: str | None,
    visibility: str | None,
    seq: int,
    chain: Sequence[tuple[str, int | None]],
    reader: str,
    since: int,
) -> tuple[str, str]:
    """``(reason, rule)`` of a context record older than the read horizon ``since``, from
    its group alone: the rules of the candidates read (branch ancestry and fork points,
    audit visibility, ownership); what the reader could see is omitted for budget."""
    windows = dict(chain)
    if branch and branch not in windows:
        return "other_branch", f"branch.not_in_ancestry:{branch}"
    if branch and windows[branch] is not None and seq > (windows[branch] or 0):
        return "other_branch", branch_rule(branch, windows)
    if visibility == "audit":
        return "audit_only", "visibility.audit_only"
    if participant in (None, "", reader) or visibility in ("branch", "conversation"):
        return "budget", f"budget.not_read_before_seq:{since}"
    return "participant_private", f"ownership.private_to:{participant}"


def below(
    store: Store,
    conversation: str,
    since: int,
    chain: Sequence[tuple[str, int | None]],
    reader: str,
    branches: Sequence[str],
    participants: Sequence[str],
    read: Sequence[Any],
) -> list[Range]:
    """The context records at ``seq < since`` that were not read, as ranges per group and
    reason (counts from the index's ranks: a seek per group, whatever their number)."""
    if since <= 0:
        return []
    windows = dict(chain)
    owners = ["", *participants]
    groups = [(b, p, v) for b in ["", *branches] for p in owners for v in ("", *VISIBILITY)]
    # each group splits at its fork point (in the window before it, another branch after)
    cuts: list[tuple[str, str, str, int, int]] = []
    for b, p, v in groups:
        upto = windows.get(b) if b in windows else None
        if b in windows and upto is not None and upto + 1 < since:
            cuts += [(b, p, v, 0, upto + 1), (b, p, v, upto + 1, since)]
        else:
            cuts.append((b, p, v, 0, since))
    bounds = []
    for b, p, v, after, before in cuts:
        bounds += [(group_key(b, p, v), after), (group_key(b, p, v), before)]
    ranks = store.runtime_group_counts(conversation, bounds)
    # records below the horizon that were read anyway (protected state, calls of results read)
    taken: dict[tuple[str, str, str], set[int]] = {}
    for n in read:
        if n.KIND in _REF_KINDS and n.seq < since:
            key = (
                n.branch_id or "",
                getattr(n, "participant_id", None) or "",
                getattr(n, "visibility", None) or "",
            )
            taken.setdefault(key, set()).add(n.seq)
    out: list[Range] = []
    for i, (b, p, v, after, before) in enumerate(cuts):
        count = ranks[2 * i + 1] - ranks[2 * i]
        count -= sum(1 for s in taken.get((b, p, v), ()) if after <= s < before)
        if count <= 0:
            continue
        reason, rule = classify(b, p, v, before - 1, chain, reader, since)
        out.append(Range(b, p, v, after, before, count, reason, rule))
    return out


# -- transcript replay ------------------------------------------------------------------------
def _alone(tok: Tokenizer, fmt: str, block: Block) -> tuple[int, int]:
    """Tokens and messages of one replayed block serialized on its own (Anthropic's
    placeholder for a request that does not open with a user message left out)."""
    request = serializer(fmt).serialize([block])
    messages = request.messages
    if fmt == "anthropic" and block.kind == "system":
        messages = []  # the system text goes apart; no placeholder message
    elif fmt == "anthropic" and block.kind not in ("user", "data"):
        messages = messages[1:]  # the placeholder that opens a request with a user message
    tokens = count_message_tokens(tok, messages) + (
        tok.count(request.system) if request.system else 0
    )
    return tokens, len(messages)


class _ResultTokens:
    """Tokens of raw results' replay text, in one encoding: the count kept beside the bytes
    (counted when the result was recorded, or by an earlier assembly) when there is one, else
    the bytes read and counted, and a large result's count kept for the next time. Erased
    bytes count as no text (their kept count went with them)."""

    def __init__(self, rt: Runtime, conversation: str, tok: Tokenizer) -> None:
        self.rt, self.conversation, self.tok = rt, conversation, tok
        self.kept: dict[str, int] = {}
        self.asked: set[str] = set()
        self.learned: list[tuple[str, str, int]] = []

    def read(self, refs: Sequence[ContentRef]) -> None:
        """Read the kept counts of ``refs`` not asked for yet, in one query."""
        wanted = list(dict.fromkeys(r.sha256 for r in refs if r.sha256 not in self.asked))
        if wanted:
            self.asked.update(wanted)
            self.kept.update(
                self.rt.store.runtime_content_tokens(self.conversation, wanted, self.tok.name)
            )

    def count(self, ref: ContentRef) -> int:
        self.read([ref])
        found = self.kept.get(ref.sha256)
        if found is not None:
            return found
        data = self.rt.content(self.conversation, ref)
        tokens = self.tok.count(replay_text(data or b"", ref.encoding))
        if data is not None and ref.bytes > COUNT_AT_IMPORT:
            self.kept[ref.sha256] = tokens
            self.learned.append((ref.sha256, self.tok.name, tokens))
        return tokens


def _count(
    tok: Tokenizer, fmt: str, r: RuntimeRecord, last: dict[str, int], results: _ResultTokens
) -> tuple[int, int] | None:
    if r.kind == "message":
        kind = {"system": "system", "user": "user"}.get(r.payload["role"], "assistant")
        text, name = r.payload["content"], ""
        if r.payload.get("speaker") and kind != "assistant":  # as a request says who spoke
            text, name = spoken(text, r.payload["speaker"], fmt)
        elif r.payload.get("speaker") and fmt in NAMED_FORMATS:
            name = r.payload["speaker"]
        return _alone(tok, fmt, Block(kind, text, r.record_id, speaker=name))
    if r.kind == "tool_call":
        block = Block(
            "exchange",
            "",
            r.record_id,
            r.record_id,
            r.payload["name"],
            dict(r.payload["arguments"]),
        )
        return _alone(tok, fmt, block)
    if r.kind == "artifact" and r.target_id is not None:
        # a call's latest result replaces the one before: each result counts the difference,
        # so the running sum holds the latest result's tokens
        a = from_record(r)
        tokens = results.count(a.result_ref)
        if r.target_id not in last:
            earlier = [
                e
                for e in results.rt.store.runtime_records(
                    r.conversation_id, kinds=["artifact"], target_ids=[r.target_id]
                )
                if e.seq < r.seq
            ]
            last[r.target_id] = 0
            if earlier:
                last[r.target_id] = results.count(from_record(earlier[-1]).result_ref)
        delta = tokens - last[r.target_id]
        last[r.target_id] = tokens
        return delta, 0
    return None


def replay_tokens(
    rt: Runtime,
    conversation: str,
    chain: Sequence[tuple[str, int | None]],
    k: Instant,
    fmt: str,
    tok: Tokenizer,
) -> tuple[int, int]:
    """Transcript replay's ``(tokens, messages)``: every message, tool call and latest tool
    result of the branch and its ancestry, raw, in ``fmt``. Each record is counted once per
    encoding and format (on the first assembly that needs it) and the store keeps running
    sums per branch, so this reads no blob a second time and no row per record; a large
    result's tokens are read as counted when it was recorded, not counted again."""
    counter = f"{tok.name}/{fmt}"
    store = rt.store
    mark, batch = store.runtime_records_after_mark(conversation, f"tokens:{counter}", _BATCH)
    last: dict[str, int] = {}
    results = _ResultTokens(rt, conversation, tok)
    while batch:
        results.read(
            [
                ContentRef.from_dict(r.payload["result_ref"])
                for r in batch
                if r.kind == "artifact" and r.target_id is not None
            ]
        )
        rows = []
        for r in batch:
            counted = _count(tok, fmt, r, last, results)
            if counted is not None and r.branch_id is not None:
                rows.append((r.seq, r.branch_id, r.position, r.known_from.micros, *counted))
        with store.transaction():
            store.append_runtime_token_counts(conversation, counter, rows, batch[-1].seq)
            store.put_runtime_content_tokens(conversation, results.learned)
        results.learned = []
        mark = batch[-1].seq
        batch = store.runtime_records_after(conversation, mark, _BATCH)
    return store.runtime_token_total(conversation, counter, chain, k)
