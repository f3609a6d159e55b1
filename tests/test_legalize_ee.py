"""The real Estonian corpus read and checked against the source's own dates (the slice kept in
``tests/data`` everywhere, the whole corpus when ``../shared/data`` is present); and the generic
reader on small files that carry every kind of anomaly."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import lzma
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import LEGALIZE_EE_CORPUS, LEGALIZE_EE_SLICE, shared_file
from vigente.corpus import (
    AnomalyKind,
    CorpusFileError,
    CorpusReader,
    CorpusReport,
    SourceMapping,
    map_lineage,
    scan,
)
from vigente.corpus.legalize_ee import LEGALIZE_EE, main, read, report
from vigente.errors import InvalidInput
from vigente.time import Instant

LATEST_PUBLICATION = "2026-04-08"  # the corpus' latest publication date: the reference for
# future versions, so that the counts do not change as the calendar moves on.


@dataclass(frozen=True)
class Expected:
    """What a corpus file holds, found by reading it (README: 4,121 versions of 1,037 acts)."""

    lines: int
    lineages: int
    latest_publication: str
    counts: dict[str, int]


EXPECTED = {
    LEGALIZE_EE_CORPUS: Expected(
        lines=4121,
        lineages=1037,
        latest_publication="2026-04-08",
        counts={
            "gap": 5,
            "overlap": 5,
            "retroactive_publication": 108,
            "future_version": 206,
            "missing_valid_from": 2,
            "inverted_interval": 1,
            "placeholder_date": 254,
            "missing_reference": 271,
            "malformed_reference": 83,
            "repeated_reference": 2,
            "non_monotonic_order": 2,
            "open_end_closed": 3,
        },
    ),
    LEGALIZE_EE_SLICE: Expected(
        lines=147,
        lineages=14,
        latest_publication="2026-04-02",
        counts={
            "gap": 2,
            "overlap": 3,
            "retroactive_publication": 3,
            "future_version": 3,
            "missing_valid_from": 2,
            "inverted_interval": 1,
            "placeholder_date": 34,
            "missing_reference": 34,
            "malformed_reference": 2,
            "repeated_reference": 2,
            "non_monotonic_order": 2,
            "open_end_closed": 1,
        },
    ),
}


def day(text: str) -> Instant:
    return Instant.from_date(dt.date.fromisoformat(text))


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(LEGALIZE_EE_SLICE, id="slice"),
        pytest.param(LEGALIZE_EE_CORPUS, id="whole", marks=pytest.mark.slow),
    ],
)
def corpus(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return shared_file(path)


@pytest.fixture(scope="module")
def corpus_report(corpus: Path) -> CorpusReport:
    return report(corpus, as_of=LATEST_PUBLICATION)


@pytest.fixture(scope="module")
def raw_acts(corpus: Path) -> dict[str, list[dict[str, Any]]]:
    """The source lines by act, read independently of vigente's reader (texts dropped)."""
    acts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with lzma.open(corpus, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            row.pop("text")
            acts[row["act"]].append(row)
    return acts


def test_the_whole_corpus_is_read_and_every_anomaly_counted(
    corpus: Path, corpus_report: CorpusReport
) -> None:
    r, expected = corpus_report, EXPECTED[corpus]
    summary = r.summary()
    assert (r.lines, r.lineages) == (expected.lines, expected.lineages), summary
    assert r.versions + len(r.excluded) == expected.lines, "every line is a version or excluded"
    assert r.latest_publication == day(expected.latest_publication)
    counts = {kind: n for kind, n in r.counts().items() if n}
    assert counts == expected.counts, summary
    assert sorted(e.reason.value for e in r.excluded) == [
        "inverted_interval",
        "missing_valid_from",
        "missing_valid_from",
    ]
    assert all(a.lineage_id for a in r.anomalies), "every anomaly names its act"


def test_known_anomalies_are_reported_with_their_acts(corpus_report: CorpusReport) -> None:
    by_kind: dict[AnomalyKind, dict[str, Any]] = defaultdict(dict)
    for a in corpus_report.anomalies:
        by_kind[a.kind].setdefault(a.lineage_id, a)
    gap = by_kind[AnomalyKind.GAP]["125042013003"]
    assert gap.period is not None and str(gap.period) == "[2025-01-01, 2025-07-01)"
    assert gap.consequence == "missing"
    overlap = by_kind[AnomalyKind.OVERLAP]["407022026040"]
    assert str(overlap.period) == "[2026-02-10, ∞)" and overlap.consequence == "conflict"
    one_day = by_kind[AnomalyKind.OVERLAP]["23578"]
    assert str(one_day.period) == "[2009-10-27, 2009-10-28)"  # inclusive ends meeting on a day
    assert set(by_kind[AnomalyKind.MISSING_VALID_FROM]) == {"129052024001", "124032023018"}
    assert set(by_kind[AnomalyKind.INVERTED_INTERVAL]) == {"22353"}
    assert set(by_kind[AnomalyKind.NON_MONOTONIC_ORDER]) == {"407022026040", "410022026008"}
    repeated = by_kind[AnomalyKind.REPEATED_REFERENCE]["410022026008"]
    assert repeated.other_lineages == ("411092020009",)
    future = [a for a in corpus_report.anomalies if a.kind is AnomalyKind.FUTURE_VERSION]
    assert any("2038-12-31" in a.message for a in future)


def test_a_sample_of_acts_matches_the_sources_own_dates(
    corpus: Path, raw_acts: dict[str, list[dict[str, Any]]]
) -> None:
    sample = set(random.Random(20260408).sample(sorted(raw_acts), min(60, len(raw_acts))))
    sample |= {"22353", "264826", "422102025028", "407022026040"}  # quirky ones, always
    checked = 0
    for lineage in read(corpus, as_of=LATEST_PUBLICATION):
        if lineage.lineage_id not in sample:
            continue
        raw = {row["commit"]: row for row in raw_acts[lineage.lineage_id]}
        excluded = {e.external_id for e in lineage.excluded}
        assert set(raw) == {v.external_id for v in lineage.versions} | excluded
        starts = [v.valid_from for v in lineage.versions]
        assert starts == sorted(starts)
        for v in lineage.versions:
            source = raw[v.external_id]
            assert v.lineage_id == source["act"]
            assert v.valid_from == day(source["effective_from"])
            if source["effective_until"] is not None:
                # Inclusive last day → half-open end on the next day.
                assert v.valid_to is not None and v.valid_to_basis == "source"
                assert v.valid_to.date - dt.timedelta(days=1) == dt.date.fromisoformat(
                    source["effective_until"]
                )
            if source["publication_date"] >= "1918-01-01":
                assert v.known_from == day(source["publication_date"])
            else:
                assert v.known_from == v.valid_from and v.published is None
            assert v.reference == source["rt_reference"]
            assert v.url == source["source"] and v.title == source["title"]
            assert v.text and v.text.startswith("#")
            checked += 1
    assert checked > 100


def test_a_versions_end_is_known_from_its_successors_publication(corpus: Path) -> None:
    lineages = {
        x.lineage_id: x
        for x in read(corpus, as_of=LATEST_PUBLICATION)
        if x.lineage_id in ("428042017059", "422102025028", "264826")
    }
    first, second, _ = lineages["428042017059"].versions
    assert first.valid_to == day("2024-05-01")  # effective_until 2024-04-30
    assert first.end_known_from == second.known_from == day("2024-04-27")
    assert first.end_known_basis == "successor_publication"
    last = lineages["422102025028"].versions[-1]  # published with its end date 2029-12-31
    assert (last.valid_to, last.end_known_basis) == (day("2030-01-01"), "own_publication")
    assert last.end_known_from == last.known_from
    closed = next(v for v in lineages["264826"].versions if v.valid_to_basis == "successor")
    assert (closed.valid_from, closed.valid_to) == (day("2011-01-01"), day("2012-01-01"))
    steps = lineages["428042017059"].knowledge_steps()
    assert [(s.known_at.isoformat(), s.valid_from.isoformat(), s.valid_to) for s in steps] == [
        ("2017-04-28", "2017-05-01", None),  # published open-ended
        ("2024-04-27", "2017-05-01", day("2024-05-01")),  # closed by the successor's publication
        ("2024-04-27", "2024-05-01", None),  # … which is itself open-ended
        ("2026-02-21", "2024-05-01", day("2026-02-24")),
        ("2026-02-21", "2026-02-24", None),
    ]


def test_the_module_prints_a_summary(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = EXPECTED[corpus]
    assert main([str(corpus)]) == 0
    out = capsys.readouterr().out
    assert f"{expected.lines} lines, {expected.lineages} lineages" in out
    assert f"future versions counted after {expected.latest_publication}" in out
    assert "gap" in out and "125042013003" in out
    assert main([str(corpus), "--json", "--as-of", "2030-01-01"]) == 0
    data = json.loads(capsys.readouterr().out)
    future = expected.counts["future_version"]
    assert data["as_of"] == "2030-01-01" and data["counts"]["future_version"] < future


# -- the generic reader on small real files --------------------------------------------------
MAPPING = SourceMapping(
    name="test",
    lineage_field="act",
    external_id_field="id",
    valid_from_field="from",
    valid_to_field="until",
    valid_to_inclusive=True,
    known_from_field="published",
    reference_field="ref",
    reference_pattern=r"\d+/\d{4}",
    earliest_plausible=dt.date(1950, 1, 1),
)


def write(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    data = ("\n".join(lines) + "\n").encode()
    if path.suffix == ".xz":
        path.write_bytes(lzma.compress(data))
    elif path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def row(
    act: str,
    id_: str,
    start: str | None,
    end: str | None = None,
    published: str | None = "2000-01-01",
    ref: str | None = "1/2000",
) -> dict[str, Any]:
    return {"act": act, "id": id_, "from": start, "until": end, "published": published, "ref": ref}


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.xz"])
def test_every_anomaly_kind_on_a_small_file(tmp_path: Path, suffix: str) -> None:
    path = write(
        tmp_path / f"corpus{suffix}",
        [
            row("a", "a1", "2001-01-01", "2001-12-31", ref="1/2001"),
            row("a", "a2", "2002-02-01", "2002-12-31", ref="2/2002"),  # gap in January 2002
            row("a", "a3", "2002-12-01", None, published="2003-05-01", ref="3/2002"),  # overlap
            "not json",
            row("b", "b2", "2010-01-01", None, published=None, ref=None),
            row("b", "b1", "2005-01-01", None, published="1900-01-01", ref="http://x/1"),
            row("b", "b3", None, None),
            row("b", "b4", "2012-01-01", "2011-01-01"),
            row("b", "b5", "2030-01-01", None, published="2020-01-01", ref="9/2020"),
            row("b", "a1", "2040-01-01"),  # duplicate external id
            {"id": "z1"},  # no lineage
            row("a", "a4", "2004-01-01", ref="9/2020", published="2003-12-01"),  # split, repeated
            row("c", "c1", "2001-01-01", ref="5/x", published="01.01.2001"),  # malformed
        ],
    )
    reader = CorpusReader(path, MAPPING, as_of="2025-01-01")
    lineages = list(reader)
    result = reader.report()
    assert [x.lineage_id for x in lineages] == ["a", "b", "a", "c"]
    assert result.lines == 13 and result.lineages == 4
    kinds = result.counts()
    assert {k: n for k, n in kinds.items() if n} == {
        "gap": 1,
        "overlap": 1,
        "retroactive_publication": 1,
        "future_version": 1,
        "missing_valid_from": 1,
        "malformed_date": 1,
        "inverted_interval": 1,
        "missing_known_from": 2,
        "placeholder_date": 1,
        "missing_reference": 1,
        "malformed_reference": 2,
        "repeated_reference": 1,
        "non_monotonic_order": 1,
        "open_end_closed": 2,
        "missing_lineage": 1,
        "duplicate_external_id": 1,
        "split_lineage": 1,
        "bad_line": 1,
    }
    a = lineages[0]
    gap = next(x for x in a.anomalies if x.kind is AnomalyKind.GAP)
    assert str(gap.period) == "[2002-01-01, 2002-02-01)"
    overlap = next(x for x in a.anomalies if x.kind is AnomalyKind.OVERLAP)
    assert str(overlap.period) == "[2002-12-01, 2003-01-01)"
    b = {v.external_id: v for v in lineages[1].versions}
    assert b["b1"].valid_to == day("2010-01-01") and b["b1"].valid_to_basis == "successor"
    assert b["b1"].known_from == day("2005-01-01")  # placeholder publication replaced
    assert b["b2"].known_from == day("2010-01-01")  # missing publication: its start
    assert {e.external_id: e.reason.value for e in lineages[1].excluded} == {
        "a1": "duplicate_external_id",
        "b3": "missing_valid_from",
        "b4": "inverted_interval",
    }
    assert result.versions + len(result.excluded) == 13
    assert len(result.excluded) == 5  # bad line, no lineage, duplicate, no start, inverted
    assert "split_lineage" in result.summary() and result.as_dict()["counts"]["gap"] == 1
    assert reader.report() == result  # a second report reads the same


def test_a_damaged_or_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusFileError, match="does not exist: check the path"):
        scan(tmp_path / "nope.jsonl.xz", MAPPING)
    with pytest.raises(CorpusFileError, match="is a directory"):
        scan(tmp_path, MAPPING)
    bad = tmp_path / "bad.jsonl.xz"
    bad.write_bytes(b"this is not xz")
    with pytest.raises(CorpusFileError, match="is damaged or not .xz compressed"):
        scan(bad, MAPPING)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"act": "caf\xe9"}\n')
    with pytest.raises(CorpusFileError, match="is not UTF-8"):
        scan(latin, MAPPING)
    assert issubclass(CorpusFileError, InvalidInput)
    assert main([str(tmp_path / "nope.xz")]) == 1


# -- half-open conversion, as a property -----------------------------------------------------
@st.composite
def inclusive_chains(draw: st.DrawFn) -> list[tuple[dt.date, dt.date | None]]:
    """Consecutive versions with inclusive last days, some separated by a three-day gap."""
    start = draw(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2030, 1, 1)))
    chain: list[tuple[dt.date, dt.date | None]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        last = start + dt.timedelta(days=draw(st.integers(min_value=0, max_value=900)))
        chain.append((start, last))
        start = last + dt.timedelta(days=1 + draw(st.sampled_from([0, 0, 0, 3])))
    if draw(st.booleans()):
        chain.append((start, None))
    return chain


@given(inclusive_chains())
def test_inclusive_ends_become_half_open_without_gaps_or_overlaps(
    chain: list[tuple[dt.date, dt.date | None]],
) -> None:
    rows = [
        (i + 1, row("x", f"v{i}", a.isoformat(), None if b is None else b.isoformat()))
        for i, (a, b) in enumerate(chain)
    ]
    result = map_lineage("x", rows, MAPPING, as_of="2100-01-01")
    versions = result.versions
    assert len(versions) == len(chain)
    for v, (a, b) in zip(versions, chain, strict=True):
        assert v.valid_from.date == a
        assert (v.valid_to is None) is (b is None)
        if b is not None and v.valid_to is not None:
            assert v.valid_to.date == b + dt.timedelta(days=1)
    contiguous = sum(
        1 for u, w in zip(versions, versions[1:], strict=False) if u.valid_to == w.valid_from
    )
    found_gaps = [x for x in result.anomalies if x.kind is AnomalyKind.GAP]
    assert contiguous + len(found_gaps) == len(versions) - 1
    assert not [x for x in result.anomalies if x.kind is AnomalyKind.OVERLAP]
    for g in found_gaps:
        assert g.period is not None and g.period.end is not None
        assert (g.period.end.date - g.period.start.date).days == 3


def test_the_legalize_mapping_names_the_sources_fields() -> None:
    assert (LEGALIZE_EE.lineage_field, LEGALIZE_EE.external_id_field) == ("act", "commit")
    assert LEGALIZE_EE.valid_to_inclusive and LEGALIZE_EE.known_from_field == "publication_date"


def test_the_corpus_package_exports_its_public_api() -> None:
    import vigente.corpus as corpus

    for name in corpus.__all__:
        assert getattr(corpus, name) is not None, name
    assert {"CorpusReader", "SourceMapping", "AnomalyKind", "map_lineage"} <= set(corpus.__all__)
