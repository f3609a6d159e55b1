"""The knowledge axis only moves forward: an answer once given never changes (DESIGN.md
invariant 2; docs/guarantees.md). On every backend: the issue's four reproductions, and a property
test over arbitrary interleavings of writes, precedence rules and questions."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import HistoryRewriteError, Vigente
from vigente import parse_instant as parse
from vigente.errors import AnsweredHistoryError
from vigente.evidence.documents import NewVersion

NOW = "2026-12-01"  # a pinned clock after every date below


@pytest.fixture
def fresh(request: pytest.FixtureRequest, store_url: str) -> Iterator[Callable[[], Vigente]]:
    """Opens a new, empty store on the test's backend at each call (for hypothesis examples)."""
    opened: list[Vigente] = []

    def open_fresh() -> Vigente:
        if store_url.startswith("postgresql"):
            server = request.getfixturevalue("postgres_server")
            name = f"h_{uuid.uuid4().hex}"
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')  # a generated name, never input
            vg = Vigente.open(server.get_uri(name))
        else:
            vg = Vigente.open(":memory:")
        opened.append(vg)
        return vg

    yield open_fresh
    for vg in opened:
        vg.close()


def ask(vg: Vigente, lineage: str = "lim", **kw: Any) -> dict[str, Any]:
    e = vg.evidence(lineage, **kw)
    d = e.as_dict()
    d.pop("decision_id", None)
    d.pop("now")  # when it was asked: the one field that may differ
    return d


# -- the reproductions ------------------------------------------------------------


def test_a_back_dated_source_cannot_rewrite_an_answer_given(vg: Vigente) -> None:
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    before = ask(vg, valid_at="2026-09-10", known_at="2026-09-10")
    assert before["status"] == "supported" and before["values"] == [80]
    with pytest.raises(AnsweredHistoryError) as refused:
        vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-04", source="mirror")
    message = str(refused.value)
    assert "2026-09-10" in message and "after" in message and "--backfill" in message
    assert ask(vg, valid_at="2026-09-10", known_at="2026-09-10") == before
    assert [v.source for v in vg.history("lim")] == ["policy"]  # nothing half-written
    # learned late, recorded as known from after the horizon: accepted, the old answer stays
    vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-11", source="mirror")
    assert ask(vg, valid_at="2026-09-10", known_at="2026-09-10") == before
    assert ask(vg, valid_at="2026-09-10", known_at="2026-09-11")["status"] == "conflict"


def test_a_write_learned_now_is_dated_after_every_answer_given(vg: Vigente) -> None:
    """Without a knowledge time a write is learned now, dated by the store inside its own
    transaction: after every answer already given as known now, which wrote nothing."""
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    backfills = vg.backfills()
    e = vg.evidence("lim", valid_at="2026-09-10")  # as known now: fixes nothing, writes nothing
    assert vg.answered_horizon() is None and vg.backfills() == backfills
    before = ask_at(vg, e.known_at)  # asked again at an explicit time: that is fixed
    result = vg.record("lim", 90, valid_from="2026-09-01", source="mirror")
    (appended,) = result.appended
    assert appended.known_from > e.known_at
    assert ask_at(vg, e.known_at) == before
    assert vg.backfills() == backfills  # a write learned now is no backfill
    assert ask(vg, valid_at="2026-09-10")["status"] == "conflict"


def ask_at(vg: Vigente, k: object) -> dict[str, Any]:
    d = ask(vg, valid_at="2026-09-10", known_at=str(k))
    return {key: d[key] for key in ("status", "values", "admitted", "excluded")}


def test_a_back_dated_write_after_an_answer_as_known_now_is_a_recorded_backfill(
    vg: Vigente,
) -> None:
    """An answer as known now leaves no trace, so a write the caller dates before the store's
    clock may change it: such a write is never silent, it is recorded as a backfill naming the
    knowledge times it wrote."""
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    (first,) = vg.backfills()
    assert first.kind == "back-dated" and str(first.earliest) == "2026-09-03"
    e = vg.evidence("lim", valid_at="2026-09-10")
    vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-05", source="mirror")
    _, second = vg.backfills()
    assert second.kind == "back-dated" and str(second.earliest) == "2026-09-05"
    assert second.recorded_at > e.known_at and second.earliest <= e.known_at
    assert "answers given as known now" in second.reason
    assert ask_at(vg, e.known_at)["status"] == "conflict"  # changed, and the backfill says so


