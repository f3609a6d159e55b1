"""Property tests of the runtime graph: a prefix of an event log read at its knowledge time gives
the same graph (and the same candidates) whatever is appended later; the default extractor never
holds a value its artifact does not."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.assemble.tokens import tiktoken_tokenizer
from vigente.runtime import DefaultExtractor, Runtime, fact_values
from vigente.runtime.artifact_memory import JSONNumber, decodes_to, expand, parse_exact, reading
from vigente.runtime.content import replay_text

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


def _number_texts() -> st.SearchStrategy[str]:
    """JSON number texts, with the ones no float keeps exactly (long digits, 1e400, 10.50,
    -0) and the non-JSON constants Python's reader accepts (NaN, Infinity)."""
    return st.one_of(
        st.integers().map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
        st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?\Z"),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-0", "10.50",
                         "3.14159265358979323846"]),
    )


_leaf_texts = (st.just("null") | st.booleans().map(json.dumps) | _number_texts()
               | st.text(max_size=250).map(lambda t: json.dumps(t, ensure_ascii=False)))


def _object(items: dict[str, str]) -> str:
    pairs = (json.dumps(k, ensure_ascii=False) + ":" + v for k, v in items.items())
    return "{" + ",".join(pairs) + "}"


#: Arbitrary JSON texts: objects with dotted keys (``a.b`` beside ``a: {b}``), lists of objects
#: sharing some of their keys (tables, ragged or not), deep nesting.
json_texts = st.recursive(
    _leaf_texts,
    lambda children: st.lists(children, max_size=8).map(lambda xs: "[" + ",".join(xs) + "]")
    | st.dictionaries(st.sampled_from(["a", "b", "a.b", "id", "x_1", "c"]) | st.text(max_size=4),
                      children, max_size=5).map(_object)
    | st.lists(st.dictionaries(st.sampled_from(["a", "b", "a.b", "id"]), children, min_size=1,
                               max_size=3).map(_object), min_size=2, max_size=6
               ).map(lambda xs: "[" + ",".join(xs) + "]"),
    max_leaves=120,
)


def _held(fact: Any, held: Any, lossy: bool) -> bool:
    """Is ``fact`` (a decoded compact form) what ``held`` (the result read exactly) holds at
    the same path: same keys, same positions, the same value by its JSON text (a number no
    float keeps: its text); a null for a value left out only in a memory that says so."""
    if isinstance(fact, dict):
        return isinstance(held, dict) and all(
            k in held and _held(v, held[k], lossy) for k, v in fact.items())
    if isinstance(fact, list):
        return isinstance(held, list) and len(fact) <= len(held) and all(
            _held(v, h, lossy) for v, h in zip(fact, held, strict=False))
    if isinstance(held, JSONNumber):
        return fact == held.text and lossy
    if fact is None and held is not None:
        return lossy
    return json.dumps(fact) == json.dumps(held) and type(fact) is type(held)


@settings(max_examples=300, deadline=None)
@given(json_texts)
def test_the_default_extractor_is_exact_or_says_it_is_not(text: str) -> None:
    """Every value of the memory is the value at the same path of the result; the memory is
    lossless (decodes back to the result exactly) exactly when it carries no limit note."""
    raw = text.encode("utf-8", "surrogatepass")
    extraction = DefaultExtractor().extract("tool", "succeeded", b"{}", raw)
    assert extraction is not None
    parsed = parse_exact(raw)
    assert parsed is not None
    lossy = bool(extraction.limit_notes)
    facts = extraction.facts
    if isinstance(parsed[0], dict):
        assert _held(expand(facts), parsed[0], lossy)
    else:
        assert set(facts) <= {"result"} and _held(expand(facts).get("result"), parsed[0], lossy)
    assert decodes_to(facts, raw) is not lossy
    if not lossy:  # checked once more without the module's own reader
        exact = json.loads(raw, parse_float=Decimal, parse_int=Decimal)
        back = expand(facts) if isinstance(exact, dict) else expand(facts)["result"]
        assert _decimal(back) == exact


def _decimal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _decimal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimal(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Decimal(json.dumps(value))
    return value


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([
    '{"x": 1e400}', '{"pi": 3.14159265358979323846}', '[{"a":{"b":1}},{"a.b":2}]',
    '{"card_7": {"id": "card_7", "n": 1}}', '[{"a": 1, "b": 2}, {"a": 3}]', '{"a":1,"a":2}',
    '{"v": NaN}', '{"columns": ["a"], "rows": [[1]]}']))
def test_the_examples_that_broke_are_exact_or_say_so(text: str) -> None:
    raw = text.encode()
    e = DefaultExtractor().extract("tool", "succeeded", b"{}", raw)
    assert e is not None and decodes_to(e.facts, raw) is not bool(e.limit_notes)
    json.dumps(e.facts, allow_nan=False)  # no float Infinity or NaN: a non-finite is its text
def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [value]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=70)
    | st.dictionaries(st.text(max_size=8), children, max_size=8),
    max_leaves=200,
)


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


