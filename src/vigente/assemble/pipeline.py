"""The assembly pipeline: boundary, candidates, one decision per candidate, budget, blocks.

Every rule is a pure function of a :class:`Unit` and the :class:`Context` (policy, boundary,
the decisions already taken); the first rule that answers decides, and the decision names it.
Nothing here reads the store: :mod:`vigente.assemble.rounds` gathers the inputs (graph reads,
raw contents after the privacy checks) and :mod:`vigente.assemble.service` persists the record.
What an included unit becomes (its blocks) is :mod:`vigente.assemble.render`'s.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vigente.assemble.blocks import Block
from vigente.assemble.policy import Policy

# the last step, re-exported from here (and the memory texts it keeps: a purge forgets them)
from vigente.assemble.render import (  # noqa: F401
    _MEMORY_TEXTS,
    recalled_text,
    render,
    unsupported_values,
)
from vigente.records.runtime import ToolArtifact, ToolCall, ToolMemory
from vigente.runtime.artifact_memory import compact, expand
from vigente.runtime.redact import Redaction
from vigente.time import Instant

__all__ = [
    "Boundary",
    "Context",
    "Decision",
    "Unit",
    "decide",
    "fit_budget",
    "readings",
    "recalled_text",
    "render",
    "retries",
    "stand_ins",
]

PROTECTED = frozenset({"instruction", "recovery", "skill_state", "checkpoint", "raw"})


@dataclass(frozen=True, slots=True)
class Boundary:
    """What one model request is for (seed 3: the generation's boundary)."""

    conversation: str
    branch: str
    participant: str
    mode: str
    provider: str
    format: str
    budget: int
    rehydrate: tuple[str, ...]
    snapshot: Instant
    run: str | None
    ancestry: tuple[tuple[str, int | None], ...]
    labels: tuple[tuple[str, str], ...] = ()
    #: The tools declared read-only as known at the snapshot: the only ones a stale marker
    #: may suggest running again (invariant 10).
    read_only: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Unit:
    """One candidate: a message, a tool exchange (call + its artifacts, ref = the call id),
    a memory, a skill state or a checkpoint; ``position`` orders the request."""

    ref: str
    kind: str
    position: int
    node: Any
    reach: str = "own"
    artifacts: tuple[ToolArtifact, ...] = ()
    status: str | None = None
    superseded_by: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    stale: bool = False
    content: str | None = None  # a tool exchange's result text, read after the checks
    restated: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (later call, paths it restated)
    redactions: tuple[Redaction, ...] = ()  # credentials taken out of what the model sees
    call_redactions: tuple[Redaction, ...] = ()  # … out of a tool exchange's call (arguments)

    @property
    def claimed_by(self) -> str | None:
        """The model-facing writer whose claim this is (an agent key, ``vigente mcp``), or
        None when a trusted writer logged it: a tool exchange is a claim when its call or
        its latest result is one."""
        claim: str | None = getattr(self.node, "claimed_by", None)
        if claim is None and self.artifacts:
            claim = self.artifacts[-1].claimed_by
        return claim


@dataclass(frozen=True, slots=True)
class Decision:
    ref: str
    kind: str
    rule: str
    as_: str | None = None
    reason: str | None = None
    position: int = 0
    tokens: int = 0
    #: (later call, paths of this reading it restated): the values a later reading superseded
    superseded_values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: A writer's claim: what of it no source holds (a fact's path, a summary's value) and why
    claims: tuple[tuple[tuple[str, str], ...], ...] = ()
    #: the model-facing writer whose claim the record is (see :attr:`Unit.claimed_by`)
    claimed_by: str | None = None

    @property
    def included(self) -> bool:
        return self.as_ is not None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"ref": self.ref, "kind": self.kind}
        if self.as_ is not None:
            d["as"] = self.as_
        else:
            d["reason"] = self.reason
        d["rule"] = self.rule
        if self.claimed_by is not None:
            d["claimed_by"] = self.claimed_by
        if self.superseded_values:
            d["superseded_values"] = [
                {"by": call, "paths": list(paths)} for call, paths in self.superseded_values
            ]
        if self.claims:
            d["unsupported"] = [dict(c) for c in self.claims]
        return d