def test_precedence_is_learned_now_by_default_and_back_dated_by_backfill(vg: Vigente) -> None:
    """The README's order: facts, a plain ask, then a precedence rule dated in the past. A rule
    without a knowledge time is learned now; a back-dated one is recorded as a backfill; behind an
    answer at an explicit past date it needs a reason."""
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-03", source="mirror")
    assert vg.evidence("lim", valid_at="2026-09-10").status.value == "conflict"
    rule = vg.set_precedence(["policy", "mirror"], known_at="2026-09-28")
    assert str(rule.known_from) == "2026-09-28"
    assert vg.backfills()[-1].reason.startswith("precedence rule:")
    now_rule = vg.set_precedence(["mirror", "policy"])
    assert now_rule.known_from > parse("2026-12-01")
    assert vg.evidence("lim", valid_at="2026-09-10").values == (90,)
    before = ask(vg, valid_at="2026-09-10", known_at="2026-10-01")  # an audit: fixes 2026-10-01
    assert before["values"] == [80]
    with pytest.raises(AnsweredHistoryError, match="--backfill"):
        vg.set_precedence(["policy", "mirror"], known_at="2026-09-30", lineage="lim")
    assert ask(vg, valid_at="2026-09-10", known_at="2026-10-01") == before
    vg.set_precedence(["mirror", "policy"], known_at="2026-09-30", lineage="lim",
                      backfill="the board's minutes, found late")
    recorded = vg.backfills()[-1]
    assert recorded.kind == "precedence" and recorded.reason == "the board's minutes, found late"
    assert recorded.as_dict()["behind_horizon"] is True


def test_a_back_dated_precedence_rule_cannot_rewrite_an_answer_given(vg: Vigente) -> None:
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-03", source="mirror")
    before = ask(vg, valid_at="2026-09-10", known_at="2026-09-10")
    assert before["status"] == "conflict"
    with pytest.raises(HistoryRewriteError, match="2026-09-10"):
        vg.set_precedence(["policy", "mirror"], known_at="2026-09-01")
    assert ask(vg, valid_at="2026-09-10", known_at="2026-09-10") == before


def test_a_rule_decides_only_between_the_sources_it_names(vg: Vigente) -> None:
    for value, source in ((80, "policy"), (90, "mirror"), (70, "third")):
        vg.record("lim", value, valid_from="2026-09-01", known_at="2026-09-03", source=source)
    vg.set_precedence(["policy", "mirror"], known_at="2026-09-05", now=NOW)
    e = vg.evidence("lim", valid_at="2026-09-10", known_at="2026-09-10", now=NOW)
    assert e.status.value == "conflict"
    assert sorted(e.values) == [70, 80]  # type: ignore[type-var]
    assert e.precedence is not None
    assert [v.source for v in e.precedence.overruled] == ["mirror"]
    # with only the named sources in conflict, the rule settles it
    vg.retract("lim", valid_from="2026-09-01", known_at="2026-09-12", source="third", now=NOW)
    e = vg.evidence("lim", valid_at="2026-09-10", known_at="2026-09-12", now=NOW)
    assert e.status.value == "supported" and e.values == (80,)


def test_an_answer_as_known_at_k_shows_nothing_learned_after_k(vg: Vigente) -> None:
    vg.record("x", 50, valid_from="2026-01-01", known_at="2026-01-05", source="s")
    asked_then = ask(vg, "x", valid_at="2026-04-01", known_at="2026-02-01", now="2026-02-01")
    vg.record("x", 80, valid_from="2026-03-01", known_at="2026-03-10", source="s")
    asked_later = ask(vg, "x", valid_at="2026-04-01", known_at="2026-02-01", now=NOW)
    for d in (asked_then, asked_later):
        assert [r["known_to"] for r in d["admitted"]] == [None]
        assert d["excluded"] == []
    keys = ("status", "values", "admitted", "excluded")  # the statement words "now"
    assert {k: asked_later[k] for k in keys} == {k: asked_then[k] for k in keys}


