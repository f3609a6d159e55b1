"""Conformance of the kernel ledger's contracts (:mod:`vigente.store.contracts.ledger`): the
journal and its versions on both time axes, precedence rules, the answered horizon, integrity
and the decision log.

The behaviour the kernel relies on: history is append-only on both axes (a correction closes
the version it replaces, never overwrites it); the candidates of an answer at ``(t, k)`` are
exactly the rows the contract names; an answer once given never changes, so a write dated at
or before the answered horizon is refused unless it is a recorded backfill.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente.api import Vigente
from vigente.errors import AnsweredHistoryError, HistoryRewriteError, ImportFileError
from vigente.records.decisions import Decision
from vigente.records.ledger import Backfill
from vigente.records.values import Scope
from vigente.records.versions import Version
from vigente.store.base import Store
from vigente.store.contracts import (
    AnswerHorizon,
    DecisionLog,
    Integrity,
    PrecedenceRules,
    Timeline,
    VersionLedger,
    Write,
)
from vigente.testing.base import KERNEL, NOW, Conformance, Contracts, StoreFactory, at, facade
from vigente.time import Instant, Interval

__all__ = [
    "AnswerHorizonConformance",
    "DecisionLogConformance",
    "IntegrityConformance",
    "PrecedenceRulesConformance",
    "VersionLedgerConformance",
    "candidates_by_definition",
]

IT = Scope.of({"country": "it"})
#: The dates the candidate checks ask about: before, on and between every date of the history.
DATES = ["2023-12-01", "2024-01-01", "2024-02-15", "2024-03-01", "2024-04-10", "2024-06-01",
         "2024-07-01", "2024-09-01", "2025-01-01", NOW]  # fmt: skip
_OPEN = 1 << 62  # after every instant: an open end
#: The health checks a property test of the kit does not need. Its fixtures are per test, not
#: per example, on purpose (one store for every example, or a fresh one opened per example);
#: and one test runs from every backend's class that inherits it, whose examples are valid
#: on any backend (a failing one found on one is replayed on the others, which is welcome).
PROPERTY_CHECKS_SUPPRESSED = [HealthCheck.function_scoped_fixture,
                              HealthCheck.differing_executors]


def _end(instant: Instant | None) -> int:
    return _OPEN if instant is None else instant.micros


def candidates_by_definition(history: Sequence[Version], scope: Scope, t: Instant,
                             k: Instant) -> list[Version]:
    """What :meth:`VersionLedger.candidates` returns at ``(t, k)``, read off every version of
    the lineage (``history``, in insertion order) by the contract's definition."""
    same = [v for v in history if v.scope == scope]
    valid = [v for v in same if v.valid_at(t) and v.was_ever_known()]
    known = [v for v in same if v.known_at(k)]
    # the edges: the knowledge that ended last by k and began first after it (of the versions
    # valid at t); the validity that ended last by t and begins first after it (known at k)
    replaced = max((_end(v.known_to) for v in valid if _end(v.known_to) <= k.micros),
                   default=None)
    learned = min((v.known_from.micros for v in valid if v.known_from > k), default=None)
    ended = max((_end(v.valid_to) for v in known if _end(v.valid_to) <= t.micros),
                default=None)
    starts = min((v.valid_from.micros for v in known if v.valid_from > t), default=None)
    chosen = {v.version_id for v in known if v.valid_at(t)}  # admitted
    chosen |= {v.version_id for v in valid
               if _end(v.known_to) == replaced or v.known_from.micros == learned}
    chosen |= {v.version_id for v in known
               if _end(v.valid_to) == ended or v.valid_from.micros == starts}
    chosen |= {v.version_id for v in history  # admissible in another scope
               if v.scope != scope and v.valid_at(t) and v.known_at(k)}
    return [v for v in history if v.version_id in chosen]


_DAY0 = dt.date(2025, 1, 1)


def _day(n: int) -> str:
    """Day ``n`` of the property tests' calendar (from 1 January 2025, before :data:`NOW`)."""
    return (_DAY0 + dt.timedelta(days=n)).isoformat()


def _interval(start: str, end: str | None) -> Interval:
    return Interval(at(start), None if end is None else at(end))


def _write(known_at: str) -> Write:
    return Write("record", "raw", Scope(), "s", "1", at("2024-01-01"), None, at(known_at))


def _decision(n: int, payload: dict[str, Any]) -> Decision:
    return Decision(f"dec-kit-{n}", "evidence", "rate", at(f"2024-01-0{n}T10:00:00.00000{n}Z"),
                    payload)


