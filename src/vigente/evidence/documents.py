"""Document lineages: adding versions and turning their relations into kernel writes.

Each document version is its own claim "this text is in force over ``[valid_from, valid_to)``",
held in the kernel as the timeline ``(lineage, scope, source=version_id)``. Relations become
ordinary bitemporal writes made at the successor's publication date, so that a predecessor's
closing is known only from its successor's publication:

* ``supersedes`` / ``amends``: the predecessor's claim (and the claims of its corrigenda and
  supplements) is withdrawn from the successor's start on;
* ``revokes``: the same, and the revoking act's own claim marks the lineage as revoked;
* ``supplements``: nothing is withdrawn; both are in force together;
* ``corrects``: the corrected version's claim is withdrawn on the knowledge axis and the
  corrigendum claims exactly the same validity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vigente import telemetry
from vigente.errors import (
    AnsweredHistoryError,
    HistoryRewriteError,
    ImportFileError,
    InvalidInput,
    InvalidInterval,
    VigenteError,
)
from vigente.evidence.citations import CitedVersion, LinkedVersion, cite
from vigente.evidence.dates import check_language
from vigente.jsonl import json_objects
from vigente.kernel.horizon import check_after, learned_now, learning_now
from vigente.kernel.ledger import StatementRefused, apply_writes
from vigente.records.documents import (
    DocumentVersion,
    Relation,
    document_version_id,
    parse_relation,
)
from vigente.records.values import Scope, check_name
from vigente.store.base import Write
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    from vigente.evidence.in_force import DocumentEvidence
    from vigente.kernel.knowledge import Knowledge

__all__ = ["Documents", "NewVersion"]

MAX_TEXT_CHARS = 5_000_000


@dataclass(frozen=True, slots=True)
class NewVersion:
    """The fields of a version to add (as given by a caller, an import line or a review)."""

    lineage_id: str
    text: str
    valid_from: TimeLike | None
    published: TimeLike
    reference: str | None = None
    title: str | None = None
    external_id: str | None = None
    source_url: str | None = None
    valid_to: TimeLike | None = None
    relation: str | Relation | None = None
    predecessor: str | None = None
    scope: Scope | Mapping[str, object] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NewVersion:
        allowed = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InvalidInput(
                f"unknown field(s) {', '.join(unknown)}: use {', '.join(sorted(allowed))}"
            )
        for required in ("lineage_id", "published"):
            if data.get(required) in (None, ""):
                raise InvalidInput(f"{required} is required")
        if not isinstance(data.get("text"), str):
            raise InvalidInput("text is required: the version's text, a string")
        # valid_from may be left out (a correction takes its predecessor's): add() checks it
        return cls(**{"valid_from": None, **{k: v for k, v in data.items() if k in allowed}})


class Documents:
    """Versions of document lineages (circulars, regulations, policies) in one store."""

    def __init__(self, knowledge: Knowledge) -> None:
        self._knowledge = knowledge
        self._store = knowledge.store

    # -- reads -----------------------------------------------------------------------------
    def get(self, version_id: str) -> DocumentVersion:
        found = self._store.document_versions_by_id([version_id])
        if not found:
            raise InvalidInput(f"no document version {version_id!r}: list them with `vigente "
                               "documents list LINEAGE`")
        return found[0]

    def versions(self, lineage_id: str, *, scope: Scope | Mapping[str, object] | None = None
                 ) -> list[DocumentVersion]:
        """Every version of a lineage, in the order they were added."""
        return self._store.document_versions(lineage_id, None if scope is None
                                             else Scope.of(scope))

    def is_document_lineage(self, lineage_id: str) -> bool:
        return bool(self._store.document_versions(lineage_id, None))

    def resolve(self, lineage_id: str, scope: Scope, ref: str) -> DocumentVersion:
        """A version of the lineage by version id, external id or official reference."""
        matches = [
            v for v in self._store.document_versions(lineage_id, scope)
            if ref in (v.version_id, v.external_id, v.reference)
        ]
        if not matches:
            raise InvalidInput(
                f"predecessor {ref!r} is not a version of {lineage_id!r}: add it first, or give "
                "its version id, external id or reference"
            )
        exact = [v for v in matches if v.version_id == ref or v.external_id == ref]
        if len(exact) == 1:
            return exact[0]
        if len(matches) > 1:
            raise InvalidInput(
                f"reference {ref!r} names {len(matches)} versions of {lineage_id!r}: give the "
                "version id or external id instead"
            )
        return matches[0]

    @telemetry.traced("vigente.evidence")
    def evidence(
        self,
        lineage_id: str,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        scope: Scope | Mapping[str, object] | None = None,
        now: TimeLike | None = None,
        language: str = "en",
        record: bool = False,
    ) -> DocumentEvidence:
        """Which version of ``lineage_id`` is in force on ``valid_at`` (default: today), as
        known on ``known_at`` (default: now). ``record=True`` stores the admissibility decision
        so that it can be read back later."""
        from vigente.evidence.in_force import decide_documents

        vg = self._knowledge
        check_name("lineage", lineage_id)
        the_scope = Scope.of(scope)
        # The reference date defaults to today (a date); knowledge to this very moment.
        k, current = vg.answer_times(known_at, now)
        t = Instant.from_date(current.date) if valid_at is None else vg.instant(valid_at)
        candidates, earlier = vg.candidates_at(lineage_id, the_scope, t, k, current)
        ids = {s.source for s in candidates + (earlier or [])}
        versions = {v.version_id: v for v in self._store.document_versions_by_id(sorted(ids))}
        for v in self._store.document_successors(sorted(versions)):
            versions.setdefault(v.version_id, v)
        missing_preds = {v.predecessor_id for v in versions.values() if v.predecessor_id}
        for v in self._store.document_versions_by_id(sorted(missing_preds - set(versions))):
            versions.setdefault(v.version_id, v)
        result = decide_documents(lineage_id, the_scope, t, k, current, candidates, earlier,
                                  versions, citer(language, t), language)
        if record:
            decision_id = vg.record_decision("document_evidence", lineage_id, result.as_dict())
            result = replace(result, decision_id=decision_id)
        telemetry.answered(result, "document")
        return result

    # -- writes ----------------------------------------------------------------------------
    def add(self, new: NewVersion, *, now: TimeLike | None = None) -> DocumentVersion:
        """Add a version and apply its relation; atomic. Returns the stored version (the same
        one again when exactly this version was added before)."""
        with learning_now(self._store):
            version, predecessor = self._prepare(new, now)
            version = self._learned_now(version, now)
            if self.store_version(version):
                self._apply_relation(version, predecessor)
            elif version.learned is not None:  # added before: as it was stored
                (version,) = self._store.document_versions_by_id([version.version_id])
        return version

    def _learned_now(self, version: DocumentVersion, now: TimeLike | None) -> DocumentVersion:
        """A version published at or before the answered horizon is recorded as learned now:
        known from this moment, so that the answers already given stay as they were (the
        publication date is kept, and cited). Refused when "now" is itself behind the horizon
        (a replay's pinned clock)."""
        horizon = self._store.answered_horizon()
        if horizon is None or horizon < version.published:
            return version
        if now is None:
            learned = learned_now(horizon)
        else:
            learned = self._knowledge.instant(now)
            check_after(horizon, learned, f"version {version.label!r}")
        return replace(version, learned=learned)

    def import_lines(self, lines: Sequence[bytes | str], *, now: TimeLike | None = None
                     ) -> list[DocumentVersion]:
        """Import versions with metadata (one JSON object per line, the fields of
        :class:`NewVersion`), all or nothing. Lines may come in any order: a version is added
        after the predecessor it names; a cycle of predecessor links is an error."""
        if now is not None:
            self._knowledge.present(now)  # the import's clock, not a line's: refused whole
        entries: list[tuple[int, NewVersion]] = []
        for number, data in json_objects(lines):
            try:
                entries.append((number, NewVersion.from_dict(data)))
            except (ValueError, TypeError) as exc:
                raise ImportFileError(number, str(exc)) from None
        added = []
        with learning_now(self._store):
            for number, new in _dependency_order(entries):
                try:
                    added.append(self.add(new, now=now))
                except AnsweredHistoryError as exc:  # a 409, not bad input
                    raise AnsweredHistoryError(f"line {number}: {exc}", exc.horizon) from None
                except VigenteError as exc:
                    raise ImportFileError(number, str(exc)) from None
        return added

    def end(self, version_id: str, *, valid_to: TimeLike, known_at: TimeLike,
            now: TimeLike | None = None) -> None:
        """Record that a version stops being in force at ``valid_to``, learned on ``known_at``
        (an end date published later, e.g. a repeal without a successor text)."""
        version = self.get(version_id)
        end = self._knowledge.instant(valid_to)
        k = self._knowledge.instant(known_at)
        self._knowledge.check_knowledge_date(k, now)
        if end <= version.valid_from:
            raise InvalidInterval(
                f"end {end} is not after the start {version.valid_from} of {version.label}"
            )
        with self._store.transaction():
            self.withdraw(version, end, k)

    def _prepare(self, new: NewVersion, now: TimeLike | None
                 ) -> tuple[DocumentVersion, DocumentVersion | None]:
        lineage = check_name("lineage", new.lineage_id)
        scope = Scope.of(new.scope)
        if not isinstance(new.text, str):
            raise InvalidInput("text must be a string")
        if len(new.text) > MAX_TEXT_CHARS:
            raise InvalidInput(f"text is {len(new.text)} characters: the limit is "
                               f"{MAX_TEXT_CHARS}")
        optional = {}
        for name in ("reference", "title", "external_id", "source_url"):
            value = getattr(new, name)
            optional[name] = None if value in (None, "") else check_name(name, value,
                                                                         limit=2048)
        relation = None if not new.relation else parse_relation(new.relation)
        published = self._knowledge.instant(new.published)
        self._knowledge.check_knowledge_date(published, now)
        predecessor = None
        if (relation is None) != (new.predecessor in (None, "")):
            raise InvalidInput(
                "a relation needs a predecessor and a predecessor needs a relation "
                "(supersedes, amends, supplements, revokes or corrects)"
            )
        if new.predecessor:
            predecessor = self.resolve(lineage, scope, new.predecessor)
        if not new.valid_from:
            if relation is not Relation.CORRECTS or predecessor is None:
                raise InvalidInput("valid_from (entry into force) is required")
            valid_from = predecessor.valid_from
        else:
            valid_from = self._knowledge.instant(new.valid_from)
        valid_to = None if not new.valid_to else self._knowledge.instant(new.valid_to)
        if valid_to is not None and valid_to <= valid_from:
            raise InvalidInterval(
                f"valid_to {valid_to} is not after valid_from {valid_from}: the end is "
                "exclusive (the first day no longer in force)"
            )
        if predecessor is not None and relation is not Relation.SUPPLEMENTS:
            if valid_from < predecessor.valid_from:
                raise InvalidInput(
                    f"{optional['reference'] or 'the new version'} starts on {valid_from}, "
                    f"before its predecessor {predecessor.label} ({predecessor.valid_from}): "
                    "a successor cannot start before what it replaces"
                )
        identity = optional["external_id"] or optional["reference"] or _digest(new.text)
        version = DocumentVersion(
            version_id=document_version_id(lineage, scope, identity, valid_from, published),
            lineage_id=lineage,
            scope=scope,
            external_id=optional["external_id"],
            reference=optional["reference"],
            title=optional["title"],
            text=new.text,
            source_url=optional["source_url"],
            published=published,
            valid_from=valid_from,
            valid_to=valid_to,
            relation=relation,
            predecessor_id=None if predecessor is None else predecessor.version_id,
        )
        return version, predecessor

    def _apply_relation(self, version: DocumentVersion, predecessor: DocumentVersion | None
                        ) -> None:
        relation = version.relation
        if predecessor is not None and relation in (
            Relation.SUPERSEDES, Relation.AMENDS, Relation.REVOKES
        ):
            for member in self._family(predecessor):
                self.withdraw(member, version.valid_from, version.known_from)
        if predecessor is not None and relation is Relation.CORRECTS:
            # The corrigendum takes over exactly the periods the corrected text still claims.
            periods = [
                (s.valid_from, s.valid_to)
                for s in self._store.current_versions(
                    predecessor.lineage_id, predecessor.scope, predecessor.version_id
                )
            ]
            self.withdraw(predecessor, predecessor.valid_from, version.known_from)
            for start, end in periods or [(version.valid_from, version.valid_to)]:
                self.claim(version, start, end, version.known_from)
            return
        self.claim(version, version.valid_from, version.valid_to, version.known_from)

    def _family(self, version: DocumentVersion) -> list[DocumentVersion]:
        """The version and everything that stands or falls with it: its corrigenda and
        supplements, transitively."""
        family = [version]
        frontier = [version.version_id]
        while frontier:
            children = [
                v for v in self._store.document_successors(frontier)
                if v.relation in (Relation.CORRECTS, Relation.SUPPLEMENTS)
            ]
            family += children
            frontier = [v.version_id for v in children]
        return family

    def store_version(self, version: DocumentVersion) -> bool:
        """Store a version without applying any relation (for importers that replay the
        source's own knowledge steps with :meth:`claim` and :meth:`withdraw`). False when the
        identical version is already stored."""
        (stored,) = self.store_versions([version])
        return stored

    def store_versions(self, versions: Sequence[DocumentVersion]) -> list[bool]:
        """:meth:`store_version` for each version in order, with one read of the stored ones:
        for each, False when the identical version is already stored (or came earlier in
        ``versions``)."""
        held = {v.version_id: v for v in self._store.document_versions_by_id(
            list(dict.fromkeys(v.version_id for v in versions)))}
        stored = []
        for version in versions:
            existing = held.get(version.version_id)
            if existing is not None:
                # the same version, whenever it was learned
                if replace(existing, learned=None) != replace(version, learned=None):
                    raise InvalidInput(
                        f"version {version.version_id} already exists with different fields"
                    )
                stored.append(False)
                continue
            self._store.append_document_version(version)
            held[version.version_id] = version
            stored.append(True)
        return stored

    def claim(self, version: DocumentVersion, start: Instant, end: Instant | None,
              known_at: Instant) -> None:
        """From ``known_at`` on, ``version`` claims to be in force over ``[start, end)``."""
        self.apply_steps([claim_step(version, start, end, known_at)])

    def withdraw(self, version: DocumentVersion, start: Instant, known_at: Instant) -> None:
        """From ``known_at`` on, ``version`` no longer claims anything from ``start`` on."""
        self.apply_steps([withdrawal_step(version, start, known_at)])

    def apply_steps(self, steps: Sequence[Write], *, backfill: bool = False) -> None:
        """Apply claims and withdrawals (:func:`claim_step`, :func:`withdrawal_step`) in order,
        as :meth:`claim` and :meth:`withdraw` would one by one, in the kernel's bulk rounds (an
        importer replaying many knowledge steps). ``backfill``: the steps may be dated behind
        the answered horizon; the caller records the backfill in the same transaction."""
        try:
            apply_writes(self._store, steps, backfill=backfill)
        except StatementRefused as refused:
            if not isinstance(refused.error, HistoryRewriteError):
                raise refused.error from None
            write = steps[refused.index]
            if isinstance(refused.error, AnsweredHistoryError):
                raise refused.error from None  # the answered horizon: its own message
            raise HistoryRewriteError(
                f"version {write.source} of {write.lineage!r} already has knowledge recorded "
                f"after {write.known_at}: a successor published earlier than what it replaces "
                "cannot close it; check the publication dates"
            ) from None


def claim_step(version: DocumentVersion, start: Instant, end: Instant | None,
               known_at: Instant) -> Write:
    """The kernel statement of :meth:`Documents.claim`."""
    return Write("record", version.lineage_id, version.scope, version.version_id,
                 version.claim_json(), start, end, known_at)


def withdrawal_step(version: DocumentVersion, start: Instant, known_at: Instant) -> Write:
    """The kernel statement of :meth:`Documents.withdraw`."""
    return Write("retract", version.lineage_id, version.scope, version.version_id, None, start,
                 None, known_at)


def _dependency_order(entries: list[tuple[int, NewVersion]]) -> list[tuple[int, NewVersion]]:
    """Order import lines so that every predecessor named in the file comes first."""
    def keys(new: NewVersion) -> set[tuple[str, str]]:
        return {(new.lineage_id, k) for k in (new.external_id, new.reference) if k}

    by_key = {key: i for i, (_, new) in enumerate(entries) for key in keys(new)}
    depends = {
        i: by_key.get((new.lineage_id, new.predecessor)) if new.predecessor else None
        for i, (_, new) in enumerate(entries)
    }
    order: list[int] = []
    state: dict[int, str] = {}

    def visit(i: int, path: list[int]) -> None:
        if state.get(i) == "done":
            return
        if state.get(i) == "visiting":
            cycle = " → ".join(str(entries[j][1].reference or entries[j][1].external_id)
                               for j in path[path.index(i):] + [i])
            raise ImportFileError(entries[i][0], f"predecessor links form a cycle: {cycle}")
        state[i] = "visiting"
        parent = depends[i]
        if parent is not None and parent != i:
            visit(parent, path + [i])
        elif parent == i:
            raise ImportFileError(entries[i][0], "a version cannot be its own predecessor")
        state[i] = "done"
        order.append(i)

    for i in range(len(entries)):
        visit(i, [])
    return [entries[i] for i in order]


def citer(language: str, t: Instant) -> Callable[..., str]:
    """Citations in the reader's language, worded relative to the question's date."""
    check_language(language)

    def link(v: DocumentVersion | None, with_relation: bool) -> LinkedVersion | None:
        if v is None:
            return None
        return LinkedVersion(v.label, v.source_url, v.valid_from,
                             v.relation if with_relation else None)

    def cite_version(version: DocumentVersion, predecessor: DocumentVersion | None,
                     successor: DocumentVersion | None) -> str:
        try:
            cited = CitedVersion(
                reference=version.label, valid_from=version.valid_from,
                valid_to=version.valid_to, title=version.title, url=version.source_url,
                relation=version.relation if predecessor is not None else None,
                predecessor=link(predecessor, False), successor=link(successor, True),
            )
            return cite(cited, language=language, at=t).text
        except InvalidInput:  # an inconsistent chain still gets a plain label
            return version.label

    return cite_version


def _digest(text: str) -> str:
    return "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def successors_known_at(
    versions: Sequence[DocumentVersion], k: Instant
) -> dict[str, DocumentVersion]:
    """Map predecessor id → the replacing successor published by ``k`` (earliest start)."""
    result: dict[str, DocumentVersion] = {}
    for v in sorted(versions, key=lambda v: (v.valid_from, v.published, v.version_id)):
        if v.predecessor_id and v.relation is not None and v.relation.closes_predecessor \
                and v.known_from <= k:
            result.setdefault(v.predecessor_id, v)
    return result
