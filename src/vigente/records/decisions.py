"""Recorded admissibility decisions: "what was this answer allowed to see?".

An evidence or retrieval call can store its decision — the question, ``t``, ``k``, every
candidate, what was admitted and what was excluded with its reason — so that it can be read back
later, exactly as it was decided. Decisions are append-only.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Any

from vigente.time import Instant

__all__ = ["Decision", "new_decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One recorded decision. ``payload`` is the full answer as it was returned (JSON)."""

    decision_id: str
    kind: str  # "evidence" | "document_evidence" | "search" …
    subject: str  # the lineage asked about, or the query text
    recorded_at: Instant
    payload: dict[str, Any]

    @property
    def candidates(self) -> list[str]:
        ids = [row["version_id"] for row in self.payload.get("admitted", [])]
        ids += [row["version_id"] for row in self.payload.get("excluded", [])]
        return ids

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "kind": self.kind,
            "subject": self.subject,
            "recorded_at": self.recorded_at.isoformat(),
            "candidates": self.candidates,
            "payload": self.payload,
        }

    @property
    def payload_json(self) -> str:
        return json.dumps(self.payload, ensure_ascii=False, sort_keys=True)


def new_decision(kind: str, subject: str, payload: dict[str, Any]) -> Decision:
    """A decision stamped with the wall-clock time it was made (not a knowledge date)."""
    return Decision(
        decision_id="dec-" + uuid.uuid4().hex[:20],
        kind=kind,
        subject=subject,
        recorded_at=Instant.from_datetime(dt.datetime.now(dt.UTC)),
        payload=payload,
    )
