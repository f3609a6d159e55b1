"""The dialogue dev set (issue 36): the generator's determinism and structure, the scorer on
hand-made rankings, and an end-to-end tiny run on a real store."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
from pathlib import Path

import pytest
from rich.console import Console

from vigente.bench._dialogue import (
    CATEGORIES,
    HALVES,
    Dialogue,
    Question,
    dialogue,
    resolve_relative,
)
from vigente.bench.dialogue import BENCHMARK, Ranked, _Baselines, score


@pytest.fixture(scope="module")
def pair() -> dict[str, Dialogue]:
    return {half: dialogue(half, 0) for half in HALVES}


def test_same_seed_same_data() -> None:
    a, b = dialogue("fitted", 1), dialogue("fitted", 1)
    assert a == b
    assert a.events() == b.events()
    assert dialogue("fitted", 2) != a


def test_shape(pair: dict[str, Dialogue]) -> None:
    for d in pair.values():
        assert 20 <= len(d.sessions) <= 35
        span = (d.sessions[-1] - d.sessions[0]).days
        assert 180 <= span <= 366
        assert 400 <= len(d.turns) <= 800
        assert {t.speaker for t in d.turns} == set(d.people)
        assert {q.category for q in d.questions} == set(CATEGORIES)
        assert all(not t.text.startswith(f"{t.speaker}:") for t in d.turns)
        ats = [t.at for t in d.turns]
        assert ats == sorted(ats) and len(set(ats)) == len(ats)


def test_every_evidence_turn_exists_and_precedes_the_question(
        pair: dict[str, Dialogue]) -> None:
    for d in pair.values():
        turns = {t.id: t for t in d.turns}
        for q in d.questions:
            assert q.evidence, q
            assert all(e in turns for e in q.evidence), q
            assert all(turns[e].at < q.asked_at for e in q.evidence), q
            assert q.person in d.people and q.person in q.text


def test_mid_dialogue_questions_have_later_turns(pair: dict[str, Dialogue]) -> None:
    for d in pair.values():
        mid = [q for q in d.questions if q.mid]
        assert 0.08 <= len(mid) / len(d.questions) <= 0.25
        for q in mid:
            assert q.asked_at < d.end()
            assert any(t.at > q.asked_at for t in d.turns)
        assert all(q.asked_at > d.end() for q in d.questions if not q.mid)


def test_temporal_gold_is_the_relative_date_resolved(pair: dict[str, Dialogue]) -> None:
    for d in pair.values():
        turns = {t.id: t for t in d.turns}
        temporal = [q for q in d.questions if q.category == "temporal"]
        assert temporal
        for q in temporal:
            assert q.relative is not None and q.session_date is not None
            said = [turns[e] for e in q.evidence if q.relative.lower() in turns[e].text.lower()]
            assert said, q
            assert said[0].at.date().isoformat() == q.session_date
            assert q.gold_date == resolve_relative(q.relative, said[0].at.date())


def test_resolve_relative_by_hand() -> None:
    monday = _dt.date(2023, 5, 8)
    assert resolve_relative("last Saturday", monday) == "2023-05-06"
    assert resolve_relative("last Monday", monday) == "2023-05-01"
    assert resolve_relative("yesterday", monday) == "2023-05-07"
    assert resolve_relative("two weeks ago", monday) == "2023-04-24"
    assert resolve_relative("this coming Friday", monday) == "2023-05-12"
    assert resolve_relative("next month", _dt.date(2023, 12, 3)) == "2024-01"
    assert resolve_relative("last month", _dt.date(2023, 1, 3)) == "2022-12"


def test_halves_are_disjoint_in_names_and_wording(pair: dict[str, Dialogue]) -> None:
    fitted = {n for i in range(6) for n in dialogue("fitted", i).people}
    held = {n for i in range(6) for n in dialogue("held-out", i).people}
    assert fitted and held and not fitted & held
    questions = [{q.text.replace(q.person, "X") for q in d.questions} for d in pair.values()]
    assert len(questions[0] & questions[1]) < 0.1 * len(questions[0])


def test_speaker_and_content_variants(pair: dict[str, Dialogue]) -> None:
    d = pair["fitted"]
    field = [json.loads(x) for x in d.events(names="speaker")]
    named = [json.loads(x) for x in d.events(names="content", roles="user")]
    messages = [e for e in field if e["event"] == "message"]
    assert all(e["speaker"] in d.people for e in messages)
    assert {e["role"] for e in messages} == {"user", "assistant"}
    plain = [e for e in named if e["event"] == "message"]
    assert all("speaker" not in e and e["content"].split(":")[0] in d.people for e in plain)
    assert {e["role"] for e in plain} == {"user"}


def _question(evidence: tuple[str, ...], asked: _dt.datetime) -> Question:
    return Question("q", "multi-hop", "Ana", "Which cities has Ana visited?", "Lisbon",
                    evidence, asked, True)


def test_scorer_counts_recall_over_evidence_and_leaks() -> None:
    asked = _dt.datetime(2023, 6, 1, tzinfo=_dt.UTC)
    before, after = asked - _dt.timedelta(days=3), asked + _dt.timedelta(days=3)
    q = _question(("s01-t03", "s04-t07"), asked)
    ranking = [Ranked("s02-t01", before), Ranked("s01-t03", before), Ranked("s09-t02", after)]
    assert score(q, ranking) == (0.5, 1)
    assert score(q, [Ranked("s04-t07", before), Ranked("s01-t03", before)]) == (1.0, 0)
    # past the tenth hit nothing counts, found or leaked
    late = [Ranked(f"x{i}", before) for i in range(10)] + [Ranked("s01-t03", after)]
    assert score(q, late) == (0.0, 0)


def test_baselines_never_rank_a_turn_said_after_the_question(
        pair: dict[str, Dialogue]) -> None:
    d = pair["fitted"]
    base = _Baselines(d, "names", None)
    for q in [q for q in d.questions if q.mid][:10]:
        for r in base.ranked(base.bm25(q)):
            assert r.at <= q.asked_at


def _args(tmp_path: Path, **given: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    BENCHMARK.add_arguments(parser)
    args = parser.parse_args(["--split", "fitted", "--dialogues", "1", "--questions", "25",
                              "--methods", "lexical,bm25", "--db-dir", str(tmp_path / "c")])
    for key, value in given.items():
        setattr(args, key, value)
    return args


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_tiny_run_end_to_end(store_url: str, tmp_path: Path) -> None:
    # the lexical method through the Python API on both backends (--store)
    args = _args(tmp_path, store=store_url, variants="speaker")
    figures = BENCHMARK.run(args, Console(quiet=True))
    half = figures["halves"]["fitted"]
    assert half["shape"]["questions"] == 25
    for method in ("lexical", "bm25 /names", "bm25 /text"):
        row = half["methods"][method]
        assert row["questions"] == 25
        assert 0.0 < row["recall_at_10"] <= 1.0
        assert row["leaks"] == 0


def test_tiny_run_through_the_cli_batch_and_cache(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    args = _args(tmp_path, json_out=out, variants="speaker,content")
    first = BENCHMARK.run(args, Console(quiet=True))
    cached = sorted(p.name for p in (tmp_path / "c").iterdir())
    assert len(cached) == 2 and not [c for c in cached if c.endswith(".partial")]
    again = BENCHMARK.run(_args(tmp_path, variants="speaker,content"), Console(quiet=True))
    methods = first["halves"]["fitted"]["methods"]
    assert methods == again["halves"]["fitted"]["methods"]
    assert {"lexical", "lexical /content"} <= set(methods)
    assert json.loads(out.read_text("utf-8"))["halves"]["fitted"]["methods"] == methods
    BENCHMARK.render(first, Console(quiet=True))
