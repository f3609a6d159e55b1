"""``python -m vigente.bench context``: context assembly on real sessions (tau-bench airline
transcripts) beside transcript replay, LangChain's observation masking (``ClearToolUsesEdit``,
keep=3, trigger 0) and ``trim_messages`` cut to vigente's token count.

Per session, every model call (each assistant message) is a point: the transcript up to it is
imported into a fresh in-memory store (``transcript_events``, as ``runtime import-openai``) and
assembled with the default policy. Every method gets the same serializer (:data:`ID_MODES`:
vigente's call ids and compact JSON, or the recorded ids for all). At the agent's own call of
each action of ``info.task.actions``, the required facts are the action's argument values seen
earlier, told apart (:func:`split_facts`: 3+ characters, not in the system text; the others are
counted apart) and held when found, as a whole word, in a message tied to where they were seen
(:func:`holds`). Cost: each method's requests billed under OpenAI's and Anthropic's published
prompt-cache rules (:mod:`vigente.bench._prompt_cache`). Figures for all sessions and by trial;
the default policy was fitted on trials :data:`FITTED_TRIALS`.
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.assemble import count_message_tokens, tiktoken_tokenizer
from vigente.assemble.policy import Policy, default_policy, load_policy, policy_from_document
from vigente.bench._prompt_cache import PROVIDERS, common_prefix, message_token_ids, new_cache
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


# --- the fair comparison (issue 23) -------------------------------------------------------

#: The trials the default policy was fitted on (its settings were chosen on these sessions).
FITTED_TRIALS = (0, 1)
#: How every method names tool calls: ``short`` — the ids vigente sends (``c<seq>``, the call's
#: place in the log), given to the baselines too; ``original`` — the recorded ids (a repeated id
#: numbered ``#2``… as the import does) for every method, vigente with ``call_ids =
#: "original"``; ``published`` — issue 11's comparison: vigente short, the baselines the
#: transcript as recorded (its ids, its JSON spacing).
ID_MODES = ("short", "original", "published")
#: Fewer characters than this and a value is found by chance: it is not counted as a fact.
MIN_FACT_CHARS = 3


def _bounded(value: str) -> re.Pattern[str]:
    """``value`` as a whole word: not inside a longer id or number."""
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(value) + r"(?![A-Za-z0-9_])")


def _leaves(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in _leaves(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in _leaves(x)]
    if isinstance(obj, bool) or obj is None:
        return []
    return [str(obj)]


@dataclass(frozen=True, slots=True)
class Fact:
    """A required value and where it was seen before the action: the calls (their results or
    arguments) and, as ``None``, text messages."""

    value: str
    pattern: re.Pattern[str]
    sources: frozenset[str | None]


def call_keys(traj: list[dict[str, Any]]) -> list[list[str]]:
    """Per transcript message, the keys of its calls (assistant) or of the call it answers
    (tool): the recorded id, ``#2``… on a repeat, as :func:`transcript_events` names them."""
    seen: dict[str, int] = {}
    answered: dict[str, int] = {}
    out: list[list[str]] = []
    for n, m in enumerate(traj, start=1):
        keys: list[str] = []
        if m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                base = str(c.get("id") or f"call{n}")
                seen[base] = seen.get(base, 0) + 1
                keys.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
        elif m.get("role") == "tool":
            base = str(m.get("tool_call_id") or "")
            answered[base] = answered.get(base, 0) + 1
            keys.append(base if answered[base] == 1 else f"{base}#{answered[base]}")
        out.append(keys)
    return out


@dataclass
class FactSplit:
    """The action's argument values, sorted: ``counted`` (told apart: at least
    :data:`MIN_FACT_CHARS` characters, not in the system text, seen earlier in the session);
    ``in_system`` and ``short`` (free for every method, reported apart)."""

    counted: list[Fact] = field(default_factory=list)
    in_system: list[str] = field(default_factory=list)
    short: list[str] = field(default_factory=list)


