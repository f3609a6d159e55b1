"""What every conformance class shares: the fixtures that open the stores under test, the check
that a store implements the contracts a class tests (a class whose contracts a store lacks is
skipped, naming them), and the instants the checks are written in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import ClassVar, cast

import pytest

from vigente.api import Vigente
from vigente.runtime import Runtime
from vigente.store.base import Store
from vigente.store.contracts import (
    AnswerHorizon,
    PrecedenceRules,
    RuntimeContent,
    RuntimeIndex,
    RuntimeLog,
    Transactional,
    VersionLedger,
)
from vigente.time import Instant, parse_instant

__all__ = [
    "KERNEL",
    "NOW",
    "RUNTIME",
    "Abort",
    "Conformance",
    "Contracts",
    "StoreFactory",
    "at",
    "facade",
    "skip_unless_implements",
]

#: What a backend author hands the kit: a callable that opens a fresh, empty store.
StoreFactory = Callable[[], Transactional]

#: Contracts, as classes to test a store against with ``isinstance`` (abstract ones, so typed
#: as plain classes).
Contracts = tuple[type, ...]

#: The contracts the :class:`~vigente.Vigente` facade's writes and answers use: checks made
#: through the facade need all three.
KERNEL: Contracts = (VersionLedger, PrecedenceRules, AnswerHorizon)

#: The contracts the runtime service's imports and its read index use.
RUNTIME: Contracts = (RuntimeLog, RuntimeContent, RuntimeIndex)

#: The pinned clock of the checks: every date they write or ask about is before it, so that no
#: check depends on the day it runs (the few about "learned now" read the real clock).
NOW = "2025-12-01"


class Abort(Exception):
    """Raised inside a transaction by a check, to see what its rollback leaves."""


def at(text: str) -> Instant:
    """An instant written as the checks write them (a date, or an RFC 3339 timestamp)."""
    return parse_instant(text)


def skip_unless_implements(store: Transactional, contracts: Contracts,
                           what: str = "these checks") -> None:
    """Skip the test when ``store`` lacks one of ``contracts`` (an optional capability, told
    apart with ``isinstance``), naming what is missing."""
    missing = [c.__name__ for c in contracts if not isinstance(store, c)]
    if missing:
        pytest.skip(f"{type(store).__name__} does not implement {', '.join(missing)}, which "
                    f"{what} need (optional capabilities, detected with isinstance)")


def facade(store: Transactional) -> Vigente:
    """The public facade over ``store`` (skipped when it lacks the :data:`KERNEL` contracts).
    A backend that implements only part of :class:`~vigente.store.Store` is handed over as it
    is: the facade calls only the contracts of what it is asked to do."""
    skip_unless_implements(store, KERNEL, "checks made through the Vigente facade")
    return Vigente(cast(Store, store))


class Conformance:
    """The base of every conformance class. A subclass names the contracts its checks need in
    :attr:`contracts`; the backend author's test class provides one fixture,
    ``store_factory``: a callable that opens a fresh, empty store (see docs/testing.md)."""

    #: The contracts every check defined in the class needs; a store without one skips them.
    contracts: ClassVar[Contracts] = ()

    @pytest.fixture
    def store(self, store_factory: StoreFactory, request: pytest.FixtureRequest
              ) -> Iterator[Transactional]:
        """A fresh, empty store of the backend under test, closed after the test."""
        with _opened(store_factory) as store:
            _skip_unless_checked(store, request)
            yield store

    @pytest.fixture
    def fresh_store(self, store_factory: StoreFactory, request: pytest.FixtureRequest
                    ) -> Iterator[StoreFactory]:
        """For property tests, whose examples each need an empty store: every call opens a new
        one and closes the one opened before (the last is closed after the test)."""
        opened: list[Transactional] = []

        def open_fresh() -> Transactional:
            if opened:
                opened.pop().close()
            store = _opened(store_factory)
            opened.append(store)
            _skip_unless_checked(store, request)
            return store

        yield open_fresh
        for store in opened:
            store.close()

    @pytest.fixture
    def vg(self, store: Transactional) -> Vigente:
        """The :class:`~vigente.Vigente` facade over :meth:`store`."""
        return facade(store)

    @pytest.fixture
    def runtime(self, store: Transactional) -> Runtime:
        """The runtime service over :meth:`store` (skipped without the :data:`RUNTIME`
        contracts)."""
        skip_unless_implements(store, RUNTIME, "checks made through the runtime service")
        return Runtime(cast(Store, store))


def _opened(store_factory: StoreFactory) -> Transactional:
    """What ``store_factory`` opened, refused with a clear failure when it is not a store."""
    store = store_factory()
    if not isinstance(store, Transactional):
        pytest.fail(f"store_factory returned {type(store).__name__}, not a store: it must open "
                    "an object implementing vigente.store.contracts (a Transactional, such as "
                    "a vigente.store.Store)", pytrace=False)
    return store


def _skip_unless_checked(store: Transactional, request: pytest.FixtureRequest) -> None:
    """Skip the test when ``store`` lacks a contract of the kit's class that holds it (one test
    class may inherit the checks of every contract: :class:`~vigente.testing.StoreConformance`)."""
    name = request.function.__name__
    home = next((cls for cls in type(request.instance).__mro__ if name in cls.__dict__),
                type(request.instance))
    contracts: Contracts = getattr(home, "contracts", ())
    skip_unless_implements(store, contracts, f"the checks of {home.__name__}")
