"""The real Estonian corpus imported: the store answers with the source's own dates, and its gaps
and overlaps come back as ``missing`` and ``conflict``, not smoothed over. Each test runs on the
real slice kept in ``tests/data`` and, when ``../shared/data`` is present, on the whole corpus."""

from __future__ import annotations

import datetime as dt
import json
import lzma
import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LEGALIZE_EE_CORPUS, LEGALIZE_EE_SLICE, shared_file
from vigente import Vigente
from vigente.corpus import AnomalyKind, legalize_ee
from vigente.corpus.importer import CorpusImport, import_corpus

TODAY = "2026-11-29"

#: What each corpus holds: (lineages, lines).
SIZES = {LEGALIZE_EE_SLICE: (14, 147), LEGALIZE_EE_CORPUS: (1037, 4121)}


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
def imported(
    corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Vigente, CorpusImport]]:
    vg = Vigente.open(tmp_path_factory.mktemp("ee") / "ee.db")
    result = import_corpus(vg, legalize_ee.read(corpus, as_of=TODAY))
    yield vg, result
    vg.close()


def raw_versions(corpus: Path) -> dict[str, list[dict[str, Any]]]:
    acts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with lzma.open(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            row.pop("text", None)
            acts[row["act"]].append(row)
    return acts


def test_the_whole_corpus_is_imported_and_every_anomaly_reported(
    corpus: Path, imported: tuple[Vigente, CorpusImport]
) -> None:
    _, result = imported
    lineages, lines = SIZES[corpus]
    assert result.lineages == lineages
    assert result.versions_added + len(result.report.excluded) == lines
    counts = result.report.counts()
    for kind in ("gap", "overlap", "retroactive_publication", "future_version"):
        assert counts[kind] > 0, kind
    assert all(a.lineage_id for a in result.report.anomalies)


def test_a_sample_of_acts_matches_the_sources_own_dates(
    corpus: Path, imported: tuple[Vigente, CorpusImport]
) -> None:
    vg, result = imported
    troubled = {a.lineage_id for a in result.report.anomalies
                if a.kind in (AnomalyKind.OVERLAP, AnomalyKind.GAP,
                              AnomalyKind.INVERTED_INTERVAL, AnomalyKind.MISSING_VALID_FROM,
                              AnomalyKind.OPEN_END_CLOSED, AnomalyKind.NON_MONOTONIC_ORDER)}
    acts = raw_versions(corpus)
    untroubled = sorted(set(acts) - troubled)
    sample = random.Random(2026).sample(untroubled, min(60, len(untroubled)))
    checked = 0
    for act in sample:
        for row in acts[act]:
            start = dt.date.fromisoformat(row["effective_from"])
            end = row["effective_until"]
            last = dt.date.fromisoformat(end) if end else start + dt.timedelta(days=400)
            for day in {start, last, start + (last - start) / 2}:
                e = vg.documents.evidence(act, valid_at=day.isoformat(), now=TODAY)
                assert [v.external_id for v in e.in_force] == [row["commit"]], (act, day)
                checked += 1
            if end:  # the day after an inclusive end belongs to the next version (or nothing)
                after = dt.date.fromisoformat(end) + dt.timedelta(days=1)
                e = vg.documents.evidence(act, valid_at=after.isoformat(), now=TODAY)
                assert row["commit"] not in [v.external_id for v in e.in_force], (act, after)
    assert checked > 3 * len(sample)


def test_gaps_answer_missing_and_overlaps_answer_conflict(
    imported: tuple[Vigente, CorpusImport],
) -> None:
    vg, result = imported
    for anomaly in result.report.anomalies:
        if anomaly.kind not in (AnomalyKind.GAP, AnomalyKind.OVERLAP):
            continue
        assert anomaly.period is not None
        e = vg.documents.evidence(anomaly.lineage_id, valid_at=anomaly.period.start, now=TODAY)
        expected = "missing" if anomaly.kind is AnomalyKind.GAP else "conflict"
        assert e.status.value == expected, anomaly.message


def test_a_retroactive_version_was_not_known_before_its_publication(
    imported: tuple[Vigente, CorpusImport],
) -> None:
    vg, result = imported
    anomaly = next(a for a in result.report.anomalies
                   if a.kind is AnomalyKind.RETROACTIVE_PUBLICATION)
    (external_id,) = anomaly.external_ids[:1]
    version = next(v for v in vg.documents.versions(anomaly.lineage_id)
                   if v.external_id == external_id)
    late = vg.documents.evidence(anomaly.lineage_id, valid_at=version.valid_from, now=TODAY)
    assert version.version_id in late.values
    day_before = version.published.date - dt.timedelta(days=1)
    early = vg.documents.evidence(anomaly.lineage_id, valid_at=version.valid_from,
                                  known_at=day_before.isoformat(), now=TODAY)
    assert version.version_id not in early.values


def test_reimporting_changes_nothing(
    corpus: Path, imported: tuple[Vigente, CorpusImport]
) -> None:
    vg, _ = imported
    again = import_corpus(vg, legalize_ee.read(corpus, as_of=TODAY), limit=25)
    assert again.versions_added == 0 and again.knowledge_steps == 0


def test_a_slice_imports_on_every_backend(vg: Vigente) -> None:
    result = import_corpus(vg, legalize_ee.read(LEGALIZE_EE_SLICE, as_of=TODAY), limit=10)
    assert result.lineages == 10 and result.versions_added > 30
    act = vg.documents.versions(vg.lineages()[0][0])[0].lineage_id
    assert vg.documents.evidence(act, now=TODAY).status.value in {"supported", "missing",
                                                                  "conflict"}


def test_a_missing_corpus_file_is_a_clear_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vigente.cli import cli

    out = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), "import-corpus",
                                   "legalize-ee", str(tmp_path / "nope.xz")])
    assert out.exit_code == 1 and out.output.startswith("Error: no corpus file")


