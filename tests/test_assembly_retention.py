"""Assembly records under retention, on every backend: ``gc`` deletes an assembly once the
days its own policy keeps it (``[retention] assembly_days``; 0 = until the account goes) have
passed, a dry run deletes nothing, and the purge of an account deletes its assemblies."""

from __future__ import annotations

import datetime as dt
import json

import pytest

import vigente.time
from tests.conformance.test_runtime import session
from vigente import Vigente
from vigente.assemble import default_policy, policy_from_document
from vigente.errors import InvalidInput
from vigente.runtime.retention import RETENTION
from vigente.time import Instant, parse_instant

C = "trip-42"


def _later(created: str, days: int) -> str:
    instant = parse_instant(created).datetime
    return (instant + dt.timedelta(days=days)).isoformat()


@pytest.fixture(autouse=True)
def days_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's clock a year on, as retention sees it: gc takes no ``now`` ahead of the
    store's clock, and an assembly is dated by that clock when it is made, so the days it must
    wait pass here rather than in the test's ``now``."""
    real = vigente.time.current_instant
    monkeypatch.setattr(vigente.time, "current_instant",
                        lambda: Instant(real().micros + 400 * 86_400_000_000))


def test_gc_deletes_assemblies_past_their_policys_days(vg: Vigente) -> None:
    vg.runtime.import_events([json.dumps(e) for e in session()])
    assembly = vg.assembly
    kept_default = assembly.assemble(C, "main", "agent")
    short = policy_from_document({"id": "short", "version": 1, "retention": {"assembly_days": 1}})
    short_lived = assembly.assemble(C, "main", "agent", policy=short)
    forever = policy_from_document(
        {"id": "forever", "version": 1, "retention": {"assembly_days": 0}}
    )
    kept_forever = assembly.assemble(C, "main", "agent", policy=forever)
    created = kept_forever.record["created_at"]
    store = vg.store
    every = [kept_default.id, short_lived.id, kept_forever.id]
    assert store.runtime_assembly_ids(C) == every

    dry = vg.runtime.gc(now=_later(created, 2), dry_run=True)
    assert dry.assemblies == 1 and store.runtime_assembly_ids(C) == every
    assert vg.runtime.gc(now=_later(created, 0)).assemblies == 0  # not a day old yet
    report = vg.runtime.gc(now=_later(created, 2))
    assert report.assemblies == 1 and report.compaction is not None
    assert store.runtime_assembly(short_lived.id) is None
    assert store.runtime_assembly_ids(C) == [kept_default.id, kept_forever.id]
    with pytest.raises(InvalidInput, match="unknown assembly"):
        assembly.explain(short_lived.id)

    default_days = default_policy().get("retention", "assembly_days")
    assert RETENTION["assembly"] == f"age:{default_days}"
    assert vg.runtime.gc(now=_later(created, default_days - 1)).assemblies == 0
    assert vg.runtime.gc(now=_later(created, default_days + 1)).assemblies == 1
    assert store.runtime_assembly_ids(C) == [kept_forever.id]
    assert assembly.explain(kept_forever.id)["policy"]["id"] == "forever"


def test_purge_account_deletes_its_assemblies(vg: Vigente) -> None:
    vg.runtime.import_events([json.dumps(e) for e in session()])
    vg.runtime.open_conversation("keep", "acct-kept")
    made = [
        vg.assembly.assemble(C, "main", "agent").id,
        vg.assembly.assemble(C, "other", "agent").id,
    ]
    assert vg.store.runtime_assembly_ids(C) == made
    vg.runtime.purge_account("acct-demo")
    assert all(vg.store.runtime_assembly(a) is None for a in made)
    assert vg.store.runtime_assembly_ids(C) == []
    assert [c.id for c in vg.runtime.conversations()] == ["keep"]


def test_retention_days_are_validated() -> None:
    with pytest.raises(InvalidInput, match="retention.assembly_days must be >= 0"):
        policy_from_document({"id": "p", "version": 1, "retention": {"assembly_days": -1}})
    with pytest.raises(InvalidInput, match="retention.assembly_days must be int"):
        policy_from_document({"id": "p", "version": 1, "retention": {"assembly_days": "long"}})
