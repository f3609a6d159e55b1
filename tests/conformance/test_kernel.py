"""Kernel conformance: the same tests on every backend (the ``vg`` fixture is parametrized).

The seed article's scenario is data (``tests/data/seed_upload_limit.json``); one test replays
its ingest events and asks every question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vigente import ExclusionReason, HistoryRewriteError, ImportFileError, Vigente

SEED = json.loads((Path(__file__).parent.parent / "data" / "seed_upload_limit.json").read_text())
L = SEED["lineage"]
NOW = SEED["now"]


def apply(vg: Vigente, event: dict[str, Any], lineage: str = L) -> None:
    fields = {k: v for k, v in event.items() if k not in ("op", "value")}
    if event["op"] == "record":
        vg.record(lineage, event["value"], now=NOW, **fields)
    else:
        vg.retract(lineage, now=NOW, **fields)


@pytest.fixture
def seeded(vg: Vigente) -> Vigente:
    for event in SEED["events"]:
        apply(vg, event)
    return vg


def test_ingest_events_produce_the_seeds_five_snapshots(seeded: Vigente) -> None:
    rows = [
        {k: r[k] for k in ("value", "valid_from", "valid_to", "known_from", "known_to")}
        for r in (v.as_row() for v in seeded.history(L))
    ]
    assert rows == SEED["snapshots"]


@pytest.mark.parametrize(
    "question", SEED["questions"], ids=lambda q: f"t={q['valid_at']},k={q['known_at']}"
)
def test_seed_questions(seeded: Vigente, question: dict[str, Any]) -> None:
    e = seeded.evidence(L, valid_at=question["valid_at"], known_at=question["known_at"], now=NOW)
    assert e.status.value == question["status"]
    assert list(e.values) == question["values"]
    assert e.interpretation.value == question["interpretation"]


def test_conflict_lists_both_values_and_never_averages(seeded: Vigente) -> None:
    c = SEED["conflict"]
    apply(seeded, c["event"])
    e = seeded.evidence(L, now=NOW, **c["question"])
    assert e.status.value == "conflict"
    assert sorted(e.values) == c["values"]  # type: ignore[type-var]
    assert 85 not in e.values
    for value in c["values"]:
        assert str(value) in e.statement
    # the past stays as it was
    before = seeded.evidence(L, valid_at="2026-09-02", known_at="2026-09-02", now=NOW)
    assert list(before.values) == [50]


def test_explicit_precedence_resolves_a_conflict_from_its_knowledge_date_on(
    seeded: Vigente,
) -> None:
    c = SEED["conflict"]
    apply(seeded, c["event"])
    p = c["precedence"]
    seeded.set_precedence(p["sources"], known_at=p["known_at"], now=NOW)
    e = seeded.evidence(L, now=NOW, **c["question"])
    assert e.status.value == "supported"
    assert list(e.values) == [p["kept"]]
    assert e.precedence is not None
    assert [v.value for v in e.precedence.overruled] == p["overruled"]
    assert "overruled" in e.statement
    # before the rule was adopted, the same question was a conflict, and still is
    earlier = seeded.evidence(L, valid_at=NOW, known_at="2026-09-26", now=NOW)
    assert earlier.status.value == "conflict"


def test_exclusions_carry_reasons_and_successors(seeded: Vigente) -> None:
    e = seeded.evidence(L, valid_at="2026-09-29", known_at="2026-09-29", now=NOW)
    reasons = {x.version.value_json + ":" + str(x.version.known_to): x for x in e.excluded}
    assert {x.reason for x in e.excluded} == {
        ExclusionReason.NO_LONGER_KNOWN,
        ExclusionReason.NO_LONGER_VALID,
        ExclusionReason.NOT_YET_VALID,
    }
    (admitted,) = e.admitted
    closed_80 = reasons["80:2026-09-20"]
    assert closed_80.reason is ExclusionReason.NO_LONGER_KNOWN
    assert closed_80.successor_id == admitted.version_id
    old_50 = next(x for x in e.excluded if x.reason is ExclusionReason.NO_LONGER_VALID)
    assert old_50.version.value == 50 and old_50.successor_id == admitted.version_id
    future = next(x for x in e.excluded if x.reason is ExclusionReason.NOT_YET_VALID)
    assert future.version.value == 100 and future.successor_id is None


def test_a_version_learned_after_k_is_absent_from_the_answer(seeded: Vigente) -> None:
    """As known on 2 September the store did not hold 80 (learned on 3 September): the answer
    neither admits nor excludes it, and the 50 it admits is still open on the knowledge axis."""
    e = seeded.evidence(L, valid_at="2026-09-02", known_at="2026-09-02", now=NOW)
    assert e.values == (50,)
    assert all(x.reason is not ExclusionReason.NOT_YET_KNOWN for x in e.excluded)
    assert 80 not in {x.version.value for x in e.excluded}
    assert [v.known_to for v in e.admitted] == [None]


def test_scopes_never_conflict_and_report_out_of_scope(vg: Vigente) -> None:
    vg.record(
        L,
        80,
        valid_from="2026-01-01",
        known_at="2026-01-01",
        source="a",
        scope={"product": "mail"},
        now=NOW,
    )
    vg.record(
        L,
        25,
        valid_from="2026-01-01",
        known_at="2026-01-01",
        source="a",
        scope={"product": "chat"},
        now=NOW,
    )
    mail = vg.evidence(L, valid_at="2026-05-01", scope={"product": "mail"}, now=NOW)
    assert mail.status.value == "supported" and list(mail.values) == [80]
    assert [x.reason for x in mail.excluded] == [ExclusionReason.OUT_OF_SCOPE]
    unscoped = vg.evidence(L, valid_at="2026-05-01", now=NOW)
    assert unscoped.status.value == "missing"


def test_a_scope_without_a_timeline_reports_the_other_scopes(vg: Vigente) -> None:
    for product, value in (("mail", 80), ("chat", 25)):
        vg.record(
            L,
            value,
            valid_from="2026-01-01",
            known_at="2026-01-01",
            source="a",
            scope={"product": product},
            now=NOW,
        )
    e = vg.evidence(L, valid_at="2026-05-01", scope={"product": "video"}, now=NOW)
    assert e.status.value == "missing"
    assert sorted(x.version.value for x in e.excluded) == [25, 80]
    assert {x.reason for x in e.excluded} == {ExclusionReason.OUT_OF_SCOPE}


def test_exclusions_are_the_neighbours_on_both_axes_for_every_source(vg: Vigente) -> None:
    """Two sources whose periods end on the same day are both the nearest earlier period; on
    the knowledge axis the snapshot replaced last and the one learned next come back."""

    def record(value: int, source: str, start: str, known: str, end: str | None = None) -> None:
        vg.record(L, value, valid_from=start, valid_to=end, known_at=known, source=source, now=NOW)

    record(5, "a", "2025-10-01", "2025-10-01", "2026-01-01")  # ended earlier: not a neighbour
    record(10, "a", "2026-01-01", "2026-01-01", "2026-03-01")
    record(11, "b", "2026-01-01", "2026-01-01", "2026-03-01")
    record(20, "a", "2026-03-01", "2026-02-01")
    record(21, "a", "2026-03-01", "2026-04-01")  # corrects 20 (learned on 1 April)
    record(22, "a", "2026-03-01", "2026-06-01")  # corrects 21 (learned on 1 June)

    def exclusions(known_at: str) -> dict[int, tuple[ExclusionReason, int | None]]:
        e = vg.evidence(L, valid_at="2026-05-01", known_at=known_at, now=NOW)
        by_id = {v.version_id: v.value for v in [*e.admitted, *(x.version for x in e.excluded)]}
        return {
            x.version.value: (x.reason, by_id.get(x.successor_id) if x.successor_id else None)
            for x in e.excluded
        }

    (twenty_one,) = vg.evidence(L, valid_at="2026-05-01", known_at="2026-05-01", now=NOW).values
    assert twenty_one == 21
    assert exclusions("2026-05-01") == {
        10: (ExclusionReason.NO_LONGER_VALID, 21),  # same source: its next period
        11: (ExclusionReason.NO_LONGER_VALID, None),  # source b has no later period
        20: (ExclusionReason.NO_LONGER_KNOWN, 21),  # replaced last before k (not older ones)
    }  # 22, learned after k, is not in an answer as known at k
    assert exclusions("2026-09-01") == {
        10: (ExclusionReason.NO_LONGER_VALID, 22),
        11: (ExclusionReason.NO_LONGER_VALID, None),
        21: (ExclusionReason.NO_LONGER_KNOWN, 22),  # 20 was replaced earlier: not a neighbour
    }


def test_knowledge_going_backwards_is_refused_and_writes_nothing(seeded: Vigente) -> None:
    before = seeded.history(L)
    with pytest.raises(HistoryRewriteError, match="rewrite history"):
        seeded.record(
            L, 70, valid_from="2026-09-01", known_at="2026-09-10", source="policy", now=NOW
        )
    assert seeded.history(L) == before


def test_knowledge_going_backwards_inside_one_import_is_refused_with_its_line(
    seeded: Vigente,
) -> None:
    """The check sees the import's own earlier lines (a backend may keep the latest knowledge of
    the timelines it has locked, but must update it with every write)."""
    before = seeded.history(L)

    def line(value: int, known_at: str, source: str = "policy") -> str:
        return json.dumps(
            {
                "op": "record",
                "lineage": L,
                "value": value,
                "source": source,
                "valid_from": "2026-11-01",
                "known_at": known_at,
            }
        )

    lines = [
        line(110, "2026-09-26"),
        line(120, "2026-09-28"),
        line(1, "2026-01-01", source="other"),  # another timeline, its own knowledge
        line(115, "2026-09-27"),  # before line 2 of the same timeline
    ]
    with pytest.raises(ImportFileError, match="line 4") as error:
        seeded.import_lines(lines, now=NOW)
    assert "rewrite history" in str(error.value)
    assert seeded.history(L) == before


def test_another_source_has_its_own_timeline(seeded: Vigente) -> None:
    # an older knowledge date is fine for a source that has never written
    seeded.record(L, 50, valid_from="2026-01-01", known_at="2026-02-01", source="mirror", now=NOW)
    e = seeded.evidence(L, valid_at="2026-08-01", now=NOW)
    assert e.status.value == "supported" and list(e.values) == [50]
    assert {v.source for v in e.admitted} == {"policy", "mirror"}


def test_retract_closes_and_keeps_history(seeded: Vigente) -> None:
    seeded.retract(L, valid_from="2026-10-01", known_at="2026-09-25", source="policy", now=NOW)
    after = seeded.evidence(L, valid_at="2026-10-02", known_at="2026-09-25", now=NOW)
    assert after.status.value == "missing"
    before = seeded.evidence(L, valid_at="2026-10-02", known_at="2026-09-24", now=NOW)
    assert list(before.values) == [100]


def test_repeating_a_statement_is_a_no_op(seeded: Vigente) -> None:
    before = seeded.history(L)
    result = seeded.record(
        L, 100, valid_from="2026-10-01", known_at="2026-09-25", source="policy", now=NOW
    )
    assert not result.changed
    assert seeded.history(L) == before


def test_timestamps_keep_their_precision_and_print_in_utc(vg: Vigente) -> None:
    vg.record(
        "svc/flag",
        True,
        valid_from="2026-09-01T10:00:00+02:00",
        known_at="2026-09-01T09:00:00Z",
        source="ops",
        now=NOW,
    )
    (row,) = vg.history("svc/flag")
    assert row.as_row()["valid_from"] == "2026-09-01T08:00:00Z"
    assert row.as_row()["known_from"] == "2026-09-01T09:00:00Z"
    at_8 = vg.evidence("svc/flag", valid_at="2026-09-01T08:00:00Z", now=NOW)
    before_8 = vg.evidence("svc/flag", valid_at="2026-09-01T07:59:59.999999Z", now=NOW)
    assert at_8.status.value == "supported" and before_8.status.value == "missing"
