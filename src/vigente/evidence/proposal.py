"""An extraction proposal: the fields proposed for a bare document, with evidence and problems.

A proposal is never admissible by itself: it waits in the review queue until a person approves
it, so it serialises to and from a JSON dict (:meth:`Proposal.as_dict`, :meth:`Proposal.from_dict`)
and can be edited field by field (:meth:`Proposal.edited`).
:func:`vigente.evidence.lineage_fields.extract` makes one from a document's text.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from vigente.errors import InvalidInterval, InvalidTime
from vigente.evidence.dates import Language
from vigente.evidence.errors import InvalidProposal
from vigente.evidence.text import Span
from vigente.records.relations import Relation, parse_relation
from vigente.time import Instant

__all__ = ["FIELDS", "Problem", "Proposal", "ProposedField", "Severity", "Span"]

#: The fields a proposal may carry, in display order; the first five are the issue's four
#: (validity is two dates); ``title`` and ``published`` help the reviewer.
FIELDS = (
    "lineage",
    "reference",
    "valid_from",
    "valid_to",
    "relation",
    "predecessor",
    "title",
    "published",
)
_REQUIRED = ("lineage", "reference", "valid_from")
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class ProposedField:
    """A proposed value (dates as ``YYYY-MM-DD``, the relation by its stored name), the span it
    was read from (``None`` when a person typed it) and a confidence in ``[0, 1]``."""

    value: str
    span: Span | None
    confidence: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something the reviewer must look at; ``error`` problems block approval as proposed."""

    code: str
    field: str | None
    message: str
    span: Span | None = None
    severity: Severity = "error"


