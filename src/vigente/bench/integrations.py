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
    """The first ``limit`` sessions of ``path`` through the middleware and the assembler."""
    run = _Replay()
    sessions = load_tau(path, limit)
    for s, session in enumerate(sessions):
        run.add_session(session)
        if s % 10 == 9:
            log.print(f"  {s + 1}/{len(sessions)} sessions")
    return run.figures(len(sessions))


class _Replay:
    """The sessions replayed so far through both methods, and what was measured at each model
    call. LangChain (the ``bench`` extra) is imported once, here."""

    def __init__(self) -> None:
        from langchain.agents.middleware import ModelRequest
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import (
            AIMessage,
            convert_to_messages,
            convert_to_openai_messages,
        )

        from vigente.integrations.langchain import VigenteMiddleware

        self._model_request, self._ai_message, self._middleware = (
            ModelRequest,
            AIMessage,
            VigenteMiddleware,
        )
        self._to_lc, self._to_openai = convert_to_messages, convert_to_openai_messages
        self._tok = tiktoken_tokenizer("o200k_base")
        self._fake = GenericFakeChatModel(messages=iter(()))
        self.tally = FactTally(METHODS, self.count)
        self.per_call: dict[str, list[int]] = {m: [] for m in METHODS}
        self.same_selection = 0
        self.overhead: list[float] = []
        self.overhead_cpu: list[float] = []
        self.assembly_ms: dict[str, list[float]] = {m: [] for m in METHODS}
        self.calls = 0

    def count(self, messages: list[dict[str, Any]]) -> int:
        return count_message_tokens(self._tok, messages)

    def add_session(self, session: dict[str, Any]) -> None:
        """One session: one store and one middleware play the agent at every model call."""
        traj = [_clean(m) for m in session["traj"]]
        wanted = action_points(traj, list(session["info"]["task"].get("actions") or []))
        state = [
            m.model_copy(update={"id": f"m{n}"})
            for n, m in enumerate(self._to_lc(_lc_ready(traj)))
        ]
        with Vigente.open(":memory:") as live:
            middleware = self._middleware(
                live, participant="assistant", conversation="tau", account="bench"
            )
            for i, m in enumerate(traj):
                if m.get("role") != "assistant" or i == 0:
                    continue
                self._add_call(live, middleware, traj[:i], state, i, wanted.get(i))

    def _add_call(
        self,
        live: Vigente,
        middleware: Any,
        before: list[dict[str, Any]],
        state: list[Any],
        i: int,
        actions: list[dict[str, Any]] | None,
    ) -> None:
        """The model call at transcript index ``i``: the assembler benchmark's request and the
        middleware's, measured alike (tokens, same selection, the actions' facts)."""
        a = self._assembled(before)
        answer = state[i]
        assert isinstance(answer, self._ai_message)
        received = self._through_middleware(middleware, state[:i], answer)
        requests = {
            "assembler": a.messages,
            "middleware": self._to_openai(received),
        }
        for name in METHODS:
            self.per_call[name].append(self.count(requests[name]))
        mine = live.assembly.explain(answer.response_metadata["vigente_assembly_id"])
        self.same_selection += int(_selection(mine) == _selection(a.record))
        if actions is not None:
            self.tally.add(requests, required_facts(before, actions))

    def _assembled(self, before: list[dict[str, Any]]) -> Any:
        """The assembler benchmark's request for this point: a fresh store, the transcript
        imported, one assembly (timed)."""
        with Vigente.open(":memory:") as vg:
            events = transcript_events(before, "tau", "bench")
            vg.runtime.import_events(event_lines(events))
            t0 = time.perf_counter()
            a = vg.assembly.assemble("tau", "main", "assistant", persist=False)
            self.assembly_ms["assembler"].append((time.perf_counter() - t0) * 1000)
        return a

    def _through_middleware(self, middleware: Any, history: list[Any], answer: Any) -> list[Any]:
        """The same point through the middleware: the messages the model receives, and the
        middleware's own timings of the call."""
        model = _Transcript(answer)
        history_so_far: Any = list(history)
        request = self._model_request(
            model=self._fake, messages=history_so_far, state={"messages": history_so_far}
        )
        middleware.wrap_model_call(request, model)
        self.calls += 1
        self.overhead.append(middleware.last_timings["overhead"])
        self.overhead_cpu.append(middleware.last_timings["overhead_cpu"])
        self.assembly_ms["middleware"].append(middleware.last_timings["assembly"])
        return model.received

    def figures(self, sessions: int) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "tau_sessions": sessions,
            **self.tally.figures(),
            "model_calls": self.calls,
            "same_selection_calls": self.same_selection,
            "overhead_ms_p50": _pct(self.overhead, 0.5),
            "overhead_ms_p95": _pct(self.overhead, 0.95),
            "overhead_ms_mean": round(statistics.mean(self.overhead), 3),
            "overhead_cpu_ms_p50": _pct(self.overhead_cpu, 0.5),
            "overhead_cpu_ms_p95": _pct(self.overhead_cpu, 0.95),
            "overhead_cpu_ms_mean": round(statistics.mean(self.overhead_cpu), 3),
            "overhead_target_ms": TARGET_MS,
        }
        for name in METHODS:
            figures[f"tau_tokens_per_call_{name}"] = round(statistics.mean(self.per_call[name]), 1)
            figures[f"assembly_ms_p50_{name}"] = _pct(self.assembly_ms[name], 0.5)
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
