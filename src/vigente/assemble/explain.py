"""Reading a recorded assembly back: ``explain`` (the record), ``why_not`` (the rule that
decided one ref, or why it was never a candidate), ``diff`` (what changed between two model
calls) and what ``rebuild`` compares (the stored selection and the one assembled again).

Each answers from the stored record; only ``why_not`` reads the graph, for a ref below the
read horizon (its reason follows from its group) or never decided (where it lives).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vigente.assemble.gather import classify
from vigente.assemble.units import KINDS
from vigente.errors import InvalidInput
from vigente.runtime.redact import redact_text

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime
    from vigente.store.base import Store

__all__ = ["assembly_diff", "explained", "rebuilt", "stored_record", "why_not"]


def stored_record(store: Store, assembly_id: str) -> dict[str, Any]:
    """The record stored for ``assembly_id`` (``InvalidInput`` for an unknown id)."""
    found = store.runtime_assembly(assembly_id)
    if found is None:
        raise InvalidInput(
            f"unknown assembly {assembly_id!r}: assembly ids are printed by "
            "`vigente assemble --json` (assembly_id)"
        )
    record: dict[str, Any] = json.loads(found[1])
    return record


def explained(assembly_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """The stored record: what was included and how, what was omitted and why (the query a
    caller gave, and the recall's, as a client may read them: no credential,
    runtime/redact.py)."""
    out = {
        "assembly_id": assembly_id,
        **{k: v for k, v in record.items() if k != "policy_document"},
    }
    if isinstance(out.get("query"), str):
        out["query"] = redact_text(out["query"], "query")[0]
    recall = out.get("recall")
    if isinstance(recall, dict) and isinstance(recall.get("query"), str):
        out["recall"] = {**recall, "query": redact_text(recall["query"], "query")[0]}
    return out


# -- why_not -------------------------------------------------------------------------------
def why_not(runtime: Runtime, record: dict[str, Any], ref: str) -> dict[str, Any]:
    """The rule that omitted ``ref`` (or included it), or why it was never a candidate.
    ``ref`` may be a short wire id the request gave a tool call (``c12``): the call's."""
    decided = {d["ref"] for d in (*record["included"], *record["omitted"])}
    wire = record.get("call_ids", {})
    if ref not in decided and ref in wire:
        ref = wire[ref]
    return (
        _decided(record, ref)
        or _below_horizon(runtime, record, ref)
        or _never_a_candidate(runtime.store, record, ref)
    )


def _decided(record: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """The trace's decision for ``ref``, omitted or included (``None``: not in the trace)."""
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
            out = {
                "ref": ref,
                "candidate": True,
                "reason": None,
                "rule": d["rule"],
                "kind": d["kind"],
                "included_as": d["as"],
            }
            if d.get("unsupported"):  # a writer's claim: what of it no source holds, and why
                out["unsupported"] = d["unsupported"]
            return out
    return None


def _below_horizon(runtime: Runtime, record: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """A context record below the read horizon: not read, its reason follows from its group
    (``None``: there is no horizon, or ``ref`` is not such a record)."""
    since = record.get("horizon", {}).get("before_seq", 0)
    if not since:
        return None
    conversation = record["conversation"]
    k = runtime.instant(record["snapshot"])
    chain = tuple(runtime.ancestry(conversation, record["branch"], known_at=k))
    for r in runtime.store.runtime_records(conversation, record_ids=[ref], known_at=k):
        if r.kind in KINDS and r.kind != "artifact" and r.seq < since:
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
                "kind": KINDS[r.kind],
                "read": False,
            }
            if reason == "budget":
                out["recall"] = _not_recalled(record, ref)
            return out
    return None


def _never_a_candidate(store: Store, record: dict[str, Any], ref: str) -> dict[str, Any]:
    """Why ``ref`` never competed: no record of the conversation has it, it names a later
    result of a call, or its record is not context (not known yet, or structure)."""
    conversation = record["conversation"]
    homes = [kind for c, kind in store.runtime_record_homes(ref) if c == conversation]
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
                "duplicate": f"its text is in the request already (as {hit.get('same_as')})",
            }.get(hit.get("outcome", ""), hit.get("outcome", ""))
            return f"ranked {hit['rank']} for the query {query!r}, but {why}"
    return (f"not among the records recalled for the query {query!r} (the {note.get('k')} "
            "most relevant as `vigente recall` ranks them at the snapshot, "
            f"{len(note.get('hits', []))} of them eligible)")


# -- diff, rebuild ---------------------------------------------------------------------------
def assembly_diff(
    before: str, after: str, a: dict[str, Any], b: dict[str, Any]
) -> dict[str, Any]:
    """What changed between two model calls (records ``a`` of ``before``, ``b`` of
    ``after``): records that reached the model only in ``after`` (added), only in ``before``
    (removed, with why ``after`` left them out), and records included both times in another
    way."""
    sa, sb = _decisions(a), _decisions(b)
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


def _decisions(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["ref"]: d for d in record["included"] + record["omitted"]}


def rebuilt(assembly_id: str, record: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Does the assembly made again (``new``) from ``record``'s snapshot and policy match
    it: the selection, the inputs, the messages; and where they differ."""
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
