"""The agent runtime graph (seed 003, 4.1-4.3, 4.7-4.10, 4.13-4.15): conversations, branches,
participants, runs, messages, tool calls and their raw artifacts, memories with provenance and
freshness, skill states, checkpoints, promotions and shares — append-only on the knowledge axis.

``vg.runtime`` is a :class:`Runtime`; it imports the kernel's time values and the
:class:`~vigente.store.base.Store` contract, never the :class:`~vigente.api.Vigente` facade.
"""

from __future__ import annotations

from vigente.records.runtime import (  # first: the store backends import these rows
    FRESHNESS,
    MODES,
    PRIVACY,
    PROMOTION_AS,
    STATUSES,
    VISIBILITY,
    Branch,
    ContentRef,
    ContinuationCheckpoint,
    Conversation,
    Link,
    Message,
    ModelRun,
    Participant,
    Promotion,
    RuntimeRecord,
    Share,
    SkillState,
    ToolArtifact,
    ToolCall,
    ToolMemory,
    UserMemory,
)
from vigente.runtime.artifact_memory import DefaultExtractor, Extraction, Extractor, fact_values
from vigente.runtime.content import INLINE_LIMIT
from vigente.runtime.events import RuntimeImportReport
from vigente.runtime.reader import Candidate, Candidates, Graph
from vigente.runtime.retention import RETENTION, GCReport, PurgeReport
from vigente.runtime.service import DEFAULT_STALE_AFTER, Runtime
from vigente.runtime.user_memory import (
    ProposedUserMemory,
    RuleUserMemoryExtractor,
    UserMemoryExtraction,
    UserMemoryExtractor,
    UserMessage,
)

__all__ = [
    "DEFAULT_STALE_AFTER",
    "FRESHNESS",
    "INLINE_LIMIT",
    "MODES",
    "PRIVACY",
    "PROMOTION_AS",
    "RETENTION",
    "STATUSES",
    "VISIBILITY",
    "Branch",
    "Candidate",
    "Candidates",
    "ContentRef",
    "ContinuationCheckpoint",
    "Conversation",
    "DefaultExtractor",
    "Extraction",
    "Extractor",
    "GCReport",
    "Graph",
    "Link",
    "Message",
    "ModelRun",
    "Participant",
    "Promotion",
    "ProposedUserMemory",
    "PurgeReport",
    "Runtime",
    "RuntimeImportReport",
    "RuntimeRecord",
    "RuleUserMemoryExtractor",
    "Share",
    "SkillState",
    "ToolArtifact",
    "ToolCall",
    "ToolMemory",
    "UserMemory",
    "UserMemoryExtraction",
    "UserMemoryExtractor",
    "UserMessage",
    "fact_values",
]
