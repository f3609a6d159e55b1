"""The assembler: gathers a request's inputs from the runtime graph, runs the pipeline,
serializes, counts tokens, persists the :class:`ContextAssembly` and explains it.

It imports the kernel's time values, the :class:`~vigente.store.base.Store` contract and the
runtime's public reads, never the :class:`~vigente.api.Vigente` facade.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from vigente import telemetry
from vigente.assemble.blocks import digest
from vigente.assemble.call_ids import short_call_ids, with_wire_ids
from vigente.assemble.gather import (
    FIRST_PAGE,
    CountCache,
    Horizon,
    below,
    branch_rule,
    classify,
    protected_ids,
    replay_tokens,
    structure,
)
from vigente.assemble.modes import contract_for
from vigente.assemble.pipeline import (
    PROTECTED,
    Boundary,
    Context,
    Decision,
    Unit,
    decide,
    fit_budget,
    order,
    readings,
    retries,
    stand_ins,
)
from vigente.assemble.policy import Policy, default_policy, policy_from_document
from vigente.assemble.serialize import FORMATS, serializer
from vigente.assemble.tokens import (
    RememberingTokenizer,
    Tokenizer,
    count_message_tokens,
    tiktoken_tokenizer,
)
from vigente.errors import InvalidInput
from vigente.records.runtime import (
    MODES,
    ContinuationCheckpoint,
    Message,
    ModelRun,
    Participant,
    RuntimeRecord,
    SkillState,
    ToolArtifact,
    ToolCall,
    ToolMemory,
    UserMemory,
)
from vigente.runtime.redact import redact_content, redact_memory
from vigente.time import Instant, TimeLike, current_instant

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime

__all__ = ["ASSEMBLER_VERSION", "Assembler", "ContextAssembly"]

ASSEMBLER_VERSION = "vigente-assembler/2"
_KINDS = {
    "message": "message",
    "tool_call": "artifact",
    "artifact": "artifact",
    "memory": "memory",
    "user_memory": "memory",
    "skill_state": "skill_state",
    "checkpoint": "checkpoint",
}


@dataclass(frozen=True, slots=True)
class _Round:
    """One round of an assembly: what was read above the read horizon and how it was
    decided (``first``: before the budget; ``decided``: after it)."""

    since: int
    nodes: Any
    units: dict[str, Unit]
    trace_extra: list[Decision]
    order_key: dict[str, int]
    gathered: list[Any]
    contract: Any
    ctx: Context
    first: dict[str, Decision]
    decided: dict[str, Decision]
    seqs: dict[str, int]
    cost: Callable[[Unit, Decision], int]


@dataclass(frozen=True, slots=True)
class ContextAssembly:
    """One model request's assembly (seed 4.4): ``record`` is what is stored and what
    ``explain`` prints; ``messages`` (and ``system`` for Anthropic) the request itself."""

    id: str
    record: dict[str, Any]
    messages: list[dict[str, Any]]
    system: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
            "assembly_id": self.id,
            **{
                k: v
                for k, v in self.record.items()
                if k not in ("trace", "request", "policy_document")
            },
            "messages": self.messages,
        }
        if self.system is not None:
            out["system"] = self.system
        return out


@functools.lru_cache(maxsize=65_536)
def _iso_text(micros: int, is_date: bool) -> str:
    return Instant(micros, is_date).isoformat()


def _iso(at: Instant) -> str:
    """``at.isoformat()``, remembered (an assembly's input hash prints every record's time,
    and the next assembly most of the same)."""
    return _iso_text(at.micros, at.is_date)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _text(data: bytes, encoding: str) -> str:
    if encoding == "binary":
        return json.dumps(
            {"binary": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        )
    return data.decode("utf-8")


class Assembler:
    """``vg.assembly``: assemble a request for a participant, explain a recorded one."""

    def __init__(self, runtime: Runtime, *, tokenizer: Tokenizer | None = None) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self._tokenizer = tokenizer
        # per encoding, the counts kept between assemblies
        self._remembering: dict[str, RememberingTokenizer] = {}

    def tokenizer(self, encoding: str) -> Tokenizer:
        if self._tokenizer is not None:
            return self._tokenizer
        return tiktoken_tokenizer(encoding)

    def _remembering_tokenizer(self, encoding: str) -> RememberingTokenizer:
        """The encoding's tokenizer, remembering the counts of the texts (and of the units'
        requests) this assembler has counted before: consecutive assemblies of a conversation
        render mostly the same units."""
        found = self._remembering.get(encoding)
        if found is None:
            found = self._remembering.setdefault(
                encoding, RememberingTokenizer(self.tokenizer(encoding))
            )
        return found

    # -- assemble --------------------------------------------------------------------------
    @telemetry.traced("vigente.assemble")
    def assemble(
        self,
        conversation: str,
        branch: str,
        participant: str,
        *,
        mode: str = "chat",
        provider: str | None = None,
        format: str = "openai-chat",  # noqa: A002
        budget: int | None = None,
        policy: Policy | None = None,
        rehydrate: tuple[str, ...] | list[str] = (),
        as_of: TimeLike | None = None,
        persist: bool = True,
        query: str | None = None,
    ) -> ContextAssembly:
        """The request for ``participant``'s next model call on ``branch`` (see RUNTIME.md
        §2), and its persisted record. ``as_of``: the graph as known then (default: now).
        ``query``: what the call is about (default: the latest user message): when the history
        does not fit, the older records most relevant to it are recalled (policy ``[recall]``)."""
        if query is not None and (not isinstance(query, str) or not query.strip()
                                  or len(query) > 10_000):
            raise InvalidInput("--query must be the words the call is about (1 to 10,000 "
                               "characters)")
        started = time.perf_counter()
        created = current_instant()
        pol = policy or default_policy()
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        if format not in FORMATS:
            raise InvalidInput(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
        if budget is not None and budget < 1:
            raise InvalidInput(f"budget must be a positive number of tokens, not {budget}")
        rt = self.runtime
        k = created if as_of is None else rt.instant(as_of)
        if k > created:
            raise InvalidInput(f"--as-of {k} is in the future: give a knowledge time up to now")
        # 1. boundary -------------------------------------------------------------------
        conv = rt.conversation(conversation)
        rt.catch_up_index(conversation)
        # the structure, not the records (and the branches, for the ancestry and the counts;
        # the shares and promotions, for the candidates)
        graph, branches, granted, tools = structure(rt, conv, k, mode=mode)
        declared: dict[str, bool] = {}
        for t in tools:  # in seq order: a tool's latest declaration as known at k wins
            declared[str(t.payload["name"])] = bool(t.payload.get("read_only"))
        participants = {n.id: n for n in graph.nodes if isinstance(n, Participant)}
        if participant not in participants:
            raise InvalidInput(
                f"unknown participant {participant!r} in conversation "
                f"{conversation!r} (as known at {k}): name one of "
                f"{', '.join(sorted(participants)) or '(none)'}"
            )
        chain = tuple(rt.ancestry(conversation, branch, known_at=k, branches=branches))
        windows = dict(chain)
        runs = [
            n
            for n in graph.nodes
            if isinstance(n, ModelRun)
            and n.participant_id == participant
            and n.branch_id in windows
        ]  # (runs are read for the modes that need them: subagent, resume, scheduled, send)
        # a subagent child's request sees its own run's records; any other mode is a request
        # of a top-level run, which sees a child's records only once they are promoted
        children = [r for r in runs if r.parent_run]
        run = children[-1].id if mode == "subagent" and children else None
        the_provider = provider or participants[participant].provider
        boundary = Boundary(
            conversation,
            branch,
            participant,
            mode,
            the_provider,
            format,
            budget or pol.budget,
            tuple(dict.fromkeys(rehydrate)),
            k,
            run,
            chain,
            tuple(sorted((p.id, p.label or p.id) for p in participants.values())),
            tuple(sorted(name for name, read_only in declared.items() if read_only)),
        )
        # 2. candidates -----------------------------------------------------------------
        # The protected state is read whole; the other candidates newest first, down to a
        # read horizon lowered until the budget binds (then nothing older could have fit:
        # the budget drops the oldest first); what lies below it is counted, not read.
        protected = [*protected_ids(self.store, conversation, chain, k), *boundary.rehydrate]
        above = Horizon(self.store, conversation, k)
        remembered = self._remembering_tokenizer(pol.encoding)
        short_ids = pol.get("serialization", "call_ids") == "short"
        tok = CountCache(remembered)
        chat = serializer("openai-chat")
        page = FIRST_PAGE
        texts: dict[tuple[str, str, str], str | None] = {}  # raw results read, by hash
        timing = {"graph": 0.0, "policy": 0.0}

        def gather(since: int, include: Sequence[str]) -> _Round:
            """One round: the candidates above the read horizon ``since`` (and the records
            ``include`` names), each decided, then fitted to the budget."""
            t1 = time.perf_counter()
            nodes = above.since(since)  # every record above the horizon, read once
            cands = rt.candidates(
                conversation,
                branch,
                participant,
                known_at=k,
                run=run,
                since=since,
                include=include,
                read=nodes,
                ancestry=chain,
                granted=granted,
            )
            timing["graph"] += _ms(t1)
            t1 = time.perf_counter()
            units, trace_extra, order_key = self._units(cands, nodes, boundary)
            gathered = [*(u.node for u in units.values()), *(n for n, _ in cands.hidden)]
            contract = contract_for(boundary, graph, units, pol)  # the mode's (seed 4.13)
            units, out_of_mode = contract.scope(units)
            trace_extra += out_of_mode
            for ref in boundary.rehydrate:
                if ref not in units and not any(d.ref == ref for d in trace_extra):
                    raise InvalidInput(
                        f"--rehydrate {ref!r}: no tool exchange with that id on "
                        f"branch {branch!r} as known at {k} (artifacts share their "
                        "call's id)"
                    )
            ctx = self._context(pol, boundary, units)
            decide(contract.decide_first(list(units.values()), ctx), ctx)
            units = self._read_contents(units, ctx, pol, texts)
            # each call's place in the log, for its wire id (call_ids = "short")
            seqs = {u.node.id: u.position for u in units.values() if u.kind == "artifact"}

            def cost(
                unit: Unit,
                d: Decision,
                ctx: Context = ctx,
                units: dict[str, Unit] = units,
                contract: Any = contract,
                seqs: dict[str, int] = seqs,
            ) -> int:
                # a unit's tokens: its blocks alone as a Chat Completions request (the count
                # kept by the blocks' digest: the next round and the next request render
                # most units the same)
                blocks = contract.render(unit, d, boundary, _sole_exchange(unit, ctx, units))
                if short_ids:  # costed as sent
                    blocks = with_wire_ids(blocks, seqs)
                return remembered.remember(
                    b"b" + digest(blocks),
                    lambda: count_message_tokens(tok, chat.serialize(blocks).messages),
                )

            first = dict(ctx.decided)  # before the budget: what each record would be
            decided = fit_budget(units, ctx, cost)
            timing["policy"] += _ms(t1)
            return _Round(since, nodes, units, trace_extra, order_key, gathered, contract, ctx,
                          first, decided, seqs, cost)

        while True:
            since = above.lower(chain, page)  # with the records above it: one read
            rnd = gather(since, protected)
            decided = rnd.decided
            if since == 0 or any(d.rule.startswith("budget.") for d in decided.values()):
                break
            # read as many more as the room left asks for, at the cost per ref seen so far
            fixed = sum(d.tokens for d in decided.values() if d.included and d.as_ in PROTECTED)
            free = sum(d.tokens for d in decided.values() if d.included) - fixed
            page = max(
                page + FIRST_PAGE, int(page * (boundary.budget - fixed) / max(free, 1) * 1.1)
            )
        recall_note: dict[str, Any] | None = None
        if pol.get("recall", "enabled") and (
            since > 0 or any(d.reason == "budget" for d in decided.values())
        ):
            rnd, recall_note = self._recall(rnd, gather, protected, boundary, pol, query,
                                            granted)
            decided = rnd.decided
        since, nodes, units, trace_extra, order_key = (
            rnd.since, rnd.nodes, rnd.units, rnd.trace_extra, rnd.order_key)
        gathered, contract, ctx, seqs = rnd.gathered, rnd.contract, rnd.ctx, rnd.seqs
        in_place = stand_ins(units, ctx)
        graph_ms, policy_ms = timing["graph"], timing["policy"]
        ranges = below(
            self.store,
            conversation,
            since,
            chain,
            participant,
            [r.record_id for r in branches],
            sorted(participants),
            gathered,  # read one by one (decided in the trace), not counted again
        )
        # 3. serialize ------------------------------------------------------------------
        t2 = time.perf_counter()
        blocks = order(
            [
                (units[r].position, b)
                for r, d in decided.items()
                if d.included
                for b in contract.render(units[r], d, boundary, in_place.get(r))
            ]
        )
        call_ids: dict[str, str] = {}
        if short_ids:
            blocks, call_ids = short_call_ids(blocks, seqs)
        request = serializer(format).serialize(blocks)
        serialization_ms = _ms(t2)
        assembled = remembered.remember(
            b"r" + format.encode() + b"\0" + digest(blocks),
            lambda: (
                count_message_tokens(tok, request.messages)
                + (tok.count(request.system) if request.system else 0)
            ),
        )
        # (replay counts each record once and the store keeps the sums: nothing to remember)
        replay, replay_count = replay_tokens(
            rt, conversation, chain, k, format, CountCache(self.tokenizer(pol.encoding))
        )
        # 4. the record -----------------------------------------------------------------
        all_decisions = sorted(
            [*decided.values(), *trace_extra],
            key=lambda d: (order_key.get(d.ref, d.position), d.ref),
        )
        included = [d.as_dict() for d in all_decisions if d.included]
        # each credential taken out of what the model saw: the rule and where, not the value
        shown_as = {"artifact": ("tool_exchange", "raw", "recovery"),
                    "memory": ("memory", "stale_marker")}
        redacted = [
            {"ref": d.ref, **r.as_dict()}
            for d in all_decisions
            if d.included and d.ref in units and d.as_ in shown_as.get(d.kind, ())
            for r in units[d.ref].redactions
        ]
        omitted = [d.as_dict() for d in all_decisions if not d.included]
        counts: dict[str, int] = {}
        for d in all_decisions:
            if not d.included:
                assert d.reason is not None
                counts[d.reason] = counts.get(d.reason, 0) + 1
        for r in ranges:  # below the read horizon: counted by group, not read
            counts[r.reason] = counts.get(r.reason, 0) + r.records
        inputs = {
            "policy": pol.hash,
            "assembler": ASSEMBLER_VERSION,
            "conversation": conversation,
            "branch": branch,
            "participant": participant,
            "mode": mode,
            "provider": the_provider,
            "format": format,
            "budget": boundary.budget,
            "rehydrate": list(boundary.rehydrate),
            "snapshot": k.isoformat(),
            "records": sorted(
                {
                    *(
                        (m.KIND, m.id, m.seq, _iso(m.known_from))
                        for m in [*graph.nodes, *(u.node for u in units.values())]
                    ),
                    *((t.kind, t.record_id, t.seq, _iso(t.known_from)) for t in tools),
                    *((r.kind, r.record_id, r.seq, _iso(r.known_from)) for r in nodes),
                }
            ),
            "horizon": [since, [r.as_dict() for r in ranges]],
            "query": query,
        }
        selection = [[d.ref, d.kind, d.as_, d.reason] for d in all_decisions]
        record: dict[str, Any] = {
            "policy": pol.summary(),
            "assembler_version": ASSEMBLER_VERSION,
            "snapshot": k.isoformat(),
            "created_at": created.isoformat(),
            "conversation": conversation,
            "branch": branch,
            "participant": participant,
            "mode": mode,
            "mode_contract": contract.record,
            "provider": the_provider,
            "format": format,
            "budget": boundary.budget,
            "rehydrate": list(boundary.rehydrate),
            "included": included,
            "omitted": omitted,
            "omission_counts": counts,
            "redactions": redacted,
            "horizon": {"before_seq": since, "not_read": [r.as_dict() for r in ranges]},
            "recall": recall_note,
            "query": query,
            "call_ids": call_ids,
            "tokens": {"assembled": assembled, "replay": replay, "encoding": tok.name},
            "counts": {
                "replay_messages": replay_count,
                "assembled_messages": len(request.messages),
                "memories": sum(1 for d in included if d["as"] in ("memory", "stale_marker")),
                "raw_artifacts": sum(1 for d in included if d["as"] == "raw"),
            },
            "rehydrated": [
                {"ref": d["ref"], "bytes": self._bytes(units[d["ref"]])}
                for d in included
                if d["as"] == "raw"
            ],
            "timings_ms": {
                "graph_query": graph_ms,
                "policy_evaluation": policy_ms,
                "serialization": serialization_ms,
                "total": _ms(started),
            },
            "inputs_hash": hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest(),
            "selection_hash": hashlib.sha256(json.dumps(selection).encode()).hexdigest(),
            "messages_hash": hashlib.sha256(
                json.dumps(
                    [request.system, request.messages], sort_keys=True, ensure_ascii=False
                ).encode()
            ).hexdigest(),
            "policy_document": pol.document,
        }
        assembly_id = "asm_" + uuid.uuid4().hex
        _observe(assembly_id, record, participants[participant].model, branch, windows,
                 nodes, decided, trace_extra, ranges)
        if persist:
            with self.store.transaction():
                self.store.append_runtime_assembly(
                    assembly_id,
                    conversation,
                    created.micros,
                    k.micros,
                    json.dumps(record, sort_keys=True, ensure_ascii=False),
                )
        return ContextAssembly(assembly_id, record, request.messages, request.system)

    @staticmethod
    def _bytes(unit: Unit) -> int:
        return len((unit.content or "").encode())

    def _units(
        self, cands: Any, nodes: Sequence[Any], boundary: Boundary
    ) -> tuple[dict[str, Unit], list[Decision], dict[str, int]]:
        """The candidates as units (a call with its artifacts is one), the decisions for what
        was never allowed to compete (hidden, other branches, other participants) among the
        records read (``nodes``: the stored rows above the read horizon), and the graph
        position of every ref (the trace's order)."""
        units: dict[str, Unit] = {}
        artifacts: dict[str, list[ToolArtifact]] = {}
        calls: dict[str, tuple[ToolCall, Any]] = {}
        for c in cands.records:
            n = c.node
            if isinstance(n, ToolArtifact):
                artifacts.setdefault(n.target_id, []).append(n)
            elif isinstance(n, ToolCall):
                calls[n.id] = (n, c)
            elif isinstance(n, Message):
                units[n.id] = Unit(n.id, "message", n.seq, n, c.reach)
            elif isinstance(n, ToolMemory | UserMemory):
                # what the model may see of it: no credential (runtime/redact.py)
                shown, redactions = redact_memory(n)
                units[n.id] = Unit(
                    n.id,
                    "memory",
                    getattr(n, "anchor", None) or n.seq,
                    shown,
                    c.reach,
                    superseded_by=c.superseded_by,
                    conflicts=c.conflicts_with,
                    stale=c.stale,
                    redactions=redactions,
                )
            elif isinstance(n, SkillState | ContinuationCheckpoint):
                units[n.id] = Unit(n.id, n.KIND, n.seq, n, c.reach)
        hidden_results = {n.target_id for n, _ in cands.hidden if n.KIND == "artifact"}
        for cid, (call, c) in calls.items():
            found = tuple(sorted(artifacts.pop(cid, []), key=lambda a: a.seq))
            if not found and cid in hidden_results:
                continue  # its result is kept from the model (audit only): decided below
            status = found[-1].status if found else "pending"
            units[cid] = Unit(cid, "artifact", call.seq, call, c.reach, found, status)
        # artifacts whose call is not a candidate (an artifact shared alone): a reference
        for cid, alone in artifacts.items():
            a = alone[-1]
            units.setdefault(
                cid,
                Unit(cid, "artifact", a.anchor, _orphan_call(a), "shared", tuple(alone), a.status),
            )
        position = {n.record_id: (n.seq if n.kind != "artifact" else n.anchor) for n in nodes}
        for n in nodes:
            if n.kind == "artifact":
                position[n.target_id] = n.anchor
        for u in units.values():
            position.setdefault(u.ref, u.position)
        extra: list[Decision] = []
        seen = set(units)
        for node, reason in cands.hidden:
            ref = node.target_id if node.KIND == "artifact" else node.id
            kind = _KINDS.get(node.KIND)
            if kind is None or ref in seen:
                continue
            seen.add(ref)
            rule = (
                "visibility.audit_only"
                if reason == "audit_only"
                else "promotion.child_run_not_promoted"
            )
            pos = position.get(ref, node.anchor if node.KIND == "artifact" else node.seq)
            extra.append(Decision(ref, kind, rule, reason=reason, position=pos))
        windows = dict(boundary.ancestry)
        for n in nodes:  # stored rows (RuntimeRecord): their columns are enough here
            kind = _KINDS.get(n.kind)
            if kind is None:
                continue
            ref = n.target_id if n.kind == "artifact" else n.record_id
            if ref in seen:
                continue
            seen.add(ref)
            branch = getattr(n, "branch_id", None)
            pos = position[ref]
            if branch is not None and (
                branch not in windows
                or (windows[branch] is not None and pos > (windows[branch] or 0))
            ):
                extra.append(
                    Decision(
                        ref,
                        kind,
                        branch_rule(branch, windows),
                        reason="other_branch",
                        position=pos,
                    )
                )
            elif getattr(n, "visibility", None) == "audit":
                extra.append(
                    Decision(ref, kind, "visibility.audit_only", reason="audit_only", position=pos)
                )
            else:
                owner = getattr(n, "participant_id", None)
                extra.append(
                    Decision(
                        ref,
                        kind,
                        f"ownership.private_to:{owner}",
                        reason="participant_private",
                        position=pos,
                    )
                )
        return units, extra, position

    def _recall(
        self,
        rnd: _Round,
        gather: Callable[[int, Sequence[str]], _Round],
        protected: Sequence[str],
        boundary: Boundary,
        pol: Policy,
        query: str | None,
        granted: Sequence[RuntimeRecord],
    ) -> tuple[_Round, dict[str, Any]]:
        """Bring back the older records most relevant to ``query`` (default: the latest user
        message) that the budget left out, within ``recall.share`` of the budget; they reach
        the model ``as: recalled`` in their place in the graph (after the stable prefix), and
        the recency window gives up the room they take. Deterministic: a recall as known at
        the snapshot, ties broken by time and id."""
        from vigente.runtime.recall import Recall

        ctx = rnd.ctx
        text = query
        if text is None and ctx.latest_user is not None:
            text = str(rnd.units[ctx.latest_user].node.content)
        share = int(boundary.budget * float(pol.get("recall", "share")))
        note: dict[str, Any] = {"query": text, "share_tokens": share,
                                "k": int(pol.get("recall", "k")), "hits": []}
        if not text or not text.strip() or share < 1:
            return rnd, note
        in_request = [u.node.seq for ref, u in rnd.units.items()
                      if rnd.decided.get(ref) is not None and rnd.decided[ref].included]
        found = Recall(self.runtime).recall(
            text, conversation=boundary.conversation, branch=boundary.branch,
            participant=boundary.participant, known_at=boundary.snapshot,
            k=int(pol.get("recall", "k")), mode=str(pol.get("recall", "mode")),
            exclude=in_request, ancestry=boundary.ancestry, participants=boundary.labels,
            granted=granted)  # what the assembly has read: not read again
        hits = [h for h in found.hits if h.kind in ("message", "memory")]
        missing = [h.ref for h in hits if h.ref not in rnd.units]
        if missing:  # below the read horizon: read them too
            rnd = gather(rnd.since, [*protected, *missing])
            ctx = rnd.ctx
        chosen: dict[str, Decision] = {}
        used = 0
        for rank, h in enumerate(hits, start=1):
            entry = {"ref": h.ref, "rank": rank, "score": round(h.score, 6),
                     "why": list(h.why)}
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
        note["mode"] = found.mode
        if not chosen:
            return rnd, note
        ctx.decided.clear()
        ctx.decided.update(rnd.first)
        ctx.decided.update(chosen)
        return replace(rnd, decided=fit_budget(rnd.units, ctx, rnd.cost)), note

    def _context(self, pol: Policy, boundary: Boundary, units: dict[str, Unit]) -> Context:
        ctx = Context(pol, boundary)
        exchanges = sorted(
            (u for u in units.values() if u.kind == "artifact"), key=lambda u: u.position
        )
        for u in exchanges:
            for a in u.artifacts:
                ctx.exchange_of[a.id] = u.ref
        for u in units.values():
            # a writer's assertion is not a memory of the result: it never stands in its place
            if u.kind == "memory" and isinstance(u.node, ToolMemory) and not u.node.asserted:
                for s in u.node.sources:
                    call = ctx.exchange_of.get(s, s)
                    ctx.memories_of.setdefault(call, []).append(u.ref)
        ctx.retried = retries(units)
        ctx.stale = frozenset(u.ref for u in units.values() if u.kind == "memory" and u.stale)
        limit = pol.get("recency", "tool_exchanges")
        max_bytes = pol.get("recency", "max_result_bytes")
        at_once = pol.get("recency", "compact_lossless")
        fine = [
            u
            for u in exchanges
            if u.status == "succeeded"
            and u.artifacts
            and not any(a.retry_critical for a in u.artifacts)  # recovery keeps those
            and u.artifacts[-1].result_ref.bytes <= max_bytes
            and not (at_once and _lossless(u, ctx, units))
            and not ctx.stale_source(u.ref)  # its stale memory's marker goes instead
        ]
        users = [u for u in units.values() if u.kind == "message" and u.node.role == "user"]
        latest_user = max(users, key=lambda u: u.position) if users else None
        ctx.latest_user = latest_user.ref if latest_user is not None else None
        if pol.get("recency", "scope") == "turn" and latest_user is not None:
            fine = [u for u in fine if u.position > latest_user.position]
        ctx.recent = frozenset(u.ref for u in (fine[-limit:] if limit else []))
        when = pol.get("supersession", "newer_reading")
        if when == "at_once" or (when == "next_turn" and latest_user is None):
            ctx.newer = readings(units, ctx)
        elif when == "next_turn" and latest_user is not None:
            ctx.newer = readings(units, ctx, before=latest_user.position)
        for kind, attr in (("skill_state", "latest_skill"), ("checkpoint", "latest_checkpoint")):
            found = [u for u in units.values() if u.kind == kind]
            setattr(ctx, attr, max(found, key=lambda u: u.position).ref if found else None)
        return ctx

    def _read_contents(
        self,
        units: dict[str, Unit],
        ctx: Context,
        pol: Policy,
        texts: dict[tuple[str, str, str], str | None],
    ) -> dict[str, Unit]:
        """Raw results are read only for exchanges already decided to go as they were, and
        only when the privacy and provider checks allow raw content; rehydration stops at
        the policy's byte budget (over it, the exchange goes as a reference). ``texts``: the
        results this assembly has read already (a content hash names the same bytes in every
        round of the read horizon)."""
        from dataclasses import replace

        left = int(pol.get("rehydration", "max_bytes"))
        out = dict(units)
        raw: list[tuple[str, Unit, ToolArtifact]] = []  # results to read, in decision order
        for ref, d in ctx.decided.items():
            u = units[ref]
            if u.kind != "artifact" or d.as_ not in ("tool_exchange", "raw", "recovery"):
                continue
            if not u.artifacts or not pol.allows("raw", ctx.privacy(u), ctx.boundary.provider):
                continue
            a = u.artifacts[-1]
            if d.as_ == "raw":
                if a.result_ref.bytes > left:
                    # over the byte budget: its memory, held back as "source included", goes
                    # instead (in the result's place); with none, a reference
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
                    continue
                left -= a.result_ref.bytes
            if a.result_ref.erased:
                continue
            raw.append((ref, u, a))
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
        for ref, u, a in raw:
            text = texts[(a.conversation_id, a.result_ref.sha256, a.result_ref.encoding)]
            if text is not None:
                # a credential inside the result never reaches the model (invariant 10)
                text, redactions = redact_content(
                    text, a.result_ref.encoding, a.result_ref.sha256
                )
                out[ref] = replace(u, content=text, redactions=redactions)
        return out

    # -- explain ---------------------------------------------------------------------------
    def record(self, assembly_id: str) -> dict[str, Any]:
        found = self.store.runtime_assembly(assembly_id)
        if found is None:
            raise InvalidInput(
                f"unknown assembly {assembly_id!r}: assembly ids are printed by "
                "`vigente assemble --json` (assembly_id)"
            )
        record: dict[str, Any] = json.loads(found[1])
        return record

    def explain(self, assembly_id: str) -> dict[str, Any]:
        """The stored record: what was included and how, what was omitted and why."""
        record = self.record(assembly_id)
        return {
            "assembly_id": assembly_id,
            **{k: v for k, v in record.items() if k != "policy_document"},
        }

    def why_not(self, assembly_id: str, ref: str) -> dict[str, Any]:
        """The rule that omitted ``ref`` (or included it), or why it was never a candidate.
        ``ref`` may be a short wire id the request gave a tool call (``c12``): the call's."""
        record = self.record(assembly_id)
        decided = {d["ref"] for d in (*record["included"], *record["omitted"])}
        wire = record.get("call_ids", {})
        if ref not in decided and ref in wire:
            ref = wire[ref]
        for d in record["omitted"]:
            if d["ref"] == ref:
                out = {
                    "ref": ref,
                    "candidate": True,
                    "reason": d["reason"],
                    "rule": d["rule"],
                    "kind": d["kind"],
                }
                if d["reason"] == "budget":
                    out["recall"] = _not_recalled(record, ref)
                return out
        for d in record["included"]:
            if d["ref"] == ref:
                return {
                    "ref": ref,
                    "candidate": True,
                    "reason": None,
                    "rule": d["rule"],
                    "kind": d["kind"],
                    "included_as": d["as"],
                }
        conversation = record["conversation"]
        since = record.get("horizon", {}).get("before_seq", 0)
        if since:
            # below the read horizon: not read, its reason follows from its group
            k = self.runtime.instant(record["snapshot"])
            chain = tuple(self.runtime.ancestry(conversation, record["branch"], known_at=k))
            for r in self.store.runtime_records(conversation, record_ids=[ref], known_at=k):
                if r.kind in _KINDS and r.kind != "artifact" and r.seq < since:
                    reason, rule = classify(
                        r.branch_id,
                        r.participant_id,
                        r.visibility,
                        r.seq,
                        chain,
                        record["participant"],
                        since,
                    )
                    out = {
                        "ref": ref,
                        "candidate": True,
                        "reason": reason,
                        "rule": rule,
                        "kind": _KINDS[r.kind],
                        "read": False,
                    }
                    if reason == "budget":
                        out["recall"] = _not_recalled(record, ref)
                    return out
        homes = [kind for c, kind in self.store.runtime_record_homes(ref) if c == conversation]
        if not homes:
            base = ref.split("@")[0]
            rule = (
                f"never a candidate: no record of conversation {conversation!r} has this id"
                if base == ref
                else f"never a candidate: {ref!r} is a later result of {base!r}"
            )
        else:
            kinds = ", ".join(sorted(set(homes)))
            rule = (
                f"never a candidate: a {kinds} record is not context (it was not known at "
                f"{record['snapshot']}, or it is structure: runs, branches, participants, "
                "links)"
            )
        return {"ref": ref, "candidate": False, "reason": None, "rule": rule}

    def diff(self, before: str, after: str) -> dict[str, Any]:
        """What changed between two model calls: records that reached the model only in
        ``after`` (added), only in ``before`` (removed, with why ``after`` left them out), and
        records included both times in another way."""
        a, b = self.record(before), self.record(after)

        def state(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
            return {d["ref"]: d for d in record["included"] + record["omitted"]}

        sa, sb = state(a), state(b)
        added: list[dict[str, Any]] = []
        removed: list[dict[str, Any]] = []
        changed: list[dict[str, Any]] = []
        for ref in sorted(set(sa) | set(sb)):
            x, y = sa.get(ref), sb.get(ref)
            x_in = x is not None and "as" in x
            y_in = y is not None and "as" in y
            if y is not None and y_in and not x_in:
                added.append({**y, "before": None if x is None else x.get("reason")})
            elif x is not None and x_in and not y_in:
                removed.append(
                    {
                        **x,
                        "after": None if y is None else y.get("reason"),
                        "after_rule": None if y is None else y.get("rule"),
                    }
                )
            elif x_in and y_in and x is not None and y is not None and x["as"] != y["as"]:
                changed.append(
                    {
                        "ref": ref,
                        "kind": y["kind"],
                        "before": x["as"],
                        "after": y["as"],
                        "rule": y["rule"],
                    }
                )
        return {
            "before": before,
            "after": after,
            "policy_changed": a["policy"] != b["policy"],
            "snapshots": [a["snapshot"], b["snapshot"]],
            "tokens": [a["tokens"]["assembled"], b["tokens"]["assembled"]],
            "added": added,
            "removed": removed,
            "changed": changed,
        }

    def rebuild(self, assembly_id: str) -> dict[str, Any]:
        """Assemble again from the stored snapshot and policy (nothing stored); does the
        selection match?"""
        record = self.record(assembly_id)
        pol = policy_from_document(record["policy_document"], "stored")
        again = self.assemble(
            record["conversation"],
            record["branch"],
            record["participant"],
            mode=record["mode"],
            provider=record["provider"],
            format=record["format"],
            budget=record["budget"],
            policy=pol,
            rehydrate=tuple(record["rehydrate"]),
            as_of=record["snapshot"],
            persist=False,
            query=record.get("query"),
        )
        new = again.record
        diff = {
            key: {"stored": record.get(key), "rebuilt": new.get(key)}
            for key in ("included", "omitted", "inputs_hash", "messages_hash")
            if record.get(key) != new.get(key)
        }
        return {
            "assembly_id": assembly_id,
            "matches": not diff,
            "selection_matches": record["selection_hash"] == new["selection_hash"],
            "inputs_match": record["inputs_hash"] == new["inputs_hash"],
            "messages_match": record["messages_hash"] == new["messages_hash"],
            "policy": record["policy"],
            "snapshot": record["snapshot"],
            "differences": diff,
        }


def _observe(
    assembly_id: str,
    record: dict[str, Any],
    model: str,
    branch: str,
    windows: dict[str, Any],
    nodes: Sequence[Any],
    decided: dict[str, Decision],
    trace_extra: Sequence[Decision],
    ranges: Sequence[Any],
) -> None:
    """The assembly's telemetry: its span's attributes and its metrics, omissions counted by
    reason and by the branch the record was on (active, inherited from an ancestor, another
    branch, or below the read horizon: not read). Nothing is computed when telemetry is off."""
    current = trace.get_current_span()
    if not (telemetry.recording() or current.is_recording()):
        return
    on: dict[str, str | None] = {}
    for n in nodes:
        on[n.target_id if n.kind == "artifact" else n.record_id] = getattr(n, "branch_id", None)
    omissions: dict[tuple[str, str], int] = {}
    for d in [*decided.values(), *trace_extra]:
        if d.included or d.reason is None:
            continue
        where = on.get(d.ref)
        relation = ("other" if d.reason == "other_branch" or (where and where not in windows)
                    else "active" if where in (None, branch) else "inherited")
        omissions[d.reason, relation] = omissions.get((d.reason, relation), 0) + 1
    for r in ranges:
        omissions[r.reason, "not_read"] = omissions.get((r.reason, "not_read"), 0) + r.records
    included = telemetry.included_counts(record)
    telemetry.record_assembly(record, included, omissions)
    if current.is_recording():
        current.set_attributes(telemetry.assembly_attributes(assembly_id, record, model=model,
                                                             included=included))


def _not_recalled(record: dict[str, Any], ref: str) -> str:
    """Why a record the budget left out was not recalled either (explain --why-not)."""
    note = record.get("recall")
    if not note:
        return ("no recall ran: the history fit the budget, or the policy's [recall] is off")
    query = note.get("query")
    if not query:
        return "no recall ran: there was no query (no --query and no user message)"
    for hit in note.get("hits", []):
        if hit["ref"] == ref:
            why = {
                "no_room": f"it did not fit the recall's share ({note['share_tokens']} tokens, "
                           f"{note.get('tokens', 0)} used by better-ranked records)",
                "not_eligible": "it was left out for another reason than the budget",
                "in_window": "it was in the recency window",
            }.get(hit.get("outcome", ""), hit.get("outcome", ""))
            return f"ranked {hit['rank']} for the query {query!r}, but {why}"
    return (f"not among the records recalled for the query {query!r} (the {note.get('k')} "
            "most relevant as `vigente recall` ranks them at the snapshot, "
            f"{len(note.get('hits', []))} of them eligible)")


def _lossless(exchange: Unit, ctx: Context, units: dict[str, Unit]) -> bool:
    """Does a memory derived from this exchange alone hold every value of its result (the
    runtime decoded it back to the result: ``ToolMemory.lossless``)? It can then stand in the
    result's place from the start, and the request never has to change there later."""
    for ref in ctx.memories_of.get(exchange.ref, []):
        node = units[ref].node if ref in units else None
        if (
            isinstance(node, ToolMemory)
            and node.extractor is not None
            and node.facts
            and node.lossless
            and ctx.sole_call(node) == exchange.ref
        ):
            return True
    return False


def _sole_exchange(unit: Unit, ctx: Context, units: dict[str, Unit]) -> Unit | None:
    """The one tool exchange a tool memory was derived from, when it is a candidate (the
    memory then goes in that result's place: see :func:`~vigente.assemble.pipeline.render`)."""
    if unit.kind != "memory" or not isinstance(unit.node, ToolMemory) or unit.node.asserted:
        return None
    call = ctx.sole_call(unit.node)
    return units.get(call) if call is not None else None


def _orphan_call(a: ToolArtifact) -> ToolCall:
    return ToolCall(
        a.conversation_id,
        a.target_id,
        a.known_from,
        a.run_id,
        a.branch_id,
        a.participant_id,
        a.tool_name,
        {},
        seq=a.anchor,
    )
