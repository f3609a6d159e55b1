"""How a document version relates to its predecessor, and what that does to admissibility.

=============  ==========================================================================
relation       effect on the predecessor (DESIGN.md, issue 4)
=============  ==========================================================================
supersedes     closes the predecessor at the successor's ``valid_from``; the predecessor
               stays retrievable for historical questions, marked superseded, with its
               successor attached.
amends         the same closing as ``supersedes`` (the amended text is the new version in
               force), but most of the earlier text usually stands: cite "amending".
supplements    leaves the predecessor in force: both versions are returned together as
               complementary evidence, never as a conflict.
revokes        ends the lineage at the revoking act's ``valid_from``: later questions get
               ``missing`` with reason ``revoked`` and the revoking act.
corrects       a corrigendum with no legal change: it takes the corrected version's place
               for the same validity (the corrected text is withdrawn on the knowledge
               axis, not ended on the validity axis); every derived copy of the corrected
               version becomes stale.
=============  ==========================================================================

Two versions of one lineage that both claim to be the text in force on the same date, without
one of these relations between them, are a ``conflict``.
"""

from __future__ import annotations

import enum

from vigente.errors import UnknownRelation

__all__ = ["Relation", "parse_relation"]


class Relation(enum.StrEnum):
    """A version's relation to its predecessor (the names stored and shown in ``--json``)."""

    SUPERSEDES = "supersedes"
    AMENDS = "amends"
    SUPPLEMENTS = "supplements"
    REVOKES = "revokes"
    CORRECTS = "corrects"

    @property
    def closes_predecessor(self) -> bool:
        """True when this version takes the predecessor's place (every relation but
        ``supplements``): the predecessor is marked superseded and its derived copies stale."""
        return self is not Relation.SUPPLEMENTS

    @property
    def ends_lineage(self) -> bool:
        return self is Relation.REVOKES

    @property
    def keeps_predecessor_in_force(self) -> bool:
        return self is Relation.SUPPLEMENTS


# Words people use for the same relation, in English and Italian, mapped to the stored name.
_SYNONYMS: dict[str, Relation] = {
    "supersedes": Relation.SUPERSEDES,
    "replaces": Relation.SUPERSEDES,
    "replace": Relation.SUPERSEDES,
    "supersede": Relation.SUPERSEDES,
    "sostituisce": Relation.SUPERSEDES,
    "amends": Relation.AMENDS,
    "amend": Relation.AMENDS,
    "modifica": Relation.AMENDS,
    "supplements": Relation.SUPPLEMENTS,
    "supplement": Relation.SUPPLEMENTS,
    "integra": Relation.SUPPLEMENTS,
    "revokes": Relation.REVOKES,
    "revoke": Relation.REVOKES,
    "repeals": Relation.REVOKES,
    "repeal": Relation.REVOKES,
    "abroga": Relation.REVOKES,
    "revoca": Relation.REVOKES,
    "corrects": Relation.CORRECTS,
    "correct": Relation.CORRECTS,
    "corrigendum": Relation.CORRECTS,
    "rettifica": Relation.CORRECTS,
    "errata corrige": Relation.CORRECTS,
}


def parse_relation(name: str | Relation) -> Relation:
    """The :class:`Relation` named by ``name`` (a stored name or a common English/Italian verb).

    Raises :class:`UnknownRelation` with the accepted names when ``name`` is none of them.
    """
    if isinstance(name, Relation):
        return name
    if not isinstance(name, str):
        raise UnknownRelation(f"a relation must be text, got {type(name).__name__}")
    key = " ".join(name.strip().lower().split())
    try:
        return _SYNONYMS[key]
    except KeyError:
        raise UnknownRelation(
            f"unknown relation {name!r}: use one of {', '.join(r.value for r in Relation)}"
        ) from None
