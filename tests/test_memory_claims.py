"""Issue 35, item 3: a writer's memory stands in a tool result's place only for values the
result holds: every value its summary states (numbers, amounts, ids, dates, names, words) is
checked against the result by the same exact reading (``runtime/stated.py``). Property tests
over arbitrary results and summaries (through the real assembly, on both backends), the forms
a value may take, and a hostile model writing such a memory through the real MCP client."""

from __future__ import annotations

import functools
import itertools
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conformance.test_runtime import session
from tests.http_server import running, tool_text
from tests.test_mcp import _run, _vigente_command
from vigente import Vigente
from vigente.assemble import policy_from_document
from vigente.http import ServiceConfig, create_app
from vigente.runtime.stated import held_by, stated, unsupported

COMPACT = policy_from_document(  # every past result goes compacted: a memory in its place
    {"id": "compact", "version": 1, "recency": {"tool_exchanges": 0, "keep_small_bytes": 0}}
)
T0, T1, SOON = "2026-10-05T08:00:00+00:00", "2026-10-05T08:01:00+00:00", "2026-10-05T08:15:00+00:00"


# -- the forms a value may take --------------------------------------------------------------
FORMS = [  # (result, summary, is every value the summary states held by the result?)
    ({"b": 10}, "b 10", True),
    ({"b": 10}, "b 10.00", True),  # the same decimal value
    ({"b": "10.50"}, "b 10.5", True),
    ({"b": 10}, "b 10.001", False),  # never rounded
    ({"b": 10}, "b 999999", False),
    ({"b": -10}, "b 10", False),  # the sign is part of the number
    ({"b": -10}, "b −10", True),  # the minus sign
    ({"b": 1234}, "b 1,234", False),  # a thousand and more, or one and a bit: two readings
    ({"b": 1.234}, "b 1,234", False),
    ({"b": "1,234"}, "b 1,234", True),  # the very text the result holds
    ({"b": 1234.5}, "b 1,234.5", True),  # one reading only
    ({"b": 1234.56}, "b 1.234,56", True),
    ({"b": 1234567}, "b 1'234'567", True),
    ({"b": 0.5}, "b 0,5", True),
    ({"b": 15}, "b 15%", True),
    ({"b": 0.15}, "b 15%", False),  # a percentage is its number, never a fraction
    ({"b": 10, "c": "USD"}, "b $10", True),
    ({"b": 10}, "b $10", False),  # a currency the result does not state
    ({"b": 10, "c": "USD"}, "b €10", False),
    ({"b": 10, "c": "EUR"}, "b 10 euros", True),
    ({"d": "2024-05-01"}, "d 1 May 2024", True),
    ({"d": "2024-05-01"}, "d May 1, 2024", True),
    ({"d": "2024-05-01T10:00:00Z"}, "d 2024-05-01 at 10:00", True),
    ({"d": "2024-05-01"}, "d 2024-01-05", False),
    ({"d": "2024-05-01"}, "d 01/05/2024", False),  # day/month or month/day: two readings
    ({"d": "2024-12-25"}, "d 25/12/2024", True),
    ({"d": "2024-05-01"}, "d 2 May", False),
    ({"id": "ORD-1234"}, "id ORD-1234", True),
    ({"id": "ORD-1234"}, "id ORD-1243", False),
    ({"id": "W123"}, "id #W123", True),
    ({"e": "Mia@Example.com"}, "e mia@example.com", True),
    ({"n": "Mia Li"}, "n Mia Li", True),
    ({"n": "Mia Li"}, "n Mia Lee", False),
    ({"n": "Mia Li"}, "n mallory", False),  # a lowercase name is still a word to check
    ({"s": "approved"}, "s not approved", False),  # a negation is not held
    ({"s": "refund approved today"}, 's "refund approved"', False),  # a quote is held whole
    ({"s": "refund approved"}, 's "refund approved"', True),
    ({"s": "ok"}, 's "ok"', True),
    ({"b": 10}, "余额 10", False),  # another script: a word like any other
    ({"b": 10}, "b 10kg", False),  # a unit glued to a number: an id the result lacks
    ({"b": 10}, "b 10 ₿", False),  # a symbol states a value too
    ({"s": "declined"}, "s ✅", False),
    ({"s": "✅"}, "s ✅", True),
    ({"b": 10}, "b ９９９９９９", False),  # other digits are other text
    ({"b": 10}, "b 99\u200b9999", False),  # an invisible character hides nothing
    # a value follows the key it is under, not another one
    ({"balance": 999, "limit": 10}, "balance 10", False),
    ({"balance": 999, "limit": 10}, "balance is 999, limit 10", True),
    ({"payment": {"amount": 1204, "currency": "USD"}, "fee": 5}, "payment $1204", True),
    ({"payment": {"amount": 1204, "currency": "USD"}, "fee": 5}, "fee $1204", False),
    ({"trains": [{"id": "FR-9512", "dep": "07:10"}]}, "trains FR-9512, dep 07:10", True),
]


