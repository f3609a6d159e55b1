"""``python -m vigente.bench memory``: recall over the runtime on long-horizon user memory.

Real data no one here wrote: BFCL v4's memory category (``../shared/data/bfcl-memory``): five
scenarios, each a series of earlier conversations of one user, then 155 questions asked later.
Each scenario is one account; each earlier conversation one vigente conversation (a day
apart, its turns a minute apart). A question is asked after all of them, and scored without an
LLM (as the data's README says): the earlier message holding the answer's ``source`` snippet.

* ``bfcl_recall_at_10``: that message is among the top 10 hits of ``vigente recall`` over the
  account; ``bfcl_answer_in_top10``: a ``ground_truth`` string is in the hits' text.
* Baselines in the same run, over the same messages with the same folding and stopwords (what a
  developer would write, given vigente's text handling): BM25 (``rank_bm25.BM25Okapi``, the
  library), similarity only (the same embedding model, cosine, no words), and the most recent
  10 messages.
* ``bfcl_assembly_recall_{vigente,recency}``: the fraction of questions whose answering message
  reaches a 2,000-token assembly of one conversation holding every earlier session (the
  question on a branch of its own), with recall on (the default policy) and off (the recency
  window at the same budget, the same tokenizer); ``bfcl_assembly_recall_bm25_fill``: the
  naive fill of the same budget, the question then BM25's best turns while they fit.
* Scale: ``recall_p50_ms``/``p99`` at 10,000 and 100,000 records (the BFCL turns said again,
  so the model embeds each text once), and the assembly p50 with and without recall over a
  10,000-call conversation of the runtime benchmark.

Nothing was fitted on BFCL: the ranking's constants (BM25's k1 and b, RRF's 60, the speaker
factors) are the textbook ones, set before this benchmark ran.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.bench._embedders import EMBEDDER_HELP, parse_embedders
from vigente.bench._util import machine, percentile, ratio
from vigente.retrieval.text import fold

__all__ = ["BENCHMARK", "MemoryBenchmark"]

DEFAULT_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "bfcl-memory"
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
T0 = _dt.datetime(2026, 1, 5, 9, 0, tzinfo=_dt.UTC)


def _load(data: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    sessions: dict[str, list[dict[str, Any]]] = {}
    for scenario in SCENARIOS:
        path = data / "memory_prereq_conversation" / f"memory_{scenario}.json"
        sessions[scenario] = [json.loads(line) for line in path.read_text("utf-8").splitlines()
                              if line.strip()]
    answers = {a["id"]: a for a in map(json.loads, (data / "possible_answer.json")
                                       .read_text("utf-8").splitlines()) if a}
    questions = []
    for line in (data / "BFCL_v4_memory.json").read_text("utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            a = answers[q["id"]]
            questions.append({"id": q["id"], "scenario": q["scenario"],
                              "text": q["question"][0][0]["content"],
                              "truth": a["ground_truth"], "source": a["source"]})
    return sessions, questions


def _events(scenario: str, sessions: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    """One conversation per earlier session (account = the scenario); message id -> text."""
    events: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for n, session in enumerate(sessions):
        c = f"{scenario}-{n}"
        at = T0 + _dt.timedelta(days=n)
        events += [
            {"event": "conversation", "id": c, "account": scenario, "at": at.isoformat(),
             "title": session.get("topic")},
            {"event": "participant", "id": "assistant", "model": "m", "conversation": c},
            {"event": "branch", "id": "main", "conversation": c},
        ]
        for t, turn in enumerate(session["question"]):
            for u, message in enumerate(turn):
                ref = f"{c}/t{t}.{u}"
                texts[ref] = message["content"]
                events.append({"event": "message", "id": ref, "branch": "main",
                               "role": message["role"], "content": message["content"],
                               "conversation": c,
                               "at": (at + _dt.timedelta(minutes=t)).isoformat()})
    return [json.dumps(e) for e in events], texts


def _gold(source: str, texts: dict[str, str]) -> set[str]:
    """The messages holding the answer's source snippet (its longest part between '...')."""
    parts = sorted((fold(p) for p in source.split("...")), key=len, reverse=True)
    key = parts[0] if parts else ""
    if len(key) < 8:
        return set()
    return {ref for ref, text in texts.items() if key in fold(text)}


