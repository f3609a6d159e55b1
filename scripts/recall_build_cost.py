"""The recall index's build cost: importing N messages, then the first recall (issue 36).

    PYTHONPATH=src python scripts/recall_build_cost.py --records 100000 [--backend postgres]
        [--embedder onnx-int8]

Prints the import's seconds, the first recall's (what it had to catch up: index rows and, with
--embedder, vectors) and a second recall's. Texts are the BFCL memory turns said again (the
scale part of ``python -m vigente.bench memory``), so a model embeds each distinct text once.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import tempfile
import time
from pathlib import Path

from vigente import Vigente
from vigente.bench.memory import SCENARIOS, T0, _load


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/bfcl-memory"))
    parser.add_argument("--embedder", default="", help="a VIGENTE_EMBEDDER name (default: "
                        "lexical only)")
    parser.add_argument("--embed-on-import", action="store_true")
    args = parser.parse_args()
    sessions, _ = _load(args.data)
    turns = [m["content"] for s in SCENARIOS for session in sessions[s]
             for turn in session["question"] for m in turn]
    c = "scale"
    events = [{"event": "conversation", "id": c, "account": "scale", "at": T0.isoformat()},
              {"event": "participant", "id": "assistant", "model": "m", "conversation": c},
              {"event": "branch", "id": "main", "conversation": c}]
    events += [{"event": "message", "id": f"m{n}", "branch": "main", "role": "user",
                "content": f"{turns[n % len(turns)]} (#{n})", "conversation": c,
                "at": (T0 + _dt.timedelta(seconds=n)).isoformat()}
               for n in range(args.records)]
    lines = [json.dumps(e) for e in events]
    mode = "lexical"
    embedder = None
    if args.embedder:
        os.environ["VIGENTE_EMBEDDER"] = args.embedder
        from vigente.retrieval.embed_choice import chosen_embedder

        embedder, mode = chosen_embedder(), "hybrid"
    with tempfile.TemporaryDirectory() as folder, Vigente.open(Path(folder) / "m.db") as vg:
        rt = vg.runtime
        if args.embed_on_import:
            rt.index_embedder = embedder
        start = time.perf_counter()
        rt.import_events(lines)
        imported = time.perf_counter() - start
        start = time.perf_counter()
        vg.runtime.recall("warm up", conversation=c, mode=mode, embedder=embedder)
        first = time.perf_counter() - start
        start = time.perf_counter()
        vg.runtime.recall("where do I live", conversation=c, mode=mode, embedder=embedder)
        second = time.perf_counter() - start
    print(json.dumps({"records": args.records, "embedder": args.embedder or None,
                      "embed_on_import": args.embed_on_import, "import_s": round(imported, 1),
                      "first_recall_s": round(first, 2), "second_recall_s": round(second, 3),
                      "total_s": round(imported + first, 1)}))


if __name__ == "__main__":
    main()