@dataclass
class Context:
    policy: Policy
    boundary: Boundary
    recent: frozenset[str] = frozenset()  # tool exchanges kept as they were
    latest_user: str | None = None
    latest_skill: str | None = None
    latest_checkpoint: str | None = None
    exchange_of: dict[str, str] = field(default_factory=dict)  # artifact id -> call id
    memories_of: dict[str, list[str]] = field(default_factory=dict)  # call id -> memory ids
    claims_of: dict[str, list[str]] = field(default_factory=dict)  # call id -> writers' claims
    decided: dict[str, Decision] = field(default_factory=dict)
    newer: dict[str, tuple[str, str]] = field(default_factory=dict)  # memory -> (why, newer)
    # memory -> (why, (later call, paths it restated)...): every value a later reading
    # restated, for a reading superseded whole (in ``newer``) or in part (its other values stay)
    restated: dict[str, tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]] = field(
        default_factory=dict
    )
    retried: dict[str, str] = field(default_factory=dict)  # failed call -> its successful retry
    protected: frozenset[str] = frozenset()  # refs the runtime mode keeps whatever the budget
    stale: frozenset[str] = frozenset()  # memories past their freshness

    def stale_source(self, call: str) -> bool:
        """Whether a memory derived from this tool exchange is stale: the exchange's result is
        then not current truth either, and goes only as that memory's stale marker."""
        return any(m in self.stale for m in self.memories_of.get(call, ()))

    def sole_call(self, memory: ToolMemory) -> str | None:
        """The one tool exchange (call id) a tool memory was derived from, if there is one."""
        calls = {self.exchange_of.get(s, s) for s in memory.sources}
        return next(iter(calls)) if len(calls) == 1 else None

    def privacy(self, unit: Unit) -> str:
        if unit.artifacts:
            return unit.artifacts[-1].privacy
        return str(getattr(unit.node, "privacy", "public"))


def _yes(unit: Unit, rule: str, as_: str) -> Decision:
    return Decision(unit.ref, unit.kind, rule, as_=as_, position=unit.position)


def _no(unit: Unit, rule: str, reason: str) -> Decision:
    return Decision(unit.ref, unit.kind, rule, reason=reason, position=unit.position)


Rule = Callable[[Unit, Context], Decision | None]


# -- messages ----------------------------------------------------------------------------
def instruction_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "message" and unit.node.role == "system":
        return _yes(unit, "instruction.never_compacted", "instruction")
    return None


def message_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "message":
        return _yes(unit, "conversation.message", "message")
    return None


# -- tool exchanges ----------------------------------------------------------------------
def _route(unit: Unit, ctx: Context, what: str, rule: str) -> Decision | None:
    privacy = ctx.privacy(unit)
    if ctx.policy.allows(what, privacy, ctx.boundary.provider):
        return None
    if not ctx.policy.routable(what, privacy):
        return _no(unit, f"{rule}.privacy:{privacy}", "privacy")
    return _no(unit, f"{rule}.provider_route:{privacy}->{ctx.boundary.provider}", "provider_route")


def rehydrate_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "artifact" and unit.ref in ctx.boundary.rehydrate:
        refused = _route(unit, ctx, "raw", "rehydration")
        if refused is not None:
            return refused
        return _yes(unit, "rehydration.requested", "raw")
    return None


def recovery_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind != "artifact":
        return None
    if unit.ref in ctx.retried:
        # a failure the same call (tool and arguments) later got past: nothing to recover
        return _no(unit, f"recovery.resolved_by_retry:{ctx.retried[unit.ref]}", "superseded")
    protect = ctx.policy.get("recovery", "protect")
    critical = ctx.policy.get("recovery", "protect_retry_critical") and any(
        a.retry_critical for a in unit.artifacts
    )
    if unit.status in protect or critical:
        # never dropped: when the raw result may not go to this provider, the state goes
        # without it (the call, its status and why the content is withheld)
        return _yes(
            unit, f"recovery.{unit.status}" + (".retry_critical" if critical else ""), "recovery"
        )
    return None


def exchange_privacy_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "artifact":
        return _route(unit, ctx, "raw", "privacy.raw")
    return None