@pytest.mark.parametrize(("result", "summary", "held"), FORMS)
def test_a_summary_restates_a_value_only_in_a_form_that_is_the_same_value(
        result: dict[str, Any], summary: str, held: bool) -> None:
    found = unsupported(summary, held_by([json.dumps(result).encode()]))
    assert (not found) is held, found


# -- property: arbitrary results and summaries (the reading alone) --------------------------
_words = st.text("abcdefghijklmnop", min_size=1, max_size=8)
_names = st.sampled_from(["Mia", "Li", "Rossi", "ZFA04Y", "ORD-1234", "mia_li_3668",
                          "2024-05-01", "2026-10-05T07:59:00Z", "USD", "EUR"])
_numbers = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.decimals(-10**6, 10**6, places=2, allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["1e400", "3.14159265358979323846", "10.50", "-0", "0.001"]),
)


class _Raw:
    """A JSON number kept as its text (the result's own digits)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _dumps(value: Any) -> str:
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dumps(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


_keys = st.text("qrst", min_size=1, max_size=6)  # no key is a word of a value
_leaves = st.one_of(_numbers.map(_Raw), _words, _names, st.booleans(), st.none(),
                    st.lists(_words, min_size=2, max_size=3).map(" ".join))
_results = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
).filter(lambda v: isinstance(v, dict | list))


def _leaf_texts(value: Any) -> list[str]:
    """The texts of a value's leaves: strings, numbers as written."""
    if isinstance(value, _Raw):
        return [value.text]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _leaf_texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _leaf_texts(v)]
    if isinstance(value, str):
        return [value]
    return []


def _texts(value: Any) -> list[str]:
    """What a faithful summary may say of the result: a leaf's value alone, or a key followed
    by a value its subtree holds ("balance 10")."""
    out = [t for t in _leaf_texts(value) if t.strip()]
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            for key, child in v.items():
                out += [f"{key} {t}" for t in _leaf_texts(child) if t.strip()]
                todo.append(child)
        elif isinstance(v, list):
            todo.extend(v)
    return out


#: Values no generated result holds: other digits, other letters, other names.
_invented = st.one_of(
    st.integers(10**9, 10**10).map(str),
    st.text("qrstuvwxyz", min_size=3, max_size=8).map(lambda w: "zz" + w),
    st.sampled_from(["Mallory", "Trudy", "INV-99-7731", "1999-12-31", "$", "not"]),
)
_GLUE = ["the", "is", "of", "and", "for", "with", "was"]


def _summary(draw: Any, held: list[str]) -> tuple[str, list[str]]:
    pieces: list[str] = []
    invented: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["held", "held", "glue", "invented"]))
        if kind == "held" and held:
            pieces.append(draw(st.sampled_from(held)))
        elif kind == "invented":
            value = draw(_invented)
            invented.append(value)
            pieces.append(value)
        else:
            pieces.append(draw(st.sampled_from(_GLUE)))
    return " ".join(pieces), invented


