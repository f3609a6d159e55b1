"""One assembly's rounds: each reads the candidates above a read horizon, decides every one
and fits them to the budget; the horizon is lowered until the budget binds (nothing older
could have fit then: the budget drops the oldest first), and a recall may bring back the
older records most relevant to the call.

The protected state is read whole whatever the horizon (:func:`~vigente.assemble.gather.
protected_ids`); what lies below it is counted, not read (:func:`~vigente.assemble.gather.
below`). Raw results are read here, after the privacy checks, once per assembly.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vigente.assemble.blocks import digest
from vigente.assemble.call_ids import with_wire_ids
from vigente.assemble.gather import FIRST_PAGE, CountCache, Horizon, protected_ids
from vigente.assemble.modes import ModeContract, contract_for
from vigente.assemble.pipeline import (
    PROTECTED,
    Boundary,
    Context,
    Decision,
    Unit,
    decide,
    fit_budget,
)
from vigente.assemble.policy import Policy
from vigente.assemble.serialize import Serializer, serializer
from vigente.assemble.tokens import RememberingTokenizer, count_message_tokens
from vigente.assemble.units import candidate_units, pipeline_context, sole_exchange
from vigente.errors import InvalidInput
from vigente.records.runtime import RuntimeRecord, ToolArtifact
from vigente.runtime.reader import Graph
from vigente.runtime.redact import redact_content

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime

__all__ = ["Round", "Rounds", "UnitCost", "ms_since"]


def ms_since(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()``), as the record prints them."""
    return round((time.perf_counter() - start) * 1000, 3)