def _answered(truth: list[str], texts: list[str]) -> bool:
    folded = [fold(t) for t in texts]
    return any(fold(a) and f" {fold(a)} " in f" {t} " for a in truth for t in folded)


class _Baselines:
    """BM25 (rank_bm25), similarity only and recency over one scenario's messages."""

    def __init__(self, texts: dict[str, str], embedder: Any) -> None:
        from rank_bm25 import BM25Okapi

        from vigente.runtime.recall import STOPWORDS

        self.refs = list(texts)
        self.texts = [texts[r] for r in self.refs]
        self.stop = STOPWORDS
        self.bm25 = BM25Okapi([self._tokens(t) for t in self.texts])
        self.embedder = embedder
        self.vectors = embedder.embed(self.texts) if embedder is not None else None

    def _tokens(self, text: str) -> list[str]:
        return [t for t in fold(text).split() if t not in self.stop] or ["_"]

    def bm25_top(self, query: str, k: int) -> list[str]:
        scores = self.bm25.get_scores(self._tokens(query))
        order = sorted(range(len(self.refs)), key=lambda i: (-scores[i], i))
        return [self.refs[i] for i in order[:k] if scores[i] > 0]

    def similar_top(self, query: str, k: int) -> list[str]:
        if self.vectors is None:
            return []
        embed = getattr(self.embedder, "embed_query", self.embedder.embed)  # E5's prefix
        q = embed([query])[0]
        scores = self.vectors @ q
        order = sorted(range(len(self.refs)), key=lambda i: (-float(scores[i]), i))
        return [self.refs[i] for i in order[:k]]

    def recent_top(self, k: int) -> list[str]:
        return self.refs[-k:]


