""""What is in force on date D?" for a document lineage, from the kernel's admissibility.

The kernel decides which version claims are admissible at ``(t, k)``; this module reads them as
documents: one text in force is ``supported`` (with its supplements, complementary), two texts
that both claim to be in force are a ``conflict``, a revocation gives ``missing`` with reason
``revoked`` and the revoking act. Superseded versions stay retrievable for historical questions,
are marked, and always come back with their successor.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vigente.evidence.dates import check_language
from vigente.evidence.documents import successors_known_at
from vigente.evidence.wording import article, gender, italian_from, known_phrase, on_day
from vigente.kernel.admission import as_known_at, interpretation_for
from vigente.kernel.answer import Interpretation, Status
from vigente.kernel.statement import moment
from vigente.records.documents import DocumentVersion, Relation
from vigente.records.values import Scope
from vigente.records.versions import ExclusionReason, Version, admissibility
from vigente.time import Instant

__all__ = ["DocumentEvidence", "DocumentRow", "decide_documents"]


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One document version as a candidate: admitted (``reason is None``) or excluded."""

    version: DocumentVersion
    snapshot: Version
    reason: str | None
    successor: DocumentVersion | None
    predecessor: DocumentVersion | None
    citation: str

    @property
    def superseded(self) -> bool:
        return self.successor is not None and self.successor.relation in (
            Relation.SUPERSEDES, Relation.AMENDS, Relation.REVOKES
        )

    def as_row(self) -> dict[str, Any]:
        v, s = self.version, self.snapshot
        row: dict[str, Any] = {
            "version_id": v.version_id,
            "snapshot_id": s.version_id,
            "external_id": v.external_id,
            "reference": v.reference,
            "title": v.title,
            "relation": None if v.relation is None else v.relation.value,
            "predecessor_id": v.predecessor_id,
            "value": v.label,
            "source": v.source_url,
            "valid_from": s.valid_from.isoformat(),
            "valid_to": None if s.valid_to is None else s.valid_to.isoformat(),
            "known_from": s.known_from.isoformat(),
            "known_to": None if s.known_to is None else s.known_to.isoformat(),
            "published": v.published.isoformat(),
            "superseded": self.superseded,
            "successor_id": None if self.successor is None else self.successor.version_id,
            "successor_reference": None if self.successor is None else self.successor.label,
            "citation": self.citation,
        }
        if self.reason is not None:
            row["reason"] = self.reason
        return row


@dataclass(frozen=True, slots=True)
class DocumentEvidence:
    """The answer to "which version of this lineage is in force on ``t``, as known on ``k``"."""

    lineage: str
    scope: Scope
    valid_at: Instant
    known_at: Instant
    now: Instant
    status: Status
    interpretation: Interpretation
    in_force: tuple[DocumentVersion, ...]
    revoked_by: DocumentVersion | None
    admitted: tuple[DocumentRow, ...]
    excluded: tuple[DocumentRow, ...]
    statement: str
    decision_id: str | None = field(default=None)

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v.version_id for v in self.in_force)

    def as_dict(self) -> dict[str, Any]:
        """The kernel's ``ask --json`` shape, with document fields on every row."""
        return {
            "lineage": self.lineage,
            "scope": self.scope.as_dict(),
            "valid_at": self.valid_at.isoformat(),
            "known_at": self.known_at.isoformat(),
            "now": self.now.isoformat(),
            "kind": "document",
            "status": self.status.value,
            "values": list(self.values),
            "interpretation": self.interpretation.value,
            "statement": self.statement,
            "revoked_by": None if self.revoked_by is None else self.revoked_by.version_id,
            "admitted": [r.as_row() for r in self.admitted],
            "excluded": [r.as_row() for r in self.excluded],
            "decision_id": self.decision_id,
        }


Citer = Any  # callable(version, predecessor, successor, historical) -> str


def _in_force(rows: list[tuple[DocumentVersion, Version]]) -> tuple[list[DocumentVersion],
                                                                      list[DocumentVersion]]:
    texts: dict[str, DocumentVersion] = {}
    others: dict[str, DocumentVersion] = {}
    for version, _ in rows:
        target = texts if version.role == "text" else others
        target.setdefault(version.version_id, version)
    return list(texts.values()), list(others.values())