def _ask(vg: Vigente, lineage: str, valid_at: str, known_at: str) -> dict[str, Any]:
    """An answer as the facade gives it, without the two fields that say when it was asked."""
    answer = vg.evidence(lineage, valid_at=valid_at, known_at=known_at, now=NOW).as_dict()
    answer.pop("decision_id", None)
    answer.pop("now")
    return answer


@dataclass(frozen=True)
class _Step:
    """One step of :meth:`AnswerHorizonConformance.test_no_write_changes_an_answer_once_given`:
    a write, a precedence rule or a question."""

    kind: str
    lineage: str
    source: str
    value: int
    start: int
    known: int


def _attempt(vg: Vigente, step: _Step) -> None:
    """Make the write of ``step``; when it is refused, check that nothing was written."""
    store = vg.store
    before = {lineage: store.history(lineage) for lineage in ("a", "b")}
    try:
        if step.kind == "precedence":
            order = ("p", "q") if step.value else ("q", "p")
            vg.set_precedence(order, known_at=_day(step.known), now=NOW)
        elif step.kind == "record":
            vg.record(step.lineage, step.value, valid_from=_day(step.start),
                      known_at=_day(step.known), source=step.source, now=NOW)
        else:
            vg.retract(step.lineage, valid_from=_day(step.start), known_at=_day(step.known),
                       source=step.source, now=NOW)
    except HistoryRewriteError:
        assert {lineage: store.history(lineage) for lineage in ("a", "b")} == before


def write_history(vg: Vigente, lineage: str) -> None:
    """Corrections on both axes, two sources, two scopes and a retraction (every kind of row
    the candidates of an answer can hold)."""
    _record(vg, lineage, 10, "2024-01-01", "2024-01-01")
    _record(vg, lineage, 12, "2024-06-01", "2024-03-01")
    _record(vg, lineage, 11, "2024-02-15", "2024-07-01", end="2024-04-10")  # a past sub-period
    _record(vg, lineage, 12, "2024-04-10", "2024-09-01")  # a change learned to start earlier
    _record(vg, lineage, 13, "2024-03-01", "2024-03-01", source="b")  # another source
    vg.retract(lineage, valid_from="2024-06-01", valid_to="2024-07-01", known_at="2025-01-01",
               source="b", now=NOW)
    _record(vg, lineage, 9, "2024-01-01", "2024-01-01", scope=IT)


def _record(vg: Vigente, lineage: str, value: int, start: str, known: str, *,
            source: str = "a", end: str | None = None, scope: Scope | None = None) -> None:
    vg.record(lineage, value, valid_from=start, valid_to=end, known_at=known, source=source,
              scope=scope, now=NOW)