@dataclass(frozen=True, slots=True)
class Proposal:
    """The extractor's proposal for one document: fields by name, plus problems."""

    fields: Mapping[str, ProposedField]
    problems: tuple[Problem, ...] = ()
    language: Language = "en"
    extractor: str = field(default="vigente.extract/1")

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def get(self, name: str) -> ProposedField | None:
        return self.fields.get(name)

    @property
    def missing(self) -> tuple[str, ...]:
        """Required fields the extractor could not propose."""
        return tuple(name for name in _REQUIRED if name not in self.fields)

    @property
    def approvable(self) -> bool:
        """True when nothing required is missing and no problem is an ``error``."""
        return not self.missing and not any(p.severity == "error" for p in self.problems)

    @property
    def valid_from(self) -> Instant | None:
        return _instant(self.get("valid_from"))

    @property
    def valid_to(self) -> Instant | None:
        return _instant(self.get("valid_to"))

    @property
    def relation(self) -> Relation | None:
        proposed = self.get("relation")
        return None if proposed is None else parse_relation(proposed.value)

    def edited(self, **values: str | None) -> Proposal:
        """The proposal with fields set (or, with ``None``, removed) by a reviewer.

        Edited fields carry confidence 1 and no span; problems about them are dropped. The
        result is checked like a deserialised proposal (dates, relation, interval order).
        """
        fields = dict(self.fields)
        for name, value in values.items():
            if name not in FIELDS:
                raise InvalidProposal(f"unknown field {name!r}: use one of {', '.join(FIELDS)}")
            if value is None:
                fields.pop(name, None)
            else:
                fields[name] = ProposedField(value, None, 1.0, "set by a reviewer")
        problems = tuple(p for p in self.problems if p.field not in values)
        result = replace(self, fields=fields, problems=problems)
        _check_fields(result.fields)
        return result

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` reads it back to an equal proposal."""
        return {
            "extractor": self.extractor,
            "language": self.language,
            "fields": {
                name: {
                    "value": f.value,
                    "span": None if f.span is None else f.span.as_dict(),
                    "confidence": f.confidence,
                    "note": f.note,
                }
                for name, f in sorted(self.fields.items(), key=lambda kv: FIELDS.index(kv[0]))
            },
            "problems": [
                {
                    "code": p.code,
                    "field": p.field,
                    "message": p.message,
                    "span": None if p.span is None else p.span.as_dict(),
                    "severity": p.severity,
                }
                for p in self.problems
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proposal:
        """Read a proposal written by :meth:`as_dict`; raise :class:`InvalidProposal` with the
        offending key when it is not one."""
        if not isinstance(data, Mapping):
            raise InvalidProposal(f"a proposal is a JSON object, got {type(data).__name__}")
        unknown = set(data) - {"extractor", "language", "fields", "problems"}
        if unknown:
            raise InvalidProposal(f"unknown proposal keys {sorted(unknown)}: remove them")
        language = data.get("language", "en")
        if language not in ("en", "it"):
            raise InvalidProposal(f"language {language!r} is not 'en' or 'it'")
        raw_fields = data.get("fields", {})
        if not isinstance(raw_fields, Mapping):
            raise InvalidProposal("'fields' must be an object of field name → field")
        fields = {name: _field_from(name, raw) for name, raw in raw_fields.items()}
        _check_fields(fields)
        raw_problems = data.get("problems", [])
        if not isinstance(raw_problems, list):
            raise InvalidProposal("'problems' must be a list")
        problems = tuple(_problem_from(i, raw) for i, raw in enumerate(raw_problems))
        extractor = data.get("extractor", "vigente.extract/1")
        if not isinstance(extractor, str):
            raise InvalidProposal("'extractor' must be text")
        return cls(fields, problems, "it" if language == "it" else "en", extractor)


def _span_from(where: str, raw: object) -> Span | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) != {"text", "start", "end"}:
        raise InvalidProposal(f"{where}: a span is {{'text', 'start', 'end'}} or null")
    text, start, end = raw["text"], raw["start"], raw["end"]
    if not isinstance(text, str) or type(start) is not int or type(end) is not int:
        raise InvalidProposal(f"{where}: span text must be text and offsets integers")
    if not 0 <= start <= end:
        raise InvalidProposal(f"{where}: span offsets {start}..{end} are not in order")
    return Span(text, start, end)


def _field_from(name: object, raw: object) -> ProposedField:
    if name not in FIELDS:
        raise InvalidProposal(f"unknown field {name!r}: use one of {', '.join(FIELDS)}")
    if not isinstance(raw, Mapping) or "value" not in raw:
        raise InvalidProposal(f"field {name!r} needs at least a 'value'")
    value, confidence, note = raw["value"], raw.get("confidence", 1.0), raw.get("note", "")
    if not isinstance(value, str) or not value.strip():
        raise InvalidProposal(f"field {name!r}: the value must be non-empty text")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise InvalidProposal(f"field {name!r}: confidence must be a number in [0, 1]")
    if not 0.0 <= float(confidence) <= 1.0:
        raise InvalidProposal(f"field {name!r}: confidence {confidence} is not in [0, 1]")
    if not isinstance(note, str):
        raise InvalidProposal(f"field {name!r}: the note must be text")
    return ProposedField(
        value, _span_from(f"field {name!r}", raw.get("span")), float(confidence), note
    )


def _problem_from(index: int, raw: object) -> Problem:
    where = f"problem {index}"
    if not isinstance(raw, Mapping):
        raise InvalidProposal(f"{where}: a problem is an object")
    code, name, message = raw.get("code"), raw.get("field"), raw.get("message")
    severity = raw.get("severity", "error")
    if not isinstance(code, str) or not isinstance(message, str):
        raise InvalidProposal(f"{where}: 'code' and 'message' must be text")
    if name is not None and name not in FIELDS:
        raise InvalidProposal(f"{where}: unknown field {name!r}")
    if severity not in ("error", "warning", "info"):
        raise InvalidProposal(f"{where}: severity must be error, warning or info")
    return Problem(code, name, message, _span_from(where, raw.get("span")), severity)


def _check_fields(fields: Mapping[str, ProposedField]) -> None:
    """Values must be what their field says: ISO dates, a known relation, an ordered interval."""
    dates: dict[str, _dt.date] = {}
    for name in ("valid_from", "valid_to", "published"):
        if name in fields:
            try:
                dates[name] = _dt.date.fromisoformat(fields[name].value)
            except ValueError:
                raise InvalidProposal(
                    f"field {name!r}: {fields[name].value!r} is not a date: use YYYY-MM-DD"
                ) from None
    if "relation" in fields:
        parse_relation(fields["relation"].value)
    if "valid_from" in dates and "valid_to" in dates and dates["valid_to"] <= dates["valid_from"]:
        raise InvalidInterval(
            f"valid_to {dates['valid_to']} is not after valid_from {dates['valid_from']}: the "
            "end is exclusive; fix one of the dates"
        )


def _instant(proposed: ProposedField | None) -> Instant | None:
    if proposed is None:
        return None
    try:
        return Instant.from_date(_dt.date.fromisoformat(proposed.value))
    except ValueError:
        raise InvalidTime(f"{proposed.value!r} is not a date: use YYYY-MM-DD") from None
