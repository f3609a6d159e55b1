"""The assembler: gathers a request's inputs from the runtime graph, runs the pipeline,
serializes, counts tokens, persists the :class:`ContextAssembly` and explains it.

An assembly goes in four steps, each a method or module of its own:

1. the boundary (:meth:`Assembler._structure`): the graph's structure as known at the
   snapshot, the participant, the branch's ancestry, the run, the tools declared read-only;
2. the candidates (:class:`~vigente.assemble.rounds.Rounds`): read down to a read horizon
   lowered until the budget binds, decided and fitted (:mod:`~vigente.assemble.units`,
   :mod:`~vigente.assemble.pipeline`), then a recall;
3. the request (:meth:`Assembler._serialize`): the blocks in order, serialized for the
   provider's format and counted;
4. the record (:meth:`Assembler._record`): the trace, the counts, the hashes ``rebuild``
   compares; stored, and read back by :mod:`~vigente.assemble.explain`.

It imports the kernel's time values, the :class:`~vigente.store.base.Store` contract and the
runtime's public reads, never the :class:`~vigente.api.Vigente` facade.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from vigente import telemetry
from vigente.assemble.blocks import digest
from vigente.assemble.call_ids import short_call_ids
from vigente.assemble.excerpts import merge_excerpts
from vigente.assemble.explain import assembly_diff, explained, rebuilt, stored_record, why_not
from vigente.assemble.gather import CountCache, below, replay_tokens, structure
from vigente.assemble.pipeline import Boundary, Decision, Unit, order, stand_ins
from vigente.assemble.policy import Policy, default_policy, policy_from_document
from vigente.assemble.rounds import Round, Rounds, ms_since
from vigente.assemble.serialize import FORMATS, Request, serializer
from vigente.assemble.tokens import (
    RememberingTokenizer,
    Tokenizer,
    count_message_tokens,
    tiktoken_tokenizer,
)
from vigente.errors import ClockAheadError, InvalidInput
from vigente.records.runtime import MODES, ModelRun, Participant, RuntimeRecord
from vigente.runtime.reader import Graph
from vigente.time import Instant, TimeLike, current_instant

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime

__all__ = ["ASSEMBLER_VERSION", "Assembler", "ContextAssembly"]

ASSEMBLER_VERSION = "vigente-assembler/2"


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


@dataclass(frozen=True, slots=True)
class _Structure:
    """What an assembly knows before it reads a record: the graph's structure as known at
    the snapshot (its branch, share and promotion records, its tool declarations, its
    participants) and the request's boundary."""

    boundary: Boundary
    graph: Graph
    branches: list[RuntimeRecord]
    granted: list[RuntimeRecord]
    tools: list[RuntimeRecord]
    participants: dict[str, Participant]


@dataclass(frozen=True, slots=True)
class _Serialized:
    """The request as the provider's format has it, and what it costs: its tokens
    (``assembled``), transcript replay's (``replay``, ``replay_messages``) for comparison."""

    request: Request
    call_ids: dict[str, str]  # a short wire id -> the call's id (call_ids = "short")
    assembled: int
    replay: int
    replay_messages: int
    ms: float


@functools.lru_cache(maxsize=65_536)
def _iso_text(micros: int, is_date: bool) -> str:
    return Instant(micros, is_date).isoformat()


def _iso(at: Instant) -> str:
    """``at.isoformat()``, remembered (an assembly's input hash prints every record's time,
    and the next assembly most of the same)."""
    return _iso_text(at.micros, at.is_date)


def _sha256(value: Any, **dumps: Any) -> str:
    return hashlib.sha256(json.dumps(value, **dumps).encode()).hexdigest()