class VersionLedgerConformance(Conformance):
    """The journal and its versions: written through the facade, read through the contract."""

    contracts: ClassVar[Contracts] = KERNEL

    def test_a_recorded_value_reads_back_as_written(self, vg: Vigente,
                                                    store: VersionLedger) -> None:
        value = {"mb": 50, "names": ["Zoë", "東京"], "ratio": 0.25, "on": True, "none": None}
        vg.record("svc/limits", value, valid_from="2024-01-01T08:30:00.000001Z",
                  valid_to="2024-06-01", known_at="2024-01-02", source="policy",
                  scope={"env": "prod"}, now=NOW)
        (version,) = store.history("svc/limits")
        assert version.value == value and version.source == "policy"
        assert version.scope == Scope.of({"env": "prod"})
        assert version.valid_from == at("2024-01-01T08:30:00.000001Z")
        assert version.valid_to == at("2024-06-01") and version.valid_to.is_date
        assert version.known_from == at("2024-01-02") and version.known_to is None

    def test_a_correction_closes_the_version_it_replaces(self, vg: Vigente,
                                                         store: VersionLedger) -> None:
        vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-01-01", source="a", now=NOW)
        (first,) = store.history("rate")
        vg.record("rate", 11, valid_from="2024-01-01", known_at="2024-02-01", source="a", now=NOW)
        old, new = store.history("rate")
        assert old.version_id == first.version_id and old.value == 10
        assert (old.valid_from, old.valid_to, old.known_from) == (
            first.valid_from, first.valid_to, first.known_from)  # only its known end was set
        assert old.known_to == new.known_from == at("2024-02-01")
        assert new.value == 11 and new.known_to is None

    def test_a_repeated_statement_changes_nothing(self, vg: Vigente, store: VersionLedger
                                                  ) -> None:
        vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-01-01", source="a", now=NOW)
        before = store.history("rate")
        again = vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-03-01", source="a",
                          now=NOW)
        assert not again.changed and store.history("rate") == before

    def test_knowledge_going_backwards_is_refused_and_writes_nothing(
        self, vg: Vigente, store: VersionLedger
    ) -> None:
        vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-03-01", source="a", now=NOW)
        before = store.history("rate")
        with pytest.raises(HistoryRewriteError):
            vg.record("rate", 9, valid_from="2024-01-01", known_at="2024-02-01", source="a",
                      now=NOW)
        assert store.history("rate") == before
        assert store.latest_knowledge("rate", Scope(), "a") == at("2024-03-01")

    def test_a_refused_import_line_leaves_the_whole_import_unwritten(
        self, vg: Vigente, store: VersionLedger
    ) -> None:
        def line(value: int, known_at: str) -> str:
            return json.dumps({"op": "record", "lineage": "rate", "value": value, "source": "a",
                               "valid_from": "2024-01-01", "known_at": known_at})

        with pytest.raises(ImportFileError, match="line 3"):
            vg.import_lines([line(1, "2024-01-01"), line(2, "2024-02-01"), line(3, "2023-01-01")],
                            now=NOW)
        assert store.history("rate") == [] and store.lineages() == []

    def test_candidates_are_the_rows_the_contract_names(self, vg: Vigente,
                                                        store: VersionLedger) -> None:
        write_history(vg, "rate")
        history = store.history("rate")
        found = 0
        for scope, t, k in itertools.product((Scope(), IT), DATES, DATES):
            got = store.candidates("rate", scope, at(t), at(k))
            assert got == candidates_by_definition(history, scope, at(t), at(k)), (scope, t, k)
            found += len(got)
        assert found > 0
        assert store.candidates("nothing", Scope(), at(NOW), at(NOW)) == []

    @settings(max_examples=20, deadline=None,
              suppress_health_check=PROPERTY_CHECKS_SUPPRESSED)
    @given(st.lists(st.tuples(st.sampled_from(["record", "record", "retract"]),
                              st.sampled_from(["a", "b"]), st.integers(0, 2),
                              st.integers(0, 9), st.one_of(st.none(), st.integers(10, 14)),
                              st.integers(0, 14), st.booleans()),
                    min_size=1, max_size=8))  # fmt: skip
    def test_candidates_follow_the_definition_for_any_history(
        self, vg: Vigente, store: VersionLedger,
        steps: list[tuple[str, str, int, int, int | None, int, bool]],
    ) -> None:
        """Whatever the history, the candidates at every ``(t, k)`` are the contract's rows."""
        lineage = f"any/{uuid.uuid4().hex}"  # one store for every example
        for op, source, value, start, end, known, scoped in steps:
            fields: dict[str, Any] = dict(valid_from=_day(start), known_at=_day(known),
                                          source=source, scope=IT if scoped else None, now=NOW)
            if end is not None:
                fields["valid_to"] = _day(end)
            try:
                if op == "record":
                    vg.record(lineage, value, **fields)
                else:
                    vg.retract(lineage, **fields)
            except HistoryRewriteError:
                pass  # knowledge going backwards on its timeline: refused, as it should be
        history = store.history(lineage)
        for scope, t, k in itertools.product((Scope(), IT), range(-1, 16, 3), range(-1, 16, 3)):
            got = store.candidates(lineage, scope, at(_day(t)), at(_day(k)))
            assert got == candidates_by_definition(history, scope, at(_day(t)), at(_day(k)))

    def test_reads_in_one_go_equal_the_reads_one_by_one(self, vg: Vigente, store: Store
                                                        ) -> None:
        """A backend's own bulk reads (one statement or round trip) return what the contract's
        defaults do with one read each."""
        write_history(vg, "rate")
        timelines = [Timeline("rate", Scope(), "a"), Timeline("rate", Scope(), "b"),
                     Timeline("rate", IT, "a"), Timeline("none", Scope(), "a")]
        assert (store.latest_knowledge_many(timelines)
                == VersionLedger.latest_knowledge_many(store, timelines))
        for start, end in (("2024-01-01", None), ("2024-03-01", "2024-05-01")):
            requests = [(timeline, _interval(start, end)) for timeline in timelines]
            assert (store.current_versions_overlapping_many(requests)
                    == VersionLedger.current_versions_overlapping_many(store, requests))
            assert [store.current_versions_overlapping(*tl, valid) for tl, valid in requests] == [
                VersionLedger.current_versions_overlapping(store, *tl, valid)
                for tl, valid in requests]
        for t, k, e in itertools.product(DATES[::2], DATES[::2], DATES[::3]):
            args = ("rate", Scope(), at(t), at(k), at(e))
            assert store.candidates_and_held(*args) == VersionLedger.candidates_and_held(
                store, *args)

    def test_the_journal_appends_and_the_versions_close(self, store: VersionLedger) -> None:
        """The contract's writes, as the kernel makes them: a statement appended to the
        journal, versions inserted, and the one update there is, closing a known interval."""
        def version(version_id: str, value: int, start: str, end: str | None) -> Version:
            return Version(version_id, "raw", Scope(), "s", str(value), at(start),
                           None if end is None else at(end), at("2024-01-01"), None)

        with store.transaction():
            store.lock_timelines([Timeline("raw", Scope(), "s")])
            first = store.append_write(_write("2024-01-01"))
            second, third = store.append_writes([_write("2024-02-01"), _write("2024-03-01")])
            store.append_versions([version("kit-1", 1, "2024-01-01", "2024-06-01"),
                                   version("kit-2", 2, "2024-06-01", None)])
        assert first < second < third
        assert store.latest_knowledge("raw", Scope(), "s") == at("2024-03-01")
        assert store.latest_knowledge("raw", Scope(), "other") is None
        with store.transaction():
            store.close_versions(["kit-1"], at("2024-03-01"))
        (still_open,) = store.current_versions("raw", Scope(), "s")
        assert still_open.version_id == "kit-2"
        assert store.current_versions_overlapping("raw", Scope(), "s",
                                                  _interval("2024-01-01", "2024-02-01")) == []
        closed, _ = store.history("raw")
        assert closed.known_to == at("2024-03-01") and closed.value == 1
        with store.transaction():
            store.close_versions_at([("kit-2", at("2024-04-01"))])
        assert store.current_versions("raw", Scope(), "s") == []
        assert [v.known_to for v in store.history("raw")] == [at("2024-03-01"), at("2024-04-01")]

    def test_lineages_history_and_versions_by_id(self, vg: Vigente, store: VersionLedger
                                                 ) -> None:
        write_history(vg, "rate")
        vg.record("alpha", 1, valid_from="2024-01-01", known_at="2024-01-01", source="a",
                  now=NOW)
        lineages = store.lineages()
        assert set(lineages) == {("alpha", Scope()), ("rate", Scope()), ("rate", IT)}
        assert lineages == sorted(lineages, key=lambda pair: (pair[0], pair[1].key))
        every = store.history("rate")
        assert [v for v in every if v.scope == IT] == store.history("rate", IT)
        assert [v for v in every if v.scope == Scope()] == store.history("rate", Scope())
        wanted = [every[3].version_id, "no-such-version", every[0].version_id]
        assert store.versions_by_id(wanted) == [every[0], every[3]]  # insertion order


