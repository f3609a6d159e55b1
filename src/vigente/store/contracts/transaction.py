"""What every store contract shares: one connection, one transaction, and closing."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Self

__all__ = ["Transactional"]


class Transactional(ABC):
    """A store's connection. Every method that changes data must run inside
    :meth:`transaction`; a transaction is atomic (all or nothing) and nested calls join the
    outer one. The contracts of one backend share this connection, so a transaction spans
    them all: a write of the kernel and a decision land together or not at all."""

    #: The URL or path the store was opened with (for messages, never parsed by domain code).
    url: str

    @abstractmethod
    def close(self) -> None:
        """Release connections. The store cannot be used afterwards."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """An atomic unit of work; re-entrant (inner calls join the outer transaction)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
