"""Deriving a compact memory from an artifact's raw bytes, without inventing a value.

An :class:`Extractor` is one small protocol so that a user can plug in a model-written summary;
:class:`DefaultExtractor` is deterministic. For a JSON result it keeps the result's structure
with every short scalar exactly as it was, and turns a list of objects that share their fields
into a table (the field names once as ``columns``, nested objects flattened into ``a.b``
columns, one row per object), which is where a JSON result's tokens go; a string too long to be
a fact is left out and said so, never shortened. For text it keeps ``key: value`` lines.

The compact form is exact or says it is not: :func:`expand` decodes it back, and
:func:`decodes_to` compares that with the artifact's values read exactly (a number by its JSON
text: ``3.14159265358979323846`` and ``1e400`` are not floats; a repeated key is not one value).
A number no float keeps is kept as its JSON text (a string) with a note; whatever does not
decode back to the result (a value left out, a key path a table could not keep) is a limit note.
:func:`unheld` names the facts of a writer's memory that its artifact does not hold.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from vigente.jsonlimits import check_json_limits

__all__ = ["DefaultExtractor", "Extraction", "Extractor", "JSONNumber", "compact", "decodes_to",
           "expand", "fact_values", "parse_exact", "reading", "unheld"]

MAX_FACTS = 400  # scalar values kept
MAX_ROWS = 50
MAX_SCALAR_CHARS = 200
MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor derived: the memory's summary, facts and notes."""

    summary: str
    facts: dict[str, Any] = field(default_factory=dict)
    limit_notes: tuple[str, ...] = ()
    ambiguity_notes: tuple[str, ...] = ()
    confidence: float | None = None
    confidence_reason: str | None = None


class Extractor(Protocol):
    """Derives a memory from one artifact's raw arguments and result."""

    name: str

    def extract(self, tool_name: str, status: str, arguments: bytes, result: bytes
                ) -> Extraction | None:
        """The memory to derive, or ``None`` for none."""


class JSONNumber:
    """A JSON number that no Python ``float``/``int`` keeps as written (more digits than a
    float holds, ``1e400``, ``1E5``, ``10.50``, ``-0``, or ``NaN``/``Infinity``): its text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JSONNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("JSONNumber", self.text))

    def __repr__(self) -> str:
        return f"JSONNumber({self.text!r})"


def _float(text: str) -> Any:
    value = float(text)
    # json writes a finite float as its repr: the same test as json.dumps(value) == text
    return value if math.isfinite(value) and float.__repr__(value) == text else JSONNumber(text)


def _int(text: str) -> Any:
    try:
        value = int(text)
    except ValueError:  # over the interpreter's digit limit
        return JSONNumber(text)
    return value if str(value) == text else JSONNumber(text)


class _Repeats(dict[str, Any]):
    """An object whose text repeats a key (``json`` keeps the last value only)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    return out if len(out) == len(pairs) else _Repeats(out)


_NOT_READ = object()
_READING = threading.local()


@contextmanager
def reading(data: bytes) -> Iterator[None]:
    """Within the block, :func:`parse_exact` of ``data`` (this bytes object) parses it once:
    the extractor, the memory's form and its lossless check read the one result being
    recorded, and a large result is not parsed three times (the value is never modified)."""
    _READING.entry = [data, _NOT_READ, False]
    try:
        yield
    finally:
        _READING.entry = None


def _parse(data: bytes) -> tuple[tuple[Any] | None, bool]:
    """:func:`parse_exact` and whether an object of the value repeats a key."""
    repeated = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        out = dict(items)
        if len(out) == len(items):
            return out
        repeated = True
        return _Repeats(out)

    try:
        # a result is parsed as JSON only within the bounds of a request body: a string
        # content holding a JSON text of a million keys is read as text, not parsed
        check_json_limits(data)
        text = data.decode("utf-8")
        return (json.loads(text, parse_float=_float, parse_int=_int,
                           parse_constant=JSONNumber, object_pairs_hook=pairs),), repeated
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, False


def parse_exact(data: bytes) -> tuple[Any] | None:
    """The JSON value of ``data`` with every number as written (a :class:`JSONNumber` where
    no float or int keeps it), as a 1-tuple; ``None`` when ``data`` is not JSON text."""
    entry = getattr(_READING, "entry", None)
    if entry is None or entry[0] is not data:
        return _parse(data)[0]
    if entry[1] is _NOT_READ:
        entry[1], entry[2] = _parse(data)
    parsed: tuple[Any] | None = entry[1]
    return parsed