class PrecedenceRulesConformance(Conformance):
    """Precedence rules between sources, versioned on the knowledge axis."""

    contracts: ClassVar[Contracts] = KERNEL

    def test_a_rule_reads_back_and_a_new_one_closes_it(self, vg: Vigente, store: Store) -> None:
        first = vg.set_precedence(["a", "b"], known_at="2024-02-01", now=NOW)
        assert store.precedence_rules(None, Scope()) == [first]
        second = vg.set_precedence(["b", "a"], known_at="2024-03-01", now=NOW)
        old, new = store.precedence_rules(None, Scope())
        assert old.rule_id == first.rule_id and old.sources == ("a", "b")
        assert old.known_to == at("2024-03-01") and new == second

    def test_the_rules_for_a_lineage_come_before_the_scope_wide_ones(self, vg: Vigente,
                                                                    store: Store) -> None:
        wide = vg.set_precedence(["a", "b"], known_at="2024-02-01", now=NOW)
        own = vg.set_precedence(["b", "a"], known_at="2024-02-01", lineage="rate", now=NOW)
        vg.set_precedence(["c", "a"], known_at="2024-02-01", scope=IT, now=NOW)
        assert store.precedence_rules("rate", Scope()) == [own]
        assert store.precedence_rules_for("rate", Scope()) == [own, wide]
        assert store.precedence_rules_for("other", Scope()) == [wide]
        for lineage, scope in (("rate", Scope()), ("rate", IT), ("x", IT)):
            assert (store.precedence_rules_for(lineage, scope)
                    == PrecedenceRules.precedence_rules_for(store, lineage, scope))

    def test_a_rule_resolves_a_conflict_from_its_knowledge_date_on(self, vg: Vigente) -> None:
        vg.record("rate", 80, valid_from="2024-01-01", known_at="2024-01-01", source="a", now=NOW)
        vg.record("rate", 90, valid_from="2024-01-01", known_at="2024-01-01", source="b", now=NOW)
        vg.set_precedence(["b", "a"], known_at="2024-03-01", now=NOW)
        before = vg.evidence("rate", valid_at="2024-06-01", known_at="2024-02-01", now=NOW)
        after = vg.evidence("rate", valid_at="2024-06-01", known_at="2024-04-01", now=NOW)
        assert before.status.value == "conflict"
        assert after.status.value == "supported" and after.values == (90,)


