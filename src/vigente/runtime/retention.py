"""Retention classes, garbage collection and account deletion: the runtime's only erasures.

Retention is explicit per record kind (:data:`RETENTION`). GC erases what a class lets go
(raw artifact bytes after their age, older checkpoints and skill states of a run, assembly
records after the days their own policy keeps them: its ``[retention] assembly_days``) and
blobs no content refers to; the artifact row itself stays as a tombstone (call, hashes,
sizes), so the memories and promotions that cite it keep a valid reference.
``purge_account`` deletes every conversation of an account with all that belongs to it (its
assemblies too) and then makes the freed bytes unreadable where the backend can
(``Store.runtime_compact``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vigente.records.runtime import ContinuationCheckpoint, SkillState, ToolArtifact, from_record
from vigente.time import Instant, parse_instant

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime

__all__ = ["RETENTION", "GCReport", "PurgeReport", "collect", "purge_account"]

#: Retention class of each record kind: ``keep`` (until the account is deleted),
#: ``raw:<days>`` (raw bytes erased after that many days, the record kept as a tombstone;
#: ``secret`` artifacts use ``raw_secret``), ``latest:<days>`` (all but a run's latest record
#: erased after that many days), ``age:<days>`` (the record itself deleted after that many days:
#: an assembly, unless the policy it was made under says otherwise in ``[retention]``).
RETENTION: dict[str, str] = {
    "participant": "keep", "branch": "keep", "run": "keep", "message": "keep",
    "tool_call": "keep", "artifact": "raw:180", "raw_secret": "raw:30", "memory": "keep",
    "user_memory": "keep", "skill_state": "latest:30", "checkpoint": "latest:30",
    "promotion": "keep", "share": "keep", "link": "keep", "assembly": "age:180",
}


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What a purge deleted (or, ``dry_run``, would delete: the same counts, from the same
    deletion rolled back). ``complete``: the backend proved its files hold none of the
    account's text; when false, ``compaction`` says why and how to finish."""

    account: str
    conversations: tuple[str, ...]
    rows: int
    blobs: int
    compaction: str | None
    dry_run: bool
    complete: bool = True


@dataclass(frozen=True, slots=True)
class GCReport:
    contents: int
    records: int
    blobs: int
    dry_run: bool
    compaction: str | None
    assemblies: int = 0


def _days(rule: str) -> _dt.timedelta:
    return _dt.timedelta(days=int(rule.split(":", 1)[1]))


def _older(at: Instant, now: Instant, age: _dt.timedelta) -> bool:
    return now.micros - at.micros >= age // _dt.timedelta(microseconds=1)


class _DryRun(Exception):
    """Raised inside a dry run's transaction to roll the deletion back."""


#: Bytes sampled from an account's text, checked afterwards in the backend's files.
SAMPLES, SAMPLE_BYTES, SAMPLE_MIN = 64, 48, 16


def purge_account(rt: Runtime, account: str, *, dry_run: bool = False) -> PurgeReport:
    """Delete every conversation of ``account`` and everything derived from it, then make the
    freed bytes unreadable; ``dry_run``: run the same deletion and roll it back, so the counts
    are the purge's own. An account with nothing stored only finishes what an earlier purge
    could not (a log a reader kept from being truncated), without rewriting the file."""
    store = rt.store
    conversations = tuple(c.id for c in store.runtime_conversations(account=account))
    if dry_run:
        counted: list[int] = []
        with contextlib.suppress(_DryRun), rt.transaction():  # rolled back by _DryRun
            counted += [store.delete_runtime_conversations(conversations), len(_orphans(rt))]
            raise _DryRun
        return PurgeReport(account, conversations, counted[0], counted[1], None, True)
    if not conversations:
        compaction = store.runtime_compact(full=False)
        return PurgeReport(account, (), 0, 0, "nothing stored for this account; "
                           + compaction.message, False, compaction.complete)
    samples = _samples(rt, conversations)
    with rt.transaction():
        rows = store.delete_runtime_conversations(conversations)
    blobs = _unreferenced_blobs(rt, dry_run=False)
    compaction = store.runtime_compact(samples=samples)
    return PurgeReport(account, conversations, rows, blobs, compaction.message, False,
                       compaction.complete)


