"""The review queue: bare documents wait here until a person approves their four fields.

Importing a bare document runs the extractor (:func:`vigente.evidence.lineage_fields.extract`); the
proposal is stored with its spans, confidences and problems and is **not admissible** — no
version exists — until someone approves it. Every step (edit, approve, reject) is an appended
event; the state of a proposal is its last event.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput, InvalidProposal
from vigente.evidence.documents import NewVersion
from vigente.evidence.lineage_fields import Proposal, extract
from vigente.evidence.proposal import Problem
from vigente.kernel.horizon import learning_now
from vigente.records.documents import DocumentVersion, ProposalRecord, ReviewEvent
from vigente.records.values import Scope
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    from vigente.evidence.documents import Documents
    from vigente.kernel.knowledge import Knowledge

__all__ = ["ReviewItem", "ReviewQueue"]

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


def _now() -> Instant:
    return Instant.from_datetime(dt.datetime.now(dt.UTC))


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """A proposal with its review history and current state."""

    record: ProposalRecord
    events: tuple[ReviewEvent, ...]
    #: problems found against the store (a predecessor the lineage does not hold), which
    #: approval would hit: listed with the proposal's own
    checks: tuple[Problem, ...] = ()

    @property
    def proposal_id(self) -> str:
        return self.record.proposal_id

    @property
    def proposal(self) -> Proposal:
        """The fields as they stand now (the extractor's, as edited by reviewers). A stored
        proposal that cannot be read back is shown with that problem, never an error: one bad
        proposal must not break the queue."""
        stored = self.record.proposed
        for event in reversed(self.events):
            if event.action == "edited":
                stored = event.fields
                break
        try:
            proposal = Proposal.from_dict(stored)
        except InvalidProposal as exc:
            proposal = Proposal({}, (Problem(
                "unreadable_proposal", None,
                f"the stored proposal cannot be read ({exc}): reject it and submit the "
                "document again"),))
        return replace(proposal, problems=proposal.problems + self.checks) if self.checks \
            else proposal

    @property
    def status(self) -> str:
        for event in reversed(self.events):
            if event.action in (APPROVED, REJECTED):
                return event.action
        return PENDING

    @property
    def version_id(self) -> str | None:
        return next((e.version_id for e in self.events if e.action == APPROVED), None)

    def as_dict(self, *, with_text: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = {
            "proposal_id": self.proposal_id,
            "status": self.status,
            "filename": self.record.filename,
            "created_at": self.record.created_at.isoformat(),
            "proposal": self.proposal.as_dict(),
            "approvable": self.proposal.approvable,
            "version_id": self.version_id,
            "events": [
                {"action": e.action, "at": e.at.isoformat(), "note": e.note,
                 "version_id": e.version_id}
                for e in self.events
            ],
        }
        if with_text:
            result["text"] = self.record.text
        return result


class ReviewQueue:
    """Proposals extracted from bare documents, and the decisions people take on them."""

    def __init__(self, knowledge: Knowledge, documents: Documents) -> None:
        self._knowledge = knowledge
        self._store = knowledge.store
        self._documents = documents

    def submit(self, text: str, *, filename: str | None = None,
               language: str | None = None) -> ReviewItem:
        """Run the extractor on a bare document and queue its proposal for review."""
        if "\x00" in text:
            raise InvalidInput("the document contains NUL (\\u0000), which no store can hold: "
                               "remove it (is the file text?)")
        proposal = extract(text, language=language)
        try:  # what is stored must read back: refuse it here, before anything is written
            Proposal.from_dict(proposal.as_dict())
        except InvalidProposal as exc:
            raise InvalidInput(
                f"the extractor's proposal for this document cannot be stored ({exc}); nothing "
                "was queued: add the version by hand with `vigente documents add`, and please "
                "report the document"
            ) from None
        record = ProposalRecord(
            proposal_id="rev-" + uuid.uuid4().hex[:12],
            filename=filename,
            text=text,
            proposed=proposal.as_dict(),
            created_at=_now(),
        )
        with self._store.transaction():
            self._store.append_proposal(record)
        return ReviewItem(record, ())

    def list(self, status: str | None = None) -> list[ReviewItem]:
        if status not in (None, PENDING, APPROVED, REJECTED):
            raise InvalidInput(f"unknown status {status!r}: use pending, approved or rejected")
        events: dict[str, list[ReviewEvent]] = {}
        for event in self._store.review_events(None):
            events.setdefault(event.proposal_id, []).append(event)
        items = [self._checked(ReviewItem(r, tuple(events.get(r.proposal_id, []))))
                 for r in self._store.proposals()]
        return [i for i in items if status is None or i.status == status]

    def _checked(self, item: ReviewItem) -> ReviewItem:
        """``item`` with the problems approval would meet in the store: a predecessor that is
        not a version of the proposed lineage."""
        if item.status != PENDING:
            return item
        fields = item.proposal.fields
        lineage, predecessor = fields.get("lineage"), fields.get("predecessor")
        if lineage is None or predecessor is None:
            return item
        try:
            self._documents.resolve(lineage.value, Scope.of(None), predecessor.value)
        except InvalidInput as exc:
            problem = Problem("unknown_predecessor", "predecessor",
                              f"{exc}; or fix the lineage or the predecessor with `vigente "
                              "review edit ID --set FIELD=VALUE`", predecessor.span)
            return replace(item, checks=(problem,))
        return item

    def show(self, proposal_id: str) -> ReviewItem:
        record = next((r for r in self._store.proposals() if r.proposal_id == proposal_id), None)
        if record is None:
            raise InvalidInput(
                f"no proposal {proposal_id!r} in the review queue: see `vigente review list`"
            )
        return self._checked(ReviewItem(record, tuple(self._store.review_events(proposal_id))))

    def _pending(self, proposal_id: str) -> ReviewItem:
        item = self.show(proposal_id)
        if item.status != PENDING:
            raise InvalidInput(
                f"proposal {proposal_id} is already {item.status}: only pending proposals can "
                "change; submit the document again to review it anew"
            )
        return item

    def edit(self, proposal_id: str, *, note: str | None = None,
             **values: str | None) -> ReviewItem:
        """Set (or with ``None`` clear) fields of a pending proposal."""
        with self._store.transaction():
            item = self._pending(proposal_id)
            # the fields as stored, without the store checks (they are made again on read)
            edited = replace(item, checks=()).proposal.edited(**values)
            self._store.append_review_event(
                ReviewEvent(proposal_id, "edited", edited.as_dict(), note, _now())
            )
        return self.show(proposal_id)

    def reject(self, proposal_id: str, *, note: str | None = None) -> ReviewItem:
        with self._store.transaction():
            self._pending(proposal_id)
            self._store.append_review_event(
                ReviewEvent(proposal_id, REJECTED, {}, note, _now())
            )
        return self.show(proposal_id)

    def approve(self, proposal_id: str, *, note: str | None = None,
                now: TimeLike | None = None) -> DocumentVersion:
        """Turn a pending proposal into a document version (atomic: on any error the proposal
        stays pending and nothing is added)."""
        with learning_now(self._store):
            item = self._pending(proposal_id)
            proposal = item.proposal
            if not proposal.approvable:
                blocking = [f"missing {name}" for name in proposal.missing]
                blocking += [p.message for p in proposal.problems if p.severity == "error"]
                raise InvalidInput(
                    f"proposal {proposal_id} cannot be approved as it stands: "
                    + "; ".join(blocking)
                    + ". Fix it with `vigente review edit ID --set FIELD=VALUE`"
                )
            fields = {name: f.value for name, f in proposal.fields.items()}
            if "published" not in fields:
                raise InvalidInput(
                    f"proposal {proposal_id} has no publication date (when it could be known): "
                    "set it with `vigente review edit ID --set published=YYYY-MM-DD`"
                )
            version = self._documents.add(
                NewVersion(
                    lineage_id=fields["lineage"],
                    text=item.record.text,
                    valid_from=fields["valid_from"],
                    published=fields["published"],
                    reference=fields.get("reference"),
                    title=fields.get("title"),
                    valid_to=fields.get("valid_to"),
                    relation=fields.get("relation"),
                    predecessor=fields.get("predecessor"),
                ),
                now=now,
            )
            self._store.append_review_event(
                ReviewEvent(proposal_id, APPROVED, {}, note, _now(), version.version_id)
            )
        return version
