"""``python -m vigente.bench retrieval``: the seeds' central claim, measured on real data.

1. **legalize-ee** (Estonian acts, 4,121 versions): (act, reference date) queries sampled with a
   fixed seed across each act's history, the query being the act's title or a passage of the
   version in force then. Top-1 is right when it is the version in force on that date, by the
   source's own dates. Three systems on the same index: vigente (temporal filter inside
   candidate generation), similarity only (the same ranking, no validity filter), and "latest
   ingested" (the most similar act, answered with its most recently ingested version). Each at
   two knowledge dates: as known on the reference date, and as known today.
2. **SituatedQA** (temporal dev split): each question's answer timeline is a lineage of fact
   values; every "as of DATE" question is asked with the date taken from the question.
   Exact match against the gold answers, vigente versus similarity only.
3. **Exact titles and references** (legalize-ee): every act asked by its exact, unique title
   and by a version's official reference, at a date inside that version; top-1 is right when it
   is that version (misses counted as the wrong act or the wrong version), with the latency.
4. **Latency** of filtered search on the legalize-ee index (≥ 100,000 passages), lexical and
   hybrid, p50/p99.

With ``--json`` the last line of stdout is one JSON object of every figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import lzma
import random
import re
import shutil
import string
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._embedders import EMBEDDER_HELP, parse_embedders
from vigente.bench._util import clock_ms, machine, percentile
from vigente.retrieval import (
    Embedder,
    Mode,
    Ranked,
    embedding_available,
)
from vigente.store.sqlite.retrieval import MATCH_BUDGET
from vigente.time import Instant, parse_instant, today

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vigente.records.documents import DocumentVersion

__all__ = ["BENCHMARK", "RetrievalBenchmark", "exact_match"]

DATA = Path("..") / "shared" / "data"
LEGALIZE_EE = DATA / "legalize-ee" / "versions.jsonl.xz"
SITUATEDQA = DATA / "situatedqa" / "temp.dev.jsonl"
SITUATEDQA_KNOWN_AT = "2021-01-01"  # the split's answers as the store learned them


@contextmanager
def _store(path: str | None) -> Iterator[Vigente]:
    """A fresh SQLite store (in a temporary directory unless ``path`` is given)."""
    folder = None
    if path is None:
        folder = tempfile.mkdtemp(prefix="vigente-bench-retrieval-")
        path = str(Path(folder) / "bench.db")
    vg = Vigente.open(path)
    try:
        yield vg
    finally:
        vg.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


# -- legalize-ee ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Version:
    act: str
    commit: str
    title: str
    reference: str | None
    text: str
    effective_from: str
    effective_until: str | None
    published: str


@dataclass(frozen=True, slots=True)
class _Query:
    act: str
    date: str
    text: str
    kind: str  # "title" | "passage" | "reference"
    truth: str  # commit of the version in force
    truth_published: str


def _read_versions(path: Path, acts: int | None) -> dict[str, list[_Version]]:
    by_act: dict[str, list[_Version]] = {}
    with lzma.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if acts is not None and row["act"] not in by_act and len(by_act) >= acts:
                break
            if not row.get("effective_from") or not row.get("publication_date"):
                continue
            by_act.setdefault(row["act"], []).append(_Version(
                row["act"], row["commit"], row["title"] or "", row.get("rt_reference"),
                row["text"] or "",
                row["effective_from"], row["effective_until"], row["publication_date"],
            ))
    return by_act


_WORDS = re.compile(r"\S+")


def _passage(text: str, rng: random.Random) -> str | None:
    paragraphs = [p for p in text.split("\n\n")[1:]
                  if not p.lstrip().startswith("#") and len(_WORDS.findall(p)) >= 8]
    if not paragraphs:
        return None
    words = _WORDS.findall(rng.choice(paragraphs))
    start = rng.randrange(0, max(1, len(words) - 20))
    return " ".join(words[start:start + 20])


def _sample_queries(by_act: dict[str, list[_Version]], target: int, seed: int,
                    until: str) -> tuple[list[_Query], int]:
    """``target`` queries or more, the same number per act, dates uniform over each act's
    history up to ``until``; dates where the source has not exactly one version in force are
    skipped (counted)."""
    import datetime as dt

    rng = random.Random(seed)
    per_act = max(1, -(-target // max(1, len(by_act))))
    queries: list[_Query] = []
    ambiguous = 0
    for act, versions in by_act.items():
        first = min(v.effective_from for v in versions)
        ends = [v.effective_until or until for v in versions]
        last = min(max(ends), until)
        if last < first:
            continue
        start, stop = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
        for _ in range(per_act):
            day = (start + dt.timedelta(days=rng.randrange((stop - start).days + 1))).isoformat()
            in_force = [v for v in versions if v.effective_from <= day
                        and (v.effective_until is None or day <= v.effective_until)]
            if len(in_force) != 1:
                ambiguous += 1
                continue
            truth = in_force[0]
            kind = rng.choice(("title", "passage"))
            text = truth.title if kind == "title" else _passage(truth.text, rng)
            if not text:
                kind, text = "title", truth.title
            queries.append(_Query(act, day, text, kind, truth.commit, truth.published))
    return queries, ambiguous


def _exact_queries(by_act: dict[str, list[_Version]], target: int, seed: int, until: str
                   ) -> tuple[list[_Query], list[_Query], int]:
    """Exact-title and exact-reference queries, one of each per act (a random act's sample of
    ``target`` when there are more): a version drawn at random, a date uniform inside its
    validity (up to ``until``), kept when the source has exactly that version in force then.
    The title query is that version's title, kept only when no other act has the same title
    (case and diacritics folded: an ambiguous title has no single right act); the reference
    query is the version's official reference as stored (the Riigi Teataja number; versions
    the importer kept without one are not asked, see :func:`_evaluate_exact`). Returns the title
    queries, the reference queries, and how many acts have no unique title."""
    import datetime as dt

    from vigente.retrieval import fold

    acts_by_title: dict[str, set[str]] = {}
    for act, versions in by_act.items():
        for v in versions:
            acts_by_title.setdefault(fold(v.title), set()).add(act)
    rng = random.Random(seed)
    acts = sorted(by_act)
    if len(acts) > target:
        acts = sorted(rng.sample(acts, target))
    titles: list[_Query] = []
    references: list[_Query] = []
    not_unique = 0
    for act in acts:
        versions = by_act[act]
        version = rng.choice(versions)
        end = min(version.effective_until or until, until)
        if end < version.effective_from:
            continue
        start, stop = dt.date.fromisoformat(version.effective_from), dt.date.fromisoformat(end)
        day = (start + dt.timedelta(days=rng.randrange((stop - start).days + 1))).isoformat()
        in_force = [v for v in versions if v.effective_from <= day
                    and (v.effective_until is None or day <= v.effective_until)]
        if in_force != [version]:
            continue
        if version.title and acts_by_title[fold(version.title)] == {act}:
            titles.append(_Query(act, day, version.title, "title", version.commit,
                                 version.published))
        elif version.title:
            not_unique += 1
        references.append(_Query(act, day, "", "reference", version.commit,
                                 version.published))
    return titles, references, not_unique


def _evaluate_exact(vg: Vigente, queries: list[_Query], kind: str, mode: Mode, log: Console
                    ) -> dict[str, Any]:
    """Top-1 of exact-title (or reference) queries at a date inside the version, as known
    today, with the wrong-act and wrong-version misses counted apart, and the latency of
    these searches (k = 1, the excluded list included)."""
    retrieval = vg.retrieval
    now = today()
    by_commit: dict[str, DocumentVersion] = {}
    for act in sorted({q.act for q in queries}):
        for v in vg.documents.versions(act):
            if v.external_id:
                by_commit[v.external_id] = v
    right = wrong_act = wrong_version = missing = 0
    timings: list[float] = []
    misses: list[str] = []
    asked = 0
    for q in queries:
        version = by_commit.get(q.truth)
        if version is None:
            continue  # the importer excluded that version (reported as an anomaly)
        text = q.text if kind == "title" else version.reference
        if not text:
            continue  # a reference the importer found malformed is not kept
        truth = version.version_id
        asked += 1
        started = time.perf_counter_ns()
        hits = retrieval.search(text, valid_at=parse_instant(q.date), k=1, mode=mode,
                                now=now).hits
        timings.append((time.perf_counter_ns() - started) / 1e6)
        if not hits:
            missing += 1
        elif hits[0].version_id == truth:
            right += 1
        elif hits[0].lineage_id == q.act:
            wrong_version += 1
        else:
            wrong_act += 1
            if len(misses) < 5:
                misses.append(f"{text!r} at {q.date} -> {hits[0].title!r}")
    key = f"legalize_ee_exact_{kind}"
    for miss in misses:
        log.print(f"{kind} miss: {miss}", markup=False)
    return {
        f"{key}_queries": asked,
        f"{key}_top1": round(right / asked, 4) if asked else 0.0,
        f"{key}_wrong_act": wrong_act,
        f"{key}_wrong_version": wrong_version,
        f"{key}_no_hit": missing,
        f"{key}_p50_ms": round(percentile(timings, 50), 2) if timings else 0.0,
        f"{key}_p99_ms": round(percentile(timings, 99), 2) if timings else 0.0,
    }


def _load_legalize_ee(vg: Vigente, path: Path, acts: int | None, log: Console
                      ) -> dict[str, Any]:
    from vigente.corpus import legalize_ee
    from vigente.corpus.importer import import_corpus

    started = time.perf_counter()
    result = import_corpus(vg, legalize_ee.read(path), limit=acts)
    imported = time.perf_counter() - started
    log.print(f"legalize-ee: {result.versions_added} versions of {result.lineages} acts "
              f"imported in {imported:.0f} s; cutting passages …")
    started = time.perf_counter()
    report = vg.retrieval.index(embed=False)
    return {
        "legalize_ee_acts": result.lineages,
        "legalize_ee_versions": result.versions_added,
        "legalize_ee_passages": report.passages,
        "legalize_ee_import_s": round(imported, 1),
        "legalize_ee_index_s": round(time.perf_counter() - started, 1),
    }


def _top_tie(ranked: Sequence[Ranked]) -> list[Ranked]:
    """The candidates that share the top score (relevance cannot order them)."""
    if not ranked:
        return []
    top = ranked[0].score
    return [r for r in ranked if abs(r.score - top) <= 1e-9 * max(1.0, abs(top))]


def _evaluate_legalize_ee(vg: Vigente, queries: list[_Query], mode: Mode, log: Console
                          ) -> dict[str, Any]:
    retrieval = vg.retrieval
    now = today()
    by_commit: dict[str, str] = {}
    order: dict[str, list[tuple[str, Instant]]] = {}  # act -> [(version id, published)]
    for act in sorted({q.act for q in queries}):
        for v in vg.documents.versions(act):
            if v.external_id:
                by_commit[v.external_id] = v.version_id
            order.setdefault(act, []).append((v.version_id, v.published))
    counts: dict[str, float] = {}
    totals: dict[str, int] = {}

    def score(key: str, value: float) -> None:
        counts[key] = counts.get(key, 0.0) + value
        totals[key] = totals.get(key, 0) + 1

    skipped = 0
    for n, q in enumerate(queries, start=1):
        truth = by_commit.get(q.truth)
        if truth is None:
            skipped += 1  # the importer excluded that version (reported as an anomaly)
            continue
        t = parse_instant(q.date)
        for setting, k in (("today", now), ("then", t)):
            if setting == "then" and q.truth_published > q.date:
                continue  # retroactive: not knowable on that date
            suffix = "" if setting == "today" else "_known_then"
            hits = retrieval.search(q.text, valid_at=t, known_at=k, k=1, mode=mode,
                                    now=now).hits
            score(f"vigente{suffix}", float(bool(hits) and hits[0].version_id == truth))
            similar = retrieval.similar(q.text, k=20, mode=mode,
                                        known_at=None if setting == "today" else k)
            top = similar[0].version_id if similar else None
            score(f"similarity{suffix}", float(top == truth))
            tie = _top_tie(similar)
            score(f"similarity_expected{suffix}",
                  sum(r.version_id == truth for r in tie) / len(tie) if tie else 0.0)
            latest = None
            if similar:
                act = similar[0].candidate.claim.lineage
                if act not in order:
                    order[act] = [(v.version_id, v.published)
                                  for v in vg.documents.versions(act)]
                known = [vid for vid, published in order[act] if published <= k]
                latest = known[-1] if known else None
            score(f"latest{suffix}", float(latest == truth))
            if setting == "today":
                score(f"vigente_{q.kind}", float(bool(hits) and hits[0].version_id == truth))
                score(f"similarity_{q.kind}", float(top == truth))
        if n % 200 == 0:
            log.print(f"legalize-ee: {n}/{len(queries)} queries")

    def fraction(key: str) -> float:
        return round(counts.get(key, 0.0) / totals[key], 4) if totals.get(key) else 0.0

    return {
        "legalize_ee_queries": totals.get("vigente", 0),
        "legalize_ee_queries_known_then": totals.get("vigente_known_then", 0),
        "legalize_ee_queries_skipped": skipped,
        "legalize_ee_top1": fraction("vigente"),
        "legalize_ee_top1_similarity_only": fraction("similarity"),
        "legalize_ee_top1_similarity_only_expected": fraction("similarity_expected"),
        "legalize_ee_top1_latest": fraction("latest"),
        "legalize_ee_top1_known_then": fraction("vigente_known_then"),
        "legalize_ee_top1_similarity_only_known_then": fraction("similarity_known_then"),
        "legalize_ee_top1_similarity_only_expected_known_then":
            fraction("similarity_expected_known_then"),
        "legalize_ee_top1_latest_known_then": fraction("latest_known_then"),
        "legalize_ee_top1_title_queries": fraction("vigente_title"),
        "legalize_ee_top1_passage_queries": fraction("vigente_passage"),
        "legalize_ee_top1_similarity_only_title_queries": fraction("similarity_title"),
        "legalize_ee_top1_similarity_only_passage_queries": fraction("similarity_passage"),
    }


# -- latency -------------------------------------------------------------------------------------
class _RandomVectors:
    """Stored vectors are random unit vectors (embedding 100,000 passages takes hours on two
    cores); the query is embedded by the real model, so its cost is in every timing. Models of
    the same dimensions share one set of stored vectors."""

    def __init__(self, model: Embedder) -> None:
        self._model = model

    @property
    def model_id(self) -> str:
        return f"bench/random-unit-{self.dimensions}"

    @property
    def dimensions(self) -> int:
        return self._model.dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._model.embed(texts)


def _fill_random_vectors(vg: Vigente, embedder: _RandomVectors, seed: int) -> None:
    """One random unit vector per distinct passage text (as real embedding reuses them)."""
    import numpy as np

    store = vg.store
    rng = np.random.default_rng(seed)
    by_text: dict[str, bytes] = {}
    while True:
        rows = store.passages_without_vectors(embedder.model_id, 20_000)
        if not rows:
            return
        for _, content_hash, _ in rows:
            if content_hash not in by_text:
                vector = rng.standard_normal(embedder.dimensions).astype("<f4")
                by_text[content_hash] = (vector / np.linalg.norm(vector)).tobytes()
        with store.transaction():
            store.append_vectors(embedder.model_id,
                                 [(pid, by_text[content_hash]) for pid, content_hash, _ in rows])


def _latency(vg: Vigente, queries: list[_Query], count: int, seed: int,
             embedders: Sequence[tuple[str, Embedder]], log: Console
             ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Lexical figures, and the hybrid ones of each embedder (the same queries, the stored
    vectors random, the query embedded by the embedder), the two interleaved by round so that
    a change in the machine's load falls on every embedder alike."""
    rng = random.Random(seed)
    sample = [rng.choice(queries) for _ in range(count)]
    figures: dict[str, Any] = {"latency_queries": count,
                               "latency_passages": vg.retrieval.stats().passages}
    per: dict[str, dict[str, Any]] = {label: {} for label, _ in embedders}
    wrapped = {label: _RandomVectors(model) for label, model in embedders}
    for dims in sorted({w.dimensions for w in wrapped.values()}):
        log.print(f"latency: storing random {dims}-d unit vectors for every passage …")
        _fill_random_vectors(vg, next(w for w in wrapped.values() if w.dimensions == dims),
                             seed)

    def once(q: _Query, mode: Mode, explain: bool) -> float:
        started = time.perf_counter_ns()
        vg.retrieval.search(q.text, valid_at=q.date, k=10, mode=mode, explain=explain)
        return (time.perf_counter_ns() - started) / 1e6

    runs: list[tuple[str | None, Mode]] = [(None, "lexical")]
    runs += [(label, "hybrid") for label, _ in embedders]
    timings: dict[tuple[str | None, bool], list[float]] = {}
    for label, mode in runs:
        vg.retrieval.use(wrapped[label] if label else None)
        for q in sample[:5]:
            once(q, mode, True)  # warm caches (the vector matrix is loaded once per process)
    for q in sample:
        for label, mode in runs:
            vg.retrieval.use(wrapped[label] if label else None)
            for explain in (True, False):
                timings.setdefault((label, explain), []).append(once(q, mode, explain))
    for (label, explain), values in timings.items():
        mode = "lexical" if label is None else "hybrid"
        into = figures if label is None else per[label]
        suffix = "" if explain else "_without_excluded"
        into[f"search_p50_ms_{mode}{suffix}"] = round(percentile(values, 50), 2)
        into[f"search_p99_ms_{mode}{suffix}"] = round(percentile(values, 99), 2)
    log.print(f"latency lexical: p50 {figures['search_p50_ms_lexical']} ms")
    embedding: dict[str, list[float]] = {label: [] for label, _ in embedders}
    for q in sample:
        for label, model in embedders:
            embedding[label].append(clock_ms(functools.partial(model.embed, [q.text]))[0])
    for label, values in embedding.items():
        per[label]["query_embedding_p50_ms"] = round(percentile(values, 50), 2)
        log.print(f"latency hybrid, {label}: p50 {per[label]['search_p50_ms_hybrid']} ms "
                  f"(query embedding {per[label]['query_embedding_p50_ms']} ms)")
    vg.retrieval.use(None)
    return figures, per


