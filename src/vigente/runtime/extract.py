"""Deriving a compact memory from an artifact's raw bytes, without inventing a value.

An :class:`Extractor` is one small protocol so that a user can plug in a model-written summary;
:class:`DefaultExtractor` is deterministic. For a JSON result it keeps identifiers and scalar
facts exactly (a dotted path to each value), short lists as they are and long lists of objects
as compact rows (columns and rows of the scalar fields); a string too long to be a fact is left
out and said so, never shortened. For text it keeps ``key: value`` lines. Every value of
``facts`` is a value the artifact holds (property-tested); the summary names what was kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["DefaultExtractor", "Extraction", "Extractor", "fact_values"]

MAX_FACTS = 120
MAX_ROWS = 50
MAX_SCALAR_CHARS = 200
MAX_DEPTH = 4
SHORT_LIST = 8


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


class _Walk:
    def __init__(self) -> None:
        self.facts: dict[str, Any] = {}
        self.notes: list[str] = []
        self.full = False

    def put(self, path: str, value: Any) -> None:
        if len(self.facts) >= MAX_FACTS:
            self.full = True
            return
        self.facts[path] = value

    def walk(self, path: str, value: Any, depth: int) -> None:
        if _scalar(value):
            if isinstance(value, str) and len(value) > MAX_SCALAR_CHARS:
                self.notes.append(f"{path or 'result'}: a text of {len(value)} characters is "
                                  "not kept as a fact; rehydrate the artifact for it")
                return
            self.put(path or "result", value)
        elif isinstance(value, dict):
            if depth >= MAX_DEPTH:
                self.notes.append(f"{path}: nested deeper than {MAX_DEPTH} levels, not kept")
                return
            for key, item in value.items():
                self.walk(f"{path}.{key}" if path else str(key), item, depth + 1)
        elif isinstance(value, list):
            self.walk_list(path or "result", value, depth)

    def walk_list(self, path: str, items: list[Any], depth: int) -> None:
        if all(_scalar(i) and not (isinstance(i, str) and len(i) > MAX_SCALAR_CHARS)
               for i in items) and len(items) <= SHORT_LIST:
            self.put(path, list(items))
            return
        if items and all(isinstance(i, dict) for i in items):
            columns: list[str] = []
            for item in items:
                for key, v in item.items():
                    if key not in columns and _scalar(v) and not (
                            isinstance(v, str) and len(v) > MAX_SCALAR_CHARS):
                        columns.append(key)
            rows = [[item.get(c) for c in columns] for item in items[:MAX_ROWS]]
            self.put(path, {"columns": columns, "rows": rows})
            if any(c not in item for item in items[:MAX_ROWS] for c in columns):
                self.notes.append(f"{path}: a null cell may stand for a field the row lacks")
            if len(items) > MAX_ROWS:
                self.notes.append(f"{path}: first {MAX_ROWS} of {len(items)} rows kept; "
                                  "rehydrate the artifact for the rest")
            nested = sorted({k for i in items for k, v in i.items() if k not in columns})
            if nested:
                self.notes.append(f"{path}: fields {', '.join(nested)} are nested or long, "
                                  "not kept in the rows")
            return
        if len(items) <= SHORT_LIST and depth < MAX_DEPTH:
            for n, item in enumerate(items):
                self.walk(f"{path}[{n}]", item, depth + 1)
            return
        self.notes.append(f"{path}: a list of {len(items)} mixed items is not kept; "
                          "rehydrate the artifact for it")


def _describe(facts: dict[str, Any]) -> str:
    parts = []
    for path, value in list(facts.items())[:12]:
        if isinstance(value, dict) and "rows" in value:
            parts.append(f"{path}: {len(value['rows'])} rows ({', '.join(value['columns'])})")
        elif isinstance(value, list):
            parts.append(f"{path}={json.dumps(value, ensure_ascii=False)}")
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

    name = "default-v1"

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
        walk.walk("", value, 0)
        if walk.full:
            walk.notes.append(f"only the first {MAX_FACTS} facts are kept")
        summary = f"{head}: {_describe(walk.facts)}" if walk.facts else f"{head}: no scalar facts"
        return Extraction(summary=summary, facts=walk.facts, limit_notes=tuple(walk.notes),
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