def _check_request(query: str | None, mode: str, fmt: str, budget: int | None) -> None:
    """``InvalidInput`` for a request no assembly can answer, before anything is read."""
    if query is not None and (not isinstance(query, str) or not query.strip()
                              or len(query) > 10_000):
        raise InvalidInput("--query must be the words the call is about (1 to 10,000 "
                           "characters)")
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if budget is not None and budget < 1:
        raise InvalidInput(f"budget must be a positive number of tokens, not {budget}")


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
        _check_request(query, mode, format, budget)
        started = time.perf_counter()
        created = current_instant()
        pol = policy or default_policy()
        k = created if as_of is None else self.runtime.instant(as_of)
        if k > created:
            raise ClockAheadError(f"--as-of {k} is in the future (after the store's clock, "
                                  f"{created}): give a knowledge time up to now")
        # 1. boundary
        s = self._structure(conversation, branch, participant, k, mode=mode, provider=provider,
                            format=format, budget=budget or pol.budget, rehydrate=rehydrate)
        # 2. candidates: the protected state whole, the others newest first down to a read
        # horizon lowered until the budget binds; what lies below it is counted, not read
        rounds = Rounds(self.runtime, s.boundary, s.graph, s.granted, pol,
                        self._remembering_tokenizer(pol.encoding))
        rnd, recall_note = rounds.recall(rounds.fill(), query)
        in_place = stand_ins(rnd.units, rnd.ctx)
        timings = {"graph_query": rounds.graph_ms, "policy_evaluation": rounds.policy_ms}
        ranges = below(
            self.store,
            conversation,
            rnd.since,
            s.boundary.ancestry,
            participant,
            [r.record_id for r in s.branches],
            sorted(s.participants),
            rnd.gathered,  # read one by one (decided in the trace), not counted again
        )
        # 3. serialize
        out = self._serialize(rnd, s.boundary, in_place, rounds, pol)
        timings["serialization"] = out.ms
        # 4. the record
        stood_in = frozenset(
            u.ref for m, u in in_place.items() if m in rnd.decided and rnd.decided[m].included
        )
        record = self._record(s, pol, rnd, ranges, recall_note, query, out, rounds.tok.name,
                              created, timings, started, stood_in)
        assembly_id = "asm_" + uuid.uuid4().hex
        _observe(assembly_id, record, s.participants[participant].model, branch,
                 dict(s.boundary.ancestry), rnd.nodes, rnd.decided, rnd.trace_extra, ranges)
        if persist:
            with self.store.transaction():
                self.store.append_runtime_assembly(
                    assembly_id,
                    conversation,
                    created.micros,
                    k.micros,
                    json.dumps(record, sort_keys=True, ensure_ascii=False),
                )
        return ContextAssembly(assembly_id, record, out.request.messages, out.request.system)

    def _structure(
        self,
        conversation: str,
        branch: str,
        participant: str,
        k: Instant,
        *,
        mode: str,
        provider: str | None,
        format: str,  # noqa: A002
        budget: int,
        rehydrate: Sequence[str],
    ) -> _Structure:
        """The structure, not the records (and the branches, for the ancestry and the counts;
        the shares and promotions, for the candidates), and the request's boundary."""
        rt = self.runtime
        conv = rt.conversation(conversation)
        rt.catch_up_index(conversation)
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
        boundary = Boundary(
            conversation,
            branch,
            participant,
            mode,
            provider or participants[participant].provider,
            format,
            budget,
            tuple(dict.fromkeys(rehydrate)),
            k,
            run,
            chain,
            tuple(sorted((p.id, p.label or p.id) for p in participants.values())),
            tuple(sorted(name for name, read_only in declared.items() if read_only)),
        )
        return _Structure(boundary, graph, branches, granted, tools, participants)

    def _serialize(
        self,
        rnd: Round,
        boundary: Boundary,
        in_place: dict[str, Unit],
        rounds: Rounds,
        pol: Policy,
    ) -> _Serialized:
        """The included units' blocks in order (instructions first), with short wire ids
        when the policy asks, serialized in the boundary's format and counted; and the
        tokens transcript replay would send."""
        t2 = time.perf_counter()
        units, contract = rnd.units, rnd.contract
        blocks = order(
            [
                (units[r].position, b)
                for r, d in rnd.decided.items()
                if d.included
                for b in contract.render(units[r], d, boundary, in_place.get(r))
            ]
        )
        blocks = merge_excerpts(blocks, rnd.excerpts)  # recalled turns: one excerpt a session
        call_ids: dict[str, str] = {}
        if rounds.short_ids:
            blocks, call_ids = short_call_ids(blocks, rnd.seqs)
        request = serializer(boundary.format).serialize(blocks)
        serialization_ms = ms_since(t2)
        tok = rounds.tok
        assembled = rounds.remembered.remember(
            b"r" + boundary.format.encode() + b"\0" + digest(blocks),
            lambda: (
                count_message_tokens(tok, request.messages)
                + (tok.count(request.system) if request.system else 0)
            ),
        )
        # (replay counts each record once and the store keeps the sums: nothing to remember)
        replay, replay_count = replay_tokens(
            self.runtime, boundary.conversation, boundary.ancestry, boundary.snapshot,
            boundary.format, CountCache(self.tokenizer(pol.encoding)))
        return _Serialized(request, call_ids, assembled, replay, replay_count, serialization_ms)

    def _record(
        self,
        s: _Structure,
        pol: Policy,
        rnd: Round,
        ranges: Sequence[Any],
        recall_note: dict[str, Any] | None,
        query: str | None,
        out: _Serialized,
        encoding: str,
        created: Instant,
        timings: dict[str, float],
        started: float,
        stood_in: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """What is stored and what ``explain`` prints: every decision in graph order (the
        included, the omitted with their rule), the omission counts (below the read horizon
        by group), the redactions, and the hashes of the inputs, the selection and the
        messages that ``rebuild`` compares."""
        b = s.boundary
        decisions = sorted(
            [*rnd.decided.values(), *rnd.trace_extra],
            key=lambda d: (rnd.order_key.get(d.ref, d.position), d.ref),
        )
        decisions = _with_claims(decisions, rnd.units)
        included = [d.as_dict() for d in decisions if d.included]
        request = out.request
        inputs = _inputs(s, pol, rnd, ranges, query)
        return {
            "policy": pol.summary(),
            "assembler_version": ASSEMBLER_VERSION,
            "snapshot": b.snapshot.isoformat(),
            "created_at": created.isoformat(),
            "conversation": b.conversation,
            "branch": b.branch,
            "participant": b.participant,
            "mode": b.mode,
            "mode_contract": rnd.contract.record,
            "provider": b.provider,
            "format": b.format,
            "budget": b.budget,
            "rehydrate": list(b.rehydrate),
            "included": included,
            "omitted": [d.as_dict() for d in decisions if not d.included],
            "omission_counts": _omission_counts(decisions, ranges),
            "redactions": _redactions(decisions, rnd.units, stood_in),
            "horizon": {"before_seq": rnd.since, "not_read": [r.as_dict() for r in ranges]},
            "recall": recall_note,
            "query": query,
            "call_ids": out.call_ids,
            "tokens": {"assembled": out.assembled, "replay": out.replay, "encoding": encoding},
            "counts": {
                "replay_messages": out.replay_messages,
                "assembled_messages": len(request.messages),
                "memories": sum(1 for d in included if d["as"] in ("memory", "stale_marker")),
                "raw_artifacts": sum(1 for d in included if d["as"] == "raw"),
            },
            "rehydrated": [
                {"ref": d["ref"], "bytes": len((rnd.units[d["ref"]].content or "").encode())}
                for d in included
                if d["as"] == "raw"
            ],
            "timings_ms": {**timings, "total": ms_since(started)},
            "inputs_hash": _sha256(inputs, sort_keys=True),
            "selection_hash": _sha256([[d.ref, d.kind, d.as_, d.reason] for d in decisions]),
            "messages_hash": _sha256(
                [request.system, request.messages], sort_keys=True, ensure_ascii=False
            ),
            "policy_document": pol.document,
        }

    # -- explain ---------------------------------------------------------------------------
    def record(self, assembly_id: str) -> dict[str, Any]:
        return stored_record(self.store, assembly_id)

    def explain(self, assembly_id: str) -> dict[str, Any]:
        """The stored record: what was included and how, what was omitted and why."""
        return explained(assembly_id, self.record(assembly_id))

    def why_not(self, assembly_id: str, ref: str) -> dict[str, Any]:
        """The rule that omitted ``ref`` (or included it), or why it was never a candidate.
        ``ref`` may be a short wire id the request gave a tool call (``c12``): the call's."""
        return why_not(self.runtime, self.record(assembly_id), ref)

    def diff(self, before: str, after: str) -> dict[str, Any]:
        """What changed between two model calls: records that reached the model only in
        ``after`` (added), only in ``before`` (removed, with why ``after`` left them out), and
        records included both times in another way."""
        return assembly_diff(before, after, self.record(before), self.record(after))

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
        return rebuilt(assembly_id, record, again.record)


def _with_claims(decisions: Sequence[Decision], units: Mapping[str, Unit]) -> list[Decision]:
    """Each decision, naming the model-facing writer whose claim its record is (so that
    ``explain`` shows a claim as one, as the request does)."""
    out = []
    for d in decisions:
        unit = units.get(d.ref)
        claim = unit.claimed_by if unit is not None else None
        out.append(d if claim is None else replace(d, claimed_by=claim))
    return out


def _omission_counts(decisions: Sequence[Decision], ranges: Sequence[Any]) -> dict[str, int]:
    """How many records each reason left out: the decided ones, and those below the read
    horizon (counted by group, not read)."""
    counts: dict[str, int] = {}
    for d in decisions:
        if not d.included:
            assert d.reason is not None
            counts[d.reason] = counts.get(d.reason, 0) + 1
    for r in ranges:
        counts[r.reason] = counts.get(r.reason, 0) + r.records
    return counts


# what the model sees of a unit's own content, by kind and ``as``: where a credential may have
# been taken out (a tool exchange's call is seen whenever the exchange is, or a memory stands
# in its result's place)
_SHOWN_AS = {
    "artifact": ("tool_exchange", "raw", "recovery"),
    "memory": ("memory", "stale_marker", "recalled"),
    "message": ("message", "instruction", "recalled"),
    "checkpoint": ("checkpoint",),
}


def _redactions(
    decisions: Sequence[Decision], units: dict[str, Unit], stood_in: frozenset[str]
) -> list[dict[str, Any]]:
    """Each credential taken out of what the model saw: the rule and where, not the value.
    ``stood_in``: the exchanges whose call went with a memory in its result's place."""
    out: list[dict[str, Any]] = []
    for d in decisions:
        u = units.get(d.ref)
        if u is None:
            continue
        found: tuple[Any, ...] = ()
        if d.included and d.as_ in _SHOWN_AS.get(d.kind, ()):
            found = u.redactions
        if u.kind == "artifact" and (d.included or d.ref in stood_in):
            found = (*u.call_redactions, *found)
        out += [{"ref": d.ref, **r.as_dict()} for r in found]
    return out


def _inputs(
    s: _Structure, pol: Policy, rnd: Round, ranges: Sequence[Any], query: str | None
) -> dict[str, Any]:
    """What the assembly depended on, for its ``inputs_hash``: the request, the policy and
    the assembler's versions, and every record read (kind, id, seq, when it became known)."""
    b = s.boundary
    return {
        "policy": pol.hash,
        "assembler": ASSEMBLER_VERSION,
        "conversation": b.conversation,
        "branch": b.branch,
        "participant": b.participant,
        "mode": b.mode,
        "provider": b.provider,
        "format": b.format,
        "budget": b.budget,
        "rehydrate": list(b.rehydrate),
        "snapshot": b.snapshot.isoformat(),
        "records": sorted(
            {
                *(
                    (m.KIND, m.id, m.seq, _iso(m.known_from))
                    for m in [*s.graph.nodes, *(u.node for u in rnd.units.values())]
                ),
                *((t.kind, t.record_id, t.seq, _iso(t.known_from)) for t in s.tools),
                *((r.kind, r.record_id, r.seq, _iso(r.known_from)) for r in rnd.nodes),
            }
        ),
        "horizon": [rnd.since, [r.as_dict() for r in ranges]],
        "query": query,
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
