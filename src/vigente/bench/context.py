"""``python -m vigente.bench context``: context assembly on real sessions (tau-bench airline
transcripts) beside transcript replay, LangChain's observation masking (``ClearToolUsesEdit``,
keep=3, trigger 0) and ``trim_messages`` cut to vigente's token count.

Per session, every model call (each assistant message) is a point: the transcript up to it is
imported into a fresh in-memory store (``transcript_events``, as ``runtime import-openai``) and
assembled with the default policy. At the agent's own call of each action of
``info.task.actions``, the required facts are the action's argument values (strings of 3+
characters, numbers) that appeared earlier outside the system prompt; a fact is available when
it is present verbatim in the request. Cache-aware cost: each call's longest common token prefix
with the previous call of the session is billed at 0.1, the rest at 1.0.
"""

from __future__ import annotations

import argparse
import json
import lzma
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.assemble import count_message_tokens, tiktoken_tokenizer
from vigente.assemble.policy import Policy, load_policy
from vigente.bench._scenarios import DEFAULT_SCENARIOS, render_scenarios, run_scenarios
from vigente.runtime.openai import event_lines, transcript_events

__all__ = [
    "BENCHMARK",
    "ContextBenchmark",
    "FactTally",
    "action_points",
    "load_tau",
    "required_facts",
]

DEFAULT_TAU = (
    Path(__file__).resolve().parents[3].parent
    / "shared"
    / "data"
    / "tau-bench"
    / ("airline.trials01.json.xz")
)
METHODS = ("replay", "masking", "trim", "vigente")


