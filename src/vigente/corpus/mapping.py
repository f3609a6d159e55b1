"""How a versioned corpus maps onto lineages: the mapping, the typed records, the anomalies.

A :class:`SourceMapping` names the fields of one corpus (which field is the lineage, the
version's external id, the validity dates and whether the end is inclusive, the publication
date that becomes the knowledge date …). The reader (:mod:`vigente.corpus.reader`) turns every
line into a :class:`VersionRecord` on vigente's half-open time axes, or into an
:class:`ExcludedRecord` with its reason, and reports every :class:`Anomaly` it met. Nothing is
dropped silently and nothing is repaired without saying so.
"""

from __future__ import annotations

import datetime as _dt
import enum
from dataclasses import dataclass
from typing import Any, Literal

from vigente.errors import CorpusFileError
from vigente.time import Instant, Interval

__all__ = [
    "Anomaly",
    "AnomalyKind",
    "CorpusFileError",
    "ExcludedRecord",
    "KnowledgeStep",
    "SourceMapping",
    "VersionRecord",
]


class AnomalyKind(enum.StrEnum):
    """What the reader found, named for the condition (:data:`DESCRIPTION` says what it means
    for the store, :data:`CONSEQUENCE` what the store answers or does there)."""

    GAP = "gap"
    OVERLAP = "overlap"
    RETROACTIVE_PUBLICATION = "retroactive_publication"
    FUTURE_VERSION = "future_version"
    MISSING_VALID_FROM = "missing_valid_from"
    MALFORMED_DATE = "malformed_date"
    INVERTED_INTERVAL = "inverted_interval"
    MISSING_KNOWN_FROM = "missing_known_from"
    PLACEHOLDER_DATE = "placeholder_date"
    MISSING_REFERENCE = "missing_reference"
    MALFORMED_REFERENCE = "malformed_reference"
    REPEATED_REFERENCE = "repeated_reference"
    NON_MONOTONIC_ORDER = "non_monotonic_order"
    OPEN_END_CLOSED = "open_end_closed"
    MISSING_LINEAGE = "missing_lineage"
    DUPLICATE_EXTERNAL_ID = "duplicate_external_id"
    SPLIT_LINEAGE = "split_lineage"
    BAD_LINE = "bad_line"

    @property
    def description(self) -> str:
        return DESCRIPTION[self]


#: What each anomaly is, and what the store does about it.
DESCRIPTION: dict[AnomalyKind, str] = {
    AnomalyKind.GAP: "No version of the lineage is valid between two versions: ``missing`` there.",
    AnomalyKind.OVERLAP: "Two versions are valid on the same days: ``conflict`` there.",
    AnomalyKind.RETROACTIVE_PUBLICATION: (
        "Published after it took effect: answers known before publication show the old state."
    ),
    AnomalyKind.FUTURE_VERSION: (
        "Takes effect after the reference date: ``announced_future`` until then."
    ),
    AnomalyKind.MISSING_VALID_FROM: (
        "No usable start date: the version is excluded (it cannot be placed in time)."
    ),
    AnomalyKind.MALFORMED_DATE: (
        "A date field that is not ``YYYY-MM-DD``: excluded (start) or treated as absent."
    ),
    AnomalyKind.INVERTED_INTERVAL: "The end is before the start: the version is excluded.",
    AnomalyKind.MISSING_KNOWN_FROM: (
        "No publication date: the knowledge date falls back to the start of validity."
    ),
    AnomalyKind.PLACEHOLDER_DATE: (
        "A publication date before the corpus could exist (1900-01-01): treated like a missing one."
    ),
    AnomalyKind.MISSING_REFERENCE: (
        "No official reference: the version is kept, cited by its external id."
    ),
    AnomalyKind.MALFORMED_REFERENCE: (
        "A reference not in the corpus' format (a URL): kept as given."
    ),
    AnomalyKind.REPEATED_REFERENCE: (
        "One official reference on several versions (possibly of different lineages)."
    ),
    AnomalyKind.NON_MONOTONIC_ORDER: (
        "Listed out of date order in the source: the reader sorts by start date."
    ),
    AnomalyKind.OPEN_END_CLOSED: (
        "Open-ended in the source although a later version starts: closed at that start."
    ),
    AnomalyKind.MISSING_LINEAGE: "No lineage id: the line is excluded.",
    AnomalyKind.DUPLICATE_EXTERNAL_ID: "An external id seen before: the repeated line is excluded.",
    AnomalyKind.SPLIT_LINEAGE: (
        "A lineage whose lines are not adjacent: read again as a separate group."
    ),
    AnomalyKind.BAD_LINE: "A line that is not a JSON object: excluded.",
}

