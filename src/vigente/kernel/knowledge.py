"""What the library's services use of a store: the :class:`Knowledge` protocol.

The document, derivation, review and retrieval services and the corpus importer read dates in
the store's zone, check and fix knowledge dates, read a lineage's candidate versions and record
their decisions. They take an object with these few methods, the
:class:`~vigente.kernel.service.Kernel`, never the :class:`~vigente.Vigente` facade, so no
service imports the facade and the facade only composes them (docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vigente.records.values import Scope
    from vigente.records.versions import Version
    from vigente.store.base import Store
    from vigente.time import Instant, TimeLike

__all__ = ["Knowledge"]


class Knowledge(Protocol):
    """A store with its zone, its answered horizon and its decision log."""

    @property
    def store(self) -> Store:
        """The store the service reads and writes."""
        ...

    def instant(self, value: TimeLike) -> Instant:
        """A date or timestamp read in the store's default zone."""
        ...

    def check_knowledge_date(self, known_at: Instant, now: TimeLike | None) -> Instant:
        """Refuse a knowledge date after ``now`` (default: this moment); return ``now``."""
        ...

    def fix_answer(self, known_at: Instant, now: Instant, *, pinned: bool) -> None:
        """Fix the answered horizon at ``known_at`` before an answer is read."""
        ...

    def present(self, now: TimeLike | None) -> Instant:
        """``now`` read (never ahead of the store's clock), or this moment."""
        ...

    def answer_times(self, known_at: TimeLike | None, now: TimeLike | None
                     ) -> tuple[Instant, Instant]:
        """``(k, now)`` of a question about to be read, checked; the horizon fixed at an
        explicit past ``k``; as known now, nothing written."""
        ...

    def candidates_at(
        self, lineage: str, scope: Scope, t: Instant, k: Instant, now: Instant,
        *, held: bool = False,
    ) -> tuple[list[Version], list[Version] | None]:
        """A lineage's candidate versions at ``(t, k)`` (and those held at ``(t, t)``)."""
        ...

    def record_decision(self, kind: str, subject: str, payload: dict[str, Any]) -> str:
        """Store an admissibility decision; its id."""
        ...
