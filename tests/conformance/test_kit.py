"""The store conformance kit (vigente.testing) run on both backends, as a backend author runs
it on theirs: one test class per backend, each giving the kit a factory of fresh, empty
stores."""

from __future__ import annotations

import copy
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any

import psycopg
import pytest

from vigente.records.decisions import Decision
from vigente.store.contracts import DecisionLog, RetrievalIndex, VectorIndex
from vigente.store.postgres import PostgresStore
from vigente.store.sqlite import SQLiteStore
from vigente.testing import (
    DecisionLogConformance,
    StoreConformance,
    StoreFactory,
    VectorIndexConformance,
)
from vigente.testing.base import _opened, skip_unless_implements


class TestSQLite(StoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        numbers = count()
        return lambda: SQLiteStore(tmp_path / f"kit-{next(numbers)}.db")


class TestPostgres(StoreConformance):
    @pytest.fixture
    def store_factory(self, postgres_url: str, postgres_server: Any) -> Iterator[StoreFactory]:
        """The test's database first, then (for property tests) one more per call."""
        created: list[str] = []

        def open_fresh() -> PostgresStore:
            if not created:
                created.append("")
                return PostgresStore(postgres_url)
            name = f"kit_{uuid.uuid4().hex}"  # a generated name, never input
            with psycopg.connect(postgres_server.get_uri(), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            created.append(name)
            return PostgresStore(postgres_server.get_uri(name))

        yield open_fresh
        with psycopg.connect(postgres_server.get_uri(), autocommit=True) as conn:
            for name in filter(None, created):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_importing_vigente_imports_neither_pytest_nor_the_kit() -> None:
    code = ("import sys, vigente, vigente.store, vigente.runtime, vigente.assemble; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pytest', '_pytest', 'hypothesis') or m.startswith('vigente.testing')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


class MemoryDecisions(DecisionLog):
    """A backend of one contract, in memory: what a partial backend looks like to the kit."""

    url = ":decisions:"

    def __init__(self) -> None:
        self._decisions: list[Decision] = []
        self._depth = 0

    def close(self) -> None:
        self._decisions = []

    @contextmanager
    def transaction(self) -> Iterator[None]:
        kept, self._depth = copy.copy(self._decisions), self._depth + 1
        try:
            yield
        except BaseException:
            if self._depth == 1:
                self._decisions = kept
            raise
        finally:
            self._depth -= 1

    def append_decision(self, decision: Decision) -> None:
        self._decisions.append(decision)

    def decision(self, decision_id: str) -> Decision | None:
        return next((d for d in self._decisions if d.decision_id == decision_id), None)

    def decisions(self, limit: int) -> list[Decision]:
        return self._decisions[::-1][:limit]


class TestADecisionLogAlone(DecisionLogConformance, VectorIndexConformance):
    """Its decision checks run; the vector checks, and those made through the facade (which
    needs the kernel's contracts), are skipped."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        return MemoryDecisions


def test_a_missing_contract_skips_naming_it() -> None:
    with pytest.raises(pytest.skip.Exception, match="MemoryDecisions does not implement "
                       "RetrievalIndex, VectorIndex, which the vector checks need"):
        skip_unless_implements(MemoryDecisions(), (DecisionLog, RetrievalIndex, VectorIndex),
                               "the vector checks")


def test_a_factory_that_opens_no_store_fails_saying_so() -> None:
    with pytest.raises(pytest.fail.Exception, match="store_factory returned object, not a store"):
        _opened(object)