def split_facts(
    before: list[dict[str, Any]], keys: list[list[str]], actions: list[dict[str, Any]]
) -> FactSplit:
    """Sort the argument values of ``actions`` (carried out right after ``before``; ``keys``:
    :func:`call_keys` of the transcript) by whether a request can be judged on them."""
    system = " ".join(
        str(m.get("content") or "") for m in before if m.get("role") in ("system", "developer")
    )
    out = FactSplit()
    done: set[str] = set()
    for value in (v for a in actions for v in _leaves(a.get("kwargs", {}))):
        if value in done:
            continue
        done.add(value)
        pattern = _bounded(value)
        sources: set[str | None] = set()
        for m, ks in zip(before, keys, strict=False):
            if m.get("role") in ("system", "developer"):
                continue
            if m.get("role") == "tool":
                if pattern.search(str(m.get("content") or "")):
                    sources.update(ks)
                continue
            if pattern.search(str(m.get("content") or "")):
                sources.add(None)
            for c, k in zip(m.get("tool_calls") or [], ks, strict=False):
                if pattern.search(json.dumps(c.get("function") or {}, ensure_ascii=False)):
                    sources.add(k)
        if not sources:
            continue  # never seen before the action: not a fact the request could keep
        if len(value) < MIN_FACT_CHARS:
            out.short.append(value)
        elif pattern.search(system):
            out.in_system.append(value)
        else:
            out.counted.append(Fact(value, pattern, frozenset(sources)))
    return out


def holds(
    request: list[dict[str, Any]], fact: Fact, key_of: Callable[[str], set[str | None]], tied: bool
) -> bool:
    """Does ``request`` hold ``fact``: its value, as a whole word, in a non-system message —
    with ``tied``, one that carries a source of the fact (a result or call of one of its calls,
    by ``key_of`` the wire id's call keys, or a text message when it was seen in text)."""
    for m in request:
        role = m.get("role")
        if role in ("system", "developer"):
            continue
        if role == "tool":
            parts = [(key_of(str(m.get("tool_call_id"))), str(m.get("content") or ""))]
        else:
            text = m.get("content")
            parts = [({None}, text if isinstance(text, str) else json.dumps(text))]
            for c in m.get("tool_calls") or []:
                fn = json.dumps(c.get("function") or {}, ensure_ascii=False)
                parts.append((key_of(str(c.get("id"))), fn))
        for owners, text in parts:
            if (not tied or not owners.isdisjoint(fact.sources)) and fact.pattern.search(text):
                return True
    return False