def test_a_document_version_published_behind_the_horizon_is_learned_now(vg: Vigente) -> None:
    """A version published before an answer already given is known from its recording (its
    publication date kept): the earlier answer stays, later answers see it. On a pinned clock
    behind the horizon it is refused."""
    vg.documents.add(NewVersion(lineage_id="circ", text="First.", reference="C 1/2026",
                                valid_from="2026-02-01", published="2026-01-20"))

    def in_force(**kw: Any) -> dict[str, Any]:
        d = vg.documents.evidence("circ", valid_at="2026-03-01", **kw).as_dict()
        d.pop("decision_id"), d.pop("now")
        return d

    before = in_force(known_at="2026-03-01")
    second = NewVersion(lineage_id="circ", text="Second.", reference="C 2/2026",
                        valid_from="2026-02-15", published="2026-02-10",
                        relation="supersedes", predecessor="C 1/2026")
    with pytest.raises(AnsweredHistoryError, match="2026-03-01"):
        vg.documents.add(second, now="2026-02-20")
    added = vg.documents.add(second)
    assert str(added.published) == "2026-02-10"
    assert added.learned is not None and added.learned > parse("2026-03-01")
    assert added.as_dict()["learned"] == added.learned.isoformat()
    assert vg.documents.get(added.version_id) == added
    assert in_force(known_at="2026-03-01") == before
    now = in_force()
    assert [r["reference"] for r in now["admitted"]] == ["C 2/2026"]
    assert vg.documents.add(second) == added  # added again: the same version, as stored


def test_a_pinned_present_is_not_fixed_but_a_past_moment_is(vg: Vigente) -> None:
    """With a pinned clock the answer as known at the pinned moment is the current one (the
    pinned clock never leaves it); a knowledge time before it is fixed at once."""
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    ask(vg, valid_at="2026-09-29", known_at="2026-09-29", now="2026-09-29")
    assert vg.answered_horizon() is None
    vg.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-25", source="mirror")
    ask(vg, valid_at="2026-09-02", known_at="2026-09-20", now="2026-09-29")
    assert str(vg.answered_horizon()) == "2026-09-20"
    with pytest.raises(AnsweredHistoryError):
        vg.record("lim", 70, valid_from="2026-09-01", known_at="2026-09-20", source="third")


def test_a_backfill_is_explicit_and_recorded(vg: Vigente) -> None:
    vg.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="policy")
    ask(vg, valid_at="2026-09-10", known_at="2026-09-10")
    line = ('{"op": "record", "lineage": "lim", "value": 90, "source": "mirror", '
            '"valid_from": "2026-09-01", "known_at": "2026-09-04"}')
    back_dated = vg.backfills()  # the first record, dated before the store's clock
    assert [b.kind for b in back_dated] == ["back-dated"]
    with pytest.raises(AnsweredHistoryError, match="line 1"):
        vg.import_lines([line])
    assert vg.backfills() == back_dated  # refused: nothing recorded either
    report = vg.import_lines([line], backfill="mirror's archive, found in the 2026 audit")
    assert report.applied == 1
    (_, backfill) = vg.backfills()
    assert backfill.kind == "import" and backfill.statements == 1
    assert backfill.as_dict()["behind_horizon"] is True
    assert str(backfill.earliest) == "2026-09-04" and str(backfill.horizon) == "2026-09-10"
    assert backfill.reason == "mirror's archive, found in the 2026 audit"


def test_a_search_fixes_the_horizon_too(vg: Vigente) -> None:
    vg.record("svc/upload-limit-mb", 80, valid_from="2026-09-01", known_at="2026-09-03",
              source="policy")
    found = vg.search("upload limit", valid_at="2026-09-10", known_at="2026-09-10")
    assert [h.value for h in found.hits] == [80]
    assert str(vg.answered_horizon()) == "2026-09-10"
    with pytest.raises(AnsweredHistoryError):
        vg.record("svc/upload-limit-mb", 90, valid_from="2026-09-01", known_at="2026-09-05",
                  source="mirror")


def test_a_question_waits_for_a_write_in_flight(store_url: str) -> None:
    """A question fixes the horizon only once the writes in flight have committed, so its
    answer already holds them: a writer that checked the horizon before the question cannot
    commit behind it. (The pause gives a question that did not wait the time to answer first;
    the assertions do not depend on how long anything takes.)"""
    with Vigente.open(store_url) as writer, Vigente.open(store_url) as reader:
        writer.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="p")
        holding, release = threading.Event(), threading.Event()
        answers: list[dict[str, Any]] = []

        def write() -> None:
            with writer.transaction():
                writer.record("lim", 90, valid_from="2026-09-01", known_at="2026-09-05",
                              source="q")
                holding.set()
                release.wait(30)

        def question() -> None:
            answers.append(ask(reader, valid_at="2026-09-10", known_at="2026-09-10"))

        writing = threading.Thread(target=write)
        writing.start()
        assert holding.wait(30)
        asking = threading.Thread(target=question)
        asking.start()
        asking.join(0.5)  # a question that does not wait answers here, before the commit
        release.set()
        writing.join(30)
        asking.join(30)
        (answer,) = answers
        assert answer["status"] == "conflict" and sorted(answer["values"]) == [80, 90]
        assert ask(reader, valid_at="2026-09-10", known_at="2026-09-10") == answer