def _text(data: bytes, encoding: str) -> str:
    if encoding == "binary":
        return json.dumps(
            {"binary": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        )
    return data.decode("utf-8")


@dataclass(frozen=True, slots=True)
class UnitCost:
    """A unit's tokens: its blocks alone as a Chat Completions request, wire ids as sent
    (``short_ids``). The count is kept by the blocks' digest: the next round and the next
    request render most units the same."""

    contract: ModeContract
    boundary: Boundary
    ctx: Context
    units: dict[str, Unit]
    short_ids: bool
    seqs: dict[str, int]  # each call's place in the log, for its wire id
    remembered: RememberingTokenizer
    tok: CountCache
    chat: Serializer

    def __call__(self, unit: Unit, d: Decision) -> int:
        blocks = self.contract.render(
            unit, d, self.boundary, sole_exchange(unit, self.ctx, self.units)
        )
        if self.short_ids:
            blocks = with_wire_ids(blocks, self.seqs)
        return self.remembered.remember(
            b"b" + digest(blocks),
            lambda: count_message_tokens(self.tok, self.chat.serialize(blocks).messages),
        )


@dataclass(frozen=True, slots=True)
class Round:
    """One round of an assembly: what was read above the read horizon and how it was
    decided (``first``: before the budget; ``decided``: after it)."""

    since: int
    nodes: Any
    units: dict[str, Unit]
    trace_extra: list[Decision]
    order_key: dict[str, int]
    gathered: list[Any]
    contract: ModeContract
    ctx: Context
    first: dict[str, Decision]
    decided: dict[str, Decision]
    seqs: dict[str, int]
    cost: Callable[[Unit, Decision], int]


class Rounds:
    """The rounds of one assembly for ``boundary``: what they share (the records read above
    the horizon, the raw results read, the token counts) and the time they took
    (``graph_ms``: the graph's reads; ``policy_ms``: the decisions)."""

    def __init__(
        self,
        runtime: Runtime,
        boundary: Boundary,
        graph: Graph,
        granted: Sequence[RuntimeRecord],
        pol: Policy,
        remembered: RememberingTokenizer,
    ) -> None:
        self.runtime, self.store = runtime, runtime.store
        self.boundary, self.graph, self.granted, self.pol = boundary, graph, granted, pol
        b = boundary
        self.protected = [
            *protected_ids(self.store, b.conversation, b.ancestry, b.snapshot), *b.rehydrate
        ]
        self.above = Horizon(self.store, b.conversation, b.snapshot)
        self.remembered = remembered
        self.short_ids = pol.get("serialization", "call_ids") == "short"
        self.tok = CountCache(remembered)
        self.chat = serializer("openai-chat")
        self.texts: dict[tuple[str, str, str], str | None] = {}  # raw results read, by hash
        self.graph_ms = 0.0
        self.policy_ms = 0.0

    def fill(self) -> Round:
        """The round whose read horizon is low enough: the budget binds in it on what a
        trusted writer logged, or it reads everything. (A budget that binds on claims alone
        does not stop the lowering: the budget drops claims first, so older records the
        application logged still get their room; a flood of claims never pushes them below
        the horizon.) Each lowering reads as many more refs as the room left asks for, at the
        cost per ref seen so far."""
        page = FIRST_PAGE
        budget = self.boundary.budget
        while True:
            since = self.above.lower(self.boundary.ancestry, page)  # with the records above it
            rnd = self.read(since, self.protected)
            decided = rnd.decided
            if since == 0 or any(
                d.rule.startswith("budget.")
                and (d.ref not in rnd.units or rnd.units[d.ref].claimed_by is None)
                for d in decided.values()
            ):
                return rnd
            fixed = sum(d.tokens for d in decided.values() if d.included and d.as_ in PROTECTED)
            free = sum(d.tokens for d in decided.values() if d.included) - fixed
            page = max(page + FIRST_PAGE, int(page * (budget - fixed) / max(free, 1) * 1.1))

    def read(self, since: int, include: Sequence[str]) -> Round:
        """One round: the candidates above the read horizon ``since`` (and the records
        ``include`` names), each decided, then fitted to the budget."""
        b = self.boundary
        t1 = time.perf_counter()
        nodes = self.above.since(since)  # every record above the horizon, read once
        cands = self.runtime.candidates(
            b.conversation,
            b.branch,
            b.participant,
            known_at=b.snapshot,
            run=b.run,
            since=since,
            include=include,
            read=nodes,
            ancestry=b.ancestry,
            granted=self.granted,
        )
        self.graph_ms += ms_since(t1)
        t1 = time.perf_counter()
        units, trace_extra, order_key = candidate_units(cands, nodes, b)
        gathered = [*(u.node for u in units.values()), *(n for n, _ in cands.hidden)]
        contract = contract_for(b, self.graph, units, self.pol)  # the mode's (seed 4.13)
        units, out_of_mode = contract.scope(units)
        trace_extra += out_of_mode
        for ref in b.rehydrate:
            if ref not in units and not any(d.ref == ref for d in trace_extra):
                raise InvalidInput(
                    f"--rehydrate {ref!r}: no tool exchange with that id on branch "
                    f"{b.branch!r} as known at {b.snapshot} (artifacts share their call's id)"
                )
        ctx = pipeline_context(self.pol, b, units)
        decide(contract.decide_first(list(units.values()), ctx), ctx)
        units = self._read_contents(units, ctx)
        # each call's place in the log, for its wire id (call_ids = "short")
        seqs = {u.node.id: u.position for u in units.values() if u.kind == "artifact"}
        cost = UnitCost(
            contract, b, ctx, units, self.short_ids, seqs, self.remembered, self.tok, self.chat
        )
        first = dict(ctx.decided)  # before the budget: what each record would be
        decided = fit_budget(units, ctx, cost)
        self.policy_ms += ms_since(t1)
        return Round(since, nodes, units, trace_extra, order_key, gathered, contract, ctx,
                     first, decided, seqs, cost)

    # -- recall ------------------------------------------------------------------------------
    def recall(self, rnd: Round, query: str | None) -> tuple[Round, dict[str, Any] | None]:
        """When the history does not fit (the horizon is above the start, or the budget left
        records out) and the policy's ``[recall]`` is on: bring back the older records most
        relevant to ``query`` (default: the latest user message) that the budget left out,
        within ``recall.share`` of the budget; they reach the model ``as: recalled`` in their
        place in the graph (after the stable prefix), and the recency window gives up the room
        they take. Deterministic: a recall as known at the snapshot, ties broken by time and
        id. The note says what was ranked and what became of each (``None``: no recall)."""
        from vigente.runtime.recall import MAX_QUERY_CHARS, Recall

        pol, b = self.pol, self.boundary
        if not pol.get("recall", "enabled") or not (
            rnd.since > 0 or any(d.reason == "budget" for d in rnd.decided.values())
        ):
            return rnd, None
        text = query
        if text is None and rnd.ctx.latest_user is not None:
            # what a message says never fails its assembly: a message longer than a recall
            # reads is searched by its beginning (a date it names is read as recall reads it)
            text = str(rnd.units[rnd.ctx.latest_user].node.content)[:MAX_QUERY_CHARS]
        share = int(b.budget * float(pol.get("recall", "share")))
        note: dict[str, Any] = {"query": text, "share_tokens": share,
                                "k": int(pol.get("recall", "k")), "hits": []}
        if not text or not text.strip() or share < 1:
            return rnd, note
        in_request = [u.node.seq for ref, u in rnd.units.items()
                      if rnd.decided.get(ref) is not None and rnd.decided[ref].included]
        found = Recall(self.runtime).recall(
            text, conversation=b.conversation, branch=b.branch, participant=b.participant,
            known_at=b.snapshot, k=int(pol.get("recall", "k")),
            mode=str(pol.get("recall", "mode")), exclude=in_request, ancestry=b.ancestry,
            participants=b.labels, granted=self.granted)  # what the assembly has read: not again
        hits = [h for h in found.hits if h.kind in ("message", "memory")]
        missing = [h.ref for h in hits if h.ref not in rnd.units]
        if missing:  # below the read horizon: read them too
            rnd = self.read(rnd.since, [*self.protected, *missing])
        chosen = _recalled(rnd, hits, share, note)
        note["mode"] = found.mode
        if not chosen:
            return rnd, note
        ctx = rnd.ctx
        ctx.decided.clear()
        ctx.decided.update(rnd.first)
        ctx.decided.update(chosen)
        return replace(rnd, decided=fit_budget(rnd.units, ctx, rnd.cost)), note

    # -- raw contents ------------------------------------------------------------------------
    def _read_contents(self, units: dict[str, Unit], ctx: Context) -> dict[str, Unit]:
        """Raw results are read only for exchanges already decided to go as they were, and
        only when the privacy and provider checks allow raw content; rehydration stops at
        the policy's byte budget (over it, the exchange goes as a reference). ``texts``: the
        results this assembly has read already (a content hash names the same bytes in every
        round of the read horizon)."""
        raw = _to_read(units, ctx, self.pol)
        texts = self.texts
        # the results not read yet in this assembly, in one read per conversation
        missing: dict[str, dict[str, list[str]]] = {}
        for _, _, a in raw:
            if (a.conversation_id, a.result_ref.sha256, a.result_ref.encoding) not in texts:
                missing.setdefault(a.conversation_id, {}).setdefault(
                    a.result_ref.sha256, []
                ).append(a.result_ref.encoding)
        for conversation, wanted in missing.items():
            found = self.store.runtime_contents(conversation, list(wanted))
            for sha, encodings in wanted.items():
                data = found.get(sha)
                for encoding in encodings:
                    texts[(conversation, sha, encoding)] = (
                        None if data is None else _text(data, encoding)
                    )
        out = dict(units)
        for ref, u, a in raw:
            text = texts[(a.conversation_id, a.result_ref.sha256, a.result_ref.encoding)]
            if text is not None:
                # a credential inside the result never reaches the model (invariant 10)
                text, redactions = redact_content(
                    text, a.result_ref.encoding, a.result_ref.sha256
                )
                out[ref] = replace(u, content=text, redactions=redactions)
        return out


def _recalled(
    rnd: Round, hits: Sequence[Any], share: int, note: dict[str, Any]
) -> dict[str, Decision]:
    """The recall's hits that go ``as: recalled``, best-ranked first within ``share`` tokens:
    only records the budget alone left out. Each hit's outcome is noted."""
    chosen: dict[str, Decision] = {}
    used = 0
    for rank, h in enumerate(hits, start=1):
        entry = {"ref": h.ref, "rank": rank, "score": round(h.score, 6), "why": list(h.why)}
        note["hits"].append(entry)
        unit, first = rnd.units.get(h.ref), rnd.first.get(h.ref)
        now = rnd.decided.get(h.ref)
        if unit is None or first is None or not first.included or first.as_ in PROTECTED \
                or first.as_ == "tool_exchange":
            entry["outcome"] = "not_eligible"  # left out for another reason than budget
            continue
        if now is not None and now.included:
            entry["outcome"] = "in_window"
            continue
        d = Decision(h.ref, unit.kind, f"recall.rank_{rank}:{'+'.join(h.why)}",
                     as_="recalled", position=unit.position)
        tokens = rnd.cost(unit, d)
        if used + tokens > share:
            entry["outcome"] = "no_room"
            continue
        used += tokens
        chosen[h.ref] = replace(d, tokens=tokens)
        entry["outcome"] = "recalled"
    note["tokens"] = used
    return chosen


def _to_read(
    units: dict[str, Unit], ctx: Context, pol: Policy
) -> list[tuple[str, Unit, ToolArtifact]]:
    """The raw results to read, in decision order: each exchange going as it was (or raw,
    or as recovery state) whose privacy allows raw content to this provider and that is not
    erased. A raw one over what is left of ``rehydration.max_bytes`` is decided again here:
    its memory goes instead (in the result's place), or with none a reference."""
    left = int(pol.get("rehydration", "max_bytes"))
    raw: list[tuple[str, Unit, ToolArtifact]] = []
    for ref, d in ctx.decided.items():
        u = units[ref]
        if u.kind != "artifact" or d.as_ not in ("tool_exchange", "raw", "recovery"):
            continue
        if not u.artifacts or not pol.allows("raw", ctx.privacy(u), ctx.boundary.provider):
            continue
        a = u.artifacts[-1]
        if d.as_ == "raw":
            if a.result_ref.bytes > left:
                _over_byte_budget(ref, u, ctx, units, left)
                continue
            left -= a.result_ref.bytes
        if a.result_ref.erased:
            continue
        raw.append((ref, u, a))
    return raw


def _over_byte_budget(
    ref: str, u: Unit, ctx: Context, units: dict[str, Unit], left: int
) -> None:
    """An exchange asked for raw that is over the byte budget left: its memories, held back
    as "source included", go instead (in the result's place); with none, a reference."""
    memories = [
        m
        for m in ctx.memories_of.get(ref, [])
        if ctx.decided.get(m) is not None and ctx.decided[m].as_ == "tool_exchange"
    ]
    for m in memories:
        mu = units[m]
        ctx.decided[m] = Decision(
            m,
            mu.kind,
            f"rehydration.byte_budget:{left}.memory_instead",
            as_="stale_marker" if mu.stale else "memory",
            position=mu.position,
        )
    ctx.decided[ref] = Decision(
        ref,
        u.kind,
        f"rehydration.byte_budget:{left}",
        as_=None if memories else "reference",
        reason="compacted" if memories else None,
        position=u.position,
    )
