"""Errors of the evidence domain, re-exported from the one tree in :mod:`vigente.errors`."""

from __future__ import annotations

from vigente.errors import (
    EvidenceFileError,
    InvalidChain,
    InvalidEvidence,
    InvalidProposal,
    UnknownRelation,
    UnsupportedLanguage,
)

__all__ = [
    "EvidenceFileError",
    "InvalidChain",
    "InvalidEvidence",
    "InvalidProposal",
    "UnknownRelation",
    "UnsupportedLanguage",
]