@st.composite
def _cases(draw: Any) -> tuple[Any, str, list[str]]:
    result = draw(_results)
    held = [t for t in _texts(result) if t.strip()]
    summary, invented = _summary(draw, held)
    # a generated result may hold an "invented" value by chance: "$" is held by any dollar's
    # code (usd, cad, aud …), which a generated word may be
    text = _dumps(result).casefold()
    dollars = ("$", "usd", "cad", "aud", "nzd", "hkd", "sgd", "mxn")
    return result, summary, [v for v in invented if v.casefold() not in text
                             and not (v == "$" and any(d in text for d in dollars))]


@settings(max_examples=400, deadline=None)
@given(_cases())
@example(({"balance": _Raw("10")}, "balance is 999999", ["999999"]))
@example(({"balance": _Raw("10")}, "the balance is 10", []))
def test_a_summary_is_supported_exactly_when_it_states_only_held_values(
        case: tuple[Any, str, list[str]]) -> None:
    result, summary, invented = case
    found = unsupported(summary, held_by([_dumps(result).encode()]))
    values = {c["value"] for c in found}
    assert bool(found) == bool(invented), (summary, found)
    for value in invented:  # each invented value is named (a "$" by its symbol)
        assert value in values or value.lstrip("$") in values, (value, found)


def test_the_reading_is_linear_in_the_summary() -> None:
    """No quadratic path: a long hostile summary (unclosed quotes, long digit runs, many
    tokens) is read token by token; the count of values grows with its length only."""
    unit = '"12,345,678 ' + "9" * 50 + " Mallory 1 May 2024 ORD-1 " + "'x "
    short = sum(1 for _ in stated(unit * 10))
    assert sum(1 for _ in stated(unit * 1000)) == 100 * short


# -- property: through the real assembly, on every backend ----------------------------------
_n = itertools.count()


def _events(conversation: str, result: str, summary: str) -> list[str]:
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=conversation, account="a", at=T0),
        dict(event="participant", id="agent", model="gpt-4o"),
        dict(event="branch", id="main"),
        dict(event="message", id="u1", branch="main", role="user", content="Check my account."),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="t1", run="r1", name="read_account", arguments={}),
        dict(event="tool_result", call="t1", status="succeeded", content=result),
        dict(event="memory", id="w", sources=["t1"], summary=summary, writer="agent-loop",
             at=T1),
    ]
    return [json.dumps(e if e["event"] == "conversation" else dict(e, conversation=conversation))
            for e in events]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_cases())
@example(({"balance": _Raw("10")}, "balance is 999999", ["999999"]))
@example(({"balance": _Raw("10")}, "balance 10", []))
def test_an_invented_value_reaches_the_model_only_inside_the_labelled_claim(
        vg: Vigente, case: tuple[Any, str, list[str]]) -> None:
    result, summary, invented = case
    conversation = f"c{next(_n)}"
    vg.runtime.import_events(_events(conversation, _dumps(result), summary))
    a = vg.assembly.assemble(conversation, "main", "agent", as_of=SOON, policy=COMPACT,
                             persist=False)
    decided = {d["ref"]: d for d in (*a.record["included"], *a.record["omitted"])}
    (place,) = [m for m in a.messages if m.get("tool_call_id") == "t1"]
    if invented:
        assert decided["w"]["rule"] == "memory.writer_claim:by:agent-loop"
        assert decided["t1"]["rule"] == "promotion.compacted_into:t1#memory"
        claims = [m for m in a.messages
                  if str(m.get("content") or "").startswith("[assertion w by agent-loop")]
        assert len(claims) == 1
        for m in a.messages:
            if m is claims[0]:
                continue
            for value in invented:
                if value not in _dumps(result):  # the result's own text may hold it
                    assert value not in json.dumps(m, ensure_ascii=False), (value, m)
    else:  # a summary of held values stands in the result's place
        assert decided["t1"]["rule"] == "promotion.compacted_into:w"
        assert place["content"].startswith("[memory of this result written by agent-loop")
        assert json.dumps(summary, ensure_ascii=False)[1:-1] in place["content"]


