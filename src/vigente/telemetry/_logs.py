"""Structured logs: one JSON object per line, with the trace and span of the request.

vigente's own log lines name routes by their template and carry counts, statuses and trace ids,
never an id from a path or a body (a purge must leave no trace of an account in them, and a
log line, once written, cannot be erased). An exception is logged as its type and its stack
frames, never its message (which can quote the input).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import traceback
from typing import Any

from opentelemetry import trace

__all__ = ["JsonFormatter", "exception_summary", "trace_fields"]

# the attributes every LogRecord has: anything else was passed as ``extra=`` and is kept
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "color_message"}  # (uvicorn's copy of the message, in ANSI colours)
)


def trace_fields() -> dict[str, str]:
    """The current trace and span ids (hex, as exporters show them), when there is a span."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


def exception_summary(exc: BaseException) -> str:
    """An exception as its type and the frames it passed, without its message."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    return f"{type(exc).__module__}.{type(exc).__qualname__} (message withheld)\n{frames}"


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", "trace_id", "span_id", …extra}`` per line.

    The trace ids are the ones current when the line was logged (taken by the record's own
    ``trace_id`` when the caller set it, as the access log does)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(trace_fields())
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            line["exception"] = exception_summary(record.exc_info[1])
        return json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))
