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

from vigente.assemble.blocks import Block, digest
from vigente.assemble.call_ids import with_wire_ids
from vigente.assemble.excerpts import Excerpts, excerpt_tokens, session_of
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
from vigente.retrieval.text import fold
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
        if d.as_ == "recalled" and d.rule.startswith("recall."):
            return d.tokens  # its part of its excerpt, counted as sent (_Fill)
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
    #: the recalled records' sessions and neighbours, for their excerpts (None: no recall)
    excerpts: Excerpts | None = None


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
        best-ranked first until the recall's share of the budget is full; a short recalled
        turn brings the turns said just before and after it when they fit. They reach the model
        ``as: recalled`` in their place in the graph (after the stable prefix), as dated
        excerpts of their sessions (assemble/excerpts.py), and the recency window gives up the
        room they take. The share is ``recall.share`` of the budget, growing toward
        ``recall.max_share`` with the part of the query's best hits that lie outside the
        recency window (a query about the past), never past what the protected state leaves.
        Deterministic: a recall as known at the snapshot, ties broken by time and id. The note
        says what was ranked and what became of each (``None``: no recall)."""
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
        base = int(b.budget * float(pol.get("recall", "share")))
        note: dict[str, Any] = {"query": text, "share_tokens": base,
                                "k": int(pol.get("recall", "k")), "hits": []}
        if not text or not text.strip() or base < 1:
            return rnd, note
        # the latest user message is the call itself (or what the query stands for): never a hit
        latest = rnd.units.get(rnd.ctx.latest_user or "")
        found = Recall(self.runtime).recall(
            text, conversation=b.conversation, branch=b.branch, participant=b.participant,
            known_at=b.snapshot, k=int(pol.get("recall", "k")),
            mode=str(pol.get("recall", "mode")),
            exclude=[latest.node.seq] if latest is not None else [], ancestry=b.ancestry,
            participants=b.labels, granted=self.granted)  # what the assembly has read: not again
        hits = [h for h in found.hits if h.kind in ("message", "memory")]
        note["mode"] = found.mode
        around = self._around([h for h in hits if h.kind == "message"
                               and not _in_request(rnd, h.ref)])
        wanted = [*(h.ref for h in hits), *(r for rs in around.values() for r in rs.values())]
        missing = [r for r in dict.fromkeys(wanted) if r not in rnd.units]
        if missing:  # below the read horizon: read them too
            rnd = self.read(rnd.since, [*self.protected, *missing])
        share = _share(rnd, hits, base, b.budget, pol)
        note["share_tokens"] = share
        fill = _Fill(rnd, self.tok, share, around, note)
        excerpts, chosen = fill.take(hits)
        ctx = rnd.ctx
        while chosen:
            ctx.decided.clear()
            ctx.decided.update(rnd.first)
            ctx.decided.update(chosen)
            decided = fit_budget(rnd.units, ctx, rnd.cost)
            # the window the budget kept beside the recall (it may keep more than the fill
            # reckoned with, when the recall took less than its share): a recalled text it
            # holds goes from the recall, and the budget is fitted again
            kept = {fold(str(rnd.units[r].node.content)): r for r, d in decided.items()
                    if d.included and d.as_ != "recalled" and rnd.units[r].kind == "message"}
            twice = {r: kept[t] for r in chosen if rnd.units[r].kind == "message"
                     and (t := fold(str(rnd.units[r].node.content))) in kept}
            if not twice:
                return replace(rnd, decided=decided, excerpts=excerpts), note
            excerpts, chosen = fill.drop(twice)
        ctx.decided.clear()
        ctx.decided.update(rnd.first)
        return replace(rnd, decided=fit_budget(rnd.units, ctx, rnd.cost)), note

    def _around(self, hits: Sequence[Any]) -> dict[str, dict[str, str]]:
        """For each recalled message, the messages of the branch's ancestry said just before
        and after it (``{"before": ref, "after": ref}``, each when there is one near), read
        from the log by position."""
        b = self.boundary
        windows = dict(b.ancestry)
        out: dict[str, dict[str, str]] = {}
        for h in hits:
            near = self.store.runtime_records_after(b.conversation, max(0, h.seq - NEAR - 1),
                                                    2 * NEAR + 1)
            said = [r for r in near if r.kind == "message" and r.branch_id in windows
                    and (windows[r.branch_id] is None or r.seq <= (windows[r.branch_id] or 0))
                    and r.payload.get("role") != "system" and r.visibility != "audit"]
            seqs = [r.seq for r in said]
            if h.seq not in seqs:
                continue
            i = seqs.index(h.seq)
            sides: dict[str, str] = {}
            if i > 0:
                sides["before"] = said[i - 1].record_id
            if i + 1 < len(said):
                sides["after"] = said[i + 1].record_id
            out[h.ref] = sides
        return out

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


#: Records read on each side of a recalled message to find the turns said next to it.
NEAR = 4
#: A recalled message shorter than this (characters) brings its neighbours when they fit: a
#: short answer ("Yes, last Saturday!") says little without the turn it answers.
SHORT_TURN = 240
#: How many of the best hits say whether the query is about the past.
PROBE = 8


def _in_request(rnd: Round, ref: str) -> bool:
    d = rnd.decided.get(ref)
    return d is not None and d.included


def _share(rnd: Round, hits: Sequence[Any], base: int, budget: int, pol: Policy) -> int:
    """The recall's share of the budget: ``base`` (``recall.share``), grown toward
    ``recall.max_share`` by the part of the best :data:`PROBE` hits the recency window does
    not hold (a query whose answers the window holds is about now; one whose answers lie
    before it is about the past), and never more than the budget leaves beside the state
    that is never dropped (instructions, recovery, the latest user message, …)."""
    probe = list(hits[:PROBE])
    past = sum(1 for h in probe if not _in_request(rnd, h.ref)) / len(probe) if probe else 0.0
    most = max(float(pol.get("recall", "max_share")), float(pol.get("recall", "share")))
    share = max(base, int(budget * (float(pol.get("recall", "share"))
                                    + (most - float(pol.get("recall", "share"))) * past)))
    fixed = sum(d.tokens for ref, d in rnd.decided.items() if d.included and (
        d.as_ in PROTECTED or ref == rnd.ctx.latest_user or ref in rnd.ctx.protected))
    return max(0, min(share, budget - fixed))


def _window(rnd: Round, share: int) -> set[str]:
    """What the request keeps beside a recall of ``share`` tokens: the state never dropped
    and the newest of the rest that fit what the budget leaves (the budget drops the oldest
    first). A record of the window beyond it will be dropped: the recall may bring it back."""
    keep, droppable = set(), []
    for ref, d in rnd.decided.items():
        if not d.included:
            continue
        if d.as_ in PROTECTED or ref == rnd.ctx.latest_user or ref in rnd.ctx.protected:
            keep.add(ref)
        else:
            droppable.append((d.position, ref, d.tokens))
    room = rnd.ctx.boundary.budget - share - sum(rnd.decided[r].tokens for r in keep)
    for _, ref, tokens in sorted(droppable, reverse=True):
        if tokens > room:
            break
        room -= tokens
        keep.add(ref)
    return keep


class _Fill:
    """The recall's hits that go ``as: recalled``, best-ranked first until ``share`` tokens
    are taken, each with its short turn's neighbours when they fit: only records the budget
    alone left out, never a text the request already holds. The room is what the excerpts
    take as sent (assemble/excerpts.py). Each hit's outcome is noted."""

    def __init__(self, rnd: Round, tok: CountCache, share: int,
                 around: dict[str, dict[str, str]], note: dict[str, Any]) -> None:
        self.rnd, self.tok, self.share, self.around, self.note = rnd, tok, share, around, note
        self.chosen: dict[str, Decision] = {}
        self.excerpts = Excerpts()
        for ref, sides in around.items():  # the next message of each, as read
            if "before" in sides:
                self.excerpts.follows[sides["before"]] = ref
            if "after" in sides:
                self.excerpts.follows[ref] = sides["after"]
        self.window = _window(rnd, share)
        # texts the request keeps (the recency window), folded: never a second copy
        self.texts = {fold(str(rnd.units[ref].node.content)): ref for ref in self.window
                      if rnd.units[ref].kind == "message"}
        self.used = 0
        self.rendered: dict[str, list[Block]] = {}

    def eligible(self, ref: str) -> bool:
        """Left out by the budget alone, and not recalled already."""
        unit, first = self.rnd.units.get(ref), self.rnd.first.get(ref)
        return (unit is not None and first is not None and first.included
                and first.as_ not in PROTECTED and first.as_ != "tool_exchange"
                and ref not in self.window and ref not in self.chosen)

    def cost(self, decisions: dict[str, Decision], *, exact: bool = False) -> int:
        """The tokens of ``decisions`` as their excerpts are sent (line by line unless
        ``exact``: see :func:`~vigente.assemble.excerpts.excerpt_tokens`)."""
        units = self.rnd.units
        sessions = {ref: session_of(units[ref]) for ref in decisions}
        blocks: list[tuple[int, Block]] = [
            (units[ref].position, blk) for ref, d in decisions.items() for blk in self._blocks(d)]
        ordered = [blk for _, blk in sorted(blocks, key=lambda x: x[0])]
        return excerpt_tokens(ordered, Excerpts(sessions, self.excerpts.follows), self.tok,
                              count_message_tokens, exact=exact)

    def _blocks(self, d: Decision) -> list[Block]:
        found = self.rendered.get(d.ref)
        if found is None:
            rnd = self.rnd
            found = self.rendered[d.ref] = rnd.contract.render(rnd.units[d.ref], d,
                                                               rnd.ctx.boundary, None)
        return found

    def take(self, hits: Sequence[Any]) -> tuple[Excerpts, dict[str, Decision]]:
        taken: list[tuple[dict[str, Any], list[str]]] = []  # each hit's entry and its records
        for rank, h in enumerate(hits, start=1):
            entry: dict[str, Any] = {"ref": h.ref, "rank": rank, "score": round(h.score, 6),
                                     "why": list(h.why)}
            self.note["hits"].append(entry)
            before = set(self.chosen)
            entry["outcome"] = self._one(h, rank, entry)
            if set(self.chosen) != before:
                taken.append((entry, [r for r in self.chosen if r not in before]))
        # the set kept, counted exactly as sent: what a line-by-line count missed goes, the
        # last taken first
        while self.chosen and self.cost(self.chosen, exact=True) > self.share:
            entry, refs = taken.pop()
            entry["outcome"] = "no_room"
            entry.pop("neighbours", None)
            for ref in refs:
                del self.chosen[ref]
        return self._settled()

    def drop(self, twice: dict[str, str]) -> tuple[Excerpts, dict[str, Decision]]:
        """The recall without the records of ``twice`` (ref -> the window record holding the
        same text): each hit of them noted ``duplicate``, a neighbour taken off its hit."""
        for entry in self.note["hits"]:
            if entry["ref"] in twice and entry.get("outcome") == "recalled":
                entry["outcome"], entry["same_as"] = "duplicate", twice[entry["ref"]]
                entry.pop("neighbours", None)
            elif "neighbours" in entry:
                entry["neighbours"] = [r for r in entry["neighbours"] if r not in twice]
                if not entry["neighbours"]:
                    del entry["neighbours"]
        for ref in twice:
            self.chosen.pop(ref, None)
        return self._settled()

    def _settled(self) -> tuple[Excerpts, dict[str, Decision]]:
        self.used = self.cost(self.chosen, exact=True) if self.chosen else 0
        self.note["tokens"] = self.used
        # each decision's tokens: its part of its excerpt, in the order the excerpt says them
        # (the parts add up to what the excerpts take, counted exactly)
        ordered = sorted(self.chosen, key=lambda r: self.rnd.units[r].position)
        so_far: dict[str, Decision] = {}
        spent = 0
        for ref in ordered:
            so_far[ref] = self.chosen[ref]
            now = self.cost(so_far, exact=True) if ref == ordered[-1] else self.cost(so_far)
            self.chosen[ref] = replace(self.chosen[ref], tokens=now - spent)
            spent = now
        self.excerpts.sessions = {ref: session_of(self.rnd.units[ref]) for ref in self.chosen}
        return self.excerpts, self.chosen

    def _one(self, h: Any, rank: int, entry: dict[str, Any]) -> str:
        rnd = self.rnd
        unit, first = rnd.units.get(h.ref), rnd.first.get(h.ref)
        if unit is None or first is None or not first.included or first.as_ in PROTECTED \
                or first.as_ == "tool_exchange":
            return "not_eligible"  # left out for another reason than budget
        if unit.claimed_by is not None:
            # a model-facing writer's claim goes before anything the application logged: the
            # recall never brings one back into room the budget took from the application
            return "not_eligible"
        if h.ref in self.window:
            return "in_window"
        if h.ref in self.chosen:
            return "recalled"  # a neighbour of a better hit already
        # the texts the request holds: its window's and those recalled already (two records
        # may say the same words: the first one only is recalled)
        held = self.texts | {fold(str(rnd.units[r].node.content)): r for r in self.chosen
                             if rnd.units[r].kind == "message"}
        same = None
        if unit.kind == "message":
            same = held.get(fold(str(unit.node.content)))
            held[fold(str(unit.node.content))] = h.ref
        if same is not None:
            entry["same_as"] = same
            return "duplicate"
        d = Decision(h.ref, unit.kind, f"recall.rank_{rank}:{'+'.join(h.why)}",
                     as_="recalled", position=unit.position)
        group = {h.ref: d}
        sides = self.around.get(h.ref, {})
        if unit.kind == "message" and len(str(unit.node.content)) < SHORT_TURN:
            for side in ("before", "after"):
                ref = sides.get(side)
                if ref is None or not self.eligible(ref):
                    continue
                said = fold(str(getattr(rnd.units[ref].node, "content", "")))
                if said not in held:
                    held[said] = ref  # (the turn before and after may say the same)
                    n = rnd.units[ref]
                    group[ref] = Decision(ref, n.kind, f"recall.neighbour_of:{h.ref}",
                                          as_="recalled", position=n.position)
        # the hit with its neighbours, else with the one before, else alone
        tries = [group, {k: v for k, v in group.items() if k != sides.get("after")}, {h.ref: d}]
        for attempt in dict.fromkeys(tuple(t) for t in tries):
            trial = {**self.chosen, **{ref: group[ref] for ref in attempt}}
            tokens = self.cost(trial)
            if tokens <= self.share:
                self.chosen, self.used = trial, tokens
                for ref in attempt:
                    if unit.kind == "message":
                        self.texts[fold(str(rnd.units[ref].node.content))] = ref
                if len(attempt) > 1:
                    entry["neighbours"] = [r for r in attempt if r != h.ref]
                return "recalled"
        return "no_room"


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
