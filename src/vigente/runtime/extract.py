"""Deriving a compact memory from an artifact's raw bytes, without inventing a value.

An :class:`Extractor` is one small protocol so that a user can plug in a model-written summary;
:class:`DefaultExtractor` is deterministic. For a JSON result it keeps the result's structure
with every short scalar exactly as it was, and turns a list of objects into a table (the field
names once as ``columns``, nested objects flattened into ``a.b`` columns, one row per object),
which is where a JSON result's tokens go; a string too long to be a fact is left out and said
so, never shortened. For text it keeps ``key: value`` lines. Every value of
``facts`` is a value the artifact holds (property-tested); the summary names what was kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["DefaultExtractor", "Extraction", "Extractor", "fact_values"]

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


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


class _Drop:
    """What :meth:`_Walk.compact` returns for a value it leaves out (said so in a note)."""


_DROP = _Drop()


class _Walk:
    """The compact form of a JSON value: the same structure with every short scalar kept
    exactly (a field whose value repeats its object's key, ``{"card_7": {"id": "card_7"}}``, is
    kept once, as the key); a column with the same value in every row is said once, as
    ``every_row``; a list of two or more objects becomes a table (``columns`` named by the objects'
    paths, nested objects flattened into ``a.b`` columns, one row per object, ``null`` for a
    field a row lacks); a list of such lists becomes ``groups`` of rows under one header."""

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
                if isinstance(item, dict):
                    # a field that repeats its object's key is kept once, as the key
                    item = {k: v for k, v in item.items() if v != key or not isinstance(v, str)}
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
        if len(kept) >= 2 and all(isinstance(i, dict) for i in kept):
            return self.table(path, [kept], depth, grouped=False)
        if len(kept) >= 2 and all(
                isinstance(i, list) and i and all(isinstance(x, dict) for x in i) for i in kept):
            return self.table(path, kept, depth, grouped=True)
        out = []
        for n, item in enumerate(kept):
            value = self.compact(f"{path}[{n}]", item, depth + 1)
            if value is not _DROP:
                out.append(value)
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

    name = "default-v2"

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
        try:
            value = json.loads(text)
        except ValueError:
            return self._text(head, text)
        walk = _Walk()
        kept = walk.compact("", value, 0)
        facts: dict[str, Any] = (
            {} if kept is _DROP else kept if isinstance(value, dict) else {"result": kept})
        if walk.full:
            walk.notes.append(f"only the first {MAX_FACTS} values are kept")
        summary = f"{head}: {_describe(facts)}" if facts else f"{head}: no scalar facts"
        return Extraction(summary=summary, facts=facts, limit_notes=tuple(walk.notes),
                          ambiguity_notes=tuple(walk.ambiguities),
                          confidence=1.0,
                          confidence_reason="values copied verbatim from the tool's JSON result")

    def _text(self, head: str, text: str) -> Extraction:
        facts: dict[str, Any] = {}
        for line in text.splitlines():
            key, sep, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if (sep and key and value and len(key) <= 64 and len(value) <= MAX_SCALAR_CHARS
                    and key not in facts and len(facts) < MAX_FACTS):
                facts[key] = value
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
