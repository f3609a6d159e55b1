"""No client clock runs ahead of the store's (issue 35, item 1), on every backend.

A ``now`` or a knowledge time after the store's clock (beyond the documented skew) froze a
lineage (every later write was dated before it), moved the answered horizon into the future
(every write "learned now" was then dated there, invisible to present-day answers) or gave a
recall whose answer changed with later writes. Every surface refuses them now; a store that
already holds such knowledge is found by ``vigente check`` and repaired by ``--repair``,
recorded."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.cli import cli
from vigente.errors import (
    ClockAheadError,
    FutureKnowledgeError,
    HistoryRewriteError,
    ImportFileError,
)
from vigente.evidence.documents import NewVersion
from vigente.kernel.ledger import apply_write, statement
from vigente.records.values import Scope
from vigente.time import CLOCK_SKEW_SECONDS, Instant, current_instant, parse_instant

FUTURE = "9999-12-31T23:59:59Z"
NEXT_YEAR = (dt.datetime.now(dt.UTC) + dt.timedelta(days=365)).date().isoformat()
LINE = ('{"op": "record", "lineage": "lim", "value": 7, "source": "feed", '
        '"valid_from": "2026-01-01"}')
DOC = dict(lineage_id="circ", text="A rule.", reference="C 9/2026", valid_from="2026-02-01",
           published="2026-01-20")


def _seed(vg: Vigente) -> str:
    vg.record("lim", 10, valid_from="2026-01-01", source="policy")
    vg.documents.add(NewVersion(**DOC))  # type: ignore[arg-type]
    item = vg.review.submit("Circular 4/2026 on archives. In force from 1 March 2026. "
                            "Published 2 February 2026.", filename="c4.txt")
    vg.runtime.open_conversation("conv", "acct")
    vg.runtime.fork_branch("conv", "main")
    vg.runtime.record_message("conv", "m1", branch="main", role="user",
                              content="What is my balance?")
    return item.proposal_id


def _state(vg: Vigente) -> tuple[Any, ...]:
    return (vg.history("lim"), vg.answered_horizon(), vg.backfills(),
            vg.documents.versions("circ"), [i.proposal_id for i in vg.review.list()])


#: Every way a caller hands the store a clock or a knowledge time, with a moment in the future.
ATTEMPTS: dict[str, Callable[[Vigente, str, str], object]] = {
    "record now": lambda vg, at, _: vg.record("lim", 1, valid_from="2026-01-01",
                                              source="x", now=at),
    "record known_at": lambda vg, at, _: vg.record("lim", 1, valid_from="2026-01-01",
                                                   source="x", known_at=at),
    "retract now": lambda vg, at, _: vg.retract("lim", valid_from="2026-01-01",
                                                source="policy", now=at),
    "import now": lambda vg, at, _: vg.import_lines([LINE], now=at),
    "import known_at": lambda vg, at, _: vg.import_lines(
        [LINE.replace("}", f', "known_at": "{at}"}}')]),
    "precedence now": lambda vg, at, _: vg.set_precedence(["a", "b"], now=at),
    "precedence known_at": lambda vg, at, _: vg.set_precedence(["a", "b"], known_at=at),
    "ask now": lambda vg, at, _: vg.evidence("lim", valid_at="2026-02-01", now=at),
    "ask known_at": lambda vg, at, _: vg.evidence("lim", valid_at="2026-02-01", known_at=at),
    "ask known_at and now": lambda vg, at, _: vg.evidence(
        "lim", valid_at="2026-02-01", known_at="9000-01-01", now=at),
    "document add now": lambda vg, at, _: vg.documents.add(
        NewVersion(**{**DOC, "text": "Another rule.", "reference": "C 10/2026"}),  # type: ignore[arg-type]
        now=at),
    "document import now": lambda vg, at, _: vg.documents.import_lines(
        ['{"lineage_id": "circ2", "text": "T.", "reference": "R 1", "valid_from": '
         '"2026-02-01", "published": "2026-01-02"}'], now=at),
    "document evidence known_at": lambda vg, at, _: vg.documents.evidence(
        "circ", valid_at="2026-03-01", known_at=at),
    "review approve now": lambda vg, at, proposal: vg.review.approve(proposal, now=at),
    "search now": lambda vg, at, _: vg.search("rule", valid_at="2026-03-01", now=at),
    "search known_at": lambda vg, at, _: vg.search("rule", valid_at="2026-03-01", known_at=at),
    "recall known_at": lambda vg, at, _: vg.runtime.recall("balance", conversation="conv",
                                                           known_at=at),
    "runtime gc now": lambda vg, at, _: vg.runtime.gc(now=at),
}


@pytest.mark.parametrize("at", [FUTURE, NEXT_YEAR])
@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_no_clock_ahead_of_the_stores_is_taken(vg: Vigente, attempt: str, at: str) -> None:
    proposal = _seed(vg)
    before = _state(vg)
    with pytest.raises((FutureKnowledgeError, ImportFileError)) as refused:
        ATTEMPTS[attempt](vg, at, proposal)
    if isinstance(refused.value, ImportFileError):  # a line's own date: named by its line
        assert attempt == "import known_at" and str(refused.value).startswith("line 1:")
    else:
        assert isinstance(refused.value, ClockAheadError), refused.value
    message = str(refused.value)
    assert "store's clock" in message and "Omit" in message
    assert _state(vg) == before  # nothing stored, nothing fixed
    # and the lineage is not frozen: a write learned now lands and is the answer as known now
    vg.record("lim", 11, valid_from="2026-01-01", source="policy")
    assert vg.evidence("lim", valid_at="2026-02-01").values == (11,)


def test_a_clock_within_the_skew_is_accepted(vg: Vigente) -> None:
    ahead = Instant(current_instant().micros + (CLOCK_SKEW_SECONDS - 2) * 1_000_000)
    vg.record("lim", 10, valid_from="2026-01-01", source="policy", now=ahead)
    assert vg.evidence("lim", valid_at="2026-02-01", now=ahead).values == (10,)


instants = st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30),
                        timezones=st.just(dt.UTC)).map(lambda d: d.isoformat())


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(["ask", "ask_now", "record", "precedence"]),
                                instants, instants), min_size=1, max_size=8))
def test_the_answered_horizon_never_passes_the_stores_clock(
    vg: Vigente, steps: list[tuple[str, str, str]]
) -> None:
    """Whatever moments a caller gives, the horizon and every stored knowledge time stay at or
    before the store's clock (plus the skew): no write learned now can be dated in the future."""
    for kind, known, now in steps:
        try:
            if kind == "ask":
                vg.evidence("p", valid_at="2026-01-01", known_at=known)
            elif kind == "ask_now":
                vg.evidence("p", valid_at="2026-01-01", known_at=known, now=now)
            elif kind == "record":
                vg.record("p", 1, valid_from="2026-01-01", source="s", known_at=known, now=now)
            else:
                vg.set_precedence(["s", "t"], known_at=known, lineage="p")
        except (FutureKnowledgeError, HistoryRewriteError):
            pass
        limit = current_instant().micros + CLOCK_SKEW_SECONDS * 1_000_000
        horizon = vg.answered_horizon()
        assert horizon is None or horizon.micros <= limit
        assert [f for f in vg.check() if f.problem == "future"] == []
    written = vg.record("p", 2, valid_from="2026-01-01", source="s")
    assert all(v.known_from.micros <= current_instant().micros for v in written.appended)