def decide_documents(
    lineage: str,
    scope: Scope,
    t: Instant,
    k: Instant,
    now: Instant,
    candidates: list[Version],
    earlier: list[Version] | None,
    versions: dict[str, DocumentVersion],
    cite: Citer,
    language: str = "en",
) -> DocumentEvidence:
    """Turn kernel candidates (one timeline per document version) into document evidence,
    its statement in ``language`` (that of ``cite``'s citations)."""
    successors = successors_known_at(list(versions.values()), k)
    candidates = as_known_at(candidates, k)  # nothing learned or closed after k shows
    best: dict[str, tuple[int, Version, str | None]] = {}
    for snapshot in candidates:
        if snapshot.source not in versions:
            continue
        reason = admissibility(snapshot, scope, t, k)
        # Keep one row per document version: admitted beats known-at-k beats the rest.
        rank = 0 if reason is None else 1 if snapshot.known_at(k) else 2
        current = best.get(snapshot.source)
        if current is None or rank < current[0]:
            best[snapshot.source] = (rank, snapshot, None if reason is None else reason.value)
    admitted_pairs = [(versions[vid], s) for vid, (r, s, _) in best.items() if r == 0]
    texts, others = _in_force(admitted_pairs)
    supplements = [v for v in others if v.role == "supplement"]
    revocations = [v for v in others if v.role == "revocation"]
    revoked_by = None
    if len(texts) > 1:
        status = Status.CONFLICT
        in_force = tuple(texts)
    elif texts or supplements:
        status = Status.SUPPORTED
        in_force = tuple(texts + supplements)
    else:
        status = Status.MISSING
        in_force = ()
        revoked_by = revocations[0] if revocations else None

    def row(vid: str, snapshot: Version, reason: str | None) -> DocumentRow:
        version = versions[vid]
        successor = successors.get(vid)
        if reason is not None:
            reason = document_reason(reason, successor, t)
        predecessor = versions.get(version.predecessor_id or "")
        return DocumentRow(version, snapshot, reason, successor, predecessor,
                           cite(version, predecessor, successor))

    admitted = tuple(
        row(vid, s, None) for vid, (r, s, _) in best.items()
        if r == 0 and versions[vid].role != "revocation"
    )
    # An admitted revocation is not a text in force: it is reported as ``revoked_by``.
    excluded = _inherit_family_reasons(
        [row(vid, s, reason) for vid, (r, s, reason) in best.items() if r != 0]
    )
    earlier_values = None
    if earlier is not None:
        pairs = [(versions[s.source], s) for s in earlier
                 if s.source in versions and admissibility(s, scope, t, t) is None]
        e_texts, e_others = _in_force(pairs)
        earlier_values = tuple(v.version_id for v in e_texts + e_others
                               if v.role != "revocation")
    values = tuple(v.version_id for v in in_force)
    interpretation = interpretation_for(
        status, tuple(s for _, s in admitted_pairs), t, k, now, earlier_values, values
    )
    evidence = DocumentEvidence(lineage, scope, t, k, now, status, interpretation, in_force,
                                revoked_by, admitted, excluded, "")
    return replace(evidence, statement=_statement(evidence, language))


_LEGAL_REASONS = {Relation.REVOKES: "revoked", Relation.CORRECTS: "corrected"}


def document_reason(reason: str, successor: DocumentVersion | None, t: Instant) -> str:
    """Name the legal cause where there is one: superseded, revoked or corrected.

    ``successor`` is already limited to versions published by ``k``; when it had taken over by
    ``t`` it explains the exclusion whichever axis the kernel reported.
    """
    if successor is None or reason not in (ExclusionReason.NO_LONGER_VALID,
                                           ExclusionReason.NO_LONGER_KNOWN):
        return reason
    if successor.valid_from <= t or successor.relation is Relation.CORRECTS:
        return _LEGAL_REASONS.get(successor.relation, "superseded")  # type: ignore[arg-type]
    return reason


