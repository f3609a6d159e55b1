"""A smoke run of ``python -m vigente.bench retrieval`` on a tiny sample of the real data (the
real importer, tokenizer and model); no timing is asserted."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from tests.conftest import LEGALIZE_EE_CORPUS, SHARED_DATA, shared_file
from vigente.bench.__main__ import main
from vigente.bench.retrieval import exact_match

KEYS = {
    "legalize_ee_top1", "legalize_ee_top1_similarity_only", "legalize_ee_top1_latest",
    "situatedqa_accuracy", "situatedqa_accuracy_similarity_only", "search_p50_ms_lexical",
    "search_p50_ms_hybrid", "legalize_ee_exact_title_top1", "legalize_ee_exact_reference_top1",
}


def sample(tmp_path: Path, acts: int, timelines: int) -> tuple[Path, Path]:
    ee = tmp_path / "versions.jsonl.xz"
    seen: set[str] = set()
    corpus = shared_file(LEGALIZE_EE_CORPUS)
    situatedqa = shared_file(SHARED_DATA / "situatedqa" / "temp.dev.jsonl")
    with lzma.open(corpus, "rt") as source, \
            lzma.open(ee, "wt") as target:
        for line in source:
            act = json.loads(line)["act"]
            if act not in seen and len(seen) == acts:
                break
            seen.add(act)
            target.write(line)
    qa = tmp_path / "temp.dev.jsonl"
    rows = [line for line in situatedqa.read_text()
            .splitlines() if '"timelines": [{' in line]
    qa.write_text("\n".join(rows[:timelines]) + "\n")
    return ee, qa


def test_the_benchmark_runs_on_a_tiny_sample(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    ee, qa = sample(tmp_path, acts=6, timelines=8)
    assert main(["retrieval", "--legalize-ee", str(ee), "--situatedqa", str(qa),
                 "--queries", "12", "--latency-queries", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert KEYS <= figures.keys()
    assert figures["legalize_ee_acts"] == 6 and figures["legalize_ee_queries"] >= 12
    for key in KEYS - {"search_p50_ms_lexical", "search_p50_ms_hybrid"}:
        assert 0.0 <= figures[key] <= 1.0
    assert figures["legalize_ee_exact_title_queries"] >= 1
    assert "legalize_ee_exact_title_p50_ms" in figures
    # the temporal filter never does worse than relevance alone on these queries
    assert figures["legalize_ee_top1"] >= figures["legalize_ee_top1_similarity_only"]
    assert figures["situatedqa_accuracy"] >= figures["situatedqa_accuracy_similarity_only"]


def test_exact_match_normalises_like_squad() -> None:
    assert exact_match(["The Kansas City Royals"], ["kansas city royals"])
    assert exact_match("2018", ["2018", "2018"])
    assert not exact_match(["1990"], ["2018"])
