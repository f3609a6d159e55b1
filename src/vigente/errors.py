"""The exception tree of vigente.

Every error a caller can cause is a ``VigenteError``; surfaces map it to ``Error: …`` (CLI, exit
1) or one JSON error body (HTTP). Messages say what went wrong and how to fix it.

    VigenteError
    ├── InvalidInput            bad input; nothing was written
    │   ├── InvalidTime         unparseable date, naive timestamp, out-of-range instant
    │   ├── InvalidInterval     an interval whose end is not after its start
    │   ├── InvalidValue        a value that is not JSON, or is too large
    │   ├── InvalidName         an empty, too long or non-UTF-8 lineage, source or scope
    │   └── ImportFileError     a bad line in an import file (carries the line number)
    ├── HistoryRewriteError     a write whose knowledge date is earlier than recorded knowledge
    ├── FutureKnowledgeError    a knowledge date after "now": nothing can be known from the future
    └── StoreError              the storage backend cannot be opened or used
"""

from __future__ import annotations

__all__ = [
    "FutureKnowledgeError",
    "HistoryRewriteError",
    "ImportFileError",
    "InvalidInput",
    "InvalidInterval",
    "InvalidName",
    "InvalidTime",
    "InvalidValue",
    "StoreError",
    "VigenteError",
]


class VigenteError(Exception):
    """Base of every error vigente raises on purpose."""


class InvalidInput(VigenteError, ValueError):
    """The caller gave input vigente cannot accept; nothing was written."""


class InvalidTime(InvalidInput):
    """A date or timestamp that cannot be parsed, lacks an offset, or is out of range."""


class InvalidInterval(InvalidInput):
    """An interval whose end is not strictly after its start."""


class InvalidValue(InvalidInput):
    """A value that cannot be stored as JSON, or is too large."""


class InvalidName(InvalidInput):
    """A lineage, source or scope key/value that is empty, too long or not valid UTF-8."""


class ImportFileError(InvalidInput):
    """A line of an import file is invalid; the whole import was refused."""

    def __init__(self, line_number: int, message: str) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number


class HistoryRewriteError(VigenteError):
    """A write would change what the store held at a knowledge date already recorded."""


class FutureKnowledgeError(VigenteError):
    """A knowledge date lies after "now"."""


class StoreError(VigenteError):
    """The storage backend cannot be opened, migrated or used."""
