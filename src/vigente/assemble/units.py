"""From the runtime's candidates to the pipeline's inputs: the :class:`Unit`\\ s that compete
for the request, the decisions for the records that never could, and the :class:`Context`
the rules read (which exchanges are recent, which memories stand for which calls, what a
newer reading superseded).

Nothing here reads the store: :mod:`vigente.assemble.rounds` hands over what it read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vigente.assemble.gather import branch_rule
from vigente.assemble.pipeline import Boundary, Context, Decision, Unit, readings, retries
from vigente.assemble.policy import Policy
from vigente.records.runtime import (
    ContinuationCheckpoint,
    Message,
    SkillState,
    ToolArtifact,
    ToolCall,
    ToolMemory,
    UserMemory,
)
from vigente.runtime.redact import redact_memory, redact_record

__all__ = ["KINDS", "candidate_units", "pipeline_context", "sole_exchange"]

#: The kind of the trace's entry for each kind of stored record (an artifact shares its
#: call's ref: the two are one tool exchange).
KINDS = {
    "message": "message",
    "tool_call": "artifact",
    "artifact": "artifact",
    "memory": "memory",
    "user_memory": "memory",
    "skill_state": "skill_state",
    "checkpoint": "checkpoint",
}


def candidate_units(
    cands: Any, nodes: Sequence[Any], boundary: Boundary
) -> tuple[dict[str, Unit], list[Decision], dict[str, int]]:
    """The candidates as units (a call with its artifacts is one), the decisions for what
    was never allowed to compete (hidden, other branches, other participants) among the
    records read (``nodes``: the stored rows above the read horizon), and the graph
    position of every ref (the trace's order)."""
    units = _as_units(cands)
    position = _positions(nodes, units)
    seen = set(units)
    extra = _hidden(cands, position, seen)
    extra += _not_candidates(nodes, position, seen, dict(boundary.ancestry))
    return units, extra, position


def _as_units(cands: Any) -> dict[str, Unit]:
    """One unit per candidate: a message, a memory, a skill state or checkpoint, and a tool
    exchange per call with its artifacts (an artifact shared without its call: a reference to
    it). A message, a memory, a checkpoint and a call are as the model may see them: no
    credential (runtime/redact.py)."""
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
            shown, redactions = redact_record(n)
            units[n.id] = Unit(n.id, "message", n.seq, shown, c.reach, redactions=redactions)
        elif isinstance(n, ToolMemory | UserMemory):
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
        elif isinstance(n, ContinuationCheckpoint):
            shown, redactions = redact_record(n)
            units[n.id] = Unit(n.id, n.KIND, n.seq, shown, c.reach, redactions=redactions)
        elif isinstance(n, SkillState):
            units[n.id] = Unit(n.id, n.KIND, n.seq, n, c.reach)
    hidden_results = {n.target_id for n, _ in cands.hidden if n.KIND == "artifact"}
    for cid, (call, c) in calls.items():
        found = tuple(sorted(artifacts.pop(cid, []), key=lambda a: a.seq))
        if not found and cid in hidden_results:
            continue  # its result is kept from the model (audit only): decided by _hidden
        status = found[-1].status if found else "pending"
        shown, redactions = redact_record(call)
        units[cid] = Unit(cid, "artifact", call.seq, shown, c.reach, found, status,
                          call_redactions=redactions)
    # artifacts whose call is not a candidate (an artifact shared alone): a reference
    for cid, alone in artifacts.items():
        a = alone[-1]
        units.setdefault(
            cid,
            Unit(cid, "artifact", a.anchor, _orphan_call(a), "shared", tuple(alone), a.status),
        )
    return units


def _positions(nodes: Sequence[Any], units: dict[str, Unit]) -> dict[str, int]:
    """Every ref's place in the graph: a stored row's ``seq`` (an artifact's, its call's
    anchor), else its unit's position."""
    position = {n.record_id: (n.seq if n.kind != "artifact" else n.anchor) for n in nodes}
    for n in nodes:
        if n.kind == "artifact":
            position[n.target_id] = n.anchor
    for u in units.values():
        position.setdefault(u.ref, u.position)
    return position


def _hidden(cands: Any, position: dict[str, int], seen: set[str]) -> list[Decision]:
    """The decisions for the records the runtime kept from the model: audit only, or a
    child run's not promoted (each ref once; ``seen`` grows)."""
    extra: list[Decision] = []
    for node, reason in cands.hidden:
        ref = node.target_id if node.KIND == "artifact" else node.id
        kind = KINDS.get(node.KIND)
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
    return extra


def _not_candidates(
    nodes: Sequence[Any],
    position: dict[str, int],
    seen: set[str],
    windows: dict[str, int | None],
) -> list[Decision]:
    """The decisions for the other records read that are not candidates: on a branch
    outside the ancestry (or after its fork point), audit only, or private to another
    participant. The stored rows (RuntimeRecord): their columns are enough here."""
    extra: list[Decision] = []
    for n in nodes:
        kind = KINDS.get(n.kind)
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
            rule, reason = branch_rule(branch, windows), "other_branch"
        elif getattr(n, "visibility", None) == "audit":
            rule, reason = "visibility.audit_only", "audit_only"
        else:
            owner = getattr(n, "participant_id", None)
            rule, reason = f"ownership.private_to:{owner}", "participant_private"
        extra.append(Decision(ref, kind, rule, reason=reason, position=pos))
    return extra


def pipeline_context(pol: Policy, boundary: Boundary, units: dict[str, Unit]) -> Context:
    """The context the rules read: which call each artifact and memory belongs to, the
    retried failures, the stale memories, the recent exchanges (``[recency]``), the
    readings a newer one superseded (``[supersession]``), the latest user message, skill
    state and checkpoint."""
    ctx = Context(pol, boundary)
    exchanges = sorted(
        (u for u in units.values() if u.kind == "artifact"), key=lambda u: u.position
    )
    for u in exchanges:
        for a in u.artifacts:
            ctx.exchange_of[a.id] = u.ref
    for u in units.values():
        # a writer's assertion is not a memory of the result: it never stands in its place
        if u.kind == "memory" and isinstance(u.node, ToolMemory):
            about = ctx.claims_of if u.node.asserted else ctx.memories_of
            for s in u.node.sources:
                call = ctx.exchange_of.get(s, s)
                if u.claimed_by is not None and call in units and units[call].claimed_by is None:
                    continue  # a claim never stands in the place of a trusted writer's result
                about.setdefault(call, []).append(u.ref)
    ctx.retried = retries(units)
    ctx.stale = frozenset(u.ref for u in units.values() if u.kind == "memory" and u.stale)
    users = [u for u in units.values() if u.kind == "message" and u.node.role == "user"]
    # the user's latest word is what the application logged; a model-facing writer's claimed
    # user message is the latest only where nothing else is (a log a model wrote alone)
    users = [u for u in users if u.claimed_by is None] or users
    latest_user = max(users, key=lambda u: u.position) if users else None
    ctx.latest_user = latest_user.ref if latest_user is not None else None
    ctx.recent = _recent(pol, ctx, units, exchanges, latest_user)
    when = pol.get("supersession", "newer_reading")
    if when == "at_once" or (when == "next_turn" and latest_user is None):
        ctx.newer = readings(units, ctx)
    elif when == "next_turn" and latest_user is not None:
        ctx.newer = readings(units, ctx, before=latest_user.position)
    for kind, attr in (("skill_state", "latest_skill"), ("checkpoint", "latest_checkpoint")):
        found = [u for u in units.values() if u.kind == kind]
        setattr(ctx, attr, max(found, key=lambda u: u.position).ref if found else None)
    return ctx


def _recent(
    pol: Policy,
    ctx: Context,
    units: dict[str, Unit],
    exchanges: list[Unit],
    latest_user: Unit | None,
) -> frozenset[str]:
    """The newest ``recency.tool_exchanges`` settled exchanges (of the current turn, with
    ``scope = "turn"``): they go as they were. Not a retry-critical one (recovery keeps it),
    one over ``max_result_bytes``, one a lossless memory replaces from the start
    (``compact_lossless``), nor one whose memory is stale (its marker goes instead)."""
    limit = pol.get("recency", "tool_exchanges")
    max_bytes = pol.get("recency", "max_result_bytes")
    at_once = pol.get("recency", "compact_lossless")
    fine = [
        u
        for u in exchanges
        if u.status == "succeeded"
        and u.artifacts
        and not any(a.retry_critical for a in u.artifacts)
        and u.artifacts[-1].result_ref.bytes <= max_bytes
        and not (at_once and _lossless(u, ctx, units))
        and not ctx.stale_source(u.ref)
    ]
    if pol.get("recency", "scope") == "turn" and latest_user is not None:
        fine = [u for u in fine if u.position > latest_user.position]
    return frozenset(u.ref for u in (fine[-limit:] if limit else []))


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


def sole_exchange(unit: Unit, ctx: Context, units: dict[str, Unit]) -> Unit | None:
    """The one tool exchange a tool memory was derived from, when it is a candidate (the
    memory then goes in that result's place: see :func:`~vigente.assemble.render.render`)."""
    if unit.kind != "memory" or not isinstance(unit.node, ToolMemory) or unit.node.asserted:
        return None
    call = ctx.sole_call(unit.node)
    found = units.get(call) if call is not None else None
    if found is not None and unit.claimed_by is not None and found.claimed_by is None:
        return None  # a claim never stands in the place of a trusted writer's result
    # a memory of a memory stands in no result's place: only a tool exchange has one
    return found if found is not None and found.kind == "artifact" else None


def _orphan_call(a: ToolArtifact) -> ToolCall:
    """The call an artifact shared without it stands under (no arguments: not shared)."""
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
