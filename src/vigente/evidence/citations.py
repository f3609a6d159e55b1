"""Citations that show a version's chain, so a reader can check an answer in ten seconds.

``Circular 12/2025, in force from 3 March 2025, replacing Circular 7/2023`` for the version in
force, and for a historical answer ``Circular 7/2023, in force from 1 June 2023, superseded on
3 March 2025 by Circular 12/2025`` — in the reader's language (English, Italian), as plain text
and as Markdown with links where the source URL is known. A :class:`CitedVersion` carries only
what a citation needs, so any store (or none) can build one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from vigente.errors import InvalidInterval
from vigente.evidence.dates import Language, check_language, format_date
from vigente.evidence.errors import InvalidChain
from vigente.evidence.references import same_reference
from vigente.evidence.wording import article as _article
from vigente.evidence.wording import gender as _gender
from vigente.evidence.wording import italian_from as _it_from
from vigente.evidence.wording import italian_on as _it_on
from vigente.evidence.wording import participle as _participle
from vigente.records.relations import Relation, parse_relation
from vigente.time import Instant, TimeLike, shift_days, to_instant

__all__ = ["Citation", "CitedVersion", "LinkedVersion", "cite", "cite_chain", "link_chain"]


@dataclass(frozen=True, slots=True)
class LinkedVersion:
    """The predecessor or successor of a cited version, as far as a citation needs it.

    For a successor, ``valid_from`` is the day it took over and ``relation`` its relation to
    the cited version ("superseded on … by …", "amended on … by …").
    """

    reference: str
    url: str | None = None
    valid_from: Instant | None = None
    relation: Relation | None = None

    def __post_init__(self) -> None:
        _check_reference(self.reference)
        if self.relation is not None:
            object.__setattr__(self, "relation", parse_relation(self.relation))


@dataclass(frozen=True, slots=True)
class CitedVersion:
    """What a citation needs about one version: its reference, validity, source and neighbours.

    ``valid_to`` is exclusive (half-open); ``relation`` is this version's relation to its
    ``predecessor``. Inconsistent links (a successor that starts before this version, a version
    that succeeds itself) raise :class:`InvalidChain`.
    """

    reference: str
    valid_from: Instant
    valid_to: Instant | None = None
    title: str | None = None
    url: str | None = None
    relation: Relation | None = None
    predecessor: LinkedVersion | None = None
    successor: LinkedVersion | None = None

    def __post_init__(self) -> None:
        _check_reference(self.reference)
        if self.valid_to is not None and self.valid_to <= self.valid_from:
            raise InvalidInterval(
                f"{self.reference}: valid_to {self.valid_to} is not after valid_from "
                f"{self.valid_from}; the end is exclusive, so give a later date or none"
            )
        if self.relation is not None:
            object.__setattr__(self, "relation", parse_relation(self.relation))
        for link, role in ((self.predecessor, "predecessor"), (self.successor, "successor")):
            if link is not None and same_reference(link.reference, self.reference):
                raise InvalidChain(
                    f"{self.reference} is named as its own {role}: a version cannot follow "
                    "itself; check the predecessor links for a cycle"
                )
        succ = self.successor
        if succ is not None and succ.valid_from is not None and succ.valid_from < self.valid_from:
            raise InvalidChain(
                f"successor {succ.reference} starts on {succ.valid_from}, before {self.reference} "
                f"itself ({self.valid_from}): a successor cannot start before its predecessor"
            )

    @property
    def superseded_on(self) -> Instant | None:
        """The day this version stopped being the one in force (or ``None``)."""
        if self.successor is not None and self.successor.valid_from is not None:
            if self.successor.relation is not Relation.SUPPLEMENTS:
                return self.successor.valid_from
        return self.valid_to


@dataclass(frozen=True, slots=True)
class Citation:
    """A rendered citation: plain text (URLs in parentheses) and Markdown (links)."""

    text: str
    markdown: str
    language: Language

    def __str__(self) -> str:
        return self.text

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "markdown": self.markdown, "language": self.language}


def _check_reference(reference: object) -> None:
    if not isinstance(reference, str) or not reference.strip():
        raise InvalidChain("a cited version needs a reference such as 'Circular 12/2025'")


_EN_PREDECESSOR = {
    Relation.SUPERSEDES: "replacing",
    Relation.AMENDS: "amending",
    Relation.SUPPLEMENTS: "supplementing",
    Relation.REVOKES: "revoking",
    Relation.CORRECTS: "correcting",
    None: "following",
}
_IT_PREDECESSOR = {
    Relation.SUPERSEDES: "sostituisce",
    Relation.AMENDS: "modifica",
    Relation.SUPPLEMENTS: "integra",
    Relation.REVOKES: "abroga",
    Relation.CORRECTS: "rettifica",
    None: "segue",
}
_EN_SUCCESSOR = {
    Relation.SUPERSEDES: "superseded",
    Relation.AMENDS: "amended",
    Relation.SUPPLEMENTS: "supplemented",
    Relation.REVOKES: "revoked",
    Relation.CORRECTS: "corrected",
    None: "followed",
}
_IT_SUCCESSOR_STEM = {
    Relation.SUPERSEDES: "sostituit",
    Relation.AMENDS: "modificat",
    Relation.SUPPLEMENTS: "integrat",
    Relation.REVOKES: "abrogat",
    Relation.CORRECTS: "rettificat",
    None: "seguit",
}


def _escape_markdown(text: str) -> str:
    return "".join("\\" + c if c in "[]\\*_`" else c for c in text)


def _name(reference: str, url: str | None, markdown: bool) -> str:
    if not markdown:
        return f"{reference} ({url})" if url else reference
    label = _escape_markdown(reference)
    if not url:
        return label
    target = f"<{url}>" if any(c in url for c in " ()<>") else url
    return f"[{label}]({target})"


def _render(version: CitedVersion, lang: Language, at: Instant | None, markdown: bool) -> str:
    v = version
    head = _name(v.reference, v.url, markdown)
    if v.title:
        head = (
            f"{head} “{v.title}”"
            if not v.url or markdown
            else (f"{v.reference} “{v.title}” ({v.url})")
        )
    start = v.valid_from.date
    future = at is not None and at < v.valid_from and not at.same_moment(v.valid_from)
    parts = [head]
    if lang == "en":
        parts.append(
            f"entering into force on {format_date(start, 'en')}"
            if future
            else f"in force from {format_date(start, 'en')}"
        )
    else:
        parts.append(
            f"che entrerà in vigore {_it_on(start)}" if future else f"in vigore {_it_from(start)}"
        )
    pred = v.predecessor
    if pred is not None:
        name = _name(pred.reference, pred.url, markdown)
        if lang == "en":
            parts.append(f"{_EN_PREDECESSOR[v.relation]} {name}")
        else:
            parts.append(f"che {_IT_PREDECESSOR[v.relation]} {_article(pred.reference, '')}")
            parts[-1] = parts[-1].replace(pred.reference, name, 1)
    parts.extend(_ending(v, lang, at, markdown))
    return ", ".join(parts)


def _ending(v: CitedVersion, lang: Language, at: Instant | None, markdown: bool) -> list[str]:
    """The closing clause: superseded/amended/revoked … by the successor, or no longer in
    force, or (when the successor starts after the reference date) what is announced."""
    succ = v.successor
    if succ is not None and succ.valid_from is not None:
        on = succ.valid_from.date
        pending = at is not None and at < succ.valid_from and not at.same_moment(succ.valid_from)
        name = _name(succ.reference, succ.url, markdown)
        if lang == "en":
            verb = _EN_SUCCESSOR[succ.relation]
            prefix = "to be " if pending else ""
            return [f"{prefix}{verb} on {format_date(on, 'en')} by {name}"]
        verb = _participle(_IT_SUCCESSOR_STEM[succ.relation], v.reference)
        prefix = "che sarà " if pending else ""
        by = (
            _article(succ.reference, "da")
            if _gender(succ.reference) != "?"
            else (f"da {succ.reference}")
        )
        return [f"{prefix}{verb} {_it_on(on)} {by.replace(succ.reference, name, 1)}"]
    if succ is not None:
        name = _name(succ.reference, succ.url, markdown)
        if lang == "en":
            return [f"followed by {name}"]
        by = (
            _article(succ.reference, "da")
            if _gender(succ.reference) != "?"
            else (f"da {succ.reference}")
        )
        return [f"{_participle('seguit', v.reference)} {by.replace(succ.reference, name, 1)}"]
    if v.valid_to is not None:
        end = v.valid_to.date
        pending = at is not None and at < v.valid_to and not at.same_moment(v.valid_to)
        if lang == "en":
            phrase = "in force until" if pending else "no longer in force from"
            day = shift_days(end, -1) if pending else end
            return [f"{phrase} {format_date(day, 'en')}"]
        if pending:
            return [f"in vigore fino al {format_date(shift_days(end, -1), 'it')}"]
        return [f"non più in vigore {_it_from(end)}"]
    return []


def cite(
    version: CitedVersion,
    *,
    language: str = "en",
    at: TimeLike | None = None,
) -> Citation:
    """Render ``version`` with its chain in ``language`` ("en" or "it").

    ``at`` is the reference date of the question: a version or successor that starts after it
    is worded as announced ("entering into force on …", "to be superseded on …"). ``None``
    describes the chain as recorded, in the past tense.
    """
    lang = check_language(language)
    when = None if at is None else to_instant(at)
    return Citation(
        text=_render(version, lang, when, markdown=False),
        markdown=_render(version, lang, when, markdown=True),
        language=lang,
    )


def link_chain(versions: Sequence[CitedVersion]) -> tuple[CitedVersion, ...]:
    """Fill in predecessor and successor links of a lineage given oldest first.

    Each version's ``relation`` is its relation to the one before it. A version that starts
    before its predecessor, or a reference that appears twice (a cycle), raises
    :class:`InvalidChain`.
    """
    seen: list[str] = []
    for i, v in enumerate(versions):
        if any(same_reference(v.reference, s) for s in seen):
            raise InvalidChain(
                f"{v.reference} appears twice in the chain: predecessor links form a cycle; "
                "give each version once, oldest first"
            )
        seen.append(v.reference)
        if i and v.valid_from < versions[i - 1].valid_from:
            raise InvalidChain(
                f"{v.reference} starts on {v.valid_from}, before its predecessor "
                f"{versions[i - 1].reference} ({versions[i - 1].valid_from}): order the chain "
                "oldest first, or fix the dates"
            )
    linked: list[CitedVersion] = []
    for i, v in enumerate(versions):
        before = versions[i - 1] if i else None
        after = versions[i + 1] if i + 1 < len(versions) else None
        linked.append(
            replace(
                v,
                predecessor=None
                if before is None
                else LinkedVersion(before.reference, before.url, before.valid_from),
                successor=None
                if after is None
                else LinkedVersion(after.reference, after.url, after.valid_from, after.relation),
            )
        )
    return tuple(linked)


def cite_chain(
    versions: Sequence[CitedVersion], *, language: str = "en", at: TimeLike | None = None
) -> tuple[Citation, ...]:
    """One citation per version of a lineage (oldest first), each showing its neighbours."""
    return tuple(cite(v, language=language, at=at) for v in link_chain(versions))