class AnswerHorizonConformance(Conformance):
    """The answered horizon: an answer once given never changes."""

    contracts: ClassVar[Contracts] = KERNEL

    def test_a_fresh_store_has_answered_nothing(self, store: AnswerHorizon) -> None:
        assert store.answered_horizon() is None and store.backfills() == []

    def test_the_horizon_only_rises(self, store: AnswerHorizon) -> None:
        store.fix_answered_horizon(at("2024-03-01"))
        store.fix_answered_horizon(at("2024-02-01"))
        assert store.answered_horizon() == at("2024-03-01")
        store.fix_answered_horizon(at("2024-03-01T12:00:00Z"))
        assert store.answered_horizon() == at("2024-03-01T12:00:00Z")

    def test_a_write_at_or_before_the_horizon_is_refused(self, vg: Vigente,
                                                          store: VersionLedger) -> None:
        vg.record("lim", 80, valid_from="2024-09-01", known_at="2024-09-03", source="policy",
                  now=NOW)
        before = _ask(vg, "lim", "2024-09-10", "2024-09-10")
        assert before["values"] == [80]
        for known_at in ("2024-09-10", "2024-09-04"):
            with pytest.raises(AnsweredHistoryError):
                vg.record("lim", 90, valid_from="2024-09-01", known_at=known_at, source="mirror",
                          now=NOW)
        assert [v.source for v in store.history("lim")] == ["policy"]  # nothing half-written
        vg.record("lim", 90, valid_from="2024-09-01", known_at="2024-09-11", source="mirror",
                  now=NOW)
        assert _ask(vg, "lim", "2024-09-10", "2024-09-10") == before

    def test_a_write_learned_now_is_dated_after_every_answer_given(self, vg: Vigente) -> None:
        vg.record("lim", 80, valid_from="2024-09-01", known_at="2024-09-03", source="policy")
        asked = vg.evidence("lim", valid_at="2024-09-10")  # as known now: fixes nothing
        assert vg.answered_horizon() is None
        (appended,) = vg.record("lim", 90, valid_from="2024-09-01", source="mirror").appended
        assert appended.known_from > asked.known_at

    def test_a_reserved_write_holds_answers_as_known_now_before_it(
        self, store: AnswerHorizon
    ) -> None:
        assert store.writes_in_flight_since(at("2024-01-01")) is None
        store.reserve_write("w1", at("2024-05-01T10:00:00Z"))
        store.reserve_write("w2", at("2024-05-01T09:00:00Z"))
        assert store.writes_in_flight_since(at("2024-01-01")) == at("2024-05-01T09:00:00Z")
        assert store.writes_in_flight_since(at("2024-05-01T09:30:00Z")) == at(
            "2024-05-01T10:00:00Z")  # one older than the lease is passed over
        store.release_write("w2")
        with store.transaction():
            assert store.in_transaction()
            store.release_write("w1")
        assert not store.in_transaction()
        assert store.writes_in_flight_since(at("2024-01-01")) is None

    def test_a_backfill_is_written_behind_the_horizon_and_recorded(
        self, vg: Vigente, store: AnswerHorizon
    ) -> None:
        vg.record("lim", 80, valid_from="2024-09-01", known_at="2024-09-03", source="policy",
                  now=NOW)
        _ask(vg, "lim", "2024-09-10", "2024-09-10")
        line = json.dumps({"op": "record", "lineage": "lim", "value": 90, "source": "mirror",
                           "valid_from": "2024-09-01", "known_at": "2024-09-04"})
        back_dated = store.backfills()  # the first record: dated before the store's clock
        assert [b.kind for b in back_dated] == ["back-dated"]
        with pytest.raises(AnsweredHistoryError):
            vg.import_lines([line], now=NOW)
        assert store.backfills() == back_dated
        assert vg.import_lines([line], backfill="the mirror's archive", now=NOW).applied == 1
        (_, backfill) = store.backfills()
        assert backfill.reason == "the mirror's archive" and backfill.statements == 1
        assert (backfill.earliest, backfill.horizon) == (at("2024-09-04"), at("2024-09-10"))

    def test_backfills_read_back_oldest_first(self, store: AnswerHorizon) -> None:
        recorded = [Backfill(f"bf-{n}", at(f"2024-0{n}-01T10:00:00Z"), "import", f"reason {n}",
                             n, at("2024-01-01"), at(f"2024-0{n}-01"),
                             None if n == 1 else at("2024-01-15")) for n in (1, 2, 3)]
        for backfill in recorded:
            with store.transaction():
                store.append_backfill(backfill)
        assert store.backfills() == recorded

    @settings(max_examples=20, deadline=None,
              suppress_health_check=[*PROPERTY_CHECKS_SUPPRESSED, HealthCheck.too_slow])
    @given(st.lists(st.builds(
        _Step, st.sampled_from(["record", "record", "retract", "precedence", "ask", "ask"]),
        st.sampled_from(["a", "b"]), st.sampled_from(["p", "q", "r"]), st.integers(0, 2),
        st.integers(0, 8), st.integers(0, 12)), min_size=1, max_size=10))
    def test_no_write_changes_an_answer_once_given(self, fresh_store: StoreFactory,
                                                   steps: list[_Step]) -> None:
        """Whatever writes are attempted, in whatever order and with whatever knowledge dates,
        every answer given before is given again identically, and a refused write leaves the
        store as it was."""
        vg = facade(fresh_store())
        given_answers: dict[tuple[str, int, int], dict[str, Any]] = {}
        for step in steps:
            if step.kind == "ask":
                key = (step.lineage, step.start, step.known)
                given_answers.setdefault(key, _ask(vg, step.lineage, _day(step.start),
                                                   _day(step.known)))
            else:
                _attempt(vg, step)
            for (lineage, t, k), answer in given_answers.items():
                assert _ask(vg, lineage, _day(t), _day(k)) == answer, (lineage, t, k)