def _values(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in _values(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in _values(x)]
    if isinstance(obj, bool) or obj is None:
        return []
    if isinstance(obj, int | float):
        return [str(obj)]
    return [obj] if isinstance(obj, str) and len(obj) >= 3 else []


def action_points(
    traj: list[dict[str, Any]], actions: list[dict[str, Any]]
) -> dict[int, list[dict[str, Any]]]:
    """Transcript index -> the task actions that the agent's own call there carries out: for
    each action, the first assistant message not taken yet that calls that tool."""
    wanted: dict[int, list[dict[str, Any]]] = {}
    used: set[int] = set()
    for action in actions:
        for i, m in enumerate(traj):
            if i in used or m.get("role") != "assistant":
                continue
            if any(
                (c.get("function") or {}).get("name") == action["name"]
                for c in m.get("tool_calls") or []
            ):
                wanted.setdefault(i, []).append(action)
                used.add(i)
                break
    return wanted


def required_facts(before: list[dict[str, Any]], actions: list[dict[str, Any]]) -> set[str]:
    """The actions' argument values (strings of 3+ characters, numbers) that appeared earlier
    in the session outside the system prompt."""
    earlier = json.dumps([x for x in before if x.get("role") != "system"], ensure_ascii=False)
    return {v for action in actions for v in _values(action.get("kwargs", {})) if v in earlier}


def load_tau(path: Path, limit: int | None) -> list[dict[str, Any]]:
    """The tau-bench sessions of ``path`` (``.json`` or ``.json.xz``), the first ``limit``."""
    data: list[dict[str, Any]] = json.loads(
        lzma.open(path).read() if path.suffix == ".xz" else path.read_bytes()
    )
    return data[:limit] if limit else data


@dataclass
class FactTally:
    """The action points' required facts, and for each method's request how many it holds
    verbatim and its history tokens (everything but system messages) there."""

    methods: tuple[str, ...]
    count: Callable[[list[dict[str, Any]]], int]
    points: int = 0
    required: int = 0
    available: dict[str, int] = field(default_factory=dict)
    history: dict[str, list[int]] = field(default_factory=dict)

    def add(self, requests: dict[str, list[dict[str, Any]]], need: set[str]) -> None:
        """One action point: ``need`` its required facts, ``requests`` by method."""
        if not need:
            return
        self.points += 1
        self.required += len(need)
        for name in self.methods:
            text = json.dumps(requests[name], ensure_ascii=False)
            self.available[name] = self.available.get(name, 0) + sum(1 for v in need if v in text)
            self.history.setdefault(name, []).append(
                self.count([x for x in requests[name] if x.get("role") != "system"])
            )

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tau_points": self.points, "tau_required_facts": self.required}
        for name in self.methods:
            out[f"tau_availability_{name}"] = (
                round(self.available.get(name, 0) / self.required, 4) if self.required else None
            )
            seen = self.history.get(name)
            out[f"tau_history_tokens_{name}"] = round(statistics.mean(seen), 1) if seen else None
        return out


def _prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class _Baselines:
    """LangChain's own masking and trimming (the ``bench`` extra)."""

    def __init__(self, count: Any) -> None:
        from langchain.agents.middleware.context_editing import ClearToolUsesEdit
        from langchain_core.messages import (
            convert_to_messages,
            convert_to_openai_messages,
            trim_messages,
        )

        self._edit = ClearToolUsesEdit(trigger=0, keep=3)
        self._to_lc, self._to_openai, self._trim = (
            convert_to_messages,
            convert_to_openai_messages,
            trim_messages,
        )
        self._count = count

    def _openai(self, msgs: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._to_openai(msgs)
        return out

    def mask(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        msgs = self._to_lc(_lc_ready(messages))
        self._edit.apply(msgs, count_tokens=lambda ms: self._count(self._openai(ms)))  # type: ignore[arg-type]
        return self._openai(msgs)

    def trim(self, messages: list[dict[str, Any]], tokens: int) -> list[dict[str, Any]]:
        msgs = self._trim(
            self._to_lc(_lc_ready(messages)),
            max_tokens=tokens,
            token_counter=lambda ms: self._count(self._openai(ms)),
            strategy="last",
            include_system=True,
            start_on="human",
        )
        return self._openai(msgs)


def _clean(m: dict[str, Any]) -> dict[str, Any]:
    keep = ("role", "content", "tool_calls", "tool_call_id", "name")
    out = {k: v for k, v in m.items() if k in keep and v is not None}
    out.setdefault("content", None)
    return out


def _lc_ready(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(m, content=m.get("content") or "") for m in messages]


def run_tau(
    path: Path, limit: int | None, log: Console, policy: Policy | None = None
) -> dict[str, Any]:
    sessions = load_tau(path, limit)
    tok = tiktoken_tokenizer("o200k_base")

    def count(messages: list[dict[str, Any]]) -> int:
        return count_message_tokens(tok, messages)

    base = _Baselines(count)
    tally = FactTally(METHODS, count)
    per_call: dict[str, list[int]] = {m: [] for m in ("replay", "masking", "vigente")}
    cost: dict[str, float] = dict.fromkeys(("replay", "masking", "vigente"), 0.0)
    for s, session in enumerate(sessions):
        traj = [_clean(m) for m in session["traj"]]
        actions = list(session["info"]["task"].get("actions") or [])
        wanted = action_points(traj, actions)
        previous: dict[str, list[int]] = {}
        for i, m in enumerate(traj):
            if m.get("role") != "assistant" or i == 0:
                continue
            before = traj[:i]
            requests: dict[str, list[dict[str, Any]]] = {
                "replay": before,
                "masking": base.mask(before),
            }
            with Vigente.open(":memory:") as vg:
                events = transcript_events(before, "tau", "bench")
                vg.runtime.import_events(event_lines(events))
                a = vg.assembly.assemble("tau", "main", "assistant", policy=policy, persist=False)
            requests["vigente"] = a.messages
            for name in ("replay", "masking", "vigente"):
                ids = tok.encode(json.dumps(requests[name], ensure_ascii=False))
                per_call[name].append(count(requests[name]))
                shared = _prefix(previous.get(name, []), ids)
                cost[name] += 0.1 * shared + (len(ids) - shared)
                previous[name] = ids
            if i in wanted:
                requests["trim"] = base.trim(before, count(a.messages))
                tally.add(requests, required_facts(before, wanted[i]))
        if s % 10 == 9:
            log.print(f"  {s + 1}/{len(sessions)} sessions")
    figures: dict[str, Any] = {"tau_sessions": len(sessions), **tally.figures()}
    for name in ("replay", "masking", "vigente"):
        figures[f"tau_tokens_per_call_{name}"] = round(statistics.mean(per_call[name]), 1)
        figures[f"tau_cache_cost_{name}"] = round(cost[name])
    return figures


class ContextBenchmark:
    name = "context"
    help = "context assembly on tau-bench sessions vs replay, masking and trim"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--scenarios",
            type=Path,
            default=DEFAULT_SCENARIOS,
            help="scenario fixtures to replay (default tests/data/scenarios)",
        )
        parser.add_argument(
            "--tau-bench",
            type=Path,
            default=DEFAULT_TAU,
            help="tau-bench trials file (default ../shared/data/tau-bench)",
        )
        parser.add_argument(
            "--sessions", type=int, default=None, help="only the first N sessions (default all)"
        )
        parser.add_argument(
            "--policy", type=Path, default=None, help="assembly policy TOML (default: the default)"
        )
        parser.add_argument(
            "--growth",
            metavar="SIZES",
            help="only the growth part: comma-separated tool-call counts (e.g. 10,100,1000)",
        )
        parser.add_argument(
            "--backend",
            choices=("sqlite", "postgres", "both"),
            default="sqlite",
            help="growth: both = each size on SQLite and PostgreSQL in one run, assemblies in "
            "turn, with postgres_vs_sqlite",
        )
        parser.add_argument("--postgres-url", help="server for --backend postgres")
        parser.add_argument("--reads", type=int, default=20, help="growth: assemblies timed")

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        if args.growth:
            from vigente.bench._growth import run_growth_cli

            return run_growth_cli(args, log)
        log.print(f"tau-bench: {args.tau_bench}")
        policy = load_policy(args.policy) if args.policy else None
        return run_tau(args.tau_bench, args.sessions, log, policy) | run_scenarios(
            args.scenarios, log
        )

    def render(self, figures: dict[str, Any], console: Console) -> None:
        table = Table(title="vigente context benchmark (tau-bench airline)")
        table.add_column("measure")
        for name in METHODS:
            table.add_column(name, justify="right")
        for key in ("availability", "history_tokens", "tokens_per_call", "cache_cost"):
            table.add_row(key, *[str(figures.get(f"tau_{key}_{n}", "-")) for n in METHODS])
        console.print(table)
        console.print(
            f"{figures['tau_points']} action points, {figures['tau_required_facts']} "
            f"required facts, {figures['tau_sessions']} sessions"
        )
        render_scenarios(figures, console)


BENCHMARK = ContextBenchmark()
