"""Scenarios: an event log (RUNTIME.md §1) with ``expect`` lines, replayed into a fresh store,
assembled and checked — so a user adds a scenario without writing Python.

An ``expect`` line names the request (``branch``, ``participant``; optional ``mode``,
``provider``, ``format``, ``budget``, ``rehydrate``, ``as_of``, ``policy`` as a policy document)
and what must hold: ``must`` (strings that must reach the model), ``must_not`` (strings that must
not), ``included`` (ref -> ``as``), ``omitted`` (ref -> reason), ``mode_contract`` (keys of the
recorded mode contract and their values). Every other line is an event. Each request's result
counts the required facts kept and the forbidden strings that leaked (the scenario benchmark).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente.assemble.policy import policy_from_document
from vigente.errors import InvalidInput

if TYPE_CHECKING:
    from vigente.assemble.service import ContextAssembly
    from vigente.runtime.service import Runtime

__all__ = ["ScenarioResult", "run_scenario"]

_EXPECT_KEYS = {
    "event",
    "conversation",
    "branch",
    "participant",
    "mode",
    "provider",
    "format",
    "budget",
    "rehydrate",
    "as_of",
    "policy",
    "must",
    "must_not",
    "included",
    "omitted",
    "mode_contract",
    "name",
}


@dataclass
class ScenarioResult:
    file: str
    checks: int = 0
    failures: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures and self.checks > 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "passed": self.passed,
            "checks": self.checks,
            "failures": self.failures,
            "requests": self.requests,
        }


def _split(path: Path) -> tuple[list[str], list[str | None], list[tuple[int, dict[str, Any]]]]:
    """The event lines, the log's time at each (the last ``at`` so far: an import carries it
    to the lines that give none) and the ``expect`` lines with the number of events before."""
    events: list[str] = []
    clocks: list[str | None] = []
    expects: list[tuple[int, dict[str, Any]]] = []
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read scenario {str(path)!r}: {exc}") from None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"scenario {str(path)!r} line {n}: not JSON ({exc})") from None
        if isinstance(obj, dict) and obj.get("event") == "expect":
            unknown = set(obj) - _EXPECT_KEYS
            if unknown:
                raise InvalidInput(
                    f"scenario {str(path)!r} line {n}: unknown expect keys "
                    f"{', '.join(sorted(unknown))}"
                )
            for key in ("branch", "participant"):
                if not isinstance(obj.get(key), str):
                    raise InvalidInput(f"scenario {str(path)!r} line {n}: expect needs {key!r}")
            expects.append((len(events), obj | {"_line": n}))
        else:
            events.append(line)
            at = obj.get("at") if isinstance(obj, dict) else None
            clocks.append(at if isinstance(at, str) else clocks[-1] if clocks else None)
    if not expects:
        raise InvalidInput(
            f"scenario {str(path)!r} has no expect line: add one saying what "
            "must and must not reach the model"
        )
    return events, clocks, expects


def run_scenario(path: str | Path, runtime: Runtime | None = None) -> ScenarioResult:
    """Replay ``path`` into a fresh in-memory store (or into ``runtime``'s, which must not
    hold its conversations yet), assemble each ``expect`` and check it."""
    from vigente.assemble.service import Assembler
    from vigente.runtime.service import Runtime
    from vigente.store import open_store

    p = Path(path)
    events, clocks, expects = _split(p)
    result = ScenarioResult(str(p))
    store = open_store(":memory:") if runtime is None else runtime.store
    try:
        rt = runtime or Runtime(store)
        conversations: list[str] = []
        assembler = Assembler(rt)
        done = 0
        for upto, e in expects:
            n = e.pop("_line")
            if upto > done:  # an expectation holds at its place in the log
                # an event without "at" happens at the log's time so far, as in one import
                report = rt.import_events(events[done:upto], now=clocks[done - 1] if done else None)
                conversations += [c for c in report.conversations if c not in conversations]
                done = upto
            conversation = e.get("conversation") or (
                conversations[0] if len(conversations) == 1 else None
            )
            if conversation is None:
                raise InvalidInput(f"scenario {str(p)!r} line {n}: name the conversation")
            policy = policy_from_document(e["policy"], f"line {n}") if "policy" in e else None
            a = assembler.assemble(
                conversation,
                e["branch"],
                e["participant"],
                mode=e.get("mode", "chat"),
                provider=e.get("provider"),
                format=e.get("format", "openai-chat"),
                budget=e.get("budget"),
                policy=policy,
                rehydrate=tuple(e.get("rehydrate", ())),
                as_of=e.get("as_of"),
                persist=False,
            )
            _check(result, e.get("name") or f"line {n}", e, a)
    finally:
        if runtime is None:
            store.close()
    return result


def _check(result: ScenarioResult, label: str, expect: dict[str, Any], a: ContextAssembly) -> None:
    """Check one ``expect`` against its assembly: each check counted in ``result``, each
    failure named by ``label``; the request's figures for the scenario benchmark."""
    text = json.dumps([a.system, a.messages], ensure_ascii=False)
    inc = {d["ref"]: d["as"] for d in a.record["included"]}
    omi = {d["ref"]: d["reason"] for d in a.record["omitted"]}

    def check(ok: bool, what: str) -> None:
        result.checks += 1
        if not ok:
            result.failures.append(f"{label}: {what}")

    for s in expect.get("must", []):
        check(s in text, f"{s!r} did not reach the model")
    for s in expect.get("must_not", []):
        check(s not in text, f"{s!r} reached the model")
    for ref, as_ in expect.get("included", {}).items():
        check(
            inc.get(ref) == as_,
            f"{ref} included as {inc.get(ref)} (omitted: {omi.get(ref)}), expected {as_}",
        )
    for key, value in expect.get("mode_contract", {}).items():
        got = a.record["mode_contract"].get(key)
        check(got == value, f"mode contract {key} is {got!r}, expected {value!r}")
    for ref, reason in expect.get("omitted", {}).items():
        check(
            omi.get(ref) == reason,
            f"{ref} omitted as {omi.get(ref)} (included: {inc.get(ref)}), expected {reason}",
        )
    result.requests.append(
        {
            "name": label,
            "tokens": a.record["tokens"],
            "included": len(inc),
            "omitted": len(omi),
            "omission_counts": a.record["omission_counts"],
            "mode_contract": a.record["mode_contract"]["contract"],
            "required": len(expect.get("must", [])),
            "kept": sum(1 for s in expect.get("must", []) if s in text),
            "forbidden": len(expect.get("must_not", [])),
            "leaks": sum(1 for s in expect.get("must_not", []) if s in text),
        }
    )
