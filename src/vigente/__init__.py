"""vigente — what an LLM agent may treat as true, for which date, and what it should see.

The public API: open a :class:`Vigente` store, ``record`` versioned facts on two time axes and
ask for :class:`Evidence` at a valid date ``t`` as known on ``k``.
"""

from __future__ import annotations

from vigente._version import __version__ as __version__
from vigente.api import ImportReport, Vigente
from vigente.errors import (
    FutureKnowledgeError,
    HistoryRewriteError,
    ImportFileError,
    InvalidInput,
    InvalidInterval,
    InvalidName,
    InvalidTime,
    InvalidValue,
    StoreError,
    VigenteError,
)
from vigente.kernel.answer import Evidence, Exclusion, Interpretation, PrecedenceOutcome, Status
from vigente.kernel.ledger import WriteResult
from vigente.records.values import Scope
from vigente.records.versions import ExclusionReason, PrecedenceRule, Version
from vigente.store import SQLiteStore, Store, open_store
from vigente.time import Instant, Interval, parse_instant

__all__ = [
    "Evidence",
    "Exclusion",
    "ExclusionReason",
    "FutureKnowledgeError",
    "HistoryRewriteError",
    "ImportFileError",
    "ImportReport",
    "Instant",
    "Interpretation",
    "Interval",
    "InvalidInput",
    "InvalidInterval",
    "InvalidName",
    "InvalidTime",
    "InvalidValue",
    "PrecedenceOutcome",
    "PrecedenceRule",
    "SQLiteStore",
    "Scope",
    "Status",
    "Store",
    "StoreError",
    "Version",
    "VigenteError",
    "WriteResult",
    "open",
    "open_store",
    "parse_instant",
]


def open(url: str = ":memory:", *, default_zone: str | None = None) -> Vigente:  # noqa: A001
    """Open a vigente store: a SQLite file path, ``:memory:`` or ``postgresql://…``."""
    return Vigente.open(url, default_zone=default_zone)
