"""Conformance of what every contract shares (:mod:`vigente.store.contracts.transaction`): one
transaction, atomic and re-entrant, spanning every contract of the backend."""

from __future__ import annotations

from typing import ClassVar

import pytest

from vigente.api import Vigente
from vigente.records.decisions import new_decision
from vigente.store.base import Store
from vigente.store.contracts import DecisionLog
from vigente.testing.base import KERNEL, NOW, Abort, Conformance, Contracts, skip_unless_implements

__all__ = ["TransactionalConformance"]



def _record(vg: Vigente, lineage: str, value: int = 1) -> None:
    vg.record(lineage, value, valid_from="2024-01-01", known_at="2024-01-01", source="a",
              now=NOW)


class TransactionalConformance(Conformance):
    """Transactions: all or nothing, inner ones joining the outer one. What is written in them
    is the kernel's writes, through the facade."""

    contracts: ClassVar[Contracts] = KERNEL

    def test_a_committed_transaction_keeps_every_write(self, vg: Vigente, store: Store) -> None:
        with store.transaction():
            _record(vg, "first")
            _record(vg, "second")
        assert [lineage for lineage, _ in store.lineages()] == ["first", "second"]

    def test_an_exception_inside_a_transaction_leaves_nothing_written(self, vg: Vigente,
                                                                      store: Store) -> None:
        _record(vg, "kept")
        with pytest.raises(Abort), store.transaction():
            _record(vg, "first")
            _record(vg, "kept", 2)
            raise Abort
        assert [lineage for lineage, _ in store.lineages()] == ["kept"]
        assert [v.value for v in store.history("kept")] == [1]

    def test_a_nested_transaction_joins_the_outer_one(self, vg: Vigente, store: Store) -> None:
        with pytest.raises(Abort), store.transaction():
            _record(vg, "outer")
            with store.transaction():
                _record(vg, "inner")
            assert {lineage for lineage, _ in store.lineages()} == {"outer", "inner"}
            raise Abort  # the inner one committed nothing by itself
        assert store.lineages() == []

    def test_writes_to_two_contracts_land_together_or_not_at_all(self, vg: Vigente,
                                                                 store: Store) -> None:
        skip_unless_implements(store, (DecisionLog,), "a decision written with a fact")
        decision = new_decision("evidence", "first", {"admitted": []})
        with pytest.raises(Abort), store.transaction():
            _record(vg, "first")
            store.append_decision(decision)
            raise Abort
        assert store.lineages() == [] and store.decision(decision.decision_id) is None
        with store.transaction():
            _record(vg, "first")
            store.append_decision(decision)
        assert store.decision(decision.decision_id) == decision and store.history("first")