class IntegrityConformance(Conformance):
    """Stored instants that could not be read back (an optional capability)."""

    contracts: ClassVar[Contracts] = (*KERNEL, Integrity)

    def test_instants_at_the_edges_of_the_range_are_readable(self, vg: Vigente,
                                                             store: Store) -> None:
        vg.record("edges", 1, valid_from="0001-01-01", valid_to="9999-12-31T23:59:59.999999Z",
                  known_at="2024-01-01", source="a", now=NOW)
        (version,) = store.history("edges")
        assert version.valid_from == at("0001-01-01")
        assert version.valid_to == at("9999-12-31T23:59:59.999999Z")
        assert store.unreadable_instants() == [] and store.repair_unreadable_instants() == []


class DecisionLogConformance(Conformance):
    """The recorded decisions an audit looks up."""

    contracts: ClassVar[Contracts] = (DecisionLog,)

    def test_a_decision_reads_back_as_recorded(self, store: DecisionLog) -> None:
        decision = _decision(1, {"admitted": [{"version_id": "v1", "value": "Zoë 東京"}],
                                 "excluded": [], "nested": {"n": [1, 2.5, None, True]}})
        with store.transaction():
            store.append_decision(decision)
        assert store.decision(decision.decision_id) == decision
        assert store.decision("dec-unknown") is None

    def test_decisions_are_listed_newest_first(self, store: DecisionLog) -> None:
        decisions = [_decision(n, {"n": n}) for n in range(1, 5)]
        for decision in decisions:
            with store.transaction():
                store.append_decision(decision)
        assert store.decisions(3) == decisions[:0:-1]
        assert store.decisions(10) == decisions[::-1]

    def test_an_answer_recorded_by_the_facade_is_its_decision(self, store: Store) -> None:
        vg = facade(store)
        vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-01-01", source="a", now=NOW)
        evidence = vg.evidence("rate", valid_at="2024-06-01", known_at="2024-06-01", now=NOW,
                               record=True)
        assert evidence.decision_id is not None
        decision = store.decision(evidence.decision_id)
        assert decision is not None and decision.kind == "evidence"
        assert decision.candidates == [v.version_id for v in store.history("rate")]
