"""Paired latency of lexical search, two versions of vigente side by side (docs/benchmarks.md,
retrieval section 4). On a shared machine absolute timings of separate runs are not comparable;
here every query goes to both versions back to back, in alternating order, so both see the
same load, and the median of the per-query ratios is reported with each side's p50.

Set up (one store per version, each built by its own code)::

    git archive 5f48ba9 src | tar -x -C /tmp/before        # the code before
    for side in before after; do
      src=$([ $side = before ] && echo /tmp/before/src || echo src)
      PYTHONPATH=$src vigente --db /tmp/$side.db import-corpus legalize-ee \\
          ../shared/data/legalize-ee/versions.jsonl.xz
      PYTHONPATH=$src vigente --db /tmp/$side.db index --no-embed
    done
    python scripts/paired_search_latency.py /tmp/before/src /tmp/before.db src /tmp/after.db

The queries are the retrieval benchmark's (section 1's mixed title and passage queries, k = 10)
and their title queries alone (k = 1), with its seed.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

WORKER = """
import json, sys, time
from vigente import Vigente
vg = Vigente.open(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    q = json.loads(line)
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    vg.retrieval.search(q["text"], valid_at=q["date"], k=q["k"], mode="lexical")
    print(json.dumps([(time.perf_counter_ns() - wall) / 1e6,
                      (time.process_time_ns() - cpu) / 1e6]), flush=True)
"""


def _start(src: str, db: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    worker = subprocess.Popen([sys.executable, "-c", WORKER, db], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    return worker


def _ask(worker: subprocess.Popen[str], query: Any, k: int) -> list[float]:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(json.dumps({"text": query.text, "date": query.date, "k": k}) + "\n")
    worker.stdin.flush()
    result: list[float] = json.loads(worker.stdout.readline())
    return result


def main(before_src: str, before_db: str, after_src: str, after_db: str, n: int = 200) -> None:
    from vigente.bench.retrieval import LEGALIZE_EE, _read_versions, _sample_queries
    from vigente.time import today

    queries, _ = _sample_queries(_read_versions(LEGALIZE_EE, None), 1000, 20260929,
                                 today().isoformat())
    rng = random.Random(20260929)
    mixed = [rng.choice(queries) for _ in range(n)]
    titles = [q for q in queries if q.kind == "title"][:n]
    before, after = _start(before_src, before_db), _start(after_src, after_db)
    for q in mixed[:5]:  # warm both
        _ask(before, q, 10)
        _ask(after, q, 10)
    for name, sample, k in (("mixed, k = 10", mixed, 10), ("titles, k = 1", titles, 1)):
        a: list[list[float]] = []
        b: list[list[float]] = []
        for i, q in enumerate(sample):
            if i % 2:
                b.append(_ask(after, q, k))
                a.append(_ask(before, q, k))
            else:
                a.append(_ask(before, q, k))
                b.append(_ask(after, q, k))
        for j, clock in ((0, "wall"), (1, "cpu")):
            ratio = statistics.median(y[j] / x[j] for x, y in zip(a, b, strict=True))
            print(f"{name}, {clock}: before p50 {statistics.median(x[j] for x in a):.2f} ms, "
                  f"after p50 {statistics.median(y[j] for y in b):.2f} ms, "
                  f"after/before {ratio:.3f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5], *(int(x) for x in sys.argv[5:6]))
