"""Time-filtered hybrid retrieval over document passages and fact values.

Relevance ranks topics, validity picks the period (DESIGN.md, invariant 4). Candidate generation
itself is restricted to passages whose claim has a kernel snapshot admissible at ``(t, k)``: the
backend never returns an out-of-time passage, so nothing is taken and then dropped. Lexical
(BM25) and semantic (cosine) candidates are fused by reciprocal rank fusion; when fewer than
``k`` hits survive fusion and de-duplication, the candidate pool is widened until ``k`` hits are
found or the index is exhausted.

The same ranking without the filter (:meth:`Retrieval.similar`) is the relevance-only
baseline: it is what a plain RAG retriever would answer, and its excluded top candidates are
reported with the kernel's reasons.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final, Literal

from vigente import telemetry
from vigente.errors import InvalidInput
from vigente.evidence.dates import check_language
from vigente.records.retrieval import (
    Candidate,
    CandidateQuery,
    Claim,
    FieldRecord,
    PassageRecord,
    RetrievalStats,
)
from vigente.records.values import JSONValue, Scope
from vigente.records.versions import Version, admissibility
from vigente.retrieval.dates import QueryDate
from vigente.retrieval.dates import date_from_query as _date_from_query
from vigente.retrieval.embed import Embedder, builtin_embedder, embedding_available
from vigente.retrieval.fields import could_be_strong, field_scores, rank_with_fields
from vigente.retrieval.hits import HitBuilder, Ranked, value_text
from vigente.retrieval.results import IndexReport, SearchResult
from vigente.retrieval.text import chunk_text, field_terms, field_text, fold, query_terms
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    from vigente.kernel.knowledge import Knowledge
    from vigente.records.documents import DocumentVersion
    from vigente.store.base import Store

__all__ = ["ALL_SCOPES", "AllScopes", "Mode", "Ranked", "Retrieval"]

Mode = Literal["auto", "lexical", "semantic", "hybrid"]
MODES: Final = ("auto", "lexical", "semantic", "hybrid")
MAX_K: Final = 1000
MAX_QUERY_CHARS: Final = 10_000
RRF_K: Final = 60  # the constant of reciprocal rank fusion (Cormack et al., 2009)
#: Title and reference fields scored per search, at least (the pool when it is larger).
FIELD_CANDIDATES: Final = 200
_END_OF_TIME: Final = Instant.from_date(_dt.date(9999, 12, 31))


class AllScopes:
    """The ``scope`` default of a search: every scope (``None`` means the global scope)."""

    _instance: AllScopes | None = None

    def __new__(cls) -> AllScopes:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ALL_SCOPES"


ALL_SCOPES: Final = AllScopes()
ScopeArg = Scope | Mapping[str, object] | AllScopes | None


def fuse(lexical: Sequence[Candidate], semantic: Sequence[Candidate], *, hybrid: bool
         ) -> list[Ranked]:
    """Reciprocal rank fusion of the two lists; a single list keeps its own scores."""
    if not hybrid:
        only = lexical or semantic
        lex = bool(lexical)
        return [Ranked(c, c.score, i if lex else None, None if lex else i)
                for i, c in enumerate(only, start=1)]
    scores: dict[int, float] = {}
    ranks: dict[int, list[int | None]] = {}
    by_id: dict[int, Candidate] = {}
    for position, candidates in enumerate((lexical, semantic)):
        for rank, candidate in enumerate(candidates, start=1):
            pid = candidate.passage_id
            by_id.setdefault(pid, candidate)
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank)
            ranks.setdefault(pid, [None, None])[position] = rank
    order = sorted(scores, key=lambda pid: (-scores[pid], pid))
    return [Ranked(by_id[pid], scores[pid], ranks[pid][0], ranks[pid][1]) for pid in order]


def _document_claim(claim: Claim) -> bool:
    """True when the claim is a document version's claim to be in force."""
    if not claim.value_json.startswith('{"document_version"'):
        return False
    try:
        value = json.loads(claim.value_json)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("document_version") == claim.source


