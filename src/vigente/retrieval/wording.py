"""How a search hit is worded, in the language asked: why it was admitted, and a fact hit's
citation (a document hit's citation is :func:`vigente.evidence.documents.citer`'s).

English is the wording search has always had (``in force on 2026-09-29 (from 2026-09-01 until
2026-10-01) and known on 2026-09-29 (held since 2026-09-20)``); Italian reuses the dates,
periods and knowledge qualifier of the Italian statements (:mod:`vigente.evidence.wording`):
``in vigore il 29 settembre 2026, dal 1° settembre 2026 fino al 1° ottobre 2026 (escluso),
come noto al 29 settembre 2026 (nell'archivio dal 20 settembre 2026)``. Every surface (the
Python API, ``vigente search --lang``, ``POST /v1/search``, the MCP ``search`` tool) gets its
hits from :class:`~vigente.retrieval.hits.HitBuilder`, which words them here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vigente.evidence.dates import Language, check_language
from vigente.evidence.wording import article, gender, italian_moment, italian_period, participle
from vigente.kernel.statement import moment
from vigente.records.versions import Version
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.records.documents import DocumentVersion

__all__ = ["document_why", "fact_hit_citation", "fact_why"]

_ASKED_FOR = "returned because superseded versions were asked for"
_FIELDS_IT = {"title": "il suo titolo", "reference": "il suo riferimento"}


def _span(snapshot: Version, lang: Language) -> str:
    if lang == "it":
        return italian_period(snapshot.valid_from, snapshot.valid_to)
    return f"from {snapshot.valid_from}" + (
        f" until {snapshot.valid_to}" if snapshot.valid_to is not None else ""
    )


def _known(k: Instant, snapshot: Version, lang: Language) -> str:
    if lang == "it":
        held = italian_moment(snapshot.known_from, "dal")
        return f"come noto {italian_moment(k, 'al')} (nell'archivio {held})"
    # minute precision, as the evidence statement words a moment (a search as known now reads
    # at this very moment, microseconds included)
    return f"known on {moment(k)} (held since {snapshot.known_from})"


def _by(reference: str) -> str:
    """ "dalla Circolare 12/2025", "dal Regolamento 3/2024", "da X" (kind unknown)."""
    return article(reference, "da") if gender(reference) != "?" else f"da {reference}"


def _asked_for_it(reference: str | None) -> str:
    returned = "restituito" if reference is None else participle("restituit", reference)
    return f"{returned} perché sono state chieste anche le versioni superate"


def fact_hit_citation(
    lineage: str, value: str, source: str, snapshot: Version, k: Instant, language: str
) -> str:
    """ "svc/upload-limit-mb = 80 (source policy, valid from 2026-09-01, known on …)" /
    "svc/upload-limit-mb = 80 (fonte: policy, valido dal 1° settembre 2026, come noto al …)":
    a fact hit's value, where it comes from, its validity and what the store knew."""
    lang = check_language(language)
    span, known = _span(snapshot, lang), _known(k, snapshot, lang)
    if lang == "it":
        return f"{lineage} = {value} (fonte: {source}, valido {span}, {known})"
    return f"{lineage} = {value} (source {source}, valid {span}, {known})"


def fact_why(admission: str, t: Instant, k: Instant, snapshot: Version, language: str) -> str:
    """Why a fact hit was admitted: valid on ``t`` as known on ``k``, or (``admission``
    ``superseded``) ended by ``t`` and returned because superseded versions were asked for."""
    lang = check_language(language)
    span = _span(snapshot, lang)
    if lang == "it":
        on_t = italian_moment(t, "il")
        if admission == "in_force":
            return f"valido {on_t}, {span}, {_known(k, snapshot, lang)}"
        return f"non più valido {on_t}, {span}; {_asked_for_it(None)}"
    if admission == "in_force":
        return f"valid on {t} ({span}) and {_known(k, snapshot, lang)}"
    return f"no longer valid on {t} ({span}); {_ASKED_FOR}"


def document_why(
    admission: str,
    t: Instant,
    k: Instant,
    snapshot: Version,
    document: DocumentVersion,
    successor: DocumentVersion | None,
    matched_field: str | None,
    language: str,
) -> str:
    """Why a document hit was admitted: in force on ``t`` as known on ``k`` (and what replaces
    or revokes it, when that is known), or superseded and returned because superseded versions
    were asked for; and whether its title or reference is what the query matched."""
    lang = check_language(language)
    why = (_document_why_it if lang == "it" else _document_why_en)(
        admission, t, k, snapshot, document, successor
    )
    if matched_field is not None:
        if lang == "it":
            why += f"; {_FIELDS_IT.get(matched_field, matched_field)} corrisponde alla query"
        else:
            why += f"; its {matched_field} matches the query"
    return why


def _document_why_en(
    admission: str,
    t: Instant,
    k: Instant,
    snapshot: Version,
    document: DocumentVersion,
    successor: DocumentVersion | None,
) -> str:
    span = _span(snapshot, "en")
    if admission == "in_force":
        why = f"in force on {t} ({span}) and {_known(k, snapshot, 'en')}"
        if successor is not None:
            verb = "revoked" if successor.role == "revocation" else "replaced"
            why += (
                f"; {verb} from {successor.valid_from} by {successor.label}"
                f" (published {successor.published})"
            )
        return why
    if successor is not None and successor.valid_from <= t:
        return f"superseded on {successor.valid_from} by {successor.label}; {_ASKED_FOR}"
    return f"no longer in force on {t} ({span}); {_ASKED_FOR}"


def _document_why_it(
    admission: str,
    t: Instant,
    k: Instant,
    snapshot: Version,
    document: DocumentVersion,
    successor: DocumentVersion | None,
) -> str:
    span, own = _span(snapshot, "it"), document.label
    on_t = italian_moment(t, "il")
    revoked = successor is not None and successor.role == "revocation"
    if admission == "in_force":
        why = f"in vigore {on_t}, {span}, {_known(k, snapshot, 'it')}"
        if successor is not None:
            verb = participle("abrogat" if revoked else "sostituit", own)
            published = participle("pubblicat", successor.label)
            why += (
                f"; {verb} {italian_moment(successor.valid_from, 'dal')} {_by(successor.label)}"
                f" ({published} {italian_moment(successor.published, 'il')})"
            )
        return why
    if successor is not None and successor.valid_from <= t:
        ended = participle("abrogat" if revoked else "superat", own)
        return (
            f"{ended} {italian_moment(successor.valid_from, 'il')} {_by(successor.label)}; "
            f"{_asked_for_it(own)}"
        )
    return f"non più in vigore {on_t}, {span}; {_asked_for_it(own)}"
