"""Titles and official references in the lexical ranking.

A document version's title and reference are indexed as fields of their own, one row per
version, beside its passages (a title repeated in every passage would count its common words
once per passage, and the BM25 match budget would drop them). The backend returns the
admissible versions whose title or reference contains one of the query's terms
(:meth:`~vigente.store.Store.search_fields`, the temporal filter inside, as for passages);
this module scores each against the **whole** query and merges them with the passage ranking:

* the score is the share of words the query and the field have in common,
  ``matched / max(query words, field words)``: 1 for the exact title, below 1 when the title has
  words the query lacks or the other way round, and :data:`OTHER_ORDER` for the same words in
  another order (two acts can be titled with the same words). A word that differs only
  slightly from the field's ("Circolare" for "Circular", "arengukavade" for "arengukava": same
  first four letters, at most two edits) counts :data:`CLOSE_WORD` of an identical one;
  numbers count only when identical, and a number written with separators ("12/2025") must
  match in that order (its joined token, see :func:`~vigente.retrieval.text.field_text`).
* a version whose title, reference, or both together score at least :data:`STRONG` (the query
  *is* its title or reference, with small differences) ranks before every passage match, best
  score first; its passage is the best-matching one of that version, else its first.
* versions whose fields match less are appended after the passage matches when none of their
  passages matched: a reference or title word alone ("circular") still finds the document,
  without displacing a passage that matches the question better.

Only admissible versions are ever scored, so a superseded version with the same title never
displaces the version in force: the filter has removed it before the title is compared.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final

from vigente.records.retrieval import Candidate, FieldMatch

__all__ = [
    "CLOSE_WORD",
    "OTHER_ORDER",
    "STRONG",
    "close_words",
    "could_be_strong",
    "field_scores",
    "field_similarity",
    "rank_with_fields",
]

#: A title or reference scoring at least this ranks its version before every passage match.
STRONG: Final = 0.8
#: What a slightly different word ("circolare" / "circular") counts, against 1 for the same word.
CLOSE_WORD: Final = 0.9
#: The score of a field with exactly the query's words in another order.
OTHER_ORDER: Final = 0.99


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def close_words(a: str, b: str) -> bool:
    """Two words that differ only slightly: letters only, at least five of them, the same first
    four, and at most two edits apart (one below seven letters)."""
    shorter = min(len(a), len(b))
    if a[:4] != b[:4] or shorter < 5 or not (a.isalpha() and b.isalpha()):
        return False
    limit = 1 if shorter < 7 else 2
    return _edits(a, b, limit) <= limit


def field_similarity(query: Sequence[str], field: Sequence[str]) -> float:
    """``matched / max(len(query), len(field))`` over distinct words, a close word counting
    :data:`CLOSE_WORD`: 1.0 exactly when both have the same words in the same order."""
    words = set(field)
    terms = set(query)
    if not terms or not words:
        return 0.0
    size = max(len(terms), len(words))
    exact = len(terms & words)
    rest = terms - words
    # Close words are looked for only where they can lift the score to a strong match: below
    # that, a score only orders the versions appended after the passage matches.
    if not rest:
        # The same words: 1 in the same order, just below in another ("X of Y" is not "Y of X").
        same_order = list(dict.fromkeys(query)) == list(dict.fromkeys(field))
        return exact / size * (1.0 if same_order or exact < size else OTHER_ORDER)
    if (exact + CLOSE_WORD * len(rest)) / size < STRONG:
        return exact / size
    prefixes: dict[str, list[str]] = {}
    for word in words - terms:
        prefixes.setdefault(word[:4], []).append(word)
    close = sum(any(close_words(term, word) for word in prefixes.get(term[:4], ()))
                for term in rest)
    return (exact + CLOSE_WORD * close) / size


def field_scores(query: Sequence[str], matches: Sequence[FieldMatch]
                 ) -> dict[int, tuple[float, str]]:
    """Per claim id: the best score of its title, its reference, or both read together, and
    the field that scored it (``"title"`` or ``"reference"``, the title when both did)."""
    terms = tuple(query)
    by_claim: dict[int, dict[str, str]] = {}
    for match in matches:
        by_claim.setdefault(match.claim_id, {})[match.field] = match.search_text
    scores: dict[int, tuple[float, str]] = {}
    for claim_id, fields in by_claim.items():
        title, reference = fields.get("title"), fields.get("reference")
        best = (-1.0, "title")
        if title is not None:
            best = (_similarity(terms, title), "title")
        if reference is not None:
            score = _similarity(terms, reference)
            if score > best[0]:
                best = (score, "reference")
            if title is not None:
                score = _similarity(terms, f"{reference} {title}")
                if score > best[0]:
                    best = (score, "title")
        scores[claim_id] = best
    return scores


@functools.lru_cache(maxsize=8192)
def _similarity(query: tuple[str, ...], search_text: str) -> float:
    # The versions of a document mostly share their title, and a search scores the same
    # fields for its ranking and for its relevance-only baseline: each text is scored once.
    return field_similarity(query, search_text.split())


def could_be_strong(query: Sequence[str], matches: Sequence[FieldMatch]) -> list[FieldMatch]:
    """The matches of claims whose fields have enough words to score :data:`STRONG` against
    ``query`` (a field of ``n`` words scores at most ``n / len(query)``): when the passage
    matches fill the list, only those can change it, and a long question skips the rest."""
    least = STRONG * len(set(query))
    words: dict[int, int] = {}
    for match in matches:
        words[match.claim_id] = words.get(match.claim_id, 0) + match.search_text.count(" ") + 1
    return [m for m in matches if words[m.claim_id] >= least]


def rank_with_fields(
    body: Sequence[Candidate],
    scores: dict[int, tuple[float, str]],
    first_passages: Callable[[Sequence[int]], Sequence[Candidate]],
    limit: int,
) -> tuple[list[Candidate], set[int]]:
    """The passage ranking ``body`` with the field matches merged in (see the module
    docstring), at most ``limit`` long, and the passage ids ranked first for a strong match.

    Scores stay "higher is better" along the list: a strong match scores above the best
    passage (that score plus its field score), an appended weak one below the worst."""
    strong = sorted((c for c, (s, _) in scores.items() if s >= STRONG),
                    key=lambda c: (-scores[c][0], c))
    best_passage: dict[int, Candidate] = {}
    for candidate in body:
        best_passage.setdefault(candidate.claim_id, candidate)
    weak = sorted((c for c, (s, _) in scores.items() if s < STRONG and c not in best_passage),
                  key=lambda c: (-scores[c][0], c))
    weak = weak[:max(0, limit - len(strong) - len(body))]  # only what can fill the list
    missing = [c for c in strong if c not in best_passage] + weak
    firsts = {c.claim_id: c for c in first_passages(missing)} if missing else {}
    top = max((c.score for c in body), default=0.0)
    floor = min((c.score for c in body), default=1.0)
    # Equal field scores: the version whose passages matched the words better goes first.
    strong.sort(key=lambda c: (-scores[c][0],
                               -(best_passage[c].score if c in best_passage else float("-inf")),
                               c))
    head: list[Candidate] = []
    for claim_id in strong:
        passage = best_passage.get(claim_id) or firsts.get(claim_id)
        if passage is not None:
            score, field = scores[claim_id]
            head.append(replace(passage, score=top + score, matched_field=field))
    lifted = {c.passage_id for c in head}
    tail = []
    for claim_id in weak:
        passage = firsts.get(claim_id)
        if passage is not None:
            score, field = scores[claim_id]
            tail.append(replace(passage, score=floor * score / 2, matched_field=field))
    ranked = [*head, *(c for c in body if c.passage_id not in lifted), *tail]
    return ranked[:limit], lifted
