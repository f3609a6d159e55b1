"""The lookup path's shortcuts give the same answers as the plain code they replace.

* ``build_version`` / ``build_exclusion`` / ``build_evidence`` set a frozen dataclass's slots
  directly: the values must equal (and hash, and print as) the ones the constructors build.
* ``decide()`` asks for a successor only for the two reasons that can have one: the exclusions
  must be those of asking ``_Successors.of`` for every excluded row.
* ``moment()`` keeps the text of the instants it words: it must word every instant as the
  uncached formatting does, whatever was asked before.
* The SQLite store keeps the ids of committed subjects for reads: a lookup must never see a
  subject that was not committed, and must see one committed by another connection later.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from vigente.api import Vigente
from vigente.bench.kernel import BENCHMARK
from vigente.kernel.admission import _Successors, as_known_at, decide
from vigente.kernel.answer import (
    Evidence,
    Exclusion,
    Interpretation,
    Status,
    build_evidence,
    build_exclusion,
)
from vigente.kernel.statement import moment
from vigente.records.values import Scope
from vigente.records.versions import ExclusionReason, Version, admissibility, build_version
from vigente.time import Instant

DAY = 86_400_000_000
NOW = "2026-12-01"  # a pinned clock after every date below, before today

instants = st.builds(
    Instant,
    st.integers(min_value=-(10**15), max_value=10**16),
    st.booleans(),
)
scopes = st.sampled_from([Scope(), Scope.of({"env": "prod"}), Scope.of({"env": "dev"})])


@st.composite
def versions(draw: st.DrawFn) -> Version:
    """A snapshot on a small grid of days, so that rows meet and neighbour each other."""
    vf = draw(st.integers(0, 12))
    vt = draw(st.one_of(st.none(), st.integers(vf + 1, 14)))
    kf = draw(st.integers(0, 12))
    kt = draw(st.one_of(st.none(), st.integers(kf, 14)))
    return Version(
        draw(st.text("abcdef", min_size=1, max_size=4)),
        "fast/limit",
        draw(scopes),
        draw(st.sampled_from(["a", "b"])),
        draw(st.sampled_from(["1", "2", '"x"', "[1,2]"])),
        Instant(vf * DAY, True),
        None if vt is None else Instant(vt * DAY, True),
        Instant(kf * DAY, True),
        None if kt is None else Instant(kt * DAY, True),
    )


def test_builders_follow_the_dataclass_fields() -> None:
    """The builders set fields by position: a field added or moved must fail here first."""
    for cls in (Version, Exclusion, Evidence):
        assert list(cls.__slots__) == [f.name for f in dataclasses.fields(cls)]


@given(versions())
def test_build_version_equals_the_constructor(v: Version) -> None:
    fields = [getattr(v, f.name) for f in dataclasses.fields(Version)]
    built = build_version(*fields)
    assert built == v and hash(built) == hash(v) and repr(built) == repr(v)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.known_to = None  # type: ignore[misc]


@given(versions(), st.sampled_from(list(ExclusionReason)), st.one_of(st.none(), st.text()))
def test_build_exclusion_equals_the_constructor(
    v: Version, reason: ExclusionReason, successor: str | None
) -> None:
    built = build_exclusion(v, reason, successor)
    assert built == Exclusion(v, reason, successor)
    assert repr(built) == repr(Exclusion(v, reason, successor))


@given(st.lists(versions(), max_size=3), instants, instants, scopes, st.booleans())
def test_build_evidence_equals_the_constructor(
    rows: list[Version], t: Instant, k: Instant, scope: Scope, earlier: bool
) -> None:
    fields = (
        "fast/limit",
        scope,
        t,
        k,
        k,
        Status.SUPPORTED,
        (1,),
        Interpretation.CURRENT,
        tuple(rows),
        (),
        "a statement",
        None,
        (2,) if earlier else None,
        None,
    )
    built = build_evidence(*fields)
    assert built == Evidence(*fields) and repr(built) == repr(Evidence(*fields))
    assert built.as_dict() == Evidence(*fields).as_dict()


@settings(max_examples=300)
@given(
    st.lists(versions(), max_size=8),
    st.integers(0, 15),
    st.integers(0, 15),
    scopes,
    st.booleans(),
)
def test_decide_asks_for_successors_as_the_general_path(
    rows: list[Version], t_day: int, k_day: int, scope: Scope, with_earlier: bool
) -> None:
    """Every excluded row has the reason admissibility gives and the successor _Successors.of
    gives (it answers None for the reasons decide no longer asks it about); the evidence is
    a value like any other (equal to its copy made by the constructor)."""
    t, k = Instant(t_day * DAY, True), Instant(k_day * DAY, True)
    now = Instant(max(t_day, k_day) * DAY, True)
    earlier = rows if with_earlier else None
    evidence = decide("fast/limit", scope, t, k, now, rows, lambda: [], earlier)
    known = as_known_at(rows, k)  # the rows as held at k: what the answer is built from
    successors = _Successors(known, t, k)
    expected = []
    for row in known:
        reason = admissibility(row, scope, t, k)
        if reason is not None:
            expected.append(Exclusion(row, reason, successors.of(row, reason)))
    assert list(evidence.excluded) == expected
    assert list(evidence.admitted) == [r for r in known if admissibility(r, scope, t, k) is None]
    assert evidence == dataclasses.replace(evidence)


@given(st.lists(instants, min_size=1, max_size=20))
def test_moment_words_every_instant_as_the_uncached_format(asked: list[Instant]) -> None:
    for at in asked + asked[::-1]:  # again, from the cache
        if at.is_date or at.micros % DAY == 0:
            expected = at.date.isoformat()
        else:
            expected = at.datetime.strftime("%Y-%m-%d %H:%M UTC")
        assert moment(at) == expected


def test_moment_tells_midnight_from_the_minute_after_it() -> None:
    midnight = Instant(20_000 * DAY)
    assert moment(midnight) == "2024-10-04"
    assert moment(Instant(20_000 * DAY + 30_000_000)) == "2024-10-04 00:00 UTC"
    assert moment(midnight) == "2024-10-04"


# -- the subject ids kept for reads (SQLite) -------------------------------------------------


def ask(vg: Vigente, lineage: str) -> Evidence:
    return vg.evidence(lineage, valid_at="2026-03-01", now=NOW)


def test_a_lineage_unknown_at_first_is_found_once_another_connection_records_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    with Vigente.open(path) as reader, Vigente.open(path) as writer:
        assert ask(reader, "fast/late").status is Status.MISSING
        writer.record("fast/late", 7, valid_from="2026-01-01", known_at="2026-02-01", source="s")
        assert ask(reader, "fast/late").values == (7,)


def test_a_subject_of_a_rolled_back_write_is_not_kept(tmp_path: Path) -> None:
    """A lookup inside a write transaction sees the transaction's own new subject; after the
    rollback its id may go to another lineage, and the lookup must not use it."""
    path = tmp_path / "store.db"
    with Vigente.open(path) as first, Vigente.open(path) as second:
        with pytest.raises(RuntimeError), first.store.transaction():
            first.record("fast/undone", 1, valid_from="2026-01-01", known_at="2026-02-01",
                         source="s")  # fmt: skip
            assert ask(first, "fast/undone").values == (1,)
            raise RuntimeError("roll back")
        assert ask(first, "fast/undone").status is Status.MISSING
        # The rolled-back subject id goes to another lineage now.
        second.record("fast/other", 2, valid_from="2026-01-01", known_at="2026-02-01", source="s")
        second.record("fast/undone", 3, valid_from="2026-01-01", known_at="2026-02-01",
                      source="s")  # fmt: skip
        assert ask(first, "fast/undone").values == (3,)
        assert ask(first, "fast/other").values == (2,)


def test_kept_subject_ids_answer_as_a_fresh_connection(tmp_path: Path) -> None:
    """Answers from a store that has kept every subject's id equal a fresh connection's."""
    path = tmp_path / "store.db"
    start = dt.date(2026, 1, 1)
    with Vigente.open(path) as vg:
        for n in range(6):
            for m in range(4):
                vg.record(f"fast/{n}", n * 10 + m,
                          valid_from=(start + dt.timedelta(days=10 * m)).isoformat(),
                          known_at=(start + dt.timedelta(days=10 * m + n)).isoformat(),
                          source="s", scope={"env": "prod"} if n % 2 else None)  # fmt: skip
        questions = [
            (f"fast/{n}", (start + dt.timedelta(days=d)).isoformat(), known, scope)
            for n in range(6)
            for d in range(0, 45, 4)
            for known in (None, "2026-01-20")
            for scope in (None, {"env": "prod"})
        ]

        def answers(store: Vigente) -> list[dict[str, object]]:
            return [
                store.evidence(name, valid_at=t, known_at=k, scope=scope, now=NOW).as_dict()
                for name, t, k, scope in questions
            ]

        warm = answers(vg)
        assert answers(vg) == warm
    with Vigente.open(path) as fresh:
        assert answers(fresh) == warm


# -- the benchmark's breakdown -----------------------------------------------------------------


def test_the_kernel_benchmark_times_the_store_read_beside_the_floor(tmp_path: Path) -> None:
    """``store_read_*``: the store's part of a lookup, timed in the same rounds; it is a part of
    the lookup, and its ratio is the one printed."""
    proc = subprocess.run(
        [sys.executable, "-m", "vigente.bench", "kernel", "--versions", "2000", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["store_read_p50_ms"] > 0
    expected = round(figures["store_read_p50_ms"] / figures["floor_p50_ms"], 1)
    assert figures["store_read_vs_floor"] == expected
    console = Console(record=True, width=200)
    BENCHMARK.render(figures, console)
    (line,) = [t for t in console.export_text().splitlines() if "read / floor" in t]
    assert f"x{figures['store_read_vs_floor']:,.1f}" in line