def _canon(value: Any) -> str:
    """A value's exact identity: its JSON text with sorted keys (``true`` is not ``1``, ``1``
    is not ``1.0``, a :class:`JSONNumber` is not a string)."""
    def default(o: Any) -> Any:
        if isinstance(o, JSONNumber):
            return {"\u0000number": o.text}
        raise TypeError(type(o).__name__)  # pragma: no cover - JSON values only

    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=default)


def _repeats(value: Any) -> bool:
    entry = getattr(_READING, "entry", None)
    if entry is not None and entry[1] is not _NOT_READ and entry[1] is not None and (
            entry[1][0] is value):
        return bool(entry[2])  # found while parsing the result being read
    if isinstance(value, _Repeats):
        return True
    if isinstance(value, dict):
        return any(_repeats(v) for v in value.values())
    if isinstance(value, list):
        return any(_repeats(v) for v in value)
    return False


def _is_table(value: dict[str, Any]) -> bool:
    columns = value.get("columns")
    body = "rows" if "rows" in value else "groups"
    if (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
            or ("rows" in value) == ("groups" in value)
            or not set(value) <= {"columns", body, "every_row"}
            or not isinstance(value.get("every_row", {}), dict)):
        return False
    groups = [value["rows"]] if body == "rows" else value["groups"]
    return isinstance(groups, list) and all(
        isinstance(g, list) and all(isinstance(r, list) and len(r) == len(columns) for r in g)
        for g in groups)


def _unflatten(cells: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in cells.items():
        *parents, last = name.split(".")
        at = out
        for p in parents:
            at = at.setdefault(p, {})
        at[last] = value
    return out


def expand(value: Any) -> Any:
    """The values a compact form stands for: every table back to its list of objects."""
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        if not _is_table(value):
            return {k: expand(v) for k, v in value.items()}
        every = {k: expand(v) for k, v in value.get("every_row", {}).items()}

        def rows(group: list[list[Any]]) -> list[Any]:
            return [_unflatten({**every, **{c: expand(x) for c, x in
                                            zip(value["columns"], row, strict=True)}})
                    for row in group]

        if "rows" in value:
            return rows(value["rows"])
        return [rows(g) for g in value["groups"]]
    return value


def decodes_to(facts: dict[str, Any], result: bytes) -> bool:
    """Is ``facts`` the compact form of ``result`` exactly: does it decode back to every key,
    path and value of the result (numbers by their JSON text)? The proof of "lossless"."""
    parsed = parse_exact(result)
    if parsed is None or _repeats(parsed[0]):
        return False
    value = parsed[0]
    if isinstance(value, dict):
        return _canon(expand(facts)) == _canon(value)
    return set(facts) == {"result"} and _canon(expand(facts["result"])) == _canon(value)


def _text_lines(text: str) -> dict[str, str]:
    facts: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if (sep and key and value and len(key) <= 64 and len(value) <= MAX_SCALAR_CHARS
                and key not in facts and len(facts) < MAX_FACTS):
            facts[key] = value
    return facts


def _unheld_in(path: str, fact: Any, held: Any, out: list[str]) -> None:
    if isinstance(fact, dict):
        if not isinstance(held, dict):
            out.append(path or "(the facts)")
            return
        for key, value in fact.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in held:
                _unheld_in(sub, value, held[key], out)
            else:
                out.append(sub)
    elif isinstance(fact, list):
        if not isinstance(held, list) or len(fact) > len(held):
            out.append(path)
            return
        for n, (value, there) in enumerate(zip(fact, held, strict=False)):
            _unheld_in(f"{path}[{n}]", value, there, out)
    elif _canon(fact) != _canon(held):
        out.append(path)


def unheld(facts: dict[str, Any], result: bytes | None) -> list[str]:
    """The paths of ``facts`` whose value ``result`` does not hold at the same path, exactly
    (a JSON result's keys and positions; ``result`` names a non-object result; a text result's
    ``key: value`` lines). ``None`` (no readable result) holds nothing."""
    if not facts:
        return []
    if result is None:
        return list(facts)
    parsed = parse_exact(result)
    if parsed is None:
        try:
            lines = _text_lines(result.decode("utf-8"))
        except UnicodeDecodeError:
            return list(facts)
        return [k for k, v in facts.items()
                if k not in lines or not (v == lines[k] if isinstance(v, str) else
                                          _scalar(v) and not isinstance(v, str)
                                          and json.dumps(v) == lines[k])]
    value = parsed[0] if isinstance(parsed[0], dict) else {"result": parsed[0]}
    out: list[str] = []
    _unheld_in("", facts, value, out)
    return out


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str | JSONNumber)