def _compact_json(content: Any) -> Any:
    """A JSON object or array re-encoded without spaces (any serializer can); else as it is."""
    if not isinstance(content, str) or content[:1] not in ("{", "["):
        return content
    try:
        return json.dumps(json.loads(content), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return content


def baseline_request(
    before: list[dict[str, Any]], keys: list[list[str]], wire: Callable[[str], str] | None
) -> list[dict[str, Any]]:
    """The transcript as a baseline sends it with the serializer vigente uses: each call under
    ``wire`` of its call key, results as compact JSON. ``wire=None``: as recorded."""
    if wire is None:
        return before
    out: list[dict[str, Any]] = []
    for m, ks in zip(before, keys, strict=False):
        m = dict(m)
        if m.get("role") == "tool" and ks:
            m["tool_call_id"] = wire(ks[0])
            m["content"] = _compact_json(m.get("content"))
        elif m.get("tool_calls"):
            m["tool_calls"] = [
                {**c, "id": wire(k)} for c, k in zip(m["tool_calls"], ks, strict=False)
            ]
        out.append(m)
    return out


def with_call_ids(policy: Policy | None, call_ids: str) -> Policy:
    """``policy`` (default: the default) with ``serialization.call_ids`` set."""
    doc = (policy or default_policy()).document
    if doc["serialization"]["call_ids"] == call_ids:
        return policy or default_policy()
    doc["serialization"]["call_ids"] = call_ids
    doc["id"] = f"{doc['id']}+{call_ids}-ids"
    return policy_from_document(doc, f"{doc['id']}")


#: How a request's wire ids map back to call keys.
KeyOf = Callable[[str], set[str | None]]
#: Per method, one request's tokens and its cost by provider.
Bills = dict[str, tuple[int, dict[str, float]]]
#: Per method, a rewritten request: where it first differs from the previous one, and the
#: previous request's tokens from there on.
Rewrites = dict[str, tuple[int, int]]


@dataclass
class _Tally:
    """One group of sessions (all, or one trial), one id mode: every measure by method."""

    points: int = 0
    facts: int = 0
    in_system: int = 0
    short: int = 0
    calls: int = 0
    held: dict[str, int] = field(default_factory=dict)
    held_anywhere: dict[str, int] = field(default_factory=dict)
    history: dict[str, list[int]] = field(default_factory=dict)
    tokens: dict[str, list[int]] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    #: per method, each request that is not the previous one and more: (the token index of the
    #: first difference, the previous request's tokens from there on: sent again, not read)
    rewrites: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def add_call(self, bills: Bills, rewrites: Rewrites) -> None:
        """One model call: each method's request size, cost by provider and rewrite, if any."""
        self.calls += 1
        for name, rewrite in rewrites.items():
            self.rewrites.setdefault(name, []).append(rewrite)
        for name, (n, cost) in bills.items():
            self.tokens.setdefault(name, []).append(n)
            for provider, c in cost.items():
                k = f"{provider}:{name}"
                self.cost[k] = self.cost.get(k, 0.0) + c

    def add_facts(
        self,
        need: FactSplit,
        requests: dict[str, list[dict[str, Any]]],
        mine_of: KeyOf,
        theirs_of: KeyOf,
        count: Callable[[list[dict[str, Any]]], int],
    ) -> None:
        """An action point: its free facts, and the counted ones each method's request holds
        (tied to where they were seen, and anywhere) with its history tokens there."""
        self.in_system += len(need.in_system)
        self.short += len(need.short)
        if not need.counted:
            return
        self.points += 1
        self.facts += len(need.counted)
        for name, request in requests.items():
            owners = mine_of if name == "vigente" else theirs_of
            self.held[name] = self.held.get(name, 0) + sum(
                holds(request, f, owners, tied=True) for f in need.counted
            )
            self.held_anywhere[name] = self.held_anywhere.get(name, 0) + sum(
                holds(request, f, owners, tied=False) for f in need.counted
            )
            self.history.setdefault(name, []).append(
                count([x for x in request if x.get("role") != "system"])
            )

    def figures(self, prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            f"{prefix}points": self.points,
            f"{prefix}required_facts": self.facts,
            f"{prefix}free_facts_in_system": self.in_system,
            f"{prefix}free_facts_short": self.short,
            f"{prefix}model_calls": self.calls,
        }
        for name in METHODS:
            f = self.facts
            out[f"{prefix}availability_{name}"] = (
                round(self.held.get(name, 0) / f, 4) if f else None
            )
            out[f"{prefix}availability_anywhere_{name}"] = (
                round(self.held_anywhere.get(name, 0) / f, 4) if f else None
            )
            seen = self.history.get(name)
            out[f"{prefix}history_tokens_{name}"] = (
                round(statistics.mean(seen), 1) if seen else None
            )
            per = self.tokens.get(name)
            out[f"{prefix}tokens_per_call_{name}"] = round(statistics.mean(per), 1) if per else None
            for rules in PROVIDERS:
                key = f"{rules.name}:{name}"
                out[f"{prefix}cost_{rules.name}_{name}"] = round(self.cost.get(key, 0.0))
            rw = self.rewrites.get(name, [])
            out[f"{prefix}rewrites_{name}"] = len(rw)
            out[f"{prefix}rewritten_tokens_{name}"] = sum(tail for _, tail in rw)
            out[f"{prefix}rewrite_at_median_{name}"] = (
                statistics.median(at for at, _ in rw) if rw else None
            )
        return out


def _serialized(
    mode: str, before: list[dict[str, Any]], keys: list[list[str]], short_map: dict[str, str]
) -> tuple[list[dict[str, Any]], KeyOf, KeyOf]:
    """The baselines' input under ``mode``, and how vigente's and the baselines' wire ids map
    back to call keys (``short_map``: vigente's short wire id -> call key)."""

    def vigente_keys(wire: str) -> set[str | None]:
        return {short_map.get(wire, wire)}

    if mode == "short":
        wire_of = {call: w for w, call in short_map.items()}
        return (
            baseline_request(before, keys, lambda k: wire_of.get(k, k)),
            vigente_keys,
            vigente_keys,
        )
    if mode == "original":
        return baseline_request(before, keys, lambda k: k), vigente_keys, vigente_keys
    every = {k for ks in keys for k in ks}

    def recorded_keys(wire: str) -> set[str | None]:
        # a recorded id stands for every call that reused it
        return {k for k in every if k == wire or k.startswith(wire + "#")}

    return before, vigente_keys, recorded_keys


class _Tokens:
    """The o200k tokenizer every method is counted with; each text is encoded once a run."""

    def __init__(self) -> None:
        self._tok = tiktoken_tokenizer("o200k_base")
        self._memo: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        found = self._memo.get(text)
        if found is None:
            found = self._memo[text] = self._tok.encode(text)
        return found

    def count(self, messages: list[dict[str, Any]]) -> int:
        return count_message_tokens(self._tok, messages)


class _Billing:
    """One session's bills: each method's prompt cache under every provider's rules (by id
    mode), and its previous request's tokens, against which a rewrite is measured."""

    def __init__(self) -> None:
        self._caches = {
            (mode, name, rules.name): new_cache(rules)
            for mode in ID_MODES
            for name in METHODS
            for rules in PROVIDERS
        }
        self._sent_before: dict[tuple[str, str], list[int]] = {}  # the previous request's tokens

    def bill(
        self,
        mode: str,
        requests: dict[str, list[dict[str, Any]]],
        encode: Callable[[str], list[int]],
    ) -> tuple[Bills, Rewrites]:
        """Each method's request billed under ``mode``, and the requests that rewrote the
        previous one (not it and more)."""
        bills: Bills = {}
        rewrites: Rewrites = {}
        for name, request in requests.items():
            blocks = [message_token_ids(encode, x) for x in request]
            flat = [t for b in blocks for t in b]
            last = self._sent_before.get((mode, name))
            if last is not None and (at := common_prefix(last, flat)) < len(last):
                rewrites[name] = (at, len(last) - at)
            self._sent_before[(mode, name)] = flat
            stable = next((k for k, x in enumerate(request) if x.get("role") != "system"), 0)
            bills[name] = (
                sum(len(b) for b in blocks),
                {
                    r.name: self._caches[(mode, name, r.name)].bill(blocks, stable)
                    for r in PROVIDERS
                },
            )
        return bills, rewrites


class _TauRun:
    """The tau-bench comparison of one policy: what every session shares (the tokenizer, the
    baselines, the policy under both call-id settings) and the tallies by group and id mode."""

    def __init__(self, policy: Policy | None, groups: list[str]) -> None:
        self.tokens = _Tokens()
        self.base = _Baselines(self.tokens.count)
        self.policies = {
            "short": with_call_ids(policy, "short"),
            "original": with_call_ids(policy, "original"),
        }
        self.groups = groups
        self.tallies = {(g, mode): _Tally() for g in groups for mode in ID_MODES}

    def add_session(self, session: dict[str, Any]) -> None:
        """Every model call of ``session`` (each assistant message but a first), in order."""
        traj = [_clean(m) for m in session["traj"]]
        keys = call_keys(traj)
        actions = list(session["info"]["task"].get("actions") or [])
        wanted = action_points(traj, actions)
        mine = ("all", f"trial{session.get('trial')}")
        billing = _Billing()
        for i, m in enumerate(traj):
            if m.get("role") != "assistant" or i == 0:
                continue
            self._add_call(traj[:i], keys, wanted.get(i), mine, billing)

    def _add_call(
        self,
        before: list[dict[str, Any]],
        keys: list[list[str]],
        actions: list[dict[str, Any]] | None,
        mine: tuple[str, str],
        billing: _Billing,
    ) -> None:
        """The model call after ``before``: vigente's assemblies and each baseline's request,
        under every id mode, billed and (at an action point) judged on the action's facts."""
        assembled = self._assembled(before)
        short_map: dict[str, str] = dict(assembled["short"].record.get("call_ids") or {})
        need = None if actions is None else split_facts(before, keys, actions)
        for mode in ID_MODES:
            a = assembled["original" if mode == "original" else "short"]
            sent, mine_of, theirs_of = _serialized(mode, before, keys, short_map)
            requests: dict[str, list[dict[str, Any]]] = {
                "replay": sent,
                "masking": self.base.mask(sent),
                "trim": self.base.trim(sent, self.tokens.count(a.messages)),
                "vigente": a.messages,
            }
            bills, rewrites = billing.bill(mode, requests, self.tokens.encode)
            for group in mine:
                tally = self.tallies[(group, mode)]
                tally.add_call(bills, rewrites)
                if need is not None:
                    tally.add_facts(need, requests, mine_of, theirs_of, self.tokens.count)

    def _assembled(self, before: list[dict[str, Any]]) -> dict[str, Any]:
        """``before`` imported into a fresh store and assembled under each call-id policy."""
        assembled: dict[str, Any] = {}
        with Vigente.open(":memory:") as vg:
            vg.runtime.import_events(event_lines(transcript_events(before, "tau", "bench")))
            for ids, pol in self.policies.items():
                assembled[ids] = vg.assembly.assemble(
                    "tau", "main", "assistant", policy=pol, persist=False
                )
        return assembled

    def figures(self, sessions: int) -> dict[str, Any]:
        """The figures of every tally, for all the sessions and by trial."""
        found = sorted({int(g[5:]) for g in self.groups if g != "all"})
        figures: dict[str, Any] = {
            "tau_sessions": sessions,
            "tau_trials": found,
            "tau_fitted": all(t in FITTED_TRIALS for t in found),
        }
        for (group, mode), tally in self.tallies.items():
            prefix = f"tau_{mode}_" if group == "all" else f"tau_{group}_{mode}_"
            figures |= tally.figures(prefix)
        return figures


def run_tau(
    path: Path,
    limit: int | None,
    log: Console,
    policy: Policy | None = None,
    trials: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    """The tau-bench comparison under every id mode (:data:`ID_MODES`), for all the sessions
    and for each trial; ``trials``: only those (e.g. held-out ones)."""
    sessions = load_tau(path, None)
    if trials is not None:
        sessions = [s for s in sessions if s.get("trial") in trials]
    sessions = sessions[:limit] if limit else sessions
    run = _TauRun(policy, ["all", *sorted({f"trial{s.get('trial')}" for s in sessions})])
    for s, session in enumerate(sessions):
        run.add_session(session)
        if s % 10 == 9:
            log.print(f"  {s + 1}/{len(sessions)} sessions")
    return run.figures(len(sessions))


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
            "--trials",
            default=None,
            help="only these trials, comma-separated (e.g. 2,3: held out; the default policy "
            "was fitted on 0,1)",
        )
        parser.add_argument(
            "--policy",
            type=Path,
            default=None,
            help="assembly policy TOML or a shipped policy's name, e.g. cache-stable (default: "
            "the default)",
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
        trials = tuple(int(t) for t in args.trials.split(",")) if args.trials else None
        return run_tau(args.tau_bench, args.sessions, log, policy, trials) | run_scenarios(
            args.scenarios, log
        )

    def render(self, figures: dict[str, Any], console: Console) -> None:
        fitted = "fitted on" if figures["tau_fitted"] else "held out from"
        for mode in ID_MODES:
            p = f"tau_{mode}_"
            table = Table(
                title=f"tau-bench airline, trials {figures['tau_trials']} ({fitted} the "
                f"default policy), call ids: {mode}"
            )
            table.add_column("measure")
            for name in METHODS:
                table.add_column(name, justify="right")
            for key in (
                "availability",
                "availability_anywhere",
                "history_tokens",
                "tokens_per_call",
                "cost_openai",
                "cost_anthropic",
                "rewrites",
                "rewritten_tokens",
                "rewrite_at_median",
            ):
                table.add_row(key, *[str(figures.get(f"{p}{key}_{n}", "-")) for n in METHODS])
            console.print(table)
            console.print(
                f"{figures[p + 'points']} action points, {figures[p + 'required_facts']} "
                f"facts told apart (free, not counted: {figures[p + 'free_facts_in_system']} "
                f"in the system text, {figures[p + 'free_facts_short']} shorter than "
                f"{MIN_FACT_CHARS} characters), {figures[p + 'model_calls']} model calls, "
                f"{figures['tau_sessions']} sessions"
            )
        render_scenarios(figures, console)


BENCHMARK = ContextBenchmark()
