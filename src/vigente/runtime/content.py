"""Raw bytes of an artifact: the exact bytes, their hash and size, and how they are kept."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from vigente.errors import InvalidValue
from vigente.runtime.records import ContentRef

__all__ = ["INLINE_LIMIT", "raw_bytes", "reference"]

#: Raw contents up to this many bytes are kept inline in the database; larger ones in the
#: content-addressed blob store.
INLINE_LIMIT = 64 * 1024


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