class _Drop:
    """What :meth:`_Walk.compact` returns for a value it leaves out (said so in a note)."""


_DROP = _Drop()


class _Walk:
    """The compact form of a JSON value: the same structure with every short scalar kept
    exactly; a list of two or more objects with the same fields (by path) becomes a table
    (``columns`` named by the objects' paths, nested objects flattened into ``a.b`` columns, one
    row per object) and a column with the same value in every row is said once, as
    ``every_row``; a list of such lists becomes ``groups`` of rows under one header. Objects
    whose fields differ, or whose keys hold a ``.`` (a path a column name could not tell from
    nesting), stay a list of objects: every key and path survives."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.ambiguities: list[str] = []
        self.leaves = 0
        self.full = False

    def scalar(self, path: str, value: Any) -> Any:
        if isinstance(value, str) and len(value) > MAX_SCALAR_CHARS:
            self.notes.append(f"{path}: a text of {len(value)} characters is not kept as a "
                              "fact; rehydrate the artifact for it")
            return _DROP
        if self.leaves >= MAX_FACTS:
            self.full = True
            return _DROP
        self.leaves += 1
        if isinstance(value, JSONNumber):
            self.notes.append(f"{path or 'result'}: the number {value.text} is kept as its JSON "
                              "text (a string): no float holds it exactly")
            return value.text
        return value

    def compact(self, path: str, value: Any, depth: int) -> Any:
        if _scalar(value):
            return self.scalar(path, value)
        if depth >= MAX_DEPTH:
            self.notes.append(f"{path}: nested deeper than {MAX_DEPTH} levels, not kept")
            return _DROP
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                kept = self.compact(f"{path}.{key}" if path else str(key), item, depth + 1)
                if kept is not _DROP:
                    out[str(key)] = kept
            return out
        if isinstance(value, list):
            return self.compact_list(path or "result", value, depth)
        return _DROP  # pragma: no cover - JSON has no other kinds

    def compact_list(self, path: str, items: list[Any], depth: int) -> Any:
        kept = items[:MAX_ROWS]
        if len(items) > MAX_ROWS:
            self.notes.append(f"{path}: first {MAX_ROWS} of {len(items)} items kept; "
                              "rehydrate the artifact for the rest")
        if len(kept) >= 2 and all(isinstance(i, dict) for i in kept) and _tabular(kept):
            return self.table(path, [kept], depth, grouped=False)
        if len(kept) >= 2 and all(
                isinstance(i, list) and i and all(isinstance(x, dict) for x in i) for i in kept
        ) and _tabular([x for i in kept for x in i]):
            return self.table(path, kept, depth, grouped=True)
        out = []
        for n, item in enumerate(kept):
            value = self.compact(f"{path}[{n}]", item, depth + 1)
            # a value left out is a null (said in a note): the items after it keep their index
            out.append(None if value is _DROP else value)
        return out

    def table(self, path: str, groups: list[list[Any]], depth: int, grouped: bool) -> Any:
        flat = [[_flatten(item) for item in group] for group in groups]
        columns: list[str] = []
        for group in flat:
            for item in group:
                for key in item:
                    if key not in columns:
                        columns.append(key)
        missing = False
        rows_of: list[list[list[Any]]] = []
        dropped: set[str] = set()
        for group in flat:
            rows: list[list[Any]] = []
            for item in group:
                row: list[Any] = []
                for column in columns:
                    if column not in item:
                        missing = True
                        row.append(None)
                        continue
                    cell = self.compact(f"{path}.{column}", item[column], depth + 1)
                    if cell is _DROP:
                        dropped.add(column)
                        cell = None
                    row.append(cell)
                rows.append(row)
            rows_of.append(rows)
        if missing:
            self.ambiguities.append(f"{path}: a null cell may stand for a field the row lacks")
        if dropped:
            self.notes.append(f"{path}: a null cell of {', '.join(sorted(dropped))} stands for "
                              "a value left out")
        # a column with one value in every row is said once
        every = [
            n
            for n, column in enumerate(columns)
            if column not in dropped
            and all(column in item for group in flat for item in group)
            and len({json.dumps(row[n]) for rows in rows_of for row in rows}) == 1
        ]
        table: dict[str, Any] = {}
        if every and len(every) < len(columns):
            first = rows_of[0][0]
            table["every_row"] = {columns[n]: first[n] for n in every}
            keep = [n for n in range(len(columns)) if n not in every]
            columns = [columns[n] for n in keep]
            rows_of = [[[row[n] for n in keep] for row in rows] for rows in rows_of]
        table["columns"] = columns
        if grouped:
            table["groups"] = rows_of
        else:
            table["rows"] = rows_of[0]
        return table


def _dotless(value: Any) -> bool:
    """No key of the object (or the objects it nests) holds a ``.``."""
    return all("." not in k and (not isinstance(v, dict) or _dotless(v))
               for k, v in value.items())


def _tabular(items: list[Any]) -> bool:
    """Objects that a table keeps exactly: the same field paths in each, none with a ``.``."""
    if not all(isinstance(i, dict) and _dotless(i) for i in items):
        return False
    first = list(_flatten(items[0]))
    return all(set(_flatten(i)) == set(first) for i in items)


def _flatten(item: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """An object's fields by path: nested objects become ``a.b`` columns; lists stay cells."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _describe(facts: dict[str, Any]) -> str:
    parts = []
    for path, value in list(facts.items())[:12]:
        if isinstance(value, dict) and "columns" in value:
            n = len(value.get("rows", [])) or sum(len(g) for g in value.get("groups", []))
            parts.append(f"{path}: {n} rows ({', '.join(value['columns'])})")
        elif isinstance(value, dict):
            parts.append(f"{path}: {len(value)} fields ({', '.join(list(value)[:6])})")
        else:
            parts.append(f"{path}={json.dumps(value, ensure_ascii=False)}")
    if len(facts) > 12:
        parts.append(f"… {len(facts) - 12} more facts")
    return "; ".join(parts)