def fact_text(lineage: str, value: JSONValue) -> str:
    """The searchable text of a fact value: its lineage (what it is about) and the value."""
    return f"{lineage}: {value_text(value)}"


def _passages(text: str) -> list[PassageRecord]:
    return [PassageRecord(i, piece, fold(piece)) for i, piece in enumerate(chunk_text(text))]


def _fields(document: DocumentVersion) -> list[FieldRecord]:
    """The title and reference of a document version, as indexed beside its passages."""
    return [FieldRecord(name, value, field_text(value))
            for name, value in (("title", document.title), ("reference", document.reference))
            if value and field_text(value)]


class Retrieval:
    """Search the passages of document versions and fact values at ``(t, k)``.

    ``embedder`` ``None`` means: use the built-in model when the store holds its vectors and
    the model is installed, else search lexically.
    """

    def __init__(self, knowledge: Knowledge, embedder: Embedder | None = None) -> None:
        self._knowledge = knowledge
        self._store = knowledge.store
        self._embedder = embedder
        self._auto: Embedder | None | bool = False  # False: not decided yet
        self._missing: dict[str, int] = {}

    # -- configuration -----------------------------------------------------------------------
    def use(self, embedder: Embedder | None) -> None:
        """Search (and index) with ``embedder`` from now on; ``None`` = decide automatically."""
        self._embedder = embedder
        self._auto = False

    def _auto_embedder(self) -> Embedder | None:
        if self._embedder is not None:
            return self._embedder
        if self._auto is False:
            models = self._store.retrieval_stats().vectors
            chosen = None
            if embedding_available():
                for model_id in sorted(models, key=lambda m: -models[m]):
                    try:
                        chosen = builtin_embedder(model_id)
                        break
                    except InvalidInput:
                        continue
            self._auto = chosen
        return self._auto if not isinstance(self._auto, bool) else None

    # -- indexing ----------------------------------------------------------------------------
    def stats(self) -> RetrievalStats:
        return self._store.retrieval_stats()

    def refresh(self, *, full: bool = False) -> tuple[int, int]:
        """Cut passages (and index titles and references) for every claim added since the last
        refresh (every claim with ``full``); returns ``(claims, passages)`` indexed. Cheap when
        nothing is new. A store indexed before titles and references were searchable gets
        them here too (counted in neither figure; see :meth:`refresh_fields`)."""
        self.refresh_fields()
        return self._refresh_claims(full=full)

    def _refresh_claims(self, *, full: bool) -> tuple[int, int]:
        """:meth:`refresh` without the titles of older stores: the passages and fields of the
        claims added since the last refresh."""
        store = self._store
        claims_done = passages_done = 0
        if not full and store.pending_claims()[1] == 0:
            return 0, 0  # up to date: a search stays a read
        with store.transaction():
            claims, cursor = store.pending_claims(full=full)
            texts = self._documents(claims)
            for claim in claims:
                document = texts.get(claim.source) if _document_claim(claim) else None
                fields: list[FieldRecord] = []
                if document is not None:
                    kind, passages = "document", _passages(document.text)
                    fields = _fields(document)
                else:
                    value: JSONValue = json.loads(claim.value_json)
                    kind, passages = "fact", _passages(fact_text(claim.lineage, value))
                if store.append_passages(claim, kind, passages, fields):
                    claims_done += 1
                    passages_done += len(passages)
            if cursor:
                store.mark_indexed(cursor)
        self._missing.clear()
        return claims_done, passages_done

    def refresh_fields(self) -> int:
        """Index the titles and references of document versions that were indexed before
        they were searchable (a store indexed by an older vigente); how many versions. One
        read when there is nothing to do."""
        store = self._store
        if not store.pending_fields():
            return 0
        with store.transaction():
            claims = store.pending_fields()
            texts = self._documents(claims)
            for claim in claims:
                document = texts.get(claim.source) if _document_claim(claim) else None
                if document is not None:
                    store.append_fields(claim, _fields(document))
            store.mark_fields_indexed()
        return len(claims)

    def _documents(self, claims: Sequence[Claim]) -> dict[str, DocumentVersion]:
        documents = [c.source for c in claims if _document_claim(c)]
        texts: dict[str, DocumentVersion] = {}
        for start in range(0, len(documents), 200):
            for version in self._store.document_versions_by_id(documents[start:start + 200]):
                texts[version.version_id] = version
        return texts

    def index(
        self,
        *,
        embed: bool | Embedder = True,
        full: bool = False,
        rechunk: bool = False,
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexReport:
        """Cut passages for new claims and embed every passage that has no vector for the
        model yet (re-embedding everything after a model change). ``embed`` ``True`` uses the
        configured embedder, or the built-in model when it is installed; ``False`` indexes
        lexically only. ``rechunk`` forgets every passage and vector first. ``progress`` is
        called with ``(done, total)`` after every batch."""
        store = self._store
        if rechunk:
            with store.transaction():
                store.reset_retrieval()
            full = True
        claims, passages = self.refresh(full=full)
        embedder: Embedder | None
        if isinstance(embed, bool):
            embedder = None
            if embed:
                embedder = self._embedder or (builtin_embedder() if embedding_available()
                                              else None)
        else:
            embedder = embed
        added = reused = 0
        if embedder is not None:
            added, reused = self._embed_missing(embedder, batch_size, progress)
            self._auto = False
            self._missing.clear()
        stats = store.retrieval_stats()
        return IndexReport(claims, passages, None if embedder is None else embedder.model_id,
                           added, reused, stats.passages, stats.vectors)

    def _embed_missing(self, embedder: Embedder, batch_size: int,
                       progress: Callable[[int, int], None] | None) -> tuple[int, int]:
        import numpy as np

        store, model_id = self._store, embedder.model_id
        stats = store.retrieval_stats()
        total = stats.passages - stats.vectors.get(model_id, 0)
        done = added = reused = 0
        if progress is not None:
            progress(0, total)
        while True:
            rows = store.passages_without_vectors(model_id, max(batch_size, 1) * 4)
            if not rows:
                break
            known = store.vectors_by_content(model_id, [h for _, h, _ in rows])
            fresh: dict[str, str] = {}
            for _, content_hash, text in rows:
                if content_hash not in known:
                    fresh.setdefault(content_hash, text)
            hashes = list(fresh)
            for start in range(0, len(hashes), batch_size):
                part = hashes[start:start + batch_size]
                vectors = np.asarray(embedder.embed([fresh[h] for h in part]), dtype="<f4")
                if vectors.shape != (len(part), embedder.dimensions):
                    raise InvalidInput(
                        f"embedder {model_id!r} returned vectors of shape {vectors.shape}, "
                        f"expected ({len(part)}, {embedder.dimensions})"
                    )
                known.update({h: vectors[i].tobytes() for i, h in enumerate(part)})
            with store.transaction():
                store.append_vectors(model_id, [(pid, known[h]) for pid, h, _ in rows])
            added += len(fresh)
            reused += len(rows) - len(fresh)
            done += len(rows)
            if progress is not None:
                progress(done, max(total, done))
        return added, reused

    def drop_vectors(self, model_id: str) -> int:
        """Forget every vector of ``model_id`` (e.g. after switching models)."""
        with self._store.transaction():
            count = self._store.drop_vectors(model_id)
        self._auto = False
        self._missing.clear()
        return count

    # -- ranking -----------------------------------------------------------------------------
    def _mode(self, mode: str) -> tuple[str, Embedder | None]:
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        if mode == "lexical":
            return "lexical", None
        embedder = self._auto_embedder()
        if embedder is None and mode != "auto":
            embedder = self._embedder or builtin_embedder()
        if embedder is None:
            return "lexical", None
        return ("hybrid" if mode == "auto" else mode), embedder

    def _lexical(self, terms: Sequence[str], fields: Sequence[str], query: CandidateQuery
                 ) -> tuple[list[Candidate], set[int]]:
        """Passages matching the terms, with the versions whose title or reference matches
        the query merged in (:mod:`vigente.retrieval.fields`); and the passage ids ranked
        first because the query is their version's title or reference."""
        store = self._store
        body = store.search_lexical(terms, query) if terms else []
        matches = (store.search_fields(fields, replace(query, limit=max(query.limit,
                                                                        FIELD_CANDIDATES)))
                   if fields else [])
        if len(body) >= query.limit:
            matches = could_be_strong(fields, matches)  # weaker ones would fall off the list
        if not matches:
            return body, set()
        return rank_with_fields(body, field_scores(fields, matches), store.first_passages,
                                query.limit)

    def _rank(self, terms: Sequence[str], vector: tuple[str, bytes] | None,
              query: CandidateQuery, k: int, mode: str,
              collapse: Callable[[list[Ranked]], list[Ranked]] | None = None,
              fields: Sequence[str] = ()) -> list[Ranked]:
        """The top ``k`` after fusion, widening the candidate pool until ``k`` survive or the
        index is exhausted. A version whose title or reference is the query stays first after
        fusion too (relevance to the words of a passage cannot outrank naming the document)."""
        store = self._store
        pool = max(4 * k, 40)
        use_lexical = mode in ("lexical", "hybrid") and bool(terms or fields)
        use_vectors = mode in ("semantic", "hybrid") and vector is not None
        while True:
            q = replace(query, limit=pool)
            lexical, named = self._lexical(terms, fields, q) if use_lexical else ([], set())
            semantic = (store.search_vectors(vector[0], vector[1], q)
                        if use_vectors and vector is not None else [])
            ranked = fuse(lexical, semantic, hybrid=mode == "hybrid")
            if named and mode == "hybrid":
                ranked = sorted(ranked, key=lambda r: r.candidate.passage_id not in named)
            if collapse is not None:
                ranked = collapse(ranked)
            exhausted = len(lexical) < pool and len(semantic) < pool
            if len(ranked) >= k or exhausted:
                return ranked[:k]
            pool *= 4

    def _prepare(self, text: str, k: int, mode: str
                 ) -> tuple[list[str], list[str], str, Embedder | None]:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("the query is empty: give the words to search for")
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidInput(f"the query is {len(text)} characters: the limit is "
                               f"{MAX_QUERY_CHARS}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        used, embedder = self._mode(mode)
        terms = query_terms(text)
        if not terms and embedder is None:
            raise InvalidInput(f"the query {text[:60]!r} has no words to search for")
        return terms, field_terms(text), used, embedder

    def similar(self, text: str, *, k: int = 10, scope: ScopeArg = ALL_SCOPES,
                mode: Mode = "auto", known_at: TimeLike | None = None) -> list[Ranked]:
        """Relevance only, no validity filter: the baseline a plain RAG retriever answers
        with. For comparison and for reporting exclusions, never for answers. ``known_at``
        limits it to what the store held on that date (a plain index as it was then)."""
        terms, fields, used, embedder = self._prepare(text, k, mode)
        self.refresh()
        vector = None if embedder is None else (embedder.model_id,
                                                embedder.embed([text])[0].tobytes())
        if known_at is None:
            query = CandidateQuery(None, None, _scope(scope), False, k)
        else:  # every snapshot held on known_at, whatever its validity
            query = CandidateQuery(_END_OF_TIME, self._knowledge.instant(known_at), _scope(scope),
                                   True, k)
        return self._rank(terms, vector, query, k, used, fields=fields)

    # -- search ------------------------------------------------------------------------------
    @telemetry.traced("vigente.search")
    def search(
        self,
        text: str,
        *,
        valid_at: TimeLike | None,
        known_at: TimeLike | None = None,
        scope: ScopeArg = ALL_SCOPES,
        k: int = 10,
        include_superseded: bool = False,
        mode: Mode = "auto",
        date_from_query: bool = False,
        now: TimeLike | None = None,
        language: str = "en",
        record: bool = False,
        explain: bool = True,
    ) -> SearchResult:
        """The ``k`` most relevant passages admissible on ``valid_at`` as known on ``known_at``.

        ``known_at=None`` means as known now (``now=None``: the current UTC date). ``scope``
        defaults to every scope; ``None`` or ``{}`` is the global scope. With
        ``include_superseded`` the passages of versions that had ended by ``valid_at`` are
        returned too, marked and with their successor. With ``date_from_query`` a date the
        question names ("as of 2015", "in vigore al 3 marzo 2025") sets ``valid_at``
        (``valid_at`` is then the default for questions that name none). ``mode``: ``auto``
        (hybrid when vectors and the model are available, else lexical), ``lexical``,
        ``semantic`` or ``hybrid``. ``language`` ("en" or "it") words each hit's citation and
        ``why``. ``record=True`` stores the decision. ``explain=False``
        skips the relevance-only ranking that finds the excluded top candidates (faster;
        ``excluded`` is then empty).

        A query that is a version's title or official reference (small differences allowed)
        ranks that version first among the admissible ones (:mod:`vigente.retrieval.fields`).
        Versions and facts added since the last index are indexed lexically before searching,
        and ``notes`` says so (with the command, ``vigente index``, that does it ahead of
        time); passages without a vector for the model are only reported in ``notes``.
        """
        check_language(language)  # before anything is indexed or recorded
        found: QueryDate | None = None
        if date_from_query and isinstance(text, str):
            found = _date_from_query(text)
        matched = text if found is None else found.text
        terms, fields, used, embedder = self._prepare(matched, k, mode)
        t, k_at = self._dates(found, valid_at, known_at, now, date_from_query)
        the_scope = _scope(scope)
        notes = self._catch_up()
        vector = self._query_vector(matched, embedder, notes)
        filtered = CandidateQuery(t, k_at, the_scope, include_superseded, k)
        snapshots = _Snapshots(self._store, t, k_at)
        ranked = self._rank(terms, vector, filtered, k, used,
                            snapshots.collapse if include_superseded else None, fields)
        baseline = self._rank(terms, vector, replace(filtered, valid_at=None, known_at=None,
                                                     include_superseded=False), k, used,
                              fields=fields) if explain else []
        snapshots.load([r.candidate.claim_id for r in ranked + baseline])
        builder = HitBuilder(self._store, t, k_at, language, snapshots.by_claim,
                             include_superseded)
        hits, excluded = builder.build(ranked, baseline)
        result = SearchResult(
            query=text, matched_text=matched, valid_at=t, known_at=k_at, scope=the_scope, k=k,
            mode=used, model_id=None if embedder is None else embedder.model_id,
            include_superseded=include_superseded,
            date_phrase=None if found is None else found.phrase,
            hits=tuple(hits), excluded=tuple(excluded), notes=tuple(notes),
        )
        if record:
            result = self._recorded(result, text)
        telemetry.record_search(used)
        telemetry.annotate({
            "vigente.search.mode": used, "vigente.search.k": k,
            "vigente.search.hits": len(hits), "vigente.search.excluded": len(excluded),
            "vigente.valid_at": t.isoformat(), "vigente.known_at": k_at.isoformat(),
            "vigente.decision.id": result.decision_id})
        return result

    def _recorded(self, result: SearchResult, text: str) -> SearchResult:
        """``result`` recorded as a decision naming the versions it admitted, with its id."""
        payload = result.as_dict()
        payload["admitted"] = [{"version_id": h.version_id} for h in result.hits]
        decision_id = self._knowledge.record_decision("search", text[:200], payload)
        return replace(result, decision_id=decision_id)

    def _dates(self, found: QueryDate | None, valid_at: TimeLike | None,
               known_at: TimeLike | None, now: TimeLike | None, date_from_query: bool
               ) -> tuple[Instant, Instant]:
        """The valid date a search is at (the one the question names, when ``found``) and its
        knowledge date, checked and fixed as an answer's (``now``: the caller's clock)."""
        vg = self._knowledge
        if found is not None:
            t = found.valid_at
        elif valid_at is None:
            raise InvalidInput(
                "no date to search at: give valid_at (--at)"
                + (", or ask a question that names its date" if date_from_query else "")
            )
        else:
            t = vg.instant(valid_at)
        k_at, _ = vg.answer_times(known_at, now)
        return t, k_at

    def _query_vector(self, matched: str, embedder: Embedder | None, notes: list[str]
                      ) -> tuple[str, bytes] | None:
        """The query's vector for the model (none without one), with a note when passages
        have no vector for it yet."""
        if embedder is None:
            return None
        vector = (embedder.model_id, embedder.embed([matched])[0].tobytes())
        missing = self._missing_vectors(embedder.model_id)
        if missing:
            notes.append(f"{missing} passages have no vector for {embedder.model_id}: "
                         "run `vigente index` to embed them")
        return vector

    def _catch_up(self) -> list[str]:
        """Bring the lexical index up to date before a search, and say so when it was behind.

        Cutting passages and indexing titles is deterministic and needs no model (a few
        milliseconds per new version), so a search never answers from an index that misses
        what the store holds; embedding is slow and needs the model, so missing vectors are
        only reported (with the command that adds them)."""
        fields = self.refresh_fields()
        claims, passages = self._refresh_claims(full=False)
        notes = []
        if claims:
            notes.append(
                f"the search index was behind the store: {claims} version(s) or fact value(s) "
                f"({passages} passage(s)) were indexed before this search; run `vigente index` "
                "after adding documents to index (and embed) them ahead of searches"
            )
        if fields:
            notes.append(
                f"titles and references of {fields} version(s) indexed by an older vigente "
                "were indexed before this search"
            )
        return notes

    def _missing_vectors(self, model_id: str) -> int:
        """Passages without a vector for the model (counted again only after indexing)."""
        cached = self._missing.get(model_id)
        if cached is None:
            stats = self._store.retrieval_stats()
            cached = self._missing[model_id] = max(0, stats.passages
                                                   - stats.vectors.get(model_id, 0))
        return cached


class _Snapshots:
    """The kernel snapshots of the claims one search ranks at ``(t, k)``, each claim's read
    once, and what they decide: whether a ranked passage's claim is in force, which version of
    a passage a lineage repeats is kept."""

    __slots__ = ("_k", "_store", "_t", "by_claim")

    def __init__(self, store: Store, t: Instant, k: Instant) -> None:
        self._store = store
        self._t = t
        self._k = k
        self.by_claim: dict[int, list[Version]] = {}

    def load(self, ids: Sequence[int]) -> None:
        """Read the snapshots of the claims not read yet."""
        snapshots = self.by_claim
        wanted = [i for i in ids if i not in snapshots]
        for claim_id in wanted:
            snapshots[claim_id] = []
        for claim_id, snapshot in self._store.claim_snapshots(wanted):
            snapshots[claim_id].append(snapshot)

    def in_force(self, r: Ranked) -> bool:
        """True when a snapshot of the passage's claim is admissible at ``(t, k)``."""
        t, k = self._t, self._k
        return any(admissibility(s, s.scope, t, k) is None
                   for s in self.by_claim[r.candidate.claim_id])

    def collapse(self, ranked: list[Ranked]) -> list[Ranked]:
        """The same passage in several versions of one lineage: keep the one in force, else
        the latest, at the best rank any of them had."""
        self.load([r.candidate.claim_id for r in ranked])
        snapshots, in_force = self.by_claim, self.in_force
        groups: dict[tuple[str, str, str], list[Ranked]] = {}
        for r in ranked:
            c = r.candidate
            groups.setdefault((c.claim.lineage, c.claim.scope.key, c.content_hash),
                              []).append(r)
        kept = []
        for members in groups.values():
            best = max(members, key=lambda r: (
                in_force(r),
                max((s.valid_from.micros for s in snapshots[r.candidate.claim_id]),
                    default=0),
            ))
            kept.append((members[0], best))
        merged = [replace(best, score=first.score, lexical_rank=first.lexical_rank,
                          semantic_rank=first.semantic_rank) for first, best in kept]
        # Equally relevant (one title naming several versions): the one in force first.
        runs = itertools.groupby(merged, key=lambda r: r.score)
        return [r for _, run in runs for r in sorted(run, key=lambda r: not in_force(r))]


def _scope(scope: ScopeArg) -> Scope | None:
    if isinstance(scope, AllScopes):
        return None
    return Scope.of(scope)
