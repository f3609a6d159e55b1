"""The exception tree of vigente.

Every error a caller can cause is a ``VigenteError``; surfaces map it to ``Error: …`` (CLI, exit
1) or one JSON error body (HTTP). Messages say what went wrong and how to fix it.

    VigenteError
    ├── InvalidInput            bad input; nothing was written
    │   ├── InvalidTime         unparseable date, naive timestamp, out-of-range instant
    │   ├── InvalidInterval     an interval whose end is not after its start
    │   ├── InvalidValue        a value that is not JSON, or is too large
    │   ├── InvalidName         an empty, too long or non-UTF-8 lineage, source or scope
    │   ├── UnknownFields       fields a reader does not take (named, with the closest known)
    │   ├── ImportFileError     a bad line in an import file (carries the line number)
    │   ├── CorpusFileError     a corpus file that cannot be opened, decompressed or decoded
    │   ├── UnsupportedLanguage a reader language other than the supported ones ("en", "it")
    │   ├── UnknownRelation     a relation that is not supersedes/amends/supplements/…
    │   ├── InvalidChain        a version chain that contradicts itself (order, cycles)
    │   ├── InvalidProposal     a serialised extraction proposal that cannot be read back
    │   └── InvalidEvidence     evidence (``ask --json``) that cannot be checked
    │       └── EvidenceFileError  the evidence file cannot be read or is not JSON
    ├── HistoryRewriteError     a write whose knowledge date is earlier than recorded knowledge
    │   ├── AnsweredHistoryError  a write dated at or before a knowledge time already answered for
    │   └── RuntimeHistoryConflict  a runtime record dated before records its conversation holds
    ├── FutureKnowledgeError    a knowledge date after "now": nothing can be known from the future
    │   └── ClockAheadError     a caller's clock (now, known_at, as_of) ahead of the store's
    └── StoreError              the storage backend cannot be opened or used
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "AnsweredHistoryError",
    "ClockAheadError",
    "CorpusFileError",
    "EvidenceFileError",
    "FutureKnowledgeError",
    "HistoryRewriteError",
    "RuntimeHistoryConflict",
    "ImportFileError",
    "InvalidInput",
    "InvalidChain",
    "InvalidEvidence",
    "InvalidInterval",
    "InvalidName",
    "InvalidProposal",
    "InvalidTime",
    "InvalidValue",
    "StoreError",
    "UnknownFields",
    "UnknownRelation",
    "UnsupportedLanguage",
    "VigenteError",
    "unknown_fields_message",
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


class UnknownFields(InvalidInput):
    """Fields a reader does not take: refused, never ignored, since a misspelt field (a
    ``privcy`` for ``privacy``) would otherwise be dropped without a word and its default
    used. The message names each unknown field, the closest known one, and every known one."""

    code = "unknown_field"

    def __init__(self, unknown: Iterable[str], known: Iterable[str], what: str) -> None:
        self.unknown, self.known = sorted(unknown), list(known)
        super().__init__(unknown_fields_message(self.unknown, self.known, what))


def unknown_fields_message(unknown: Sequence[str], known: Sequence[str], what: str) -> str:
    """``unknown field "privcy" in a tool_result event (did you mean "privacy"?): it takes
    call, status, …`` — the words of :class:`UnknownFields`, for a reader that raises its
    own exception type (a schema's validator)."""
    shown = list(unknown)[:5]
    named = []
    for field in shown:
        close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        named.append(f"{field!r}{hint}")
    more = f" and {len(unknown) - len(shown)} more" if len(unknown) > len(shown) else ""
    noun = "field" if len(unknown) == 1 else "fields"
    return (f"unknown {noun} {', '.join(named)}{more} in {what}: it takes "
            f"{', '.join(known)}; fix the name or leave the field out")


class ImportFileError(InvalidInput):
    """A line of an import file is invalid; the whole import was refused."""

    def __init__(self, line_number: int, message: str) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number


class CorpusFileError(InvalidInput):
    """The corpus file cannot be opened, decompressed or decoded."""


class UnsupportedLanguage(InvalidInput):
    """A reader language vigente cannot render or read."""


class UnknownRelation(InvalidInput):
    """A relation to a predecessor that is not one of the five known relations."""


class InvalidChain(InvalidInput):
    """A version chain whose links contradict each other (order, dates, cycles)."""


class InvalidProposal(InvalidInput):
    """A serialised extraction proposal with a missing, mistyped or impossible field."""


class InvalidEvidence(InvalidInput):
    """Evidence that does not have the ``ask --json`` shape."""


class EvidenceFileError(InvalidEvidence):
    """The evidence file cannot be read, is not UTF-8 or is not a JSON object."""


class HistoryRewriteError(VigenteError):
    """A write would change what the store held at a knowledge date already recorded."""


class AnsweredHistoryError(HistoryRewriteError):
    """A write dated at or before the store's answered horizon: it would change answers
    already given. ``horizon`` is that knowledge time; the write must be dated after it."""

    def __init__(self, message: str, horizon: object) -> None:
        super().__init__(message)
        self.horizon = horizon


class RuntimeHistoryConflict(HistoryRewriteError):
    """A runtime record whose ``at`` is before records its conversation already holds (another
    writer got there first: re-read and retry, or leave ``at`` out). In an import it names the
    line (``line_number``, None outside an import)."""

    def __init__(self, message: str, line_number: int | None = None) -> None:
        super().__init__(message if line_number is None else f"line {line_number}: {message}")
        self.line_number = line_number
        self.reason = message


class FutureKnowledgeError(VigenteError):
    """A knowledge date lies after "now"."""


class ClockAheadError(FutureKnowledgeError):
    """A moment a caller gave as its clock or knowledge date (``now``, ``known_at``, ``as_of``)
    lies after the store's clock by more than the allowed skew: nothing may be known, or asked,
    from a future the store has not reached."""


class StoreError(VigenteError):
    """The storage backend cannot be opened, migrated or used."""
