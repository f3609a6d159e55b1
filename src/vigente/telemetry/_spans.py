"""vigente's spans: one tracer, one way to open a span, and the attributes of each decision.

Everything here goes through the OpenTelemetry *API*: with no SDK configured every call is a
no-op (a non-recording span), so telemetry off costs a context switch and nothing else. The
attribute builders run only for a recording span.

What a span may carry (docs/guarantees.md, "Telemetry"): ids, counts, statuses, policy names
and hashes, times, token counts. Never message text, tool content, a value, a query, an error
message (which can quote its input): an exception is recorded as its type alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode

from vigente._version import __version__

__all__ = [
    "CurrentSpan",
    "annotate",
    "assembly_attributes",
    "error_type",
    "quiet",
    "evidence_attributes",
    "included_counts",
    "span",
    "traced",
    "tracer",
]

#: vigente's tracer (a proxy: it follows the global provider, whenever that is set)
tracer = trace.get_tracer("vigente", __version__)

#: set inside :func:`quiet`: vigente's own bookkeeping (the service's key checks read its
#: admin store) opens no span and counts in no metric
QUIET: ContextVar[bool] = ContextVar("vigente_telemetry_quiet", default=False)


@contextmanager
def quiet() -> Iterator[None]:
    """No vigente span or metric inside the block (it is not a decision made for a caller)."""
    token = QUIET.set(True)
    try:
        yield
    finally:
        QUIET.reset(token)

AttributeValue = str | bool | int | float


def error_type(exc: BaseException) -> str:
    """The ``error.type`` of an exception: its class, never its message."""
    cls = type(exc)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue] | None = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    context: Context | None = None,
) -> Iterator[Span]:
    """A span around the block, current inside it; an exception marks it ``ERROR`` with its
    ``error.type`` (the class name only: a message can quote the input) and propagates."""
    if QUIET.get():
        yield trace.INVALID_SPAN
        return
    with tracer.start_as_current_span(
        name,
        kind=kind,
        context=context,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if current.is_recording():
                current.set_attribute("error.type", error_type(exc))
                current.set_status(StatusCode.ERROR)
            raise


def annotate(attributes: Mapping[str, AttributeValue | None]) -> None:
    """Set ``attributes`` (the ones not ``None``) on the current span, when it records."""
    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes({k: v for k, v in attributes.items() if v is not None})


class CurrentSpan:
    """A span made current now and ended by :meth:`close`, for a block that does not sit in
    one ``with`` (a CLI command, opened when its name is resolved)."""

    def __init__(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None:
        self.span = tracer.start_span(name, attributes=attributes)
        self._token = otel_context.attach(trace.set_span_in_context(self.span))

    def close(self, failure: BaseException | None = None) -> None:
        """End the span (marked as failed by ``failure``'s type) and restore the context
        before it."""
        if failure is not None and self.span.is_recording():
            self.span.set_attribute("error.type", error_type(failure))
            self.span.set_status(StatusCode.ERROR)
        otel_context.detach(self._token)
        self.span.end()


P = ParamSpec("P")
R = TypeVar("R")


def traced(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the decorated function in a :func:`span` named ``name`` (the function sets its own
    attributes on ``trace.get_current_span()``)."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def traced_call(*args: P.args, **kwargs: P.kwargs) -> R:
            with span(name):
                return function(*args, **kwargs)

        return traced_call

    return decorate


def _counts(prefix: str, counts: Mapping[str, int]) -> dict[str, int]:
    return {f"{prefix}.{key}": int(n) for key, n in counts.items()}


def included_counts(record: Mapping[str, Any]) -> dict[str, int]:
    """How many records an assembly included, by how each was shown (``as``)."""
    included: dict[str, int] = {}
    for entry in record.get("included", ()):
        included[entry["as"]] = included.get(entry["as"], 0) + 1
    return included


def assembly_attributes(
    assembly_id: str, record: Mapping[str, Any], *, model: str | None = None,
    included: Mapping[str, int] | None = None,
) -> dict[str, AttributeValue]:
    """The attributes of an assembly's span, from its stored record (and the participant's
    ``model``; ``included``: :func:`included_counts`, when the caller has it): what was
    decided, in ids and counts (never a message, a tool result or a memory's text)."""
    policy = record.get("policy") or {}
    tokens = record.get("tokens") or {}
    assembled, replay = int(tokens.get("assembled", 0)), int(tokens.get("replay", 0))
    if included is None:
        included = included_counts(record)
    attributes: dict[str, AttributeValue] = {
        "vigente.assembly.id": assembly_id,
        "gen_ai.conversation.id": record["conversation"],
        "vigente.branch.id": record["branch"],
        "vigente.participant.id": record["participant"],
        "vigente.assembly.mode": record["mode"],
        "vigente.assembly.format": record["format"],
        "vigente.assembly.snapshot": record["snapshot"],
        "vigente.assembly.budget": int(record["budget"]),
        "vigente.policy.id": str(policy.get("id", "")),
        "vigente.policy.version": str(policy.get("version", "")),
        "vigente.policy.hash": str(policy.get("hash", "")),
        "gen_ai.usage.input_tokens": assembled,
        "vigente.assembly.tokens.assembled": assembled,
        "vigente.assembly.tokens.replay": replay,
        "vigente.assembly.tokens.saved": replay - assembled,
        "vigente.assembly.messages": int((record.get("counts") or {}).get("assembled_messages", 0)),
        "vigente.assembly.redactions": len(record.get("redactions") or ()),
        **_counts("vigente.assembly.included", included),
        **_counts("vigente.assembly.omitted", record.get("omission_counts") or {}),
    }
    if record.get("provider"):
        attributes["gen_ai.provider.name"] = str(record["provider"])
    if model:
        attributes["gen_ai.request.model"] = model
    for stage, ms in (record.get("timings_ms") or {}).items():
        attributes[f"vigente.assembly.duration_ms.{stage}"] = float(ms)
    return attributes


def evidence_attributes(evidence: Any) -> dict[str, AttributeValue]:
    """The attributes of an answer's span: its status and interpretation, and how many
    versions were admitted and excluded (never a value)."""
    attributes: dict[str, AttributeValue] = {
        "vigente.lineage": evidence.lineage,
        "vigente.evidence.status": str(evidence.status),
        "vigente.evidence.interpretation": str(evidence.interpretation),
        "vigente.evidence.admitted": len(evidence.admitted),
        "vigente.evidence.excluded": len(evidence.excluded),
        "vigente.valid_at": evidence.valid_at.isoformat(),
        "vigente.known_at": evidence.known_at.isoformat(),
    }
    if evidence.decision_id is not None:
        attributes["vigente.decision.id"] = evidence.decision_id
    return attributes
