"""One JSON error shape for every error: ``{"error": {"status", "code", "message"}}``.

vigente's exception tree (:mod:`vigente.errors`) maps to statuses here, in one table; the
message is vigente's own, which says what went wrong and how to fix it. Bad input is a 4xx;
a 500 means a bug, and its body still has this shape.

    InvalidInput (and subclasses)   400  code from the class: invalid_time, import_file_error …
    NotFound                        404  an id or name this tenant's store does not hold
    request validation (pydantic)   422  invalid_request, naming each field and what is wrong
    HistoryRewriteError             409  history_rewrite
    FutureKnowledgeError            400  future_knowledge
    StoreError                      503  store_unavailable
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from vigente import telemetry
from vigente.application.errors import ApiError, error_body
from vigente.errors import (
    FutureKnowledgeError,
    HistoryRewriteError,
    InvalidInput,
    StoreError,
    VigenteError,
)

__all__ = [
    "ERROR_RESPONSES",
    "ErrorBody",
    "ErrorDetail",
    "error_response",
    "install_error_handlers",
]

log = logging.getLogger("vigente.http")


class ErrorDetail(BaseModel):
    status: int
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error response has this body."""

    error: ErrorDetail


class UnknownQueryParameters(ApiError):
    """Query parameters an endpoint does not take (``unknown``), and those it does (``known``):
    the API words it for its clients, a page of the inspector words it for a reader."""

    def __init__(self, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.unknown, self.known = list(unknown), list(known)
        super().__init__(
            422,
            "invalid_request",
            f"{self.listed()}: this endpoint takes {', '.join(self.known) or 'none'}",
        )

    def listed(self) -> str:
        return f"unknown query parameter(s) {', '.join(map(repr, self.unknown))}"


def _described(text: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": text}


#: The error responses every endpoint documents (the OpenAPI document lists them all, so that
#: a client, and schemathesis, knows each one's shape).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _described("Bad input: the message says what to change"),
    401: _described("Missing, unknown or revoked API key"),
    403: _described("The key may not use this endpoint"),
    404: _described("No such id or name in this tenant's store"),
    409: _described("The write would rewrite recorded history"),
    413: _described("The request body is larger than the limit"),
    422: _described("The request does not match the schema"),
    429: _described("Too many requests for this key: retry after Retry-After seconds"),
    503: _described("The store cannot be reached, or the embedding model is still loading: "
                     "retry after Retry-After seconds"),
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(status, code, message), status_code=status, headers=headers)


def _code_of(exc: Exception) -> str:
    """The error's ``code``: its class's own when it names one, else its class name in
    snake case."""
    code = getattr(type(exc), "code", None)
    if isinstance(code, str):
        return code
    name = type(exc).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def vigente_status(exc: VigenteError) -> tuple[int, str]:
    """The HTTP status and error code of a refusal of the store (the inspector's pages use
    the same statuses)."""
    if isinstance(exc, InvalidInput):
        return 400, "invalid_input" if type(exc) is InvalidInput else _code_of(exc)
    if isinstance(exc, HistoryRewriteError):
        return 409, "history_rewrite"
    if isinstance(exc, FutureKnowledgeError):
        return 400, "future_knowledge"
    if isinstance(exc, StoreError):
        return 503, "store_unavailable"
    return 400, _code_of(exc)


def _location(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        where, rest = parts[0], parts[1:]
        return f"{where} {'.'.join(rest)}" if rest else where
    return ".".join(parts)


def _validation_message(exc: RequestValidationError) -> str:
    problems = []
    for err in exc.errors()[:10]:
        problems.append(f"{_location(err.get('loc', ()))}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - 10
    tail = f" (and {more} more)" if more > 0 else ""
    return (
        "the request does not match the schema: "
        + "; ".join(problems)
        + tail
        + ". See /openapi.json for the expected fields"
    )


def install_error_handlers(app: FastAPI) -> None:
    """Map every exception a request can raise to the one error shape."""

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        telemetry.refused(exc, "http")
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(VigenteError)
    async def vigente_error(_: Request, exc: VigenteError) -> JSONResponse:
        status, code = vigente_status(exc)
        telemetry.refused(exc, "http")
        if status >= 500:
            log.warning("store error: %s", exc)
        return error_response(status, code, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        if status == 404:
            message = f"no endpoint {request.url.path}: see /openapi.json for the endpoints"
            code = "not_found"
        elif status == 405:
            message = (
                f"{request.method} is not allowed on {request.url.path}: see "
                "/openapi.json for the methods each endpoint takes"
            )
            code = "method_not_allowed"
        elif status == 400 and "parsing the body" in str(exc.detail):
            message = (
                "the request body is not valid JSON: send one JSON object, UTF-8 encoded, "
                "with Content-Type: application/json"
            )
            code = "invalid_json"
        else:
            message, code = str(exc.detail), _HTTP_CODES.get(status, "invalid_request")
        return error_response(status, code, message, dict(exc.headers or {}))

    @app.exception_handler(UnicodeError)
    async def bad_text(_: Request, exc: UnicodeError) -> JSONResponse:
        return error_response(
            400,
            "invalid_text",
            "a string in the request is not valid Unicode text (a lone surrogate such as "
            "\\ud800): send UTF-8 text",
        )



#: The code of an HTTP status Starlette raises itself (anything but 404 and 405).
_HTTP_CODES = {400: "invalid_request", 401: "unauthorized", 403: "forbidden",
               413: "request_too_large", 415: "unsupported_media_type", 429: "rate_limited"}