def _plant_future_knowledge(vg: Vigente) -> None:
    """What a store written before the rule holds: a fact learned "at" 9000 and a horizon fixed
    there (the kernel's own write path, without the surface's check)."""
    far = parse_instant("9000-01-01")
    write = statement("record", "lim", "99", scope=Scope.of(None), source="policy",
                      valid_from=parse_instant("2026-01-01"), valid_to=None, known_at=far)
    with vg.store.transaction():
        apply_write(vg.store, write)
    vg.store.fix_answered_horizon(far)


def test_check_finds_future_knowledge_and_repair_moves_it_to_now(vg: Vigente) -> None:
    vg.record("lim", 10, valid_from="2026-01-01", source="policy")
    _plant_future_knowledge(vg)
    frozen = vg.record("lim", 11, valid_from="2026-01-01", source="mirror")
    assert frozen.appended[0].known_from > parse_instant("9000-01-01")  # learned "in 9000"
    assert vg.evidence("lim", valid_at="2026-02-01").values == (10,)  # 99 and 11: unseen
    found = vg.check()
    tables = {(f.table, f.column) for f in found if f.problem == "future"}
    assert {("versions", "known_from"), ("writes", "known_at"),
            ("knowledge_horizon", "answered")} <= tables
    before = current_instant()
    repaired = vg.check(repair=True)
    assert len(repaired) == len(found)
    assert all(parse_instant(str(r.repaired_to)) >= before for r in repaired)
    assert vg.check() == []
    assert vg.answered_horizon() is not None and vg.answered_horizon() <= current_instant()
    e = vg.evidence("lim", valid_at="2026-02-01")
    # policy's 99 replaced its 10 (now from the repair on); mirror's 11 is seen again
    assert e.status.value == "conflict" and sorted(e.values) == [11, 99]  # type: ignore[type-var]
    vg.record("lim", 12, valid_from="2026-01-01", source="third")  # learned now, seen now
    assert 12 in vg.evidence("lim", valid_at="2026-02-01").values
    (decision,) = [d for d in vg.store.decisions(10) if d.kind == "store_repair"]
    assert {r["problem"] for r in decision.payload["repaired"]} == {"future"}


def test_the_check_command_names_future_knowledge(vg: Vigente, store_url: str) -> None:
    vg.record("lim", 10, valid_from="2026-01-01", source="policy")
    _plant_future_knowledge(vg)
    runner = CliRunner()
    found = runner.invoke(cli, ["--db", store_url, "check"])
    assert found.exit_code == 1 and "future knowledge: versions" in found.output
    assert "after the store's clock" in found.output
    repaired = runner.invoke(cli, ["--db", store_url, "check", "--repair"])
    assert repaired.exit_code == 0, repaired.output
    assert runner.invoke(cli, ["--db", store_url, "check"]).exit_code == 0