#: What the store will answer or do where an anomaly is (shown in reports).
CONSEQUENCE: dict[AnomalyKind, str] = {
    AnomalyKind.GAP: "missing",
    AnomalyKind.OVERLAP: "conflict",
    AnomalyKind.RETROACTIVE_PUBLICATION: "known late",
    AnomalyKind.FUTURE_VERSION: "announced_future",
    AnomalyKind.MISSING_VALID_FROM: "excluded",
    AnomalyKind.MALFORMED_DATE: "excluded or ignored",
    AnomalyKind.INVERTED_INTERVAL: "excluded",
    AnomalyKind.MISSING_KNOWN_FROM: "known from valid_from",
    AnomalyKind.PLACEHOLDER_DATE: "known from valid_from",
    AnomalyKind.MISSING_REFERENCE: "kept",
    AnomalyKind.MALFORMED_REFERENCE: "kept",
    AnomalyKind.REPEATED_REFERENCE: "kept",
    AnomalyKind.NON_MONOTONIC_ORDER: "sorted",
    AnomalyKind.OPEN_END_CLOSED: "closed by successor",
    AnomalyKind.MISSING_LINEAGE: "excluded",
    AnomalyKind.DUPLICATE_EXTERNAL_ID: "excluded",
    AnomalyKind.SPLIT_LINEAGE: "read as a second group",
    AnomalyKind.BAD_LINE: "excluded",
}


@dataclass(frozen=True, slots=True)
class SourceMapping:
    """The field names and conventions of one versioned corpus.

    ``valid_to_inclusive``: the source's end date is the last day in force, so the half-open
    ``valid_to`` is the day after. ``known_from_field`` is when the version could be known
    (its publication). Dates before ``earliest_plausible`` are placeholders, not dates.
    ``reference_pattern`` is a regular expression a well-formed reference matches in full.
    """

    name: str
    lineage_field: str
    external_id_field: str
    valid_from_field: str
    valid_to_field: str
    valid_to_inclusive: bool
    known_from_field: str
    reference_field: str | None = None
    title_field: str | None = None
    url_field: str | None = None
    text_field: str | None = None
    attribute_fields: tuple[str, ...] = ()
    reference_pattern: str | None = None
    earliest_plausible: _dt.date | None = None


EndBasis = Literal["source", "successor"]
EndKnownBasis = Literal["successor_publication", "own_publication"]


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One usable version on vigente's axes: half-open ``[valid_from, valid_to)`` and the date
    it became known (``known_from``).

    A version's end is known only from its successor's publication: ``end_known_from`` is
    when ``valid_to`` became known (the successor's publication, or the version's own when no
    successor explains the end). ``valid_to_basis`` says whether the end came from the source
    or was set by a later version's start.
    """

    lineage_id: str
    external_id: str
    line_number: int
    valid_from: Instant
    valid_to: Instant | None
    known_from: Instant
    published: Instant | None
    reference: str | None = None
    title: str | None = None
    url: str | None = None
    valid_to_basis: EndBasis | None = None
    end_known_from: Instant | None = None
    end_known_basis: EndKnownBasis | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    text: str | None = None

    @property
    def valid(self) -> Interval:
        return Interval(self.valid_from, self.valid_to)

    def as_dict(self, *, with_text: bool = False) -> dict[str, Any]:
        def iso(value: Instant | None) -> str | None:
            return None if value is None else value.isoformat()

        result: dict[str, Any] = {
            "lineage_id": self.lineage_id,
            "external_id": self.external_id,
            "line_number": self.line_number,
            "reference": self.reference,
            "title": self.title,
            "url": self.url,
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "valid_to_basis": self.valid_to_basis,
            "known_from": iso(self.known_from),
            "published": iso(self.published),
            "end_known_from": iso(self.end_known_from),
            "end_known_basis": self.end_known_basis,
            "attributes": dict(self.attributes),
        }
        if with_text:
            result["text"] = self.text
        return result


@dataclass(frozen=True, slots=True)
class ExcludedRecord:
    """A source line that could not become a version, and why (an :class:`AnomalyKind`)."""

    line_number: int
    lineage_id: str | None
    external_id: str | None
    reason: AnomalyKind
    message: str


@dataclass(frozen=True, slots=True)
class Anomaly:
    """One quirk of the source, with the lineage and versions it concerns.

    ``period`` is the validity period affected (for a gap: where the store answers
    ``missing``; for an overlap: where it answers ``conflict``).
    """

    kind: AnomalyKind
    lineage_id: str
    message: str
    external_ids: tuple[str, ...] = ()
    line_numbers: tuple[int, ...] = ()
    period: Interval | None = None
    other_lineages: tuple[str, ...] = ()

    @property
    def consequence(self) -> str:
        return CONSEQUENCE[self.kind]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "lineage_id": self.lineage_id,
            "message": self.message,
            "consequence": self.consequence,
            "external_ids": list(self.external_ids),
            "line_numbers": list(self.line_numbers),
            "period": None
            if self.period is None
            else {
                "valid_from": self.period.start.isoformat(),
                "valid_to": None if self.period.end is None else self.period.end.isoformat(),
            },
            "other_lineages": list(self.other_lineages),
        }


@dataclass(frozen=True, slots=True)
class KnowledgeStep:
    """One bitemporal statement an importer makes: on ``known_at``, version ``external_id`` is
    valid over ``[valid_from, valid_to)``. A version's first step is its publication (with an
    open end unless it was published with one); a second step closes it when its successor is
    published."""

    known_at: Instant
    lineage_id: str
    external_id: str
    valid_from: Instant
    valid_to: Instant | None
