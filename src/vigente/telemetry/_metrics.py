"""vigente's metrics: the instruments, and one function per decision that records it.

Instruments come from the OpenTelemetry *API*'s global meter (a proxy: until an SDK meter
provider is set, every measurement is dropped at once). Labels are low-cardinality by
construction: operations are route templates, tool and command names; reasons, statuses and
modes come from closed vocabularies; no label ever holds an id, a name a user chose or a text.
docs/deployment.md lists each metric and what it means.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ParamSpec

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from vigente._version import __version__
from vigente.telemetry._spans import QUIET

__all__ = [
    "record_assembly",
    "recording",
    "record_evidence",
    "record_http",
    "record_import",
    "record_operation",
    "record_purge",
    "record_recall",
    "record_refusal",
    "record_search",
    "watch_store_size",
]

meter = metrics.get_meter("vigente", __version__)

# seconds, in buckets from 0.5 ms to 10 s (OpenTelemetry's HTTP defaults start at 5 ms, which
# is slower than most asks)
_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

operation_duration = meter.create_histogram(
    "vigente.operation.duration",
    unit="s",
    description="Time to serve one operation, by surface (http, mcp, cli), operation (route "
    "template, tool or command) and status (the HTTP status, ok or error)",
    explicit_bucket_boundaries_advisory=_SECONDS,
)
http_duration = meter.create_histogram(
    "http.server.request.duration",
    unit="s",
    description="Duration of HTTP server requests (OpenTelemetry semantic conventions)",
    explicit_bucket_boundaries_advisory=_SECONDS,
)
assemblies = meter.create_counter(
    "vigente.assemblies", unit="{assembly}", description="Context assemblies, by mode and policy"
)
assembly_tokens = meter.create_counter(
    "vigente.assembly.tokens",
    unit="{token}",
    description="Tokens of assembled requests (kind=assembled) and of replaying the whole "
    "transcript instead (kind=replay): replay minus assembled is what assembly saved",
)
assembly_inclusions = meter.create_counter(
    "vigente.assembly.inclusions",
    unit="{record}",
    description="Records included in assembled requests, by how they were shown (as: message, "
    "memory, raw, recalled, …): memory against raw shows promotion drift",
)
assembly_omissions = meter.create_counter(
    "vigente.assembly.omissions",
    unit="{record}",
    description="Records left out of assembled requests, by reason and by branch (active, "
    "inherited, other, not_read)",
)
recalls = meter.create_counter(
    "vigente.recall.queries", unit="{query}", description="Recall queries, by mode"
)
recall_hits = meter.create_counter(
    "vigente.recall.hits", unit="{record}", description="Records recalled, by mode"
)
answers = meter.create_counter(
    "vigente.evidence.answer_reading",
    unit="{answer}",
    description="Evidence answers, by status and interpretation",
)
searches = meter.create_counter(
    "vigente.search.queries", unit="{query}", description="Document searches, by mode"
)
refusals = meter.create_counter(
    "vigente.history.refusals",
    unit="{write}",
    description="Writes refused because they would rewrite history, by kind "
    "(answered_history, runtime_history, history_rewrite) and surface",
)
purges = meter.create_counter(
    "vigente.purges",
    unit="{purge}",
    description="Account purges, by outcome (complete, incomplete, dry_run)",
)
imported = meter.create_counter(
    "vigente.events.imported", unit="{event}", description="Runtime events imported, by kind"
)

_recording = False


def recording() -> bool:
    """Whether a meter provider records (an SDK's, not the API's proxy): what a caller that
    must compute a measurement first checks (a provider is set once, so True stays True)."""
    global _recording
    if not _recording:
        _recording = type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider"
    return _recording and not QUIET.get()


#: what reports the stores' sizes: ``(bytes, labels)`` pairs, read at each collection
SizeSource = Callable[[], Iterable[tuple[int, dict[str, str]]]]
_SIZE_SOURCES: list[SizeSource] = []


def _observe_size(_: CallbackOptions) -> Iterable[Observation]:
    for source in list(_SIZE_SOURCES):
        try:
            for size, labels in source():
                yield Observation(size, labels)
        except Exception:
            continue


meter.create_observable_gauge(
    "vigente.store.size",
    callbacks=[_observe_size],
    unit="By",
    description="Bytes the stores take on disk (SQLite files, or PostgreSQL relations), by "
    "backend",
)


def watch_store_size(source: SizeSource) -> Callable[[], None]:
    """Report ``source()``'s ``(bytes, labels)`` as ``vigente.store.size`` at each collection;
    the function returned stops it."""
    _SIZE_SOURCES.append(source)

    def stop() -> None:
        if source in _SIZE_SOURCES:
            _SIZE_SOURCES.remove(source)

    return stop


P = ParamSpec("P")


def _unless_quiet(record: Callable[P, None]) -> Callable[P, None]:
    """The measurement, except inside :func:`~vigente.telemetry.quiet` (vigente's own
    bookkeeping counts in no metric)."""

    @functools.wraps(record)
    def measured(*args: P.args, **kwargs: P.kwargs) -> None:
        if not QUIET.get():
            record(*args, **kwargs)

    return measured


def record_operation(surface: str, operation: str, status: str, seconds: float) -> None:
    operation_duration.record(
        seconds, {"surface": surface, "operation": operation, "status": status}
    )


def record_http(method: str, route: str, status: int, seconds: float) -> None:
    http_duration.record(seconds, {"http.request.method": method, "http.route": route,
                                   "http.response.status_code": status})


@_unless_quiet
def record_assembly(record: Mapping[str, Any], included: Mapping[str, int],
                    omissions: Mapping[tuple[str, str], int]) -> None:
    """An assembly's counts: ``included`` by ``as``, ``omissions`` by (reason, branch
    relation)."""
    policy = str((record.get("policy") or {}).get("id", ""))
    labels = {"mode": str(record["mode"]), "policy": policy}
    assemblies.add(1, labels)
    tokens = record.get("tokens") or {}
    assembled, replay = int(tokens.get("assembled", 0)), int(tokens.get("replay", 0))
    assembly_tokens.add(assembled, {**labels, "kind": "assembled"})
    assembly_tokens.add(replay, {**labels, "kind": "replay"})
    for as_, n in included.items():
        assembly_inclusions.add(n, {"as": as_})
    for (reason, branch), n in omissions.items():
        assembly_omissions.add(n, {"reason": reason, "branch": branch})


@_unless_quiet
def record_recall(mode: str, hits: int) -> None:
    recalls.add(1, {"mode": mode})
    recall_hits.add(hits, {"mode": mode})


@_unless_quiet
def record_evidence(status: str, interpretation: str) -> None:
    answers.add(1, {"status": status, "interpretation": interpretation})


@_unless_quiet
def record_search(mode: str) -> None:
    searches.add(1, {"mode": mode})


@_unless_quiet
def record_refusal(kind: str, surface: str) -> None:
    refusals.add(1, {"kind": kind, "surface": surface})


@_unless_quiet
def record_purge(outcome: str) -> None:
    purges.add(1, {"outcome": outcome})


@_unless_quiet
def record_import(by_kind: Mapping[str, int]) -> None:
    for kind, n in by_kind.items():
        imported.add(n, {"kind": kind})