# -- SituatedQA ----------------------------------------------------------------------------------
def _normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(predicted: object, gold: Sequence[str]) -> bool:
    """SQuAD-style exact match: any predicted answer equals any gold answer, normalised."""
    answers = predicted if isinstance(predicted, list) else [predicted]
    wanted = {_normalize(g) for g in gold if g}
    return any(isinstance(a, str) and _normalize(a) in wanted for a in answers)


def _start(point: dict[str, Any] | None) -> str | None:
    if not point or not point.get("year"):
        return None
    year, month, day = int(point["year"]), point.get("month") or 1, point.get("date") or 1
    return f"{year:04d}-{int(month):02d}-{int(day):02d}"


def _situatedqa(path: Path, limit: int | None, embedders: Sequence[tuple[str, Embedder]],
                log: Console) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if r.get("timelines")][:limit]
    figures: dict[str, Any] = {}
    with _store(None) as vg:
        lineages: dict[int, str] = {}
        with vg.transaction():
            for row in rows:
                timeline = row["timelines"][0]
                cur_start = _start(timeline.get("cur_start"))
                if cur_start is None or not timeline.get("cur_answers"):
                    continue
                lineage = " ".join(row["question"].split())
                if lineage in lineages.values():
                    lineage = f"{lineage} ({row['id']})"
                prev_start = _start(timeline.get("prev_start"))
                if timeline.get("prev_answers") and prev_start and prev_start < cur_start:
                    vg.record(lineage, timeline["prev_answers"], valid_from=prev_start,
                              valid_to=cur_start, known_at=SITUATEDQA_KNOWN_AT,
                              source="situatedqa")
                vg.record(lineage, timeline["cur_answers"], valid_from=cur_start,
                          known_at=SITUATEDQA_KNOWN_AT, source="situatedqa")
                lineages[row["id"]] = lineage
        vg.retrieval.index(embed=False)
        pairs = [(p, row) for row in rows if row["id"] in lineages
                 for p in row["context_answer_pairs"]]
        log.print(f"SituatedQA: {len(lineages)} timelines, {len(pairs)} questions")
        per: dict[str, dict[str, Any]] = {}
        runs: list[tuple[str | None, Embedder | None]] = [(None, None), *embedders]
        for label, embedder in runs:
            mode = "lexical" if embedder is None else "hybrid"
            vg.retrieval.use(embedder)
            if embedder is not None:
                vg.retrieval.index()
            right = baseline = no_date = 0
            for pair, _ in pairs:
                question, gold = pair["edited_question"], pair["answers"]
                fallback = pair["date"] if re.fullmatch(r"\d{4}", str(pair["date"])) else None
                try:
                    result = vg.retrieval.search(
                        question, valid_at=f"{fallback}-12-31" if fallback else None,
                        date_from_query=True, k=1, mode=mode,  # type: ignore[arg-type]
                    )
                except ValueError:
                    no_date += 1
                    continue
                if result.date_phrase is None:
                    no_date += 1
                if result.hits and exact_match(result.hits[0].value, gold):
                    right += 1
                similar = vg.retrieval.similar(question, k=1, mode=mode)  # type: ignore[arg-type]
                if similar:
                    value = json.loads(similar[0].candidate.claim.value_json)
                    baseline += exact_match(value, gold)
            measured = {"situatedqa_accuracy": round(right / len(pairs), 4),
                        "situatedqa_accuracy_similarity_only": round(baseline / len(pairs), 4),
                        "situatedqa_no_date_in_question": no_date}
            if label is None:
                figures |= {f"{key}_lexical": value for key, value in measured.items()}
            else:
                per[label] = measured
                log.print(f"SituatedQA, {label}: {measured['situatedqa_accuracy']}")
        first = per[embedders[0][0]] if embedders else {
            key.removesuffix("_lexical"): value for key, value in figures.items()}
        figures |= first
        figures["situatedqa_mode"] = "hybrid" if embedders else "lexical"
        figures["situatedqa_questions"] = len(pairs)
        figures["situatedqa_timelines"] = len(lineages)
    return figures, per