def recent_exchange_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "artifact" and unit.ref in ctx.recent:
        return _yes(unit, "recency.tool_exchange", "tool_exchange")
    return None


def small_result_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A result no larger than ``recency.keep_small_bytes`` goes as it was whatever its age:
    its memory would be no shorter, and it never changes the request's prefix."""
    if (
        unit.kind == "artifact"
        and unit.status == "succeeded"
        and unit.artifacts
        and unit.artifacts[-1].result_ref.bytes <= ctx.policy.get("recency", "keep_small_bytes")
        and not ctx.stale_source(unit.ref)
    ):
        return _yes(unit, "recency.small_result", "tool_exchange")
    return None


def compacted_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "artifact":
        for memory in ctx.memories_of.get(unit.ref, []):
            d = ctx.decided.get(memory)
            if d is not None and d.as_ in ("memory", "stale_marker"):
                return _no(unit, f"promotion.compacted_into:{memory}", "compacted")
        newer = [ctx.newer[m][1] for m in ctx.memories_of.get(unit.ref, []) if m in ctx.newer]
        if newer:
            return _yes(unit, f"supersession.newer_reading:{newer[0]}", "reference")
        claims = [
            m
            for m in ctx.claims_of.get(unit.ref, [])
            if ctx.decided.get(m) is not None and ctx.decided[m].included
        ]
        if claims:
            # a writer's claim goes beside the tool's reading, never beside a bare reference
            return _yes(unit, f"memory.claim_beside_result:{claims[0]}", "tool_exchange")
        return _yes(unit, "promotion.reference_only", "reference")
    return None


# -- memories ----------------------------------------------------------------------------
def superseded_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "memory" and unit.superseded_by:
        return _no(unit, f"supersession.by:{','.join(unit.superseded_by)}", "superseded")
    return None


def newer_reading_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A later reading of the same thing supersedes a memory: the same read again (the tool
    with the same arguments), or a result about the same entity (the identifier the call asked
    for, e.g. ``reservation_id``, read again or changed by another tool)."""
    if unit.kind == "memory" and unit.ref in ctx.newer:
        why, by = ctx.newer[unit.ref]
        values = ctx.restated.get(unit.ref, ("", ()))[1]
        return replace(
            _no(unit, f"supersession.{why}:by:{by}", "superseded"), superseded_values=values
        )
    return None


def restated_in_part_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A reading whose values later readings restated only in part: the values they restate
    are left out (the record names them and the calls), the rest goes, marked as the earlier
    reading's."""
    if unit.kind == "memory" and unit.ref in ctx.restated and unit.ref not in ctx.newer:
        why, values = ctx.restated[unit.ref]
        calls = ",".join(dict.fromkeys(call for call, _ in values))
        return replace(
            _yes(
                unit,
                f"supersession.{why}.restated_in_part:by:{calls}",
                "stale_marker" if unit.stale else "memory",
            ),
            superseded_values=values,
        )
    return None


def memory_privacy_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A memory goes where its privacy class's summaries may go; the extractor's memory of a
    result copies the result's own values, so it goes only where the raw result may."""
    if unit.kind == "memory":
        if isinstance(unit.node, ToolMemory) and unit.node.extractor is not None:
            return _route(unit, ctx, "raw", "privacy.extracted_values")
        return _route(unit, ctx, "summary", "privacy.summary")
    return None


