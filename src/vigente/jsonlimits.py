"""The bounds of JSON read from outside, checked before anything parses or walks it.

Every reader of outside JSON (HTTP bodies, MCP messages, JSON Lines imports, fact values,
transcripts) and the code that walks it afterwards (the parser, the schema, NUL checks,
extraction, redaction) pays per value, per key and per level: a body nested a thousand levels
deep reaches Python's recursion limit; 8 MB of one object with 700,000 keys costs seconds of
CPU in the parser and the schema before any answer, and a server's event loop answers no one
meanwhile. So a text's shape is measured first, at C speed and without building anything, and
a text past a bound is refused with a message naming the bound and how to fix it.

How the measure stays cheap: escaped backslashes and escaped quotes are deleted, after which
every remaining quote delimits a string (for valid JSON), so the strings are counted by
counting quotes; a text whose commas, colons and brackets (those inside strings included) are
under the bounds cannot exceed them, which answers most texts after a few ``bytes.count``;
only a text near a bound has its strings cut out (one ``split``) and its structure counted
exactly. The counts are exact for valid JSON (a property test holds them equal to what
``json.loads`` builds); malformed JSON gets numbers too, and the parser refuses it afterwards.

    JSONLimitExceeded (ValueError)   a text past one of the bounds of :class:`JSONLimits`
    └── JSONTooDeep                  nested deeper than ``depth`` (the first bound: kept apart)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "JSON_LIMITS",
    "MAX_JSON_DEPTH",
    "JSONLimitExceeded",
    "JSONLimits",
    "JSONMeter",
    "JSONShape",
    "JSONTooDeep",
    "check_json_depth",
    "check_json_limits",
    "json_depth",
    "json_shape",
]

#: The deepest nesting of arrays and objects accepted anywhere (a document's tool results and
#: values are far shallower; every recursive walk stays well inside Python's recursion limit).
MAX_JSON_DEPTH = 64


@dataclass(frozen=True, slots=True)
class JSONLimits:
    """The most any one JSON text read from outside may hold. The defaults admit every
    request vigente's own clients send (a batch of 10,000 events; a tool result of thousands
    of rows) and bound what the parser and the schema can be made to do with 8 MB: parsing
    100,000 distinct keys, the costliest text within them, is about a tenth of a second."""

    #: nesting of arrays and objects
    depth: int = MAX_JSON_DEPTH
    #: members of any one object
    members: int = 10_000
    #: members of all objects together
    keys: int = 100_000
    #: values (every scalar, array and object, the members' values and array items)
    values: int = 250_000
    #: strings (keys included)
    strings: int = 200_000
    #: characters of one number (Python parses long integers in quadratic time, and none of
    #: vigente's values needs more digits than this)
    number_chars: int = 128


#: The bounds every surface applies unless told otherwise.
JSON_LIMITS = JSONLimits()

# what each bound is called in a message, and what to do about it
_ADVICE: dict[str, tuple[str, str]] = {
    "members": ("members in one object", "split the object, or send the wide part as a list"),
    "keys": ("object members in all", "send fewer or smaller objects per request"),
    "values": ("values", "send fewer values per request (split a batch)"),
    "strings": ("strings", "send fewer strings per request (split a batch)"),
    "number_chars": ("characters in one number", "send the number as a string"),
}


class JSONLimitExceeded(ValueError):
    """A JSON text holds more than one of its bounds allows: ``limit`` names the bound (a
    field of :class:`JSONLimits`), ``bound`` its value; ``found`` what was measured (at least
    ``bound + 1``; for a cut-short measure, a lower bound)."""

    code = "json_too_large"

    def __init__(self, limit: str, bound: int, found: int) -> None:
        self.limit, self.bound, self.found = limit, bound, found
        what, fix = _ADVICE.get(limit, (limit, "send less"))
        super().__init__(f"the JSON holds more than {bound} {what} ({found}): {fix}")


class JSONTooDeep(JSONLimitExceeded):
    """A JSON text nests arrays and objects deeper than the bound."""

    code = "json_too_deep"

    def __init__(self, depth: int, limit: int) -> None:
        self.depth = depth
        ValueError.__init__(
            self,
            f"the JSON nests arrays and objects more than {limit} levels deep: flatten it, "
            f"or store the deep part as a string",
        )
        self.limit, self.bound, self.found = "depth", limit, depth


@dataclass(frozen=True, slots=True)
class JSONShape:
    """What a JSON text holds, counted without parsing it: its nesting ``depth`` (0 for a
    scalar), the members of its ``widest`` object, its ``keys`` (members of all objects),
    ``values`` (every scalar, array and object), ``strings`` (keys included) and the
    characters of its ``longest_number``."""

    depth: int
    widest: int
    keys: int
    values: int
    strings: int
    longest_number: int


# every byte but the four brackets, deleted by bytes.translate
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{}:")
# both kinds of bracket as one: the depth does not care which
_ONE_BRACKET = bytes.maketrans(b"{}", b"[]")
_WHITESPACE = b" \t\r\n"
_NUMBER_BYTES = b"-+.0123456789eE"
# a number's bytes to "1", every other byte to a space: a number is a run of "1"s
_NUMBER_RUNS = bytes(0x31 if b in _NUMBER_BYTES else 0x20 for b in range(256))


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data


def _unescaped(raw: bytes) -> bytes:
    """``raw`` without its escaped backslashes and escaped quotes: every quote left delimits
    a string (in valid JSON a run of backslashes pairs up from its first, as ``replace``
    pairs them, and only ``\\\\`` has a backslash second)."""
    if b"\\" not in raw:
        return raw
    return raw.replace(b"\\\\", b"").replace(b'\\"', b"")


def _structure(plain: bytes) -> bytes:
    """An unescaped text with each string cut down to ``_`` (so that ``[""]`` stays a
    container with an item)."""
    if b'"' not in plain:
        return plain
    return b"_".join(plain.split(b'"')[0::2])


def _depth_of(structure: bytes, stop_above: int | None) -> int:
    """The nesting depth of a text without strings: each pass deletes every empty container
    (one ``replace``: the leaves of the tree), so the passes that empty it are its depth.
    With ``stop_above``, stops after that many passes and one more."""
    brackets = structure.translate(_ONE_BRACKET, _NOT_BRACKETS)
    depth = 0
    while brackets and (stop_above is None or depth <= stop_above):
        fewer = brackets.replace(b"[]", b"")
        if len(fewer) == len(brackets):  # malformed: what is left never pairs up
            return depth + _walked_depth(brackets, stop_above)
        brackets, depth = fewer, depth + 1
    return depth


def _walked_depth(brackets: bytes, stop_above: int | None) -> int:
    depth = deepest = 0
    for byte in brackets:
        if byte == 0x5B:  # [
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif depth:
            depth -= 1
    return deepest


_INNERMOST_OBJECT = re.compile(rb"\{:*\}")
_INNERMOST = re.compile(rb"\{:*\}|\[\]")


def _widest_of(structure: bytes, stop_above: int | None = None) -> int:
    """The members of the widest object of a text without strings (each member has one colon
    at its object's level): each pass measures the objects that hold no container and then
    deletes every container that holds none, as :func:`_depth_of` does. With
    ``stop_above``, stops as soon as one object has more."""
    marks = structure.translate(None, _NOT_STRUCTURE)
    widest = 0
    while marks:
        leaves = _INNERMOST_OBJECT.findall(marks)
        if leaves:
            widest = max(widest, max(map(len, leaves)) - 2)
            if stop_above is not None and widest > stop_above:
                return widest
        fewer = _INNERMOST.sub(b"", marks)
        if len(fewer) == len(marks):  # malformed: no container left to measure
            break
        marks = fewer
    return widest


def _longest_run(structure: bytes) -> int:
    """The characters of the longest number in a text without strings."""
    literals = structure.replace(b"true", b" ").replace(b"false", b" ")
    runs = literals.translate(_NUMBER_RUNS).split()
    return max(map(len, runs), default=0)


def json_depth(data: bytes | str, *, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays and objects in ``data`` (0 for a scalar), counted without
    recursion; brackets inside strings do not count. Malformed JSON gets a number too (the
    parser refuses it afterwards). With ``stop_above``, the answer is exact only above it:
    the scan stops as soon as the depth exceeds it, and a result at or below it says only
    that the depth does not exceed it."""
    raw = _as_bytes(data)
    if stop_above is not None and raw.count(b"[") + raw.count(b"{") <= stop_above:
        return 0  # cannot nest deeper than it opens (strings included): the common case, fast
    structure = _structure(_unescaped(raw))
    if stop_above is not None and structure.count(b"[") + structure.count(b"{") <= stop_above:
        return 0
    return _depth_of(structure, stop_above)


def check_json_depth(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise JSONTooDeep when ``data`` nests deeper than ``limit``."""
    depth = json_depth(data, stop_above=limit)
    if depth > limit:
        raise JSONTooDeep(depth, limit)


def json_shape(data: bytes | str) -> JSONShape:
    """Everything :class:`JSONShape` counts, exactly (for valid JSON), in one pass."""
    plain = _unescaped(_as_bytes(data))
    structure = _structure(plain)
    return _shape(plain, structure)


def _shape(plain: bytes, structure: bytes) -> JSONShape:
    compact = structure.translate(None, _WHITESPACE)
    opened = compact.count(b"[") + compact.count(b"{")
    empty = compact.count(b"[]") + compact.count(b"{}")
    values = 1 + compact.count(b",") + opened - empty if compact else 1
    return JSONShape(
        depth=_depth_of(compact, None),
        widest=_widest_of(compact),
        keys=compact.count(b":"),
        values=values,
        strings=plain.count(b'"') // 2,
        longest_number=_longest_run(structure),
    )


def check_json_limits(data: bytes | str, limits: JSONLimits = JSON_LIMITS) -> None:
    """Raise :class:`JSONLimitExceeded` (:class:`JSONTooDeep` for the nesting) when ``data``
    holds more than ``limits`` allows. Cheap on every text: a few ``bytes.count`` answer a
    text whose punctuation, strings included, is under the bounds; only a text near one has
    its strings cut out, and the per-object walk runs only when the members in all could
    exceed the members of one."""
    raw = _as_bytes(data)
    plain = _unescaped(raw)
    strings = plain.count(b'"') // 2
    if strings > limits.strings:
        raise JSONLimitExceeded("strings", limits.strings, strings)
    colons, commas = plain.count(b":"), plain.count(b",")
    opened = plain.count(b"[") + plain.count(b"{")
    if (colons <= min(limits.members, limits.keys) and commas + opened + 1 <= limits.values
            and opened <= limits.depth
            and b"1" * (limits.number_chars + 1) not in plain.translate(_NUMBER_RUNS)):
        return  # nothing in it, strings included, reaches a bound
    structure = _structure(plain)
    compact = structure.translate(None, _WHITESPACE)
    opened = compact.count(b"[") + compact.count(b"{")
    values = 1 + compact.count(b",") + opened - compact.count(b"[]") - compact.count(b"{}")
    if values > limits.values:
        raise JSONLimitExceeded("values", limits.values, values)
    keys = compact.count(b":")
    if keys > limits.keys:
        raise JSONLimitExceeded("keys", limits.keys, keys)
    if opened > limits.depth:
        depth = _depth_of(compact, limits.depth)
        if depth > limits.depth:
            raise JSONTooDeep(depth, limits.depth)
    longest = _longest_run(structure) if len(structure) > limits.number_chars else 0
    if longest > limits.number_chars:
        raise JSONLimitExceeded("number_chars", limits.number_chars, longest)
    if keys > limits.members:
        widest = _widest_of(compact, stop_above=limits.members)
        if widest > limits.members:
            raise JSONLimitExceeded("members", limits.members, widest)


class JSONMeter:
    """Measures a JSON text as it arrives, piece by piece (an HTTP body's chunks), and
    raises :class:`JSONLimitExceeded` from :meth:`feed` as soon as the text so far holds more
    strings, members, values, levels or digits of one number than allowed, so a hostile body is
    refused without reading the rest of it, and each step is a few C calls over one piece
    (a server's event loop is never held for long). Depth and the members of one object are
    checked as it arrives too; the members of one object by :meth:`finish`, on the structure
    kept (strings cut out). A text fed in any pieces is measured as the whole text is."""

    def __init__(self, limits: JSONLimits = JSON_LIMITS) -> None:
        self.limits = limits
        self._carry = b""  # an odd trailing backslash: it escapes the next piece's first byte
        self._in_string = False
        self._quotes = self._keys = self._commas = self._opened = self._empties = 0
        self._last = b""  # the last byte of the structure so far (whitespace aside)
        self._run = 0  # number characters at the end of the structure so far
        self._depth = 0  # the nesting at the end of the text so far
        self._tail = b""  # the last byte of the structure so far (whitespace included)
        self._structure: list[bytes] = []

    def feed(self, piece: bytes) -> None:
        """Measure the next ``piece`` of the text."""
        data = self._carry + piece if self._carry else piece
        trailing = len(data) - len(data.rstrip(b"\\"))
        if trailing % 2:
            self._carry, data = b"\\", data[:-1]
        else:
            self._carry = b""
        plain = _unescaped(data)
        quotes = plain.count(b'"')
        if (self._quotes + quotes) // 2 > self.limits.strings:  # before any split
            found = (self._quotes + quotes) // 2
            raise JSONLimitExceeded("strings", self.limits.strings, found)
        if not quotes:
            structure = b"_" if self._in_string and plain else plain
        else:
            parts = plain.split(b'"')
            starts_inside = self._in_string
            structure = b"_".join(parts[1::2] if starts_inside else parts[0::2])
            self._in_string ^= quotes % 2 == 1
            if starts_inside:
                structure = b"_" + structure
            if self._in_string:
                structure += b"_"
        self._quotes += quotes
        compact = structure.translate(None, _WHITESPACE)
        if compact:
            if self._last + compact[:1] in (b"[]", b"{}"):
                self._empties += 1
            self._last = compact[-1:]
            self._commas += compact.count(b",")
            self._keys += compact.count(b":")
            opens = compact.count(b"[") + compact.count(b"{")
            self._opened += opens
            self._empties += compact.count(b"[]") + compact.count(b"{}")
            self._structure.append(compact)
            self._nest(compact, opens)
        self._check_numbers(structure)
        self._check_counts(exact=False)

    def _nest(self, compact: bytes, opens: int) -> None:
        """Follow the nesting through one piece: walked bracket by bracket only when it
        could pass the bound (its opening brackets on top of the depth it starts at), and
        then only until it does."""
        limit = self.limits.depth
        closes = compact.count(b"]") + compact.count(b"}")
        if self._depth + opens <= limit:
            self._depth = max(0, self._depth + opens - closes)
            return
        depth = self._depth
        for byte in compact.translate(_ONE_BRACKET, _NOT_BRACKETS):
            if byte == 0x5B:  # [
                depth += 1
                if depth > limit:
                    raise JSONTooDeep(depth, limit)
            elif depth:
                depth -= 1
        self._depth = depth

    def _check_numbers(self, structure: bytes) -> None:
        limit = self.limits.number_chars
        # the e of true and false is no number's (outside strings only literals hold a u or
        # an s, and a literal may be cut between two pieces)
        before, self._tail = self._tail, structure[-1:] or self._tail
        structure = structure.replace(b"ue", b"  ").replace(b"se", b"  ")
        if structure[:1] == b"e" and before in (b"u", b"s"):
            structure = b" " + structure[1:]
        runs = structure.translate(_NUMBER_RUNS)
        leading = len(runs) - len(runs.lstrip(b"1"))
        longest = self._run + leading
        if leading == len(runs):
            self._run = longest
        else:
            if b"1" * (limit + 1) in runs:
                longest = max(longest, _longest_run(structure))
            self._run = len(runs) - len(runs.rstrip(b"1"))
        if longest > limit:
            raise JSONLimitExceeded("number_chars", limit, longest)

    def _values(self) -> int:
        return 1 + self._commas + self._opened - self._empties

    def _check_counts(self, *, exact: bool) -> None:
        limits = self.limits
        strings = self._quotes // 2
        if strings > limits.strings:
            raise JSONLimitExceeded("strings", limits.strings, strings)
        if self._keys > limits.keys:
            raise JSONLimitExceeded("keys", limits.keys, self._keys)
        # a container still open at the end of a piece may yet close empty
        values = self._values() - (0 if exact or self._last not in (b"[", b"{") else 1)
        if values > limits.values:
            raise JSONLimitExceeded("values", limits.values, values)

    def finish(self) -> None:
        """The whole text has been fed: check what needs all of it (depth, widest object)."""
        if self._carry:
            self.feed(b"")  # malformed (a backslash last): measured as it stands
        self._check_counts(exact=True)
        limits = self.limits
        if self._keys > limits.members:
            widest = _widest_of(b"".join(self._structure), stop_above=limits.members)
            if widest > limits.members:
                raise JSONLimitExceeded("members", limits.members, widest)