# -- the benchmark ---------------------------------------------------------------------------------
def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return value


class RetrievalBenchmark:
    name = "retrieval"
    help = "top-1 in force vs similarity only vs latest (legalize-ee), SituatedQA, latency"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--legalize-ee", type=Path, default=LEGALIZE_EE,
                            help=f"versions.jsonl.xz (default {LEGALIZE_EE})")
        parser.add_argument("--situatedqa", type=Path, default=SITUATEDQA,
                            help=f"temp.dev.jsonl (default {SITUATEDQA})")
        parser.add_argument("--acts", type=_positive, help="only the first N acts")
        parser.add_argument("--timelines", type=_positive,
                            help="only the first N SituatedQA timelines")
        parser.add_argument("--queries", type=_positive, default=1000,
                            help="legalize-ee queries to sample (default 1000)")
        parser.add_argument("--title-queries", type=_positive, default=1000,
                            help="acts to ask by their exact title and by a version's "
                                 "reference (default 1000: every act of the corpus)")
        parser.add_argument("--latency-queries", type=_positive, default=200)
        parser.add_argument("--seed", type=int, default=20260929)
        parser.add_argument("--no-embed", action="store_true",
                            help="lexical only (no embedding model)")
        parser.add_argument("--embedder", default="minilm", help=EMBEDDER_HELP)
        parser.add_argument("--db", help="keep the legalize-ee store in this SQLite file")
        parser.add_argument("--legalize-ee-mode", choices=("lexical", "hybrid"),
                            default="lexical",
                            help="hybrid embeds every legalize-ee passage first (slow)")
        parser.add_argument("--exact-bm25", action="store_true",
                            help="score every query term (no match budget; slower)")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        embed = not args.no_embed and (args.embedder != "minilm" or embedding_available())
        embedders = parse_embedders(args.embedder) if embed else []
        figures: dict[str, Any] = {
            "machine": machine(), "seed": args.seed,
            "embedding_model": embedders[0][1].model_id if embedders else None}
        per: dict[str, dict[str, Any]] = {label: {"model_id": model.model_id}
                                          for label, model in embedders}
        started = time.perf_counter()
        with _store(args.db) as vg:
            if args.exact_bm25:
                vg.store.match_budget = None  # type: ignore[attr-defined]
            figures["match_budget"] = getattr(vg.store, "match_budget", MATCH_BUDGET)
            by_act = _read_versions(args.legalize_ee, args.acts)
            figures.update(_load_legalize_ee(vg, args.legalize_ee, args.acts, log))
            queries, ambiguous = _sample_queries(by_act, args.queries, args.seed,
                                                 today().isoformat())
            figures["legalize_ee_dates_without_one_version"] = ambiguous
            figures["legalize_ee_mode"] = args.legalize_ee_mode
            titles, references, not_unique = _exact_queries(
                by_act, args.title_queries, args.seed, today().isoformat())
            figures["legalize_ee_exact_title_not_unique"] = not_unique
            hybrid = args.legalize_ee_mode == "hybrid" and embedders
            for label, embedder in embedders if hybrid else [(None, None)]:
                measured: dict[str, Any] = {}
                if embedder is not None:
                    started_embedding = time.perf_counter()
                    vg.retrieval.use(embedder)
                    vg.retrieval.index()
                    measured["legalize_ee_embed_s"] = round(
                        time.perf_counter() - started_embedding, 1)
                measured |= _evaluate_legalize_ee(vg, queries, args.legalize_ee_mode, log)
                measured |= _evaluate_exact(vg, titles, "title", args.legalize_ee_mode, log)
                measured |= _evaluate_exact(vg, references, "reference",
                                            args.legalize_ee_mode, log)
                if label is not None:
                    per[label] |= measured
                if label is None or label == embedders[0][0]:
                    figures |= measured
            vg.retrieval.use(None)
            lexical, hybrid_latency = _latency(vg, queries, args.latency_queries, args.seed,
                                               embedders, log)
        figures |= lexical
        situatedqa, situatedqa_per = _situatedqa(args.situatedqa, args.timelines, embedders,
                                                 log)
        figures |= situatedqa
        for label, _ in embedders:
            per[label] |= hybrid_latency[label] | situatedqa_per[label]
        if embedders:
            figures |= {k: v for k, v in hybrid_latency[embedders[0][0]].items()}
            figures["by_embedder"] = per
        figures["seconds"] = round(time.perf_counter() - started, 1)
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title="vigente retrieval benchmark")
        table.add_column("measure")
        table.add_column("vigente", justify="right")
        table.add_column("similarity only", justify="right")
        table.add_column("latest ingested", justify="right")
        for label, suffix in (("legalize-ee top-1, known today", ""),
                              ("legalize-ee top-1, known then", "_known_then")):
            table.add_row(label, f"{figures[f'legalize_ee_top1{suffix}']:.3f}",
                          f"{figures[f'legalize_ee_top1_similarity_only{suffix}']:.3f}",
                          f"{figures[f'legalize_ee_top1_latest{suffix}']:.3f}")
        for label, kind in (("legalize-ee exact title, top-1", "title"),
                            ("legalize-ee exact reference, top-1", "reference")):
            if f"legalize_ee_exact_{kind}_top1" in figures:
                table.add_row(label, f"{figures[f'legalize_ee_exact_{kind}_top1']:.3f}", "", "")
        table.add_row("SituatedQA exact match", f"{figures['situatedqa_accuracy']:.3f}",
                      f"{figures['situatedqa_accuracy_similarity_only']:.3f}", "")
        console.print(table)
        latency = Table(title=f"filtered search latency, {figures['latency_passages']:,} "
                              "passages")
        latency.add_column("mode")
        latency.add_column("p50 ms", justify="right")
        latency.add_column("p99 ms", justify="right")
        for mode in ("lexical", "hybrid"):
            if f"search_p50_ms_{mode}" in figures:
                latency.add_row(mode, str(figures[f"search_p50_ms_{mode}"]),
                                str(figures[f"search_p99_ms_{mode}"]))
        if "legalize_ee_exact_title_p50_ms" in figures:
            latency.add_row(f"exact titles, k = 1 ({figures['legalize_ee_mode']})",
                            str(figures["legalize_ee_exact_title_p50_ms"]),
                            str(figures["legalize_ee_exact_title_p99_ms"]))
        console.print(latency)
        if figures.get("by_embedder"):
            side = Table(title="embedders side by side (hybrid)")
            for column in ("embedder", "SituatedQA", "exact title", "search p50 ms",
                           "query embedding p50 ms"):
                side.add_column(column, justify="right")
            for label, row in figures["by_embedder"].items():
                title = row.get("legalize_ee_exact_title_top1")
                side.add_row(label, f"{row['situatedqa_accuracy']:.3f}",
                             "" if title is None else f"{title:.3f}",
                             str(row["search_p50_ms_hybrid"]),
                             str(row["query_embedding_p50_ms"]))
            console.print(side)


BENCHMARK = RetrievalBenchmark()
