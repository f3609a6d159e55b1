"""Property tests of the runtime graph: a prefix of an event log read at its knowledge time gives
the same graph (and the same candidates) whatever is appended later; the default extractor never
holds a value its artifact does not."""

from __future__ import annotations

import datetime as _dt
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.runtime import DefaultExtractor, fact_values

C = "conv"
START = _dt.datetime(2026, 10, 1, 8, 0, tzinfo=_dt.UTC)

# One step of an agent loop; the builder turns it into a valid event given what exists.
steps = st.lists(
    st.tuples(
        st.sampled_from(["message", "run", "call", "result", "memory", "branch", "share",
                         "participant", "checkpoint"]),
        st.integers(0, 5),  # which existing record to refer to
        st.integers(0, 2),  # seconds after the previous event (0: same knowledge time)
        st.sampled_from(["succeeded", "failed", "deferred"]),
    ),
    min_size=1, max_size=40,
)


def build(plan: list[tuple[str, int, int, str]]) -> list[dict[str, Any]]:
    at = START
    events: list[dict[str, Any]] = [
        {"event": "conversation", "id": C, "account": "acct", "at": at.isoformat()},
        {"event": "participant", "id": "p0", "model": "m", "conversation": C,
         "at": at.isoformat()},
        {"event": "branch", "id": "b0", "conversation": C, "at": at.isoformat()},
    ]
    participants, branches = ["p0"], ["b0"]
    runs: list[tuple[str, str]] = []  # (run, branch)
    messages: dict[str, list[str]] = {"b0": []}
    calls: list[str] = []
    open_calls: list[str] = []
    memories: list[str] = []
    for n, (kind, pick, gap, status) in enumerate(plan, start=1):
        at += _dt.timedelta(seconds=gap)
        e: dict[str, Any] | None = None
        if kind == "participant":
            participants.append(f"p{n}")
            e = {"event": "participant", "id": f"p{n}", "model": "m"}
        elif kind == "branch":
            parent = branches[pick % len(branches)]
            e = {"event": "branch", "id": f"b{n}", "parent": parent}
            if messages[parent]:
                e["fork_after"] = messages[parent][pick % len(messages[parent])]
            branches.append(f"b{n}")
            messages[f"b{n}"] = []
        elif kind == "message":
            b = branches[pick % len(branches)]
            e = {"event": "message", "id": f"m{n}", "branch": b, "role": "user",
                 "content": f"text {n}"}
            messages[b].append(f"m{n}")
        elif kind == "run":
            b = branches[pick % len(branches)]
            e = {"event": "run", "id": f"r{n}", "branch": b,
                 "participant": participants[pick % len(participants)], "mode": "chat"}
            runs.append((f"r{n}", b))
        elif kind == "call" and runs:
            e = {"event": "tool_call", "id": f"t{n}", "run": runs[pick % len(runs)][0],
                 "name": "tool", "arguments": {"n": n}}
            calls.append(f"t{n}")
            open_calls.append(f"t{n}")
        elif kind == "result" and open_calls:
            call = open_calls[pick % len(open_calls)]
            if status != "deferred":
                open_calls.remove(call)
            e = {"event": "tool_result", "call": call, "status": status,
                 "content": {"id": f"X-{n}", "value": n}}
        elif kind == "memory" and calls:
            e = {"event": "memory", "id": f"mem{n}", "sources": [calls[pick % len(calls)]],
                 "summary": f"memory {n}"}
            if memories:
                e["supersedes"] = [memories[pick % len(memories)]]
            memories.append(f"mem{n}")
        elif kind == "share" and calls and len(participants) > 1:
            e = {"event": "share", "ref": calls[pick % len(calls)],
                 "with": [participants[-1]]}
        elif kind == "checkpoint" and runs:
            e = {"event": "checkpoint", "id": f"cp{n}", "run": runs[pick % len(runs)][0],
                 "state": {"step": n}}
        if e is not None:
            events.append({**e, "conversation": C, "at": at.isoformat()})
    return events


def snapshot(vg: Vigente, k: str) -> dict[str, Any]:
    rt = vg.runtime
    graph = rt.graph(C, known_at=k)
    branches = [n.id for n in graph.of_kind("branch")]
    people = [n.id for n in graph.of_kind("participant")]
    seen = {
        f"{b}/{p}": [(c.node.KIND, c.node.id, c.reach, c.status, c.superseded_by)
                     for c in rt.candidates(C, b, p, known_at=k).records]
        for b in branches for p in people
    }
    return {"graph": graph.as_dict()["records"], "candidates": seen,
            "transcripts": {b: [m.id for m in rt.transcript(C, b, known_at=k)]
                            for b in branches}}


@settings(max_examples=40, deadline=None)
@given(steps, st.integers(1, 60))
def test_a_prefix_read_at_its_knowledge_time_never_changes(
    plan: list[tuple[str, int, int, str]], cut: int
) -> None:
    events = build(plan)
    cut = min(cut, len(events))
    k = events[cut - 1]["at"]
    # later events are learned strictly after k (equal times are the same moment of knowledge)
    later = [e for e in events[cut:] if e["at"] > k]
    if len(later) != len(events) - cut:
        later = [{**e, "at": (_dt.datetime.fromisoformat(k) + _dt.timedelta(seconds=1)
                              ).isoformat()} if e["at"] <= k else e for e in events[cut:]]
    with tempfile.TemporaryDirectory() as tmp:
        with Vigente.open(Path(tmp) / "prefix.db") as vg:
            vg.runtime.import_events([json.dumps(e) for e in events[:cut]])
            before = snapshot(vg, k)
            if later:
                vg.runtime.import_events([json.dumps(e) for e in later])
            assert snapshot(vg, k) == before
        with Vigente.open(Path(tmp) / "whole.db") as vg:
            vg.runtime.import_events([json.dumps(e) for e in events[:cut] + later])
            assert snapshot(vg, k) == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=70)
    | st.dictionaries(st.text(max_size=8), children, max_size=8),
    max_leaves=200,
)


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [value]


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_the_default_extractor_never_holds_a_value_its_artifact_does_not(value: Any) -> None:
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    extraction = DefaultExtractor().extract("tool", "succeeded", b"{}", raw)
    assert extraction is not None
    held = _scalars(json.loads(raw))
    for fact in fact_values(extraction.facts):
        assert any(fact == h and type(fact) is type(h) for h in held) or (
            fact is None), f"{fact!r} is not in the artifact"
