"""Text for retrieval: Unicode folding, query terms and deterministic passages (chunks).

Folding matches SQLite FTS5's ``unicode61 remove_diacritics 2`` tokenizer: case-folded,
diacritics removed ("Määrus" → "maarus", "città" → "citta"), tokens are runs of letters and
digits. Backends that index folded text (PostgreSQL's ``simple`` configuration) get the same
tokens as FTS5.

A document's title and official reference are searched as fields of their own
(:func:`field_text`): the same folded words, plus one joined token per number written with
separators ("12/2025" → ``12n2025``), so that "Circular 12/2025" and "Circular 2025/12" are told
apart while "12 2025" written loosely still matches both numbers.

Passages are cut on Markdown headings and blank lines, packed up to ``max_chars``; a paragraph
longer than that is cut at sentence ends. The same text always gives the same passages, and an
amendment that changes one section leaves the passages of the other sections unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["MAX_PASSAGE_CHARS", "chunk_text", "field_terms", "field_text", "fold", "query_terms"]

MAX_PASSAGE_CHARS = 800
MAX_QUERY_TERMS = 64

_TOKEN = re.compile(r"[^\W_]+")
# A number written with separators: "12/2025", "2025-04", "1.2.3" (not "12 2025": a space
# separates two numbers).
_NUMBER = re.compile(r"\d+(?:[/.\-]\d+)+")
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+")
_HEADING = re.compile(r"^#{1,6}\s")


def fold(text: str) -> str:
    """Case-fold and strip diacritics, keeping only letters, digits and single spaces."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(_TOKEN.findall(stripped))


def query_terms(text: str) -> list[str]:
    """The distinct folded terms of a query, in order (at most 64)."""
    return list(dict.fromkeys(fold(text).split()))[:MAX_QUERY_TERMS]


def field_text(text: str) -> str:
    """The searchable text of a title or reference: its folded words, then one joined token
    per number written with separators ("Circolare n. 12/2025" → ``circolare n 12 2025
    12n2025``)."""
    numbers = _NUMBER.findall(unicodedata.normalize("NFKC", text))
    joined = ["n".join(re.split(r"[/.\-]", number)) for number in numbers]
    return " ".join([fold(text), *joined]).strip()


def field_terms(text: str) -> list[str]:
    """The distinct terms of :func:`field_text`, in order (at most 64): the query side of a
    title or reference match."""
    return list(dict.fromkeys(field_text(text).split()))[:MAX_QUERY_TERMS]


def _pieces(paragraph: str, max_chars: int) -> Iterator[str]:
    """A paragraph cut into pieces of at most ``max_chars``, at sentence ends where possible."""
    if len(paragraph) <= max_chars:
        yield paragraph
        return
    current = ""
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > max_chars:  # one overlong sentence: cut at a space
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            if current:
                yield current
                current = ""
            yield sentence[:cut].rstrip()
            sentence = sentence[cut:].lstrip()
        if current and len(current) + 1 + len(sentence) > max_chars:
            yield current
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        yield current


def chunk_text(text: str, *, max_chars: int = MAX_PASSAGE_CHARS) -> list[str]:
    """Deterministic passages of ``text``: a heading starts a new passage, paragraphs are packed
    up to ``max_chars``, longer paragraphs are cut at sentence ends."""
    if max_chars < 50:
        raise ValueError("max_chars must be at least 50")
    passages: list[str] = []
    current = ""
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        block = block.strip()
        if not block:
            continue
        if _HEADING.match(block) and current:
            passages.append(current)
            current = ""
        for piece in _pieces(block, max_chars):
            if current and len(current) + 2 + len(piece) > max_chars:
                passages.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        passages.append(current)
    return passages
