"""Conformance of the assembly domain's contracts (:mod:`vigente.store.contracts.assembly`): the
log of assembled contexts, and the running token counts an assembly compares itself with."""

from __future__ import annotations

import json
from typing import ClassVar

from vigente.store.base import Store
from vigente.store.contracts import AssemblyLog, RuntimeIndex, RuntimeLog, TokenCounts
from vigente.testing.base import Conformance, Contracts
from vigente.testing.runtime import C, conversation
from vigente.time import Instant

__all__ = ["AssemblyLogConformance", "TokenCountsConformance"]


class AssemblyLogConformance(Conformance):
    """Assembled contexts: appended, read back, deleted when their retention runs out."""

    contracts: ClassVar[Contracts] = (RuntimeLog, AssemblyLog)

    def test_an_assembly_reads_back_as_appended(self, store: Store) -> None:
        conversation(store)
        payload = json.dumps({"included": ["u1", "t1"], "why": "Zoë, 東京"}, ensure_ascii=False)
        with store.transaction():
            for n in (1, 2, 3):
                store.append_runtime_assembly(f"asm-{n}", C, 1_000 + n, 900, payload + " " * n)
        assert store.runtime_assembly("asm-2") == (C, payload + "  ")
        assert store.runtime_assembly("unknown") is None
        assert store.runtime_assembly_ids(C) == ["asm-1", "asm-2", "asm-3"]  # oldest first
        assert store.runtime_assembly_ids("unknown") == []

    def test_deleting_assemblies(self, store: Store) -> None:
        conversation(store)
        conversation(store, "kit-other")
        with store.transaction():
            for n, owner in enumerate((C, C, "kit-other")):
                store.append_runtime_assembly(f"asm-{n}", owner, 1_000 + n, 900, "{}")
        with store.transaction():
            assert store.delete_runtime_assemblies(C, ["asm-0", "asm-2", "unknown"]) == 1
        assert store.runtime_assembly_ids(C) == ["asm-1"]
        assert store.runtime_assembly("asm-2") == ("kit-other", "{}")  # another's: kept
        with store.transaction():  # purged with their conversation
            store.delete_runtime_conversations([C])
        assert store.runtime_assembly_ids(C) == [] and store.runtime_assembly("asm-1") is None


class TokenCountsConformance(Conformance):
    """Running token counts per counter and branch, summed as known at ``k``."""

    contracts: ClassVar[Contracts] = (RuntimeLog, TokenCounts)

    def test_token_counts_are_running_sums_per_branch(self, store: Store) -> None:
        conversation(store)
        # (seq, branch, position, known_micros, tokens, messages)
        rows = [(10, "main", 10, 1, 5, 1), (11, "main", 11, 2, 7, 2), (12, "side", 12, 3, 100, 1),
                (13, "main", 10, 4, -2, 0)]
        with store.transaction():
            store.append_runtime_token_counts(C, "enc/fmt", rows, 20)
        total = store.runtime_token_total
        assert total(C, "enc/fmt", [("main", None)], Instant(4)) == (10, 3)
        assert total(C, "enc/fmt", [("main", None)], Instant(2)) == (12, 3)
        assert total(C, "enc/fmt", [("main", None), ("side", None)], Instant(9)) == (110, 4)
        # a fork after position 10: row 11 is not inherited, the later row anchored at 10 is
        assert total(C, "enc/fmt", [("main", 10)], Instant(9)) == (3, 1)
        assert total(C, "other/fmt", [("main", None)], Instant(9)) == (0, 0)
        with store.transaction():  # counted rows are skipped when given again
            store.append_runtime_token_counts(C, "enc/fmt", rows[:1], 20)
        assert total(C, "enc/fmt", [("main", None)], Instant(9)) == (10, 3)
        if isinstance(store, RuntimeIndex):
            assert store.runtime_cache_mark(C, "tokens:enc/fmt") == 20
