"""The errors a surface answers with, transport-neutral: :class:`ApiError` (a status, a code
and a message; HTTP renders it as its one error shape, MCP as a tool error), :class:`NotFound`,
and the wording of the library's CLI advice for an API client (:func:`http_advice`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from vigente.errors import InvalidInput

__all__ = ["HTTP_ADVICE", "ApiError", "NotFound", "error_body", "found", "http_advice"]

T = TypeVar("T")


class ApiError(Exception):
    """An error a surface raises itself (authentication, limits, not found)."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


class NotFound(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(404, "not_found", message)


def error_body(status: int, code: str, message: str) -> dict[str, object]:
    """The one error shape, ``{"error": {"status", "code", "message"}}``, its message's CLI
    advice worded for an API client."""
    return {"error": {"status": status, "code": code, "message": http_advice(message)}}


def found(lookup: Callable[[], T]) -> T:
    """``lookup()``, whose only possible error is "no such id", as a 404."""
    try:
        return lookup()
    except InvalidInput as exc:
        raise NotFound(str(exc)) from None


#: The library's messages advise the CLI (`--known-at`, `vigente lineages`); over HTTP each
#: piece of advice becomes the field or endpoint that does the same (or, where the API has
#: none, says that an operator does it on the server).
HTTP_ADVICE: tuple[tuple[str, str], ...] = (
    ("omit --known-at / known_at: learned now", "omit `known_at`: learned now"),
    ("`vigente import FILE --backfill REASON`, `vigente precedence … --backfill REASON`",
     "an operator's `vigente import FILE --backfill REASON` on the tenant's store (the API "
     "imports no backfilled statements), or the `backfill` field of POST /v1/precedence"),
    ("run `vigente index` to embed them", "an operator embeds them ahead of searches with "
     "`vigente index` on the tenant's store (the API has no index endpoint)"),
    ("run `vigente index` after adding documents to index (and embed) them ahead of searches",
     "an operator can index (and embed) them ahead of searches with `vigente index` on the "
     "tenant's store (the API has no index endpoint)"),
    ("`vigente review edit ID --set published=YYYY-MM-DD`",
     'POST /v1/review/ID/edit with {"set": {"published": "YYYY-MM-DD"}}'),
    ("`vigente review edit ID --set FIELD=VALUE`",
     'POST /v1/review/ID/edit with {"set": {"FIELD": "VALUE"}}'),
    ("`vigente review list`", "GET /v1/review"),
    ("`vigente runtime show`", "GET /v1/conversations"),
    ("`vigente lineages`", "GET /v1/lineages"),
    ("`vigente decisions`", "GET /v1/decisions"),
    ("`vigente backfills`", "GET /v1/backfills"),
    ("`vigente documents add`", "POST /v1/documents"),
    ("`vigente policy show`", "GET /openapi.json (AssembleIn.policy), or omit `policy` for "
     "vigente's own"),
    ("--known-at", "`known_at`"),
    ("--as-of", "`as_of`"),
)


def http_advice(message: str) -> str:
    """``message`` with its CLI advice worded for an HTTP client."""
    for cli_words, http_words in HTTP_ADVICE:
        if cli_words in message:
            message = message.replace(cli_words, http_words)
    return message
