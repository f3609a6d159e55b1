"""Raw bytes of an artifact: the exact bytes, their hash and size, and how they are kept."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from vigente.errors import InvalidValue
from vigente.records.runtime import ContentRef

__all__ = ["COUNT_AT_IMPORT", "INLINE_LIMIT", "TokenCounter", "raw_bytes", "reference",
           "replay_text"]

#: Raw contents up to this many bytes are kept inline in the database; larger ones in the
#: content-addressed blob store.
INLINE_LIMIT = 64 * 1024
#: A tool result over this many bytes has its replay text's tokens counted when it is recorded
#: (and kept beside its bytes), so that no assembly reads or tokenizes it to count them.
COUNT_AT_IMPORT = 64 * 1024


class TokenCounter(Protocol):
    """Counts the tokens of a text in the encoding it is named after (``o200k_base``)."""

    name: str

    def count(self, text: str) -> int: ...


def replay_text(data: bytes, encoding: str) -> str:
    """The text that stands for raw bytes in a transcript replay: the bytes as UTF-8 text, or
    for binary bytes a JSON note of their size and digest."""
    if encoding == "binary":
        return json.dumps(
            {"binary": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        )
    return data.decode("utf-8")


def raw_bytes(content: Any) -> tuple[bytes, str]:
    """The exact bytes of a tool's output and their encoding (``utf-8``, ``json``, ``binary``).

    Text is kept as UTF-8; text that cannot be UTF-8 (lone surrogates, from a JSON escape) is
    kept byte for byte as ``binary`` rather than refused or altered; bytes are kept as given;
    any other JSON value is kept as its JSON text (keys in the order given).
    """
    if isinstance(content, bytes | bytearray | memoryview):
        data = bytes(content)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return data, "binary"
        return data, "utf-8"
    if isinstance(content, str):
        try:
            return content.encode("utf-8"), "utf-8"
        except UnicodeEncodeError:
            return content.encode("utf-8", "surrogatepass"), "binary"
    try:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"tool output is not JSON ({exc}): give a string, bytes or JSON"
                           ) from None
    try:
        return text.encode("utf-8"), "json"
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass"), "binary"


def reference(data: bytes, encoding: str, inline_limit: int) -> ContentRef:
    return ContentRef(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data),
                      encoding=encoding, in_blob=len(data) > inline_limit)