def _everything(vg: Vigente) -> list[Any]:
    """Every kernel snapshot and document version of the store, in insertion order."""
    rows: list[Any] = []
    for lineage, _ in vg.lineages():
        rows += [(v.version_id, v.source, v.value_json, str(v.valid_from), str(v.valid_to),
                  str(v.known_from), str(v.known_to)) for v in vg.history(lineage)]
        rows += vg.documents.versions(lineage)
    return rows


def test_batch_boundaries_do_not_change_what_is_written(tmp_path: Path, store_url: str) -> None:
    """The slice written one lineage a batch, a few lineages a batch and all at once: the same
    snapshots and document versions (on every backend)."""
    from vigente.corpus.importer import BATCH_VERSIONS

    written = []
    for batch in (1, 7, BATCH_VERSIONS):
        url = store_url if batch == 1 else str(tmp_path / f"batch-{batch}.db")
        with Vigente.open(url) as vg:
            reader = legalize_ee.read(LEGALIZE_EE_SLICE, as_of=TODAY)
            result = import_corpus(vg, reader, batch=batch)
            written.append((result.as_dict(), _everything(vg)))
    assert written[0][1] and written[0] == written[1] == written[2]


def test_a_step_that_would_rewrite_history_names_the_publication_dates(vg: Vigente) -> None:
    from vigente.errors import HistoryRewriteError
    from vigente.evidence.documents import claim_step
    from vigente.records.documents import DocumentVersion, document_version_id
    from vigente.records.values import Scope
    from vigente.time import parse_instant

    day = parse_instant
    version = DocumentVersion(
        version_id=document_version_id("act", Scope(), "x1", day("2025-01-01"), day("2025-02-01")),
        lineage_id="act", scope=Scope(), external_id="x1", reference=None, title="Act",
        text="text", source_url=None, published=day("2025-02-01"), valid_from=day("2025-01-01"),
        valid_to=None, relation=None, predecessor_id=None,
    )
    assert vg.documents.store_versions([version, version]) == [True, False]
    later = claim_step(version, day("2025-01-01"), None, day("2025-03-01"))
    earlier = claim_step(version, day("2025-01-01"), day("2025-06-01"), day("2025-02-15"))
    with pytest.raises(HistoryRewriteError, match="check the publication dates"):
        vg.documents.apply_steps([later, earlier])
    assert vg.history("act") == []  # the refused batch wrote nothing