def _samples(rt: Runtime, conversations: tuple[str, ...]) -> list[bytes]:
    """Up to SAMPLES byte strings of the conversations' text (message contents, memories,
    raw results kept inline), to look for in the files after the purge."""
    found: dict[bytes, None] = {}
    for c in conversations:
        for record in rt.store.runtime_records(c):
            pending = [record.payload]
            while pending and len(found) < SAMPLES:
                value = pending.pop()
                if isinstance(value, dict):
                    pending.extend(value.values())
                elif isinstance(value, list):
                    pending.extend(value)
                elif isinstance(value, str):
                    raw = value.encode("utf-8", "surrogatepass")
                    if len(raw) >= SAMPLE_MIN:
                        found[raw[:SAMPLE_BYTES]] = None
    return list(found)[:SAMPLES]


def _orphans(rt: Runtime) -> list[str]:
    store = rt.store
    return [sha for sha in store.runtime_blob_digests() if not store.runtime_blob_referenced(sha)]


def _unreferenced_blobs(rt: Runtime, *, dry_run: bool) -> int:
    store = rt.store
    orphans = _orphans(rt)
    if not dry_run and orphans:
        with rt.transaction():
            store.delete_runtime_blobs(orphans)
    return len(orphans)


def collect(rt: Runtime, *, now: Instant, dry_run: bool = False) -> GCReport:
    """Apply :data:`RETENTION` as of ``now``."""
    store = rt.store
    contents = records = assemblies = 0
    with rt.transaction():
        for conversation in store.runtime_conversations():
            rows = store.runtime_records(conversation.id,
                                         kinds=["artifact", "checkpoint", "skill_state"])
            erase: set[str] = set()
            keep: set[str] = set()
            latest: dict[tuple[str, str], int] = {}
            for r in rows:
                if r.kind != "artifact" and r.run_id is not None:
                    latest[(r.kind, r.run_id)] = r.seq
            cited = {r.target_id for r in store.runtime_records(
                conversation.id, kinds=["promotion", "share"])}
            doomed: list[int] = []
            for r in rows:
                node = from_record(r)
                if isinstance(node, ToolArtifact):
                    rule = RETENTION["raw_secret" if node.privacy == "secret" else "artifact"]
                    shas = {node.arguments_ref.sha256, node.result_ref.sha256}
                    (erase if _older(r.known_from, now, _days(rule)) else keep).update(shas)
                elif isinstance(node, ContinuationCheckpoint | SkillState):
                    rule = RETENTION[r.kind]
                    if (latest.get((r.kind, node.run_id)) != r.seq and r.record_id not in cited
                            and _older(r.known_from, now, _days(rule))):
                        doomed.append(r.seq)
            gone = sorted(erase - keep)
            present = [sha for sha in gone if store.runtime_content(conversation.id, sha)
                       is not None]
            contents += len(present)
            records += len(doomed)
            expired = _expired_assemblies(rt, conversation.id, now)
            assemblies += len(expired)
            if not dry_run:
                store.delete_runtime_contents(conversation.id, present)
                store.delete_runtime_records(conversation.id, doomed)
                # the recall index holds the erased results' text: it goes with them
                gone_text = set(present)
                store.delete_runtime_recall(conversation.id, [
                    *doomed, *(r.seq for r in rows if r.kind == "artifact"
                               and r.payload.get("result_ref", {}).get("sha256") in gone_text)])
                store.delete_runtime_assemblies(conversation.id, expired)
    blobs = _unreferenced_blobs(rt, dry_run=dry_run)
    erased = contents or records or blobs or assemblies
    compaction = None
    if not dry_run:
        # nothing erased: only finish what an earlier erasure could not (a log a reader held)
        done = store.runtime_compact(full=bool(erased))
        compaction = done.message if erased or not done.complete else None
    return GCReport(contents, records, blobs, dry_run, compaction, assemblies)


def _expired_assemblies(rt: Runtime, conversation: str, now: Instant) -> list[str]:
    """The assemblies of ``conversation`` older than their policy's ``assembly_days`` (the
    policy document each one stored; :data:`RETENTION` when it names none)."""
    default = _days(RETENTION["assembly"]).days
    expired = []
    for assembly_id in rt.store.runtime_assembly_ids(conversation):
        found = rt.store.runtime_assembly(assembly_id)
        if found is None:
            continue
        record = json.loads(found[1])
        retention = record.get("policy_document", {}).get("retention", {})
        days = retention.get("assembly_days", default)
        if isinstance(days, int) and days > 0 and _older(
            parse_instant(record["created_at"]), now, _dt.timedelta(days=days)
        ):
            expired.append(assembly_id)
    return expired
