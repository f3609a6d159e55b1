"""The nesting bound of JSON read from outside, checked before anything walks it.

Every reader of outside JSON (HTTP bodies, MCP arguments, JSON Lines imports, fact values,
transcripts) and the code that walks it afterwards (NUL checks, the schema, extraction,
redaction) recurse once per level; a body nested a thousand levels deep would reach Python's
recursion limit in one of them, after seconds of CPU and a long traceback. So the depth is
measured first, without recursion and at C speed for the bytes between brackets, and a value
deeper than ``MAX_JSON_DEPTH`` is refused with a message that says so.
"""

from __future__ import annotations

import re

__all__ = ["MAX_JSON_DEPTH", "JSONTooDeep", "check_json_depth", "json_depth"]

#: The deepest nesting of arrays and objects accepted anywhere (a document's tool results and
#: values are far shallower; every recursive walk stays well inside Python's recursion limit).
MAX_JSON_DEPTH = 64

# A JSON string (its escapes included), so that brackets inside strings are not counted.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
# every byte but the four brackets, deleted by bytes.translate
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = frozenset(b"[{")


class JSONTooDeep(ValueError):
    """A JSON text nests arrays and objects deeper than the bound."""

    def __init__(self, depth: int, limit: int) -> None:
        self.depth = depth
        self.limit = limit
        super().__init__(
            f"the JSON nests arrays and objects more than {limit} levels deep: flatten it, "
            f"or store the deep part as a string"
        )


def json_depth(data: bytes | str, *, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays and objects in ``data`` (0 for a scalar), counted without
    recursion; brackets inside strings do not count. Malformed JSON gets a number too (the
    parser refuses it afterwards). With ``stop_above``, the answer is exact only above it:
    the scan stops as soon as the depth exceeds it, and a result at or below it says only
    that the depth does not exceed it."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if stop_above is not None and raw.count(b"[") + raw.count(b"{") <= stop_above:
        return 0  # cannot nest deeper than it opens (strings included): the common case, fast
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    openers = sum(brackets.count(c) for c in (b"[", b"{"))
    if stop_above is not None and openers <= stop_above:
        return openers  # cannot nest deeper than it opens
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif depth:
            depth -= 1
    return deepest


def check_json_depth(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise JSONTooDeep when ``data`` nests deeper than ``limit``."""
    depth = json_depth(data, stop_above=limit)
    if depth > limit:
        raise JSONTooDeep(depth, limit)