def _bfcl(data: Path, embedder: Any, mode: str, log: Console) -> dict[str, Any]:
    sessions, questions = _load(data)
    per: dict[str, dict[str, list[bool]]] = {}
    unmatched = 0
    leaks = 0
    methods = ("vigente", "bm25", "similarity", "recency")
    with Vigente.open(":memory:") as vg:
        texts: dict[str, dict[str, str]] = {}
        for scenario in SCENARIOS:
            lines, texts[scenario] = _events(scenario, sessions[scenario])
            vg.runtime.import_events(lines)
        asked = (T0 + _dt.timedelta(days=30)).isoformat()
        for scenario in SCENARIOS:
            log.print(f"bfcl: {scenario} ({len(texts[scenario])} messages)")
            base = _Baselines(texts[scenario], embedder)
            for q in (q for q in questions if q["scenario"] == scenario):
                gold = _gold(q["source"], texts[scenario])
                if not gold:
                    unmatched += 1
                    continue
                result = vg.runtime.recall(q["text"], account=scenario, known_at=asked, k=10,
                                           mode=mode,
                                           embedder=None if mode == "lexical" else embedder)
                leaks += sum(1 for h in result.hits if h.at > result.known_at)
                tops = {
                    "vigente": [f"{h.ref}" for h in result.hits],
                    "bm25": base.bm25_top(q["text"], 10),
                    "similarity": base.similar_top(q["text"], 10),
                    "recency": base.recent_top(10),
                }
                cat = per.setdefault(scenario, {})
                for m in methods:
                    cat.setdefault(f"recall_at_10_{m}", []).append(bool(gold & set(tops[m])))
                    cat.setdefault(f"answer_in_top10_{m}", []).append(
                        _answered(q["truth"], [texts[scenario][r] for r in tops[m]]))

    def mean(values: list[bool]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    every: dict[str, list[bool]] = {}
    for cat in per.values():
        for key, values in cat.items():
            every.setdefault(key, []).extend(values)
    out: dict[str, Any] = {
        "bfcl_questions": len(questions),
        "bfcl_scored": len(every.get("recall_at_10_vigente", [])),
        "bfcl_unmatched_source": unmatched,
        "bfcl_hits_after_known_at": leaks,
        "bfcl_recall_at_10": mean(every.get("recall_at_10_vigente", [])),
        "bfcl_answer_in_top10": mean(every.get("answer_in_top10_vigente", [])),
        "by_method": {m: {"recall_at_10": mean(every.get(f"recall_at_10_{m}", [])),
                          "answer_in_top10": mean(every.get(f"answer_in_top10_{m}", []))}
                      for m in methods},
        "by_scenario": {s: {k: mean(v) for k, v in cat.items()} for s, cat in per.items()},
    }
    return out


class _BM25Fill:
    """The naive fill of a budget: the question, then BM25's best turns (rank_bm25 over the
    same folded, stopword-free terms) as chat messages, best first, while the request's tokens
    (the assembler's count, the same tokenizer) fit the budget."""

    def __init__(self, texts: dict[str, str], roles: dict[str, str], tok: Any) -> None:
        self.base = _Baselines(texts, None)
        self.texts, self.roles, self.tok = texts, roles, tok

    def fill(self, question: str, budget: int) -> set[str]:
        from vigente.assemble.tokens import count_message_tokens

        used = count_message_tokens(self.tok, [{"role": "user", "content": question}])
        chosen: set[str] = set()
        for ref in self.base.bm25_top(question, len(self.texts)):
            cost = count_message_tokens(
                self.tok, [{"role": self.roles[ref], "content": self.texts[ref]}])
            if used + cost <= budget:
                used += cost
                chosen.add(ref)
        return chosen


def _assembly(data: Path, budget: int, log: Console) -> dict[str, Any]:
    """Every earlier session of a scenario in one conversation; each question on its own
    branch forked at the end; is the answering message in the 2,000-token request?"""
    from vigente.assemble import default_policy, policy_from_document
    from vigente.assemble.tokens import tiktoken_tokenizer

    sessions, questions = _load(data)
    off = policy_from_document({"id": "recency-window", "version": 1,
                                "recall": {"enabled": False}}, "bench")
    found = {"vigente": [], "recency": [], "bm25_fill": []}  # type: dict[str, list[bool]]
    timings: dict[str, list[float]] = {"vigente": [], "recency": []}
    tok = tiktoken_tokenizer(default_policy().encoding)
    with Vigente.open(":memory:") as vg:
        for scenario in SCENARIOS:
            c = f"all-{scenario}"
            events: list[dict[str, Any]] = [
                {"event": "conversation", "id": c, "account": scenario,
                 "at": T0.isoformat()},
                {"event": "participant", "id": "assistant", "model": "m", "conversation": c},
                {"event": "branch", "id": "main", "conversation": c}]
            texts: dict[str, str] = {}
            last = ""
            for n, session in enumerate(sessions[scenario]):
                at = T0 + _dt.timedelta(days=n)
                for t, turn in enumerate(session["question"]):
                    for u, message in enumerate(turn):
                        ref = f"s{n}t{t}.{u}"
                        texts[ref] = message["content"]
                        last = ref
                        events.append({"event": "message", "id": ref, "branch": "main",
                                       "role": message["role"], "content": message["content"],
                                       "conversation": c,
                                       "at": (at + _dt.timedelta(minutes=t)).isoformat()})
            asked = T0 + _dt.timedelta(days=30)
            scenario_questions = [q for q in questions if q["scenario"] == scenario]
            for i, q in enumerate(scenario_questions):
                when = (asked + _dt.timedelta(seconds=i)).isoformat()
                events += [{"event": "branch", "id": f"q{i}", "parent": "main",
                            "fork_after": last, "conversation": c, "at": when},
                           {"event": "message", "id": f"q{i}", "branch": f"q{i}",
                            "role": "user", "content": q["text"], "conversation": c,
                            "at": when}]
            vg.runtime.import_events([json.dumps(e) for e in events])
            log.print(f"assembly: {scenario} ({len(texts)} messages, "
                      f"{len(scenario_questions)} questions)")
            roles = {e["id"]: e["role"] for e in events if e["event"] == "message"}
            naive = _BM25Fill(texts, roles, tok)
            for i, q in enumerate(scenario_questions):
                gold = _gold(q["source"], texts)
                if not gold:
                    continue
                found["bm25_fill"].append(bool(gold & naive.fill(q["text"], budget)))
                for name, policy in (("vigente", None), ("recency", off)):
                    start = time.perf_counter()
                    a = vg.assembly.assemble(c, f"q{i}", "assistant", budget=budget,
                                             policy=policy, persist=False)
                    timings[name].append((time.perf_counter() - start) * 1000)
                    inside = {d["ref"] for d in a.record["included"]}
                    found[name].append(bool(gold & inside))
    return {
        f"bfcl_assembly_recall_{name}": round(sum(v) / len(v), 4) if v else 0.0
        for name, v in found.items()
    } | {"assembly_budget": budget,
         "assembly_p50_ms": {n: round(percentile(v, 50), 2) for n, v in timings.items() if v}}


def _scale(sizes: list[int], data: Path, embedder: Any, mode: str, queries: int,
           log: Console) -> list[dict[str, Any]]:
    sessions, questions = _load(data)
    turns = [m["content"] for s in SCENARIOS for session in sessions[s]
             for turn in session["question"] for m in turn]
    out = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder, Vigente.open(Path(folder) / "m.db") as vg:
            c = f"scale-{size}"
            events = [{"event": "conversation", "id": c, "account": "scale",
                       "at": T0.isoformat()},
                      {"event": "participant", "id": "assistant", "model": "m",
                       "conversation": c},
                      {"event": "branch", "id": "main", "conversation": c}]
            events += [{"event": "message", "id": f"m{n}", "branch": "main", "role": "user",
                        "content": turns[n % len(turns)], "conversation": c,
                        "at": (T0 + _dt.timedelta(seconds=n)).isoformat()}
                       for n in range(size)]
            vg.runtime.import_events([json.dumps(e) for e in events])
            start = time.perf_counter()
            use = None if mode == "lexical" else embedder
            vg.runtime.recall("warm up", conversation=c, mode=mode, embedder=use)
            build = time.perf_counter() - start
            samples = []
            for q in questions[:queries]:
                start = time.perf_counter()
                vg.runtime.recall(q["text"], conversation=c, mode=mode, embedder=use)
                samples.append((time.perf_counter() - start) * 1000)
            log.print(f"scale: {size} records, index {build:.1f} s, "
                      f"p50 {percentile(samples, 50):.1f} ms")
            out.append({"records": size, "mode": mode, "index_s": round(build, 1),
                        "recall_p50_ms": round(percentile(samples, 50), 2),
                        "recall_p99_ms": round(percentile(samples, 99), 2)})
    return out


def _assembly_scale(calls: int, rounds: int, log: Console) -> dict[str, Any]:
    from vigente.assemble import policy_from_document
    from vigente.bench.runtime import _turn_events

    off = policy_from_document({"id": "recency-window", "version": 1,
                                "recall": {"enabled": False}}, "bench")
    with tempfile.TemporaryDirectory() as folder, Vigente.open(Path(folder) / "a.db") as vg:
        vg.runtime.import_events(_turn_events(calls, 7, "long"))
        timings: dict[str, list[float]] = {"with_recall": [], "without_recall": []}
        for policy in (None, off):  # warm
            vg.assembly.assemble("long", "main", "agent", policy=policy, persist=False)
        for _ in range(rounds):
            for name, policy in (("with_recall", None), ("without_recall", off)):
                start = time.perf_counter()
                vg.assembly.assemble("long", "main", "agent", policy=policy, persist=False)
                timings[name].append((time.perf_counter() - start) * 1000)
        p50 = {n: round(percentile(v, 50), 2) for n, v in timings.items()}
        log.print(f"assembly at {calls} calls: {p50}")
        return {"calls": calls, "assembly_p50_ms": p50,
                "ratio": ratio(p50["with_recall"], p50["without_recall"])}


class MemoryBenchmark:
    name = "memory"
    help = "recall over the runtime: BFCL long-horizon memory, baselines, scale"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                            help="the bfcl-memory folder (default ../shared/data/bfcl-memory)")
        parser.add_argument("--mode", default="auto",
                            choices=("auto", "lexical", "semantic", "hybrid"))
        parser.add_argument("--budget", type=int, default=2000)
        parser.add_argument("--sizes", default="10000,100000",
                            help="record counts for the recall latency (comma-separated; "
                                 "empty: skip)")
        parser.add_argument("--queries", type=int, default=60)
        parser.add_argument("--calls", type=int, default=10_000,
                            help="tool calls of the assembly-with-recall run (0: skip)")
        parser.add_argument("--rounds", type=int, default=20)
        parser.add_argument("--embedder", default="minilm", help=EMBEDDER_HELP)

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        from vigente.errors import InvalidInput
        from vigente.retrieval.embed import embedding_available

        if not (args.data / "BFCL_v4_memory.json").exists():
            raise InvalidInput(f"{args.data} holds no BFCL_v4_memory.json: give --data, the "
                               "bfcl-memory folder of ../shared/data")
        # the similarity baseline uses the model whatever vigente's mode
        embedders: list[tuple[str, Any]] = (
            parse_embedders(args.embedder)
            if args.embedder != "minilm" or embedding_available() else [("none", None)])
        embedder = embedders[0][1]
        mode = args.mode if embedder is not None or args.mode == "lexical" else "lexical"
        figures: dict[str, Any] = {"mode": mode, "fitted_on": "nothing (textbook constants)"}
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        per: dict[str, dict[str, Any]] = {}
        for label, model in embedders:
            measured = _bfcl(args.data, model, mode, log)
            measured["scale"] = _scale(sizes, args.data, model, mode, args.queries, log)
            per[label] = {"model_id": None if model is None else model.model_id} | measured
            log.print(f"bfcl, {label}: recall@10 {measured['bfcl_recall_at_10']}")
        figures |= {k: v for k, v in per[embedders[0][0]].items() if k != "model_id"}
        if len(embedders) > 1 or args.embedder != "minilm":
            figures["by_embedder"] = per
        figures |= _assembly(args.data, args.budget, log)
        if args.calls:
            figures["assembly_scale"] = _assembly_scale(args.calls, args.rounds, log)
        figures["machine"] = machine()
        return figures

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title=f"vigente memory benchmark (BFCL, {figures['mode']})")
        for column in ("method", "recall@10", "answer in top 10"):
            table.add_column(column, justify="right")
        for method, row in figures["by_method"].items():
            table.add_row(method, f"{row['recall_at_10']:.3f}", f"{row['answer_in_top10']:.3f}")
        console.print(table)
        console.print(f"assembly at {figures['assembly_budget']} tokens: vigente "
                      f"{figures['bfcl_assembly_recall_vigente']:.3f}, recency "
                      f"{figures['bfcl_assembly_recall_recency']:.3f}, BM25 fill "
                      f"{figures['bfcl_assembly_recall_bm25_fill']:.3f}")
        for row in figures["scale"]:
            console.print(f"{row['records']} records: recall p50 {row['recall_p50_ms']} ms, "
                          f"p99 {row['recall_p99_ms']} ms")
        for label, row in figures.get("by_embedder", {}).items():
            similar = row["by_method"]["similarity"]["recall_at_10"]
            scale = ", ".join(f"{r['records']}: p50 {r['recall_p50_ms']} ms"
                              for r in row["scale"])
            console.print(f"{label}: recall@10 {row['bfcl_recall_at_10']:.3f} (similarity only "
                          f"{similar:.3f}){'; ' + scale if scale else ''}")
        if figures.get("assembly_scale"):
            a = figures["assembly_scale"]
            console.print(f"assembly at {a['calls']} calls: {a['assembly_p50_ms']} "
                          f"({a['ratio']}x)")


BENCHMARK = MemoryBenchmark()
