"""The evidence domain: document lineages, their citations, extraction and the answer check.

The storage-free parts are importable on their own:

* :mod:`~vigente.records.relations` — how a version relates to its predecessor;
* :mod:`~vigente.evidence.citations` — render a version chain ("Circular 12/2025, in force from
  3 March 2025, replacing Circular 7/2023") in English or Italian, as text or Markdown;
* :mod:`~vigente.evidence.lineage_fields` — propose lineage, reference, validity and relation for a
  bare document (:class:`Proposal`, reviewed by a person before it is admissible);
* :mod:`~vigente.evidence.verify` — check a generated answer against the evidence;
* :mod:`~vigente.evidence.dates`, :mod:`~vigente.evidence.references`,
  :mod:`~vigente.evidence.numbers` — dates, act references and numbers as people write them.
"""

from __future__ import annotations

from vigente.evidence.citations import (
    Citation,
    CitedVersion,
    LinkedVersion,
    cite,
    cite_chain,
    link_chain,
)
from vigente.evidence.dates import LANGUAGES, DateMention, find_dates, format_date, parse_date
from vigente.evidence.errors import (
    EvidenceFileError,
    InvalidChain,
    InvalidEvidence,
    InvalidProposal,
    UnknownRelation,
    UnsupportedLanguage,
)
from vigente.evidence.lineage_fields import extract
from vigente.evidence.proposal import Problem, Proposal, ProposedField
from vigente.evidence.references import ReferenceMention, find_references, same_reference
from vigente.evidence.text import Span
from vigente.evidence.verify import (
    Finding,
    FindingCode,
    Verdict,
    load_evidence,
    verify,
    verify_file,
)
from vigente.records.relations import Relation, parse_relation

__all__ = [
    "LANGUAGES",
    "Citation",
    "CitedVersion",
    "DateMention",
    "EvidenceFileError",
    "Finding",
    "FindingCode",
    "InvalidChain",
    "InvalidEvidence",
    "InvalidProposal",
    "LinkedVersion",
    "Problem",
    "Proposal",
    "ProposedField",
    "ReferenceMention",
    "Relation",
    "Span",
    "UnknownRelation",
    "UnsupportedLanguage",
    "Verdict",
    "cite",
    "cite_chain",
    "extract",
    "find_dates",
    "find_references",
    "format_date",
    "link_chain",
    "load_evidence",
    "parse_date",
    "parse_relation",
    "same_reference",
    "verify",
    "verify_file",
]