# -- attack: a hostile model writes the claim through the real MCP client --------------------
ADMIN_KEY = "memory-claims-admin-key-0123456789abcdef"
C = "trip-42"
HOSTILE = {"event": "memory", "conversation": C, "id": "claim", "sources": ["t1"],
           # no facts (the facts check alone let it through), only held facts, or both
           "summary": "FR-9512 leaves at 07:10 and costs 0 EUR; RV-2011 is cancelled",
           "writer": "extractor"}


async def _attack(client: Client, writer: str) -> None:
    """``writer``: who the store records the model as (its key's name, or ``vigente mcp``)."""
    events = [e for e in session() if e.get("role") != "system"]  # a model writes none
    trusted = await client.call_tool("record_event", {"events": events})
    assert not trusted.is_error, tool_text(trusted)
    for n, facts in enumerate((None, {"trains": [{"id": "FR-9512"}]})):
        claim = dict(HOSTILE, id=f"claim{n}", **({"facts": facts} if facts else {}))
        wrote = await client.call_tool("record_event", {"event": claim})
        assert not wrote.is_error, tool_text(wrote)
    # naming the reading in `supersedes` is refused, naming the values; nothing is written
    refused = await client.call_tool(
        "record_event", {"event": dict(HOSTILE, id="claim9", supersedes=["t1#memory"])})
    assert refused.is_error and "cannot supersede 't1#memory'" in tool_text(refused)
    built = await client.call_tool(
        "assemble_context", {"conversation": C, "branch": "main", "participant": "agent"})
    assert not built.is_error, tool_text(built)
    data: dict[str, Any] = built.structured_content
    decided = {d["ref"]: d for d in (*data["included"], *data["omitted"])}
    for ref in ("claim0", "claim1"):
        assert decided[ref]["rule"] == f"memory.writer_claim:by:{writer}"
        assert {c["value"] for c in decided[ref]["unsupported"]} >= {"0", "cancelled"}
    assert "claim9" not in decided and "t1#memory" not in {
        d["ref"] for d in data["omitted"] if d["reason"] == "superseded"}
    for m in data["messages"]:
        text = json.dumps(m)
        if "cancelled" in text:  # the claim, only inside its labelled block
            assert m["content"].startswith("[assertion claim") and (
                f"by {writer} about train_search (t1)") in m["content"]
            assert "not held by the tool's result; the writer's claim" in m["content"]
    # explain names the rule and the values, as the assembly did
    why = await client.call_tool(
        "explain_assembly", {"assembly_id": data["assembly_id"], "why_not": "claim0"})
    assert why.structured_content["rule"] == f"memory.writer_claim:by:{writer}"
    assert {c["value"] for c in why.structured_content["unsupported"]} >= {"0", "cancelled"}
    explained = await client.call_tool("explain_assembly", {"assembly_id": data["assembly_id"]})
    assert explained.structured_content["included"] == data["included"]


def test_a_hostile_models_summary_is_its_labelled_claim_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    Vigente.open(db).close()
    command = _vigente_command()
    # the server runs the code under test (this environment's, PYTHONPATH included)
    params = StdioServerParameters(command=command[0], args=[*command[1:], "--db", str(db), "mcp"],
                                   env=dict(os.environ))
    _run(functools.partial(_attack, writer="vigente mcp"), params)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_hostile_models_summary_is_its_labelled_claim_over_mcp_http(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    root = (
        str(tmp_path / "data") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    )
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        c.post("/v1/admin/tenants", json={"name": "alpha"}, headers=admin).raise_for_status()
        created = c.post("/v1/admin/tenants/alpha/keys", json={}, headers=admin).json()
        writer = f"agent key {created['key_id']}"  # a key without a role: a model's
        _run(functools.partial(_attack, writer=writer), url, created["key"])