def test_an_ask_as_known_now_takes_no_lock_and_is_dated_before_a_write_in_flight(
    store_url: str,
) -> None:
    """While a writer holds its transaction, a question as known now answers at once (it takes
    no lock and writes nothing), as known just before that write: asked again at its knowledge
    time after the write commits, the answer is the same."""
    with Vigente.open(store_url) as writer, Vigente.open(store_url) as reader:
        writer.record("lim", 80, valid_from="2026-09-01", known_at="2026-09-03", source="p")
        holding, release = threading.Event(), threading.Event()
        stamps: list[Any] = []

        def write() -> None:
            with writer.transaction():
                stamps.extend(writer.record("lim", 90, valid_from="2026-09-01",
                                            source="q").appended)
                holding.set()
                release.wait(60)

        writing = threading.Thread(target=write)
        writing.start()
        assert holding.wait(30)
        try:
            answered = reader.evidence("lim", valid_at="2026-09-10")  # would block on a lock
            still_holding = not release.is_set() and writing.is_alive()
        finally:
            release.set()
            writing.join(30)
        assert still_holding
        assert answered.values == (80,)
        assert reader.answered_horizon() is None  # nothing was fixed, nothing written
        (in_flight,) = stamps
        assert answered.known_at < in_flight.known_from
        again = reader.evidence("lim", valid_at="2026-09-10", known_at=answered.known_at)
        assert again.values == answered.values and again.status == answered.status
        assert reader.evidence("lim", valid_at="2026-09-10").status.value == "conflict"


# -- the general guarantee, over arbitrary interleavings ------------------------------------

DAY0 = dt.date(2026, 1, 1)
LINEAGES = ("a", "b")
SOURCES = ("p", "q", "r")


def day(n: int) -> str:
    return (DAY0 + dt.timedelta(days=n)).isoformat()


@dataclass(frozen=True)
class Op:
    kind: str  # record, retract, precedence, ask
    lineage: str
    source: str
    value: int
    start: int
    end: int | None
    known: int
    pinned: bool  # asks: a pinned clock (NOW) or the real one
    order: tuple[str, ...] = ()


ops = st.builds(
    Op,
    kind=st.sampled_from(["record", "record", "retract", "precedence", "ask", "ask", "ask"]),
    lineage=st.sampled_from(LINEAGES),
    source=st.sampled_from(SOURCES),
    value=st.integers(0, 2),
    start=st.integers(0, 20),
    end=st.one_of(st.none(), st.integers(21, 30)),
    known=st.integers(0, 30),
    pinned=st.booleans(),
    order=st.permutations(SOURCES).map(lambda s: tuple(s[:2])),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(ops, min_size=1, max_size=14))
def test_no_write_changes_an_answer_once_given(fresh: Callable[[], Vigente], steps: list[Op]
                                               ) -> None:
    """Whatever writes are attempted, in whatever order and with whatever knowledge dates, every
    answer given before is given again identically; a refused write leaves the store as it was."""
    vg = fresh()
    given_answers: dict[tuple[str, int, int, bool], dict[str, Any]] = {}
    accepted = 0
    for op in steps:
        if op.kind == "ask":
            key = (op.lineage, op.start, op.known, op.pinned)
            answer = ask(vg, op.lineage, valid_at=day(op.start), known_at=day(op.known),
                         **({"now": NOW} if op.pinned else {}))
            if not op.pinned:
                answer.pop("interpretation"), answer.pop("statement")  # words "now"
            given_answers.setdefault(key, answer)
        else:
            history = {lineage: vg.history(lineage) for lineage in LINEAGES}
            try:
                if op.kind == "precedence":
                    vg.set_precedence(op.order, known_at=day(op.known), now=NOW)
                elif op.kind == "record":
                    vg.record(op.lineage, op.value, valid_from=day(op.start),
                              valid_to=None if op.end is None else day(op.end),
                              known_at=day(op.known), source=op.source, now=NOW)
                else:
                    vg.retract(op.lineage, valid_from=day(op.start), known_at=day(op.known),
                               source=op.source, now=NOW)
                accepted += 1
            except HistoryRewriteError:
                assert {lineage: vg.history(lineage) for lineage in LINEAGES} == history
        for (lineage, t, k, pinned), before in given_answers.items():
            again = ask(vg, lineage, valid_at=day(t), known_at=day(k),
                        **({"now": NOW} if pinned else {}))
            if not pinned:
                again.pop("interpretation"), again.pop("statement")
            assert again == before, (lineage, t, k, pinned)