def memory_source_included_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A memory whose source exchange reaches the model as it was adds nothing: its content
    reached the model through that exchange."""
    if unit.kind == "memory" and isinstance(unit.node, ToolMemory) and not unit.node.asserted:
        calls = {ctx.exchange_of.get(s, s) for s in unit.node.sources}
        if calls and all(
            ctx.decided.get(c) is not None
            and ctx.decided[c].as_ in ("tool_exchange", "raw", "recovery")
            for c in calls
        ):
            return _yes(unit, f"memory.source_included:{','.join(sorted(calls))}", "tool_exchange")
    return None


def stale_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "memory" and unit.stale:
        if ctx.policy.get("freshness", "stale") == "omit":
            return _no(unit, "freshness.stale_omitted", "stale")
        return _yes(unit, "freshness.stale_marker", "stale_marker")
    return None


def writer_claim_rule(unit: Unit, ctx: Context) -> Decision | None:
    """A writer's memory stating what no source holds (a fact's value at its path, a value
    its summary states) is that writer's claim: it goes beside the tool's reading, labelled
    (never in a result's place), and the record names each value no source holds and why."""
    node = unit.node
    if unit.kind != "memory" or not isinstance(node, ToolMemory) or not node.asserted:
        return None
    if unit.stale and ctx.policy.get("freshness", "stale") == "omit":
        return None  # the freshness rule omits it
    claims: list[tuple[tuple[str, str], ...]] = [
        (("in", "facts"), ("path", p), ("reason", "no cited result holds this value here"))
        for p in node.asserted
        if p != "summary"
    ]
    claims += [
        (("in", "summary"), ("kind", c["kind"]), ("value", c["value"]), ("reason", c["reason"]))
        for c in unsupported_values(node)
    ]
    as_ = "stale_marker" if unit.stale else "memory"
    d = _yes(unit, f"memory.writer_claim:by:{node.writer or 'a writer'}", as_)
    return replace(d, claims=tuple(claims))


def memory_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "memory":
        return _yes(unit, "memory.current", "memory")
    return None


# -- runtime state -----------------------------------------------------------------------
def skill_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "skill_state":
        if unit.ref == ctx.latest_skill:
            return _yes(unit, "planning.latest_skill_state", "skill_state")
        return _no(unit, f"planning.superseded_by:{ctx.latest_skill}", "superseded")
    return None


def checkpoint_rule(unit: Unit, ctx: Context) -> Decision | None:
    if unit.kind == "checkpoint":
        if unit.ref == ctx.latest_checkpoint:
            return _yes(unit, "recovery.latest_checkpoint", "checkpoint")
        return _no(unit, f"recovery.checkpoint_superseded_by:{ctx.latest_checkpoint}", "superseded")
    return None


EXCHANGE_RULES: tuple[Rule, ...] = (
    rehydrate_rule,
    recovery_rule,
    exchange_privacy_rule,
    recent_exchange_rule,
    small_result_rule,
)
MEMORY_RULES: tuple[Rule, ...] = (
    superseded_rule,
    newer_reading_rule,
    memory_privacy_rule,
    memory_source_included_rule,
    restated_in_part_rule,
    writer_claim_rule,
    stale_rule,
    memory_rule,
)
OTHER_RULES: tuple[Rule, ...] = (instruction_rule, message_rule, skill_rule, checkpoint_rule)


def _first(rules: Sequence[Rule], unit: Unit, ctx: Context) -> Decision | None:
    for rule in rules:
        d = rule(unit, ctx)
        if d is not None:
            return d
    return None


def decide(units: Sequence[Unit], ctx: Context) -> dict[str, Decision]:
    """One decision per unit. Exchanges are decided first (kept as they were or not), then
    memories (which may stand in for them), then the exchanges still open (compacted into a
    memory, or a reference)."""
    pending: list[Unit] = []
    for u in units:
        if u.kind == "artifact":
            d = _first(EXCHANGE_RULES, u, ctx)
            if d is None:
                pending.append(u)
            else:
                ctx.decided[u.ref] = d
        elif u.kind not in ("memory",):
            d = _first(OTHER_RULES, u, ctx)
            assert d is not None
            ctx.decided[u.ref] = d
    for u in units:
        if u.kind == "memory":
            d = _first(MEMORY_RULES, u, ctx)
            assert d is not None
            ctx.decided[u.ref] = d
    for u in pending:
        d = compacted_rule(u, ctx)
        assert d is not None
        ctx.decided[u.ref] = d
    return ctx.decided


def readings(
    units: dict[str, Unit], ctx: Context, before: int | None = None
) -> dict[str, tuple[str, str]]:
    """Memory ref -> (why, the newer memory) for every derived tool memory that later ones
    read again in full: the same tool with the same arguments (``same_read``), or a result
    whose identifier field repeats an identifier the call asked for (``same_entity:KEY=VALUE``).
    Supersession is by value: a later reading supersedes the values it restates (the same key
    path); a reading whose other values no later one restates is superseded in part only — its
    unit (in ``units``) then holds those other values, marked as the earlier reading's, and
    ``ctx.restated`` names each later call and the paths it restated.
    Only candidates compete, so a sibling branch's reading never supersedes this one's.
    ``before`` (the current turn's start): a reading of the current turn supersedes only a
    reading of the same turn (the request changes near its end); it supersedes earlier turns'
    readings once the next user message arrives (the request's earlier part then changes
    once, for every supersession of the turn)."""
    chains: dict[tuple[str, ...], list[Unit]] = {}
    out: dict[str, tuple[str, str]] = {}
    derived = sorted(
        (
            u
            for u in units.values()
            if u.kind == "memory"
            and isinstance(u.node, ToolMemory)
            and u.node.extractor is not None
            and len(u.node.sources) == 1
            and ctx.exchange_of.get(u.node.sources[0], u.node.sources[0]) in units
        ),
        key=lambda u: (u.position, u.ref),
    )
    for u in derived:
        call: ToolCall = units[ctx.exchange_of.get(u.node.sources[0], u.node.sources[0])].node
        args = {k: v for k, v in call.arguments.items() if k != "__raw__"}
        keys: list[tuple[str, ...]] = [
            ("same_read", call.name, json.dumps(args, sort_keys=True, ensure_ascii=False))
        ]
        facts = u.node.facts or {}
        for name, value in args.items():
            if (
                isinstance(value, str)
                and (name == "id" or name.endswith("_id"))
                and facts.get(name) == value
            ):
                keys.append((f"same_entity:{name}={value}",))
        for key in keys:
            chains.setdefault(key, []).append(u)
    later: dict[str, list[tuple[str, Unit]]] = {}  # older -> (why, a later reading), in order
    for key, chain in chains.items():
        for n, older in enumerate(chain):
            for newer in chain[n + 1 :]:
                if before is not None and newer.position > before and older.position < before:
                    continue  # an earlier turn's reading: superseded when the next turn starts
                if newer.claimed_by is not None and older.claimed_by is None:
                    continue  # a model-facing writer's claim never supersedes a trusted reading
                later.setdefault(older.ref, []).append((key[0], newer))
    for ref, found in later.items():
        why, first = found[0]  # the first chain's next reading names the supersession
        older = units[ref]
        readings = sorted({u.ref: u for _, u in found}.values(),
                          key=lambda u: (u.position, u.ref))
        rest, values = _restate(older.node, [u.node for u in readings], ctx)
        ctx.restated[ref] = (why, values)
        if rest is None:
            out[ref] = (why, first.ref)
        else:
            units[ref] = replace(
                older, node=replace(older.node, facts=rest, lossless=False), restated=values
            )
    return out


def _restate(
    old: ToolMemory, newer: Sequence[ToolMemory], ctx: Context
) -> tuple[dict[str, Any] | None, tuple[tuple[str, tuple[str, ...]], ...]]:
    """What of ``old``'s values no later reading restates (``None``: nothing is left, or the
    readings are not comparable by key path), and each later call with the paths it restated."""
    values: list[tuple[str, tuple[str, ...]]] = []
    if old.form != "object" or any(n.form != "object" for n in newer):
        for n in newer:
            values.append((ctx.exchange_of.get(n.sources[0], n.sources[0]), ("*",)))
        return None, tuple(values[:1])
    rest: Any = expand(old.facts)
    for n in newer:
        paths: list[str] = []
        rest = _strip(rest, expand(n.facts), "", paths)
        if paths:
            values.append((ctx.exchange_of.get(n.sources[0], n.sources[0]), tuple(paths)))
    if not rest:
        return None, tuple(values)
    return compact(rest), tuple(values)


def _strip(old: dict[str, Any], new: Any, path: str, restated: list[str]) -> dict[str, Any]:
    """``old`` without the key paths ``new`` restates (an object is compared key by key, any
    other value is restated whole); the paths left out are added to ``restated``."""
    rest: dict[str, Any] = {}
    for key, value in old.items():
        at = f"{path}.{key}" if path else key
        if not isinstance(new, dict) or key not in new:
            rest[key] = value
        elif isinstance(value, dict) and value and isinstance(new[key], dict):
            inner = _strip(value, new[key], at, restated)
            if inner:
                rest[key] = inner
        else:
            restated.append(at)
    return rest


def retries(units: dict[str, Unit]) -> dict[str, str]:
    """Failed call ref -> the later successful call of the same tool with the same arguments."""
    out: dict[str, str] = {}
    failed: dict[tuple[str, str], list[str]] = {}
    for u in sorted(
        (u for u in units.values() if u.kind == "artifact"), key=lambda u: (u.position, u.ref)
    ):
        args = {k: v for k, v in u.node.arguments.items() if k != "__raw__"}
        key = (u.node.name, json.dumps(args, sort_keys=True, ensure_ascii=False))
        if u.status == "failed":
            failed.setdefault(key, []).append(u.ref)
        elif u.status == "succeeded":
            # a claimed success retries only claimed failures: a trusted failure stays
            retried = [r for r in failed.get(key, []) if u.claimed_by is None
                       or units[r].claimed_by is not None]
            for ref in retried:
                out[ref] = u.ref
            failed[key] = [r for r in failed.get(key, []) if r not in retried]
    return out


def stand_ins(units: dict[str, Unit], ctx: Context) -> dict[str, Unit]:
    """Memory ref -> the compacted exchange it stands in for: a memory of exactly one tool
    exchange whose call is a candidate (the first such memory of each exchange; another goes
    as quoted data)."""
    out: dict[str, Unit] = {}
    taken: set[str] = set()
    for call, memories in ctx.memories_of.items():
        prev = ctx.decided.get(call)
        if prev is None or prev.reason != "compacted" or call not in units:
            continue
        for m in memories:
            d = ctx.decided.get(m)
            node = units[m].node if m in units else None
            if (
                d is not None
                and d.as_ in ("memory", "stale_marker")
                and isinstance(node, ToolMemory)
                and not node.asserted
                and ctx.sole_call(node) is not None
                and call not in taken
            ):
                out[m] = units[call]
                taken.add(call)
    return out


def order(blocks: list[tuple[int, Block]]) -> list[Block]:
    """Instructions first (a stable prefix), then everything in graph order."""
    system = [b for _, b in sorted(blocks, key=lambda x: x[0]) if b.kind == "system"]
    rest = [b for _, b in sorted(blocks, key=lambda x: x[0]) if b.kind != "system"]
    return system + rest


def fit_budget(
    units: dict[str, Unit],
    ctx: Context,
    cost: Callable[[Unit, Decision], int],
) -> dict[str, Decision]:
    """Drop or compact until the request fits ``boundary.budget``. Protected decisions
    (instructions, recovery state, skill state, the checkpoint, asked-for raw evidence) and
    the latest user message never go, unless they are a model-facing writer's claim; a tool
    exchange goes whole (call and result), first compacted into its memory when it has one,
    and only then dropped.

    A model-facing writer's claim goes before anything a trusted writer logged (so a claimed
    result never outlasts the trusted one it contradicts); then the oldest droppable
    decision goes first (graph position, then the decisions' order). The total is kept as it
    changes and the droppable ones in a heap, so each step costs a logarithm, not a sort of
    every decision."""
    fit = _Fit(units, ctx, cost)
    while fit.total > fit.budget:
        victim = fit.oldest()
        if victim is None:
            break
        if not fit.compacted(victim):
            fit.dropped(victim)
    return fit.decided


class _Fit:
    """One :func:`fit_budget`: the decisions (``ctx.decided``, changed in place), their
    running total of tokens, and the droppable ones in a heap, oldest first."""

    __slots__ = ("budget", "calls_of", "cost", "ctx", "decided", "heap", "rank", "total", "units")

    def __init__(
        self, units: dict[str, Unit], ctx: Context, cost: Callable[[Unit, Decision], int]
    ) -> None:
        self.units, self.ctx, self.cost = units, ctx, cost
        decided = self.decided = ctx.decided
        for ref, d in decided.items():
            if d.included:
                decided[ref] = replace(d, tokens=cost(units[ref], d))
        self.budget = ctx.boundary.budget
        # ties on position: the decisions' order
        self.rank = {ref: i for i, ref in enumerate(decided)}
        self.calls_of: dict[str, list[str]] = {}  # memory -> the exchanges compacted into it
        for call, memories in ctx.memories_of.items():
            for m in memories:
                self.calls_of.setdefault(m, []).append(call)
        self.heap = [self._entry(d.ref, d) for d in decided.values() if self.droppable(d)]
        heapq.heapify(self.heap)
        self.total = sum(d.tokens for d in decided.values() if d.included)

    def droppable(self, d: Decision) -> bool:
        unit = self.units.get(d.ref)
        # a claim is never protected: a model marking its own results retry-critical (or
        # leaving its calls unresolved) would otherwise push out what the application logged
        claim = unit is not None and unit.claimed_by is not None
        return (
            d.included
            and (claim or (d.as_ not in PROTECTED and d.ref != self.ctx.latest_user
                           and d.ref not in self.ctx.protected))
            and d.as_ != "recalled"  # chosen within the recall's share of the budget
            and not (d.kind == "memory" and d.as_ == "tool_exchange")
        )

    def _entry(self, ref: str, d: Decision) -> tuple[int, int, int, str]:
        """The heap's order: claims first (0), then the rest (1); each oldest first."""
        unit = self.units.get(ref)
        trusted = int(unit is None or unit.claimed_by is None)
        return (trusted, d.position, self.rank[ref], ref)

    def put(self, ref: str, d: Decision) -> None:
        old = self.decided[ref]
        self.total += (d.tokens if d.included else 0) - (old.tokens if old.included else 0)
        self.decided[ref] = d
        if self.droppable(d):
            heapq.heappush(self.heap, self._entry(ref, d))

    def oldest(self) -> Decision | None:
        """The first decision still droppable: a claim, else the oldest (an entry whose
        decision changed since it was pushed is stale: skipped)."""
        while self.heap:
            _, position, _, ref = heapq.heappop(self.heap)
            d = self.decided[ref]
            if self.droppable(d) and d.position == position:
                return d
        return None

    def compacted(self, victim: Decision) -> bool:
        """A tool exchange going as it was, compacted into its memories held back as "source
        included" (they go instead); ``False`` when it is not one or has none."""
        if victim.kind != "artifact" or victim.as_ != "tool_exchange":
            return False
        decided = self.decided
        memories = [
            m
            for m in self.ctx.memories_of.get(victim.ref, [])
            if decided.get(m) is not None and decided[m].as_ == "tool_exchange"
        ]
        if not memories:
            return False
        self.put(victim.ref, _no(self.units[victim.ref], "budget.compacted", "compacted"))
        for m in memories:
            unit = self.units[m]
            d = _yes(unit, "budget.memory_instead", "stale_marker" if unit.stale else "memory")
            self.put(m, replace(d, tokens=self.cost(unit, d)))
        return True

    def dropped(self, victim: Decision) -> None:
        """``victim`` left out for the budget, with what reaches the model only through it:
        the exchanges compacted into a dropped memory, the memories an exchange carried."""
        rule = f"budget.{self.budget}_tokens"
        decided = self.decided
        self.put(victim.ref, Decision(victim.ref, victim.kind, rule, reason="budget",
                                      position=victim.position))  # fmt: skip
        gone = [victim.ref] if victim.kind == "artifact" else []
        if victim.kind == "memory":
            # an exchange compacted into this memory reaches the model no more: budget too
            for call in self.calls_of.get(victim.ref, []):
                memories = self.ctx.memories_of[call]
                prev = decided.get(call)
                if (
                    prev is not None
                    and prev.reason == "compacted"
                    and not any(decided[m].included for m in memories if m in decided)
                ):
                    self.put(call, Decision(call, prev.kind, rule, reason="budget",
                                            position=prev.position))  # fmt: skip
                    gone.append(call)
        for m in self.ctx.memories_of.get(victim.ref, []):
            if decided.get(m) is not None and decided[m].as_ == "tool_exchange":
                self.put(m, Decision(m, "memory", rule, reason="budget",
                                     position=self.units[m].position))  # fmt: skip
        # a writer's claim about a result that no longer reaches the model goes with it: a
        # claim is never shown without the tool's reading beside it
        for call in gone:
            for m in self.ctx.claims_of.get(call, []):
                if decided.get(m) is not None and decided[m].included:
                    self.put(m, Decision(m, "memory", rule, reason="budget",
                                         position=self.units[m].position))  # fmt: skip