# -- issue 21: the event log under arbitrary (and broken) input ----------------------------------
def _mutate(events: list[dict[str, Any]], how: str, where: int, junk: Any) -> list[dict[str, Any]]:
    events = [dict(e) for e in events]
    e = events[where % len(events)]
    keys = sorted(k for k in e if k != "event")
    if how == "drop" and keys:
        del e[keys[where % len(keys)]]
    elif how == "retype" and keys:
        e[keys[where % len(keys)]] = junk
    elif how == "unknown-kind":
        e["event"] = "hologram"
    elif how == "extra":
        e["zz_unknown"] = junk
    elif how == "swap" and len(events) > 1:
        i = where % len(events)
        j = (i + 1) % len(events)
        events[i], events[j] = events[j], events[i]
    elif how == "no-at":
        e.pop("at", None)
    return events


junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=6),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                      st.integers(), max_size=2))


@settings(max_examples=60, deadline=None)
@given(steps, st.sampled_from(["none", "drop", "retype", "unknown-kind", "extra", "swap",
                               "no-at"]), st.integers(0, 100), junk)
@example(plan=[("run", 0, 0, "succeeded"), ("call", 0, 0, "succeeded"),
               ("participant", 0, 0, "succeeded"), ("share", 0, 0, "succeeded"),
               ("share", 0, 0, "succeeded")], how="none", where=0, value=None)
def test_any_event_log_is_stored_whole_or_refused_whole(
    plan: list[tuple[str, int, int, str]], how: str, where: int, value: Any,
) -> None:
    """An event log, valid or broken anywhere, either is refused with a VigenteError and
    nothing of it is written, or is stored whole and reads back; assembling over it never
    fails with anything but a VigenteError."""
    from vigente.errors import VigenteError

    events = _mutate(build(plan), how, where, value)
    lines = [json.dumps(e) for e in events]
    with Vigente.open(":memory:") as vg:
        try:
            report = vg.runtime.import_events(lines)
        except VigenteError:
            assert vg.runtime.conversations() == []  # nothing half-written
            return
        assert report.events == len(events)
        graph = vg.runtime.graph(C)
        # the conversation is no record, and sharing a record with one participant twice is
        # one share (a share is idempotent)
        shares = [e for e in events if e.get("event") == "share"]
        repeated = len(shares) - len({(e.get("ref"), json.dumps(e.get("with"))) for e in shares})
        assert len(graph.as_dict()["records"]) >= len(events) - 1 - repeated
        branches = [n.id for n in graph.of_kind("branch")]
        people = [n.id for n in graph.of_kind("participant")]
        for b in branches:
            for p in people:
                # a refusal (an unknown participant on a branch …) is an answer; a crash is not
                with contextlib.suppress(VigenteError):
                    vg.assembly.assemble(C, b, p)


# -- issue 23: a large result is read once, when it is recorded ---------------------------------
@settings(max_examples=300, deadline=None)
@given(json_texts)
def test_a_result_parsed_once_derives_what_a_fresh_parse_derives(text: str) -> None:
    """The memory of a result read once (``reading``: the extractor, the form and the lossless
    check share one parse) is the memory of each step parsing it afresh."""
    raw = text.encode("utf-8", "surrogatepass")
    fresh = DefaultExtractor().extract("tool", "succeeded", b"{}", raw)
    assert fresh is not None
    fresh_parse, fresh_lossless = parse_exact(raw), decodes_to(fresh.facts, raw)
    with reading(raw):
        once = DefaultExtractor().extract("tool", "succeeded", b"{}", raw)
        assert once is not None
        parsed, lossless = parse_exact(raw), decodes_to(once.facts, raw)
    assert once == fresh and lossless is fresh_lossless
    assert _canon_or_none(parsed) == _canon_or_none(fresh_parse)


def _canon_or_none(parsed: tuple[Any] | None) -> str | None:
    if parsed is None:
        return None
    return json.dumps(parsed[0], sort_keys=True, default=lambda o: {"n": o.text})


_contents = (json_values | st.text(max_size=400) | st.binary(max_size=200)
             | json_texts.map(lambda t: t.encode("utf-8", "surrogatepass")))


def test_the_token_count_kept_at_import_is_what_assembly_would_count() -> None:
    """For any tool output (JSON, text, bytes), the count kept when it is recorded is the
    count the assembler's transcript replay takes from its raw bytes."""
    tok = tiktoken_tokenizer("o200k_base")
    with tempfile.TemporaryDirectory() as tmp, Vigente.open(Path(tmp) / "v.db") as vg:
        rt = Runtime(vg.store, token_counters=[tok], count_above=-1)  # every result
        made = iter(range(10_000))

        @settings(max_examples=150, deadline=None)
        @given(_contents)
        def check(content: Any) -> None:
            c = f"c{next(made)}"
            rt.open_conversation(c, "acct")
            rt.add_participant(c, "p", model="m")
            rt.fork_branch(c, "main")
            rt.start_run(c, "r", branch="main", participant="p", mode="chat")
            rt.record_tool_call(c, "t", run="r", name="tool", arguments={})
            artifact = rt.record_tool_result(c, "t", status="succeeded", content=content)
            ref = artifact.result_ref
            data = rt.artifact_content(artifact)
            kept = vg.store.runtime_content_tokens(c, [ref.sha256], tok.name)
            assert kept == {ref.sha256: tok.count(replay_text(data, ref.encoding))}

        check()
