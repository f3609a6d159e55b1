"""Versions (immutable bitemporal snapshots) and the pure admissibility rule."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vigente.records.values import JSONValue, Scope
from vigente.time import Instant, Interval

__all__ = [
    "ExclusionReason",
    "PrecedenceRule",
    "Version",
    "admissibility",
    "build_version",
]


class ExclusionReason(enum.StrEnum):
    """Why a candidate version was not admitted for ``(t, k)``."""

    OUT_OF_SCOPE = "out_of_scope"
    NOT_YET_KNOWN = "not_yet_known"
    NO_LONGER_KNOWN = "no_longer_known"
    NOT_YET_VALID = "not_yet_valid"
    NO_LONGER_VALID = "no_longer_valid"


# The C scanner json.loads runs (typeshed does not declare it): (value, end) from an offset.
_SCAN_JSON: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _json_value(text: str) -> JSONValue:
    """``json.loads(text)``, through the decoder's scanner directly when ``text`` is one JSON
    value with nothing around it (stored values are canonical JSON): the same value, without
    the three Python-level calls ``json.loads`` makes around the scanner."""
    try:
        value, end = _SCAN_JSON(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        value = json.loads(text)  # spaces around it, or not JSON: json.loads says what to do
    result: JSONValue = value
    return result


@dataclass(frozen=True, slots=True)
class Version:
    """One immutable snapshot of a lineage on both axes.

    ``valid_from``/``valid_to``: when the value applies in the world. ``known_from``/
    ``known_to``: when the store held this snapshot. ``None`` ends are open. Only ``known_to``
    is ever set after insertion (when later knowledge closes the snapshot).
    """

    version_id: str
    lineage: str
    scope: Scope
    source: str
    value_json: str
    valid_from: Instant
    valid_to: Instant | None
    known_from: Instant
    known_to: Instant | None

    @property
    def value(self) -> JSONValue:
        return _json_value(self.value_json)

    @property
    def valid(self) -> Interval:
        return Interval(self.valid_from, self.valid_to)

    def valid_at(self, t: Instant) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def known_at(self, k: Instant) -> bool:
        return self.known_from <= k and (self.known_to is None or k < self.known_to)

    def was_ever_known(self) -> bool:
        """False for a snapshot replaced at the very instant it was written."""
        return self.known_to is None or self.known_from < self.known_to

    def as_row(self) -> dict[str, Any]:
        """The JSON shape used by ``ask --json`` and ``history --json``."""
        return {
            "version_id": self.version_id,
            "value": self.value,
            "source": self.source,
            "valid_from": self.valid_from.isoformat(),
            "valid_to": None if self.valid_to is None else self.valid_to.isoformat(),
            "known_from": self.known_from.isoformat(),
            "known_to": None if self.known_to is None else self.known_to.isoformat(),
        }


# A frozen dataclass's __init__ sets each field through object.__setattr__ (a generic attribute
# lookup per field); setting the slots through their descriptors builds the same value for a
# fraction of the cost. The store builds a few Versions per lookup from rows it has checked.
_NEW = object.__new__
(
    _SET_VERSION_ID,
    _SET_LINEAGE,
    _SET_SCOPE,
    _SET_SOURCE,
    _SET_VALUE_JSON,
    _SET_VALID_FROM,
    _SET_VALID_TO,
    _SET_KNOWN_FROM,
    _SET_KNOWN_TO,
) = (getattr(Version, name).__set__ for name in Version.__slots__)


def build_version(
    version_id: str,
    lineage: str,
    scope: Scope,
    source: str,
    value_json: str,
    valid_from: Instant,
    valid_to: Instant | None,
    known_from: Instant,
    known_to: Instant | None,
) -> Version:
    """``Version(version_id, lineage, …, known_to)``, built faster (for rows read back from a
    store: the same value, equal to and hashing as the one ``Version(...)`` builds)."""
    version: Version = _NEW(Version)
    _SET_VERSION_ID(version, version_id)
    _SET_LINEAGE(version, lineage)
    _SET_SCOPE(version, scope)
    _SET_SOURCE(version, source)
    _SET_VALUE_JSON(version, value_json)
    _SET_VALID_FROM(version, valid_from)
    _SET_VALID_TO(version, valid_to)
    _SET_KNOWN_FROM(version, known_from)
    _SET_KNOWN_TO(version, known_to)
    return version


def admissibility(
    version: Version, scope: Scope, valid_at: Instant, known_at: Instant
) -> ExclusionReason | None:
    """``None`` when the version is admissible for ``(t, k)``, else the first reason it is not.

    Reasons are checked in a fixed order — scope, then the knowledge axis, then the validity
    axis — so that the same row always gets the same reason.
    """
    # Instants compare by their microseconds: comparing those directly saves a method call per
    # comparison (this runs for every candidate row of every answer).
    if version.scope is not scope and version.scope != scope:
        return ExclusionReason.OUT_OF_SCOPE
    k = known_at.micros
    if k < version.known_from.micros:
        return ExclusionReason.NOT_YET_KNOWN
    known_to = version.known_to
    if known_to is not None and k >= known_to.micros:
        return ExclusionReason.NO_LONGER_KNOWN
    t = valid_at.micros
    if t < version.valid_from.micros:
        return ExclusionReason.NOT_YET_VALID
    valid_to = version.valid_to
    if valid_to is not None and t >= valid_to.micros:
        return ExclusionReason.NO_LONGER_VALID
    return None


@dataclass(frozen=True, slots=True)
class PrecedenceRule:
    """An explicit ordering of sources for a scope (and optionally one lineage).

    Rules are bitemporal on the knowledge axis: a rule set at ``known_from`` applies to answers
    as known from then on, so that setting a rule never changes an answer about the past.
    """

    rule_id: str
    lineage: str | None
    scope: Scope
    sources: tuple[str, ...]
    known_from: Instant
    known_to: Instant | None

    def rank(self, source: str) -> int:
        """Position of ``source`` in the rule; sources the rule does not list rank last."""
        try:
            return self.sources.index(source)
        except ValueError:
            return len(self.sources)
