"""How recall ranks: words, meaning and time fused, then who spoke, the session and the turn's
neighbours (vigente.runtime.recall runs it; this module is pure arithmetic, no store).

Long dialogue between people is what this ranking is built for: hundreds of short turns over
dozens of dated sessions, questions asked in the third person ("When did Ana …") in other words
than the turn that answers them. Each part is measured on its own in ``docs/benchmarks.md``
(``python -m vigente.bench dialogue``):

* **words** — BM25 over stemmed, folded terms (:func:`terms`), ``k1`` and ``b`` fitted on
  dialogue, with the collection statistics as known at ``k``. A person's name in the query is
  a field, not a word: it weighs :attr:`Weights.name_term` of a word (the turns that *address*
  the person still match it), and the person's own turns are raised by
  :attr:`Weights.speaker` (their name is not in their text);
* **meaning** and **time** — fused with the words by a weighted sum of normalised scores
  (:func:`fuse`; the best of each ranking counts 1);
* **the session** — the evidence of a question clusters in a few sessions: each turn gains
  :attr:`Weights.session` of the best other turn of its session (the turns of one conversation
  known on the same day);
* **the neighbours** — a short answer ("A golden retriever!") is found through the turn before
  it ("What kind of dog?"): each turn gains :attr:`Weights.neighbour` of its neighbours' score,
  and the neighbours of the best turns are candidates themselves.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Final

import snowballstemmer

from vigente.retrieval.text import fold

__all__ = ["DAY_MICROS", "STOPWORDS", "WEIGHTS", "Weights", "bm25", "fuse", "neighbours",
           "normalised", "ranked", "stem", "terms", "with_context"]

DAY_MICROS: Final = 86_400_000_000
#: Function words of English and Italian: never indexed, never matched.
STOPWORDS: Final = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves im ive id ill dont s t
il lo la i gli le un uno una di da del della dei delle in con su per tra fra e o ma che non
mi ti si ci vi è sono ho hai ha abbiamo avete hanno
""".split())
_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The English stem of a folded word ("painting", "paintings" → "paint"); words with
    digits are kept whole."""
    if len(word) < 4 or not word.isalpha():
        return word
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> Counter[str]:
    """The indexed terms of ``text``: folded, function words dropped, stemmed."""
    return Counter(stem(t) for t in fold(text).split() if t not in STOPWORDS and len(t) < 64)


@dataclass(frozen=True, slots=True)
class Weights:
    """The constants of the ranking (see the module's description). :data:`WEIGHTS` are those
    fitted on the fitted half of the dialogue dev set (``docs/benchmarks.md``)."""

    k1: float = 1.2
    b: float = 0.75
    words: float = 1.0
    meaning: float = 1.5
    time: float = 0.5
    within: float = 1.0
    name_term: float = 0.0
    speaker: float = 2.0
    role: float = 0.2
    session: float = 0.3
    neighbour: float = 0.5
    near: float = 0.3
    unnamed: bool = True


WEIGHTS: Final = Weights()

Key = tuple[str, int]  # (conversation, seq)


def bm25(postings: Iterable[tuple[str, int, str, int, int]], n: int, avg_length: float,
         df: Mapping[str, int], term_weights: Mapping[str, float], w: Weights
         ) -> dict[Key, float]:
    """BM25 of every record in ``postings`` (``(conversation, seq, term, tf, length)``),
    each term weighted by ``term_weights``; summed in the order of ``term_weights`` so that the
    same postings always give the same scores."""
    order = {t: i for i, t in enumerate(term_weights)}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * term_weights[t]
           for t in term_weights}
    scores: dict[Key, float] = {}
    for cid, seq, term, tf, length in sorted(postings, key=lambda p: (order[p[2]], p[0], p[1])):
        key = (cid, seq)
        norm = w.k1 * (1 - w.b + w.b * length / avg_length)
        scores[key] = scores.get(key, 0.0) + idf[term] * tf * (w.k1 + 1) / (tf + norm)
    return scores


def ranked(scores: Mapping[Key, float]) -> list[Key]:
    """The keys best first (ties: conversation, then seq)."""
    return sorted(scores, key=lambda key: (-scores[key], key))


def normalised(scores: Mapping[Key, float], floor: float = 0.0) -> dict[Key, float]:
    """``scores`` on a scale from 0 (``floor`` and below) to 1 (the best)."""
    if not scores:
        return {}
    top = max(scores.values())
    span = top - floor
    if span <= 0:  # one score for every key: they count alike, 1 (0 when they score nothing)
        return dict.fromkeys(scores, 1.0 if top > 0 else 0.0)
    return {key: max(0.0, (s - floor) / span) for key, s in scores.items()}


def fuse(lists: Sequence[tuple[str, Sequence[Key]]], scores: Mapping[str, Mapping[Key, float]],
         weights: Mapping[str, float]) -> tuple[dict[Key, float], dict[Key, list[str]]]:
    """The weighted sum of each list's normalised scores (``scores[name]``; a list without
    scores counts 1 for each of its keys), with each key's ranks. A convex combination, not
    reciprocal rank fusion: a ranking that is sure of its best keeps that margin, which the
    session and neighbour terms then add to (rank fusion flattens it to 1/61 against 1/62)."""
    fused: dict[Key, float] = {}
    why: dict[Key, list[str]] = {}
    for name, keys in lists:
        weight = weights.get(name, 1.0)
        own = scores.get(name)
        for rank, key in enumerate(keys, start=1):
            value = own.get(key, 0.0) if own is not None else 1.0
            fused[key] = fused.get(key, 0.0) + weight * value
            why.setdefault(key, []).append(f"{name}:{rank}")
    return fused, why


def neighbours(key: Key, known: Mapping[Key, float], reach: int = 2) -> list[Key]:
    """The nearest record before and after ``key`` in its conversation among ``known``
    (within ``reach`` seqs: a tool call or a run between two turns does not part them)."""
    cid, seq = key
    out = []
    for step in (-1, 1):
        for d in range(1, reach + 1):
            other = (cid, seq + step * d)
            if other in known:
                out.append(other)
                break
    return out


def with_context(fused: Mapping[Key, float], days: Mapping[Key, int], asks: Set[Key],
                 w: Weights) -> dict[Key, float]:
    """Each candidate's fused score raised by its session's best other turn (when it matched
    itself) and by its neighbours: :attr:`Weights.neighbour` of the turn before it when that
    turn asked a question (``asks``: the turns ending in "?"), :attr:`Weights.near` of any
    other neighbour of its session. ``days``: the session (day of knowledge) of each
    candidate."""
    best: dict[tuple[str, int], list[float]] = {}
    for key, day in days.items():
        top = best.setdefault((key[0], day), [0.0, 0.0])
        s = fused.get(key, 0.0)
        if s > top[0]:
            top[0], top[1] = s, top[0]
        elif s > top[1]:
            top[1] = s
    out: dict[Key, float] = {}
    for key, day in days.items():
        own = fused.get(key, 0.0)
        first, second = best[(key[0], day)]
        other = (second if own >= first else first) if own > 0 else 0.0
        near = 0.0
        for k in neighbours(key, fused):
            if days.get(k) != day:
                continue  # another session's turn, or one not a candidate
            weight = w.neighbour if k[1] < key[1] and k in asks else w.near
            near = max(near, weight * fused[k])
        out[key] = own + w.session * other + near
    return out
