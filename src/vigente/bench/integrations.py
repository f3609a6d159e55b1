"""``python -m vigente.bench integrations``: the tau-bench sessions replayed through the
LangChain middleware, beside the assembler benchmark's own assembly, in one run.

Per session, one store and one :class:`~vigente.integrations.langchain.VigenteMiddleware` play
the agent: at every model call (each assistant message of the transcript) the middleware's
``wrap_model_call`` gets the LangChain state so far (the transcript's messages, with ids, as a
LangGraph agent holds them), records what is new, assembles, and calls a handler that keeps the
request the model would receive and answers with the transcript's own assistant message. Beside
it, the point is assembled as :mod:`vigente.bench.context` does (a fresh store, the transcript
imported, ``assemble``). Both requests are measured with the context benchmark's own rules:
availability of the actions' argument values and tokens. The overhead of the integration is the
wrapper's time minus the model handler's and the assembly's (recording, conversions).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.assemble import count_message_tokens, tiktoken_tokenizer
from vigente.bench.context import (
    DEFAULT_TAU,
    FactTally,
    _clean,
    _lc_ready,
    action_points,
    load_tau,
    required_facts,
)
from vigente.runtime.openai import event_lines, transcript_events

__all__ = ["BENCHMARK", "IntegrationsBenchmark"]

METHODS = ("assembler", "middleware")
TARGET_MS = 5.0


class _Transcript:
    """The model handler: keeps the request it gets, answers with the transcript's message."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.received: list[Any] = []

    def __call__(self, request: Any) -> Any:
        from langchain.agents.middleware import ModelResponse

        self.received = list(request.messages)
        return ModelResponse(result=[self.answer])


def _selection(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What an assembly decided, without the ids that differ between the two ways of
    recording the transcript (messages, runs); tool calls keep the transcript's ids."""
    keep = ("artifact", "memory")
    return sorted(
        (d["kind"], d.get("as") or d.get("reason") or "", d["ref"] if d["kind"] in keep else "")
        for d in record["included"] + record["omitted"]
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def run_integrations(path: Path, limit: int | None, log: Console) -> dict[str, Any]:
    from langchain.agents.middleware import ModelRequest
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, convert_to_messages, convert_to_openai_messages

    from vigente.integrations.langchain import VigenteMiddleware

    sessions = load_tau(path, limit)
    tok = tiktoken_tokenizer("o200k_base")

    def count(messages: list[dict[str, Any]]) -> int:
        return count_message_tokens(tok, messages)

    fake = GenericFakeChatModel(messages=iter(()))
    tally = FactTally(METHODS, count)
    per_call: dict[str, list[int]] = {m: [] for m in METHODS}
    same_selection = 0
    overhead: list[float] = []
    overhead_cpu: list[float] = []
    assembly_ms: dict[str, list[float]] = {m: [] for m in METHODS}
    calls = 0
    for s, session in enumerate(sessions):
        traj = [_clean(m) for m in session["traj"]]
        wanted = action_points(traj, list(session["info"]["task"].get("actions") or []))
        state = [
            m.model_copy(update={"id": f"m{n}"})
            for n, m in enumerate(convert_to_messages(_lc_ready(traj)))
        ]
        with Vigente.open(":memory:") as live:
            middleware = VigenteMiddleware(
                live, participant="assistant", conversation="tau", account="bench"
            )
            for i, m in enumerate(traj):
                if m.get("role") != "assistant" or i == 0:
                    continue
                before = traj[:i]
                # the assembler benchmark's request for this point
                with Vigente.open(":memory:") as vg:
                    events = transcript_events(before, "tau", "bench")
                    vg.runtime.import_events(event_lines(events))
                    t0 = time.perf_counter()
                    a = vg.assembly.assemble("tau", "main", "assistant", persist=False)
                    assembly_ms["assembler"].append((time.perf_counter() - t0) * 1000)
                # the same point through the middleware
                answer = state[i]
                assert isinstance(answer, AIMessage)
                model = _Transcript(answer)
                history_so_far: Any = list(state[:i])
                request = ModelRequest(
                    model=fake, messages=history_so_far, state={"messages": history_so_far}
                )
                middleware.wrap_model_call(request, model)
                received = model.received
                calls += 1
                overhead.append(middleware.last_timings["overhead"])
                overhead_cpu.append(middleware.last_timings["overhead_cpu"])
                assembly_ms["middleware"].append(middleware.last_timings["assembly"])
                requests = {
                    "assembler": a.messages,
                    "middleware": convert_to_openai_messages(received),
                }
                for name in METHODS:
                    per_call[name].append(count(requests[name]))
                mine = live.assembly.explain(answer.response_metadata["vigente_assembly_id"])
                same_selection += int(_selection(mine) == _selection(a.record))
                if i in wanted:
                    tally.add(requests, required_facts(before, wanted[i]))
        if s % 10 == 9:
            log.print(f"  {s + 1}/{len(sessions)} sessions")
    figures: dict[str, Any] = {
        "tau_sessions": len(sessions),
        **tally.figures(),
        "model_calls": calls,
        "same_selection_calls": same_selection,
        "overhead_ms_p50": _pct(overhead, 0.5),
        "overhead_ms_p95": _pct(overhead, 0.95),
        "overhead_ms_mean": round(statistics.mean(overhead), 3),
        "overhead_cpu_ms_p50": _pct(overhead_cpu, 0.5),
        "overhead_cpu_ms_p95": _pct(overhead_cpu, 0.95),
        "overhead_cpu_ms_mean": round(statistics.mean(overhead_cpu), 3),
        "overhead_target_ms": TARGET_MS,
    }
    for name in METHODS:
        figures[f"tau_tokens_per_call_{name}"] = round(statistics.mean(per_call[name]), 1)
        figures[f"assembly_ms_p50_{name}"] = _pct(assembly_ms[name], 0.5)
    return figures


class IntegrationsBenchmark:
    name = "integrations"
    help = "tau-bench sessions through the LangChain middleware: figures and overhead per call"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--tau-bench",
            type=Path,
            default=DEFAULT_TAU,
            help="tau-bench trials file (default ../shared/data/tau-bench)",
        )
        parser.add_argument(
            "--sessions", type=int, default=None, help="only the first N sessions (default all)"
        )

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        log.print(f"tau-bench: {args.tau_bench}")
        return run_integrations(args.tau_bench, args.sessions, log)

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title="vigente integrations benchmark (tau-bench airline, LangChain)")
        table.add_column("measure")
        for name in METHODS:
            table.add_column(name, justify="right")
        for key in ("availability", "history_tokens", "tokens_per_call"):
            table.add_row(key, *[str(figures.get(f"tau_{key}_{n}", "-")) for n in METHODS])
        table.add_row(
            "assembly ms (p50)", *[str(figures.get(f"assembly_ms_p50_{n}", "-")) for n in METHODS]
        )
        console.print(table)
        console.print(
            f"middleware overhead per model call on top of assembly (target < "
            f"{figures['overhead_target_ms']} ms): wall p50 {figures['overhead_ms_p50']} ms, "
            f"p95 {figures['overhead_ms_p95']} ms; CPU p50 {figures['overhead_cpu_ms_p50']} ms, "
            f"p95 {figures['overhead_cpu_ms_p95']} ms. {figures['model_calls']} model calls, "
            f"{figures['same_selection_calls']} with the assembler's own selection; "
            f"{figures['tau_points']} action points, {figures['tau_required_facts']} facts"
        )


BENCHMARK = IntegrationsBenchmark()
