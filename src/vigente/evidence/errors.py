"""Errors of the evidence domain, all :class:`vigente.errors.InvalidInput` (nothing was written).

They extend the tree drawn in :mod:`vigente.errors`::

    InvalidInput
    ├── UnsupportedLanguage   a reader language other than the supported ones ("en", "it")
    ├── UnknownRelation       a relation name that is not supersedes/amends/supplements/…
    ├── InvalidChain          a version chain that contradicts itself (successor starts first…)
    ├── InvalidProposal       a serialised extraction proposal that cannot be read back
    └── InvalidEvidence       an evidence object (``ask --json``) that cannot be checked
        └── EvidenceFileError the evidence file cannot be read or is not JSON

Every message says what went wrong and how to fix it.
"""

from __future__ import annotations

from vigente.errors import InvalidInput

__all__ = [
    "EvidenceFileError",
    "InvalidChain",
    "InvalidEvidence",
    "InvalidProposal",
    "UnknownRelation",
    "UnsupportedLanguage",
]


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
