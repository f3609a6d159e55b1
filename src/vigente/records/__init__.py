"""The record types every domain and every backend share: the bottom layer of the library.

A record is what the store keeps and hands back; it holds no rule of a domain and imports
nothing of vigente above :mod:`vigente.time` and :mod:`vigente.errors`, so that the store
contracts (:mod:`vigente.store`) and the domains above them all depend downward on it.

=================  ======================================================================
module             records
=================  ======================================================================
``values``         ``Scope`` and JSON values (the kernel's names and their limits)
``versions``       ``Version``, ``PrecedenceRule``, ``ExclusionReason``, admissibility
``decisions``      ``Decision``: one entry of the decision log
``ledger``         ``Backfill`` and ``UnreadableInstant``: what the ledger keeps besides
``relations``      ``Relation``: how a document version relates to its predecessor
``documents``      document versions, derivations, proposals and review events
``retrieval``      claims, passages, fields and candidates of the retrieval index
``runtime``        conversations, runtime records and recall documents
=================  ======================================================================
"""

from vigente.records.decisions import Decision
from vigente.records.documents import DerivationRecord, DocumentVersion, ProposalRecord, ReviewEvent
from vigente.records.ledger import Backfill, UnreadableInstant
from vigente.records.relations import Relation
from vigente.records.runtime import Conversation, RuntimeRecord
from vigente.records.values import JSONValue, Scope
from vigente.records.versions import ExclusionReason, PrecedenceRule, Version

__all__ = [
    "Backfill",
    "Conversation",
    "Decision",
    "DerivationRecord",
    "DocumentVersion",
    "ExclusionReason",
    "JSONValue",
    "PrecedenceRule",
    "ProposalRecord",
    "Relation",
    "ReviewEvent",
    "RuntimeRecord",
    "Scope",
    "UnreadableInstant",
    "Version",
]