def _call(tool_name: str, arguments: bytes) -> str:
    try:
        args = json.loads(arguments.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return f"{tool_name}(…)"
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        if len(shown) <= 160:
            return f"{tool_name}({shown})"
        return f"{tool_name}({', '.join(str(k) for k in args)})"
    return f"{tool_name}(…)"


class DefaultExtractor:
    """The deterministic extractor (see the module docstring)."""

    name = "default-v3"

    def extract(self, tool_name: str, status: str, arguments: bytes, result: bytes
                ) -> Extraction | None:
        head = f"{_call(tool_name, arguments)} {status}"
        try:
            text = result.decode("utf-8")
        except UnicodeDecodeError:
            return Extraction(
                summary=f"{head}: {len(result)} bytes of binary output",
                limit_notes=("binary output: no fact extracted; rehydrate the artifact",),
            )
        parsed = parse_exact(result)
        if parsed is None:
            return self._text(head, text)
        value = parsed[0]
        walk = _Walk()
        if _repeats(value):
            walk.notes.append("the result repeats a key within an object: only its last value "
                              "is kept; rehydrate the artifact for the others")
        kept = walk.compact("", value, 0)
        facts: dict[str, Any] = (
            {} if kept is _DROP else kept if isinstance(value, dict) else {"result": kept})
        if walk.full:
            walk.notes.append(f"only the first {MAX_FACTS} values are kept")
        if not walk.notes and not decodes_to(facts, result):
            walk.notes.append("the compact form does not decode back to the result exactly; "
                              "rehydrate the artifact for exact values")
        summary = f"{head}: {_describe(facts)}" if facts else f"{head}: no scalar facts"
        return Extraction(summary=summary, facts=facts, limit_notes=tuple(walk.notes),
                          ambiguity_notes=tuple(walk.ambiguities),
                          confidence=1.0,
                          confidence_reason="values copied verbatim from the tool's JSON result")

    def _text(self, head: str, text: str) -> Extraction:
        facts: dict[str, Any] = dict(_text_lines(text))
        notes: tuple[str, ...] = ()
        if len(text) <= MAX_SCALAR_CHARS and "\n" not in text:
            summary = f"{head}: {text}"
        else:
            summary = f"{head}: {len(text)} characters of text"
            notes = ("text result: only `key: value` lines are kept as facts; rehydrate the "
                     "artifact for the rest",)
        return Extraction(summary=summary, facts=facts, limit_notes=notes,
                          confidence=1.0 if facts else None,
                          confidence_reason="lines copied verbatim" if facts else None)


def compact(value: dict[str, Any]) -> dict[str, Any]:
    """The default extractor's compact form of a JSON object (without its notes)."""
    kept = _Walk().compact("", value, 0)
    return {} if kept is _DROP else dict(kept)


def fact_values(facts: dict[str, Any]) -> list[Any]:
    """Every scalar value inside ``facts`` (rows and lists flattened), for checks."""
    values: list[Any] = []

    def add(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key != "columns":
                    add(item)
        elif isinstance(value, list):
            for item in value:
                add(item)
        else:
            values.append(value)

    add(facts)
    return values