def _inherit_family_reasons(rows: list[DocumentRow]) -> tuple[DocumentRow, ...]:
    """A supplement or corrigendum closed together with its base shares the base's cause."""
    legal = {r.version.version_id: r for r in rows if r.reason in ("superseded", "revoked")}
    result = []
    for r in rows:
        base = legal.get(r.version.predecessor_id or "")
        if base is not None and r.version.role == "supplement" and r.reason in (
            ExclusionReason.NO_LONGER_VALID, ExclusionReason.NO_LONGER_KNOWN
        ):
            r = replace(r, reason=base.reason, successor=base.successor)
        result.append(r)
    return tuple(result)


def _statement(e: DocumentEvidence, language: str) -> str:
    """The statement, frame and citations in one language (the citations are already in it)."""
    subject = e.lineage if not e.scope.items else f"{e.lineage} [{e.scope}]"
    cites = {r.version.version_id: r.citation for r in e.admitted}
    on_t = on_day(e.valid_at, language)
    known = known_phrase(e.known_at, e.now, language)
    italian = check_language(language) == "it"
    if e.status is Status.MISSING:
        if e.revoked_by is not None:
            act = e.revoked_by
            if italian:
                by = article(act.label, "da") if gender(act.label) != "?" else f"da {act.label}"
                return (f"Nessuna versione di {subject} è in vigore {on_t}: è stata abrogata "
                        f"{by} a partire {italian_from(act.valid_from.date)} — {known}.")
            return (f"No version of {subject} is in force {on_t}: it was revoked by "
                    f"{act.label} from {moment(act.valid_from)} — {known}.")
        if italian:
            return (f"Nessuna versione di {subject} è in vigore {on_t}, {known}: nessun atto "
                    "registrato, non zero.")
        return f"No version of {subject} is in force {on_t} {known} — no record, not zero."
    if e.status is Status.CONFLICT:
        listed = "; ".join(cites.get(v.version_id, v.label) for v in e.in_force)
        n = len(e.in_force)
        if italian:
            every = "entrambe" if n == 2 else "tutte"
            return (f"Conflitto: {n} versioni di {subject} risultano in vigore {on_t}, {known}: "
                    f"{listed}. Riportarle {every}; non unirle.")
        every = "both" if n == 2 else "all of them"
        return (f"Conflict: {n} versions of {subject} claim to be in force {on_t} "
                f"{known}: {listed}. Report {every}; do not merge them.")
    parts = [cites.get(v.version_id, v.label) for v in e.in_force]
    joiner = "; insieme a " if italian else "; together with "
    listed = joiner.join(parts)
    if e.interpretation is Interpretation.KNOWN_THEN:  # the knowledge date leads
        return f"{known[:1].upper()}{known[1:]}, {'in vigore' if italian else 'in force'} " \
               f"{on_t}: {listed}."
    heads = _IT_HEADS if italian else _EN_HEADS
    head = heads.get(e.interpretation, heads[Interpretation.CURRENT])
    return f"{head.format(on_t=on_t)}: {listed} — {known}."


_EN_HEADS = {
    Interpretation.CURRENT: "In force {on_t}",
    Interpretation.HISTORICAL: "In force {on_t} (a past date)",
    Interpretation.RETROSPECTIVE: "In force {on_t} (learned after that date)",
    Interpretation.ANNOUNCED_FUTURE: "Announced to be in force {on_t}",
    Interpretation.PROJECTED: "Expected to be in force {on_t} (no change announced)",
}
_IT_HEADS = {
    Interpretation.CURRENT: "In vigore {on_t}",
    Interpretation.HISTORICAL: "In vigore {on_t} (una data passata)",
    Interpretation.RETROSPECTIVE: "In vigore {on_t} (appreso dopo quella data)",
    Interpretation.ANNOUNCED_FUTURE: "In vigore {on_t}, come annunciato",
    Interpretation.PROJECTED: "In vigore {on_t} salvo modifiche (nessuna modifica annunciata)",
}
