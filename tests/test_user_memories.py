"""User memories as facts of the account (docs/user-memories.md), on both backends.

A user memory recorded with ``record_as_fact`` is also a kernel statement per fact (lineage
``user.<key>``, scope ``{"account": A}``, source ``user``), written in the memory's own
transaction: a later statement supersedes an earlier one on both axes, a refused key or a
refusal by the kernel writes nothing, and the evidence at every ``(t, k)`` is the latest
statement known at ``k`` that is valid at ``t`` (a property test against a small model).
The default extractor proposes only what real sentences state verbatim.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, SHARED_DATA, shared_file
from vigente import Vigente
from vigente.cli import cli
from vigente.errors import AnsweredHistoryError, HistoryRewriteError, ImportFileError, InvalidInput
from vigente.runtime import (
    ProposedUserMemory,
    RuleUserMemoryExtractor,
    UserMemory,
    UserMemoryExtractor,
    UserMessage,
)
from vigente.time import Instant, parse_instant

BFCL = SHARED_DATA / "bfcl-memory" / "memory_prereq_conversation"
A = {"account": "acct-1"}


def open_chat(vg: Vigente, conversation: str = "c1", account: str = "acct-1",
              at: str = "2026-01-01") -> None:
    rt = vg.runtime
    rt.open_conversation(conversation, account, at=at)
    rt.add_participant(conversation, "assistant", model="m", at=at)
    rt.fork_branch(conversation, "main", at=at)


def say(vg: Vigente, message: str, text: str, at: str | None, conversation: str = "c1") -> None:
    vg.runtime.record_message(conversation, message, branch="main", role="user", content=text,
                              at=at)


def remember(vg: Vigente, memory: str, source: str, facts: dict[str, Any], at: str | None,
             conversation: str = "c1", **kw: Any) -> UserMemory:
    node = vg.runtime.record_memory(conversation, memory, sources=[source], kind="user",
                                    summary=f"the user said {facts}", facts=facts,
                                    record_as_fact=True, at=at, **kw)
    assert isinstance(node, UserMemory)
    return node


def ask(vg: Vigente, key: str, t: str | Instant, k: str | Instant | None,
        scope: dict[str, str] = A) -> tuple[str, list[Any]]:
    e = vg.evidence(f"user.{key}", valid_at=t, known_at=k, scope=scope)
    return e.status.value, list(e.values)


def user_memories(vg: Vigente, conversation: str = "c1") -> list[str]:
    return [n.id for n in vg.runtime.graph(conversation).nodes if n.KIND == "user_memory"]


# -- the statement and its supersession ------------------------------------------------------
def test_a_later_statement_supersedes_on_both_axes(vg: Vigente) -> None:
    """Guarantee 1 (docs/user-memories.md): evidence as known before the second statement
    gives the first value; after it, the second from its valid time on and the first before;
    before the first statement's valid time, missing."""
    open_chat(vg)
    say(vg, "u1", "My address is Via Roma 1.", "2026-01-10")
    first = remember(vg, "um1", "u1", {"address": "Via Roma 1"}, "2026-01-10")
    say(vg, "u2", "I moved: my address is Via Verdi 2.", "2026-02-10")
    remember(vg, "um2", "u2", {"address": "Via Verdi 2"}, "2026-02-10")

    assert ask(vg, "address", "2026-02-20", "2026-02-01") == ("supported", ["Via Roma 1"])
    assert ask(vg, "address", "2026-02-20", "2026-02-20") == ("supported", ["Via Verdi 2"])
    assert ask(vg, "address", "2026-01-20", "2026-02-20") == ("supported", ["Via Roma 1"])
    assert ask(vg, "address", "2026-01-05", "2026-02-20") == ("missing", [])
    assert ask(vg, "address", "2026-01-20", "2026-01-09") == ("missing", [])
    # the statement is the account's: another account holds nothing
    assert ask(vg, "address", "2026-02-20", None, {"account": "acct-2"}) == ("missing", [])
    (row,) = [v for v in vg.history("user.address", scope=A) if v.value_json == '"Via Roma 1"'
              and v.known_to is None]
    assert row.source == "user" and row.valid_from == first.known_from
    assert str(row.valid_to) == "2026-02-10"


def test_the_event_log_field_and_observed_at(vg: Vigente) -> None:
    """``"record_as_fact": true`` on a ``memory`` event; ``observed_at`` is the valid time;
    without the field no kernel statement is made (opt-in)."""
    log = [
        {"event": "conversation", "id": "c1", "account": "acct-1", "at": "2026-03-01"},
        {"event": "participant", "conversation": "c1", "id": "assistant", "model": "m"},
        {"event": "branch", "conversation": "c1", "id": "main"},
        {"event": "message", "conversation": "c1", "id": "u1", "branch": "main",
         "role": "user", "content": "I'm 41 years old.", "at": "2026-03-02"},
        {"event": "memory", "conversation": "c1", "id": "um1", "kind": "user",
         "sources": ["u1"], "summary": "age", "facts": {"age": 41},
         "observed_at": "2026-02-25", "record_as_fact": True, "at": "2026-03-03"},
        {"event": "memory", "conversation": "c1", "id": "um2", "kind": "user",
         "sources": ["u1"], "summary": "not a fact", "facts": {"mood": "fine"}},
    ]
    vg.runtime.import_events([json.dumps(e) for e in log])
    assert ask(vg, "age", "2026-02-26", "2026-03-03") == ("supported", [41])
    assert ask(vg, "age", "2026-02-24", "2026-03-03") == ("missing", [])
    assert ask(vg, "age", "2026-02-26", "2026-03-02") == ("missing", [])
    assert ask(vg, "mood", "2026-03-05", None) == ("missing", [])
    assert [lineage for lineage, _ in vg.lineages()] == ["user.age"]


def test_the_same_value_again_makes_no_new_statement(vg: Vigente) -> None:
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    remember(vg, "um1", "u1", {"name": "Ada"}, "2026-01-10")
    say(vg, "u2", "As I said, my name is Ada.", "2026-01-12")
    remember(vg, "um2", "u2", {"name": "Ada"}, "2026-01-12")
    assert len(vg.history("user.name", scope=A)) == 1


# -- atomicity ----------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["", "   ", "a\x00b", "k" * 600])
def test_a_key_that_cannot_be_a_lineage_refuses_the_whole_memory(vg: Vigente, key: str
                                                                 ) -> None:
    """Guarantee 2: the refusal names the key, and neither the node nor any statement (not
    even the memory's good keys) is written."""
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    with pytest.raises(InvalidInput, match="user fact key") as refused:
        remember(vg, "um1", "u1", {"name": "Ada", key: "x"}, "2026-01-11")
    assert repr(key[:80]) in str(refused.value)
    assert user_memories(vg) == []
    assert vg.lineages() == []


def test_a_value_the_kernel_refuses_writes_nothing(vg: Vigente) -> None:
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    with pytest.raises(InvalidInput, match="user fact 'blob'"):
        remember(vg, "um1", "u1", {"name": "Ada", "blob": "x" * 1_100_000}, "2026-01-11")
    assert user_memories(vg) == [] and vg.lineages() == []


def test_a_kernel_refusal_behind_an_answer_writes_nothing(vg: Vigente) -> None:
    """A memory dated at or before a knowledge time the store has answered for is refused by
    the kernel, as ``Vigente.record`` would be; the node is not written either. Learned now
    (no ``at``), the same memory is accepted, node and statement at one knowledge time."""
    open_chat(vg)
    say(vg, "u1", "My email is ada@example.org.", "2026-01-10")
    assert ask(vg, "email", "2026-03-01", "2026-03-01") == ("missing", [])  # fixes 2026-03-01
    with pytest.raises(AnsweredHistoryError, match="user memory 'um1'.*'email'"):
        remember(vg, "um1", "u1", {"email": "ada@example.org"}, "2026-02-01")
    assert user_memories(vg) == [] and vg.lineages() == []
    node = remember(vg, "um1", "u1", {"email": "ada@example.org"}, None)
    (row,) = vg.history("user.email", scope=A)
    assert row.known_from == node.known_from and row.valid_from == node.known_from
    assert ask(vg, "email", node.known_from, node.known_from) == ("supported",
                                                                  ["ada@example.org"])


def test_a_statement_behind_another_conversation_of_the_account_is_refused(vg: Vigente
                                                                          ) -> None:
    """Two conversations of one account write one kernel timeline per key: a memory dated
    before what the other conversation already stated is refused whole."""
    open_chat(vg, "c1")
    open_chat(vg, "c2")
    say(vg, "u1", "My name is Ada.", "2026-02-01", "c1")
    remember(vg, "um1", "u1", {"name": "Ada"}, "2026-02-01", "c1")
    say(vg, "v1", "My name is Bea.", "2026-01-15", "c2")
    with pytest.raises(HistoryRewriteError, match="user memory 'vm1'"):
        remember(vg, "vm1", "v1", {"name": "Bea"}, "2026-01-20", "c2")
    assert user_memories(vg, "c2") == []


def test_a_bad_key_in_an_event_log_refuses_the_whole_log(vg: Vigente) -> None:
    log = [
        {"event": "conversation", "id": "c1", "account": "acct-1", "at": "2026-03-01"},
        {"event": "branch", "conversation": "c1", "id": "main"},
        {"event": "message", "conversation": "c1", "id": "u1", "branch": "main",
         "role": "user", "content": "My name is Ada."},
        {"event": "memory", "conversation": "c1", "id": "um1", "kind": "user",
         "sources": ["u1"], "summary": "name", "facts": {"name": "Ada", "": "?"},
         "record_as_fact": True},
    ]
    with pytest.raises(ImportFileError, match="line 4: .*user fact key ''"):
        vg.runtime.import_events([json.dumps(e) for e in log])
    assert vg.runtime.conversations() == [] and vg.lineages() == []


def test_a_model_facing_writer_cannot_record_a_fact(sqlite_vg: Vigente) -> None:
    """Keeping facts past a purge is the application's choice, not a model's: an untrusted
    log (an MCP tool) may not set record_as_fact."""
    vg = sqlite_vg
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    event = {"event": "memory", "conversation": "c1", "id": "um1", "kind": "user",
             "sources": ["u1"], "summary": "name", "facts": {"name": "Ada"},
             "record_as_fact": True}
    with pytest.raises(ImportFileError, match="model-facing writer cannot record a memory as"):
        vg.runtime.import_events([json.dumps(event)], trusted=False)
    assert user_memories(vg) == [] and vg.lineages() == []
    del event["record_as_fact"]
    vg.runtime.import_events([json.dumps(event)], trusted=False)
    assert user_memories(vg) == ["um1"] and vg.lineages() == []


def test_record_as_fact_is_for_user_memories(sqlite_vg: Vigente) -> None:
    vg = sqlite_vg
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    with pytest.raises(InvalidInput, match="record_as_fact is for user memories"):
        vg.runtime.record_memory("c1", "m1", sources=["u1"], summary="s", facts={"a": 1},
                                 record_as_fact=True)
    with pytest.raises(InvalidInput, match="record_as_fact must be true or false"):
        vg.runtime.record_memory("c1", "m1", sources=["u1"], summary="s", kind="user",
                                 record_as_fact="yes")  # type: ignore[arg-type]


def test_purge_leaves_the_kernel_facts_as_documented(sqlite_vg: Vigente) -> None:
    """What docs/user-memories.md says of erasure: the purge deletes the conversation and its
    user memories; the kernel statements, append-only, stay (why the field is opt-in)."""
    vg = sqlite_vg
    open_chat(vg)
    say(vg, "u1", "My name is Ada.", "2026-01-10")
    remember(vg, "um1", "u1", {"name": "Ada"}, "2026-01-10")
    vg.runtime.purge_account("acct-1")
    assert vg.runtime.conversations() == []
    assert ask(vg, "name", "2026-02-01", None) == ("supported", ["Ada"])


# -- the property: evidence is the latest statement known at k, valid at t -----------------
statements = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 3),  # key, value
              st.integers(0, 12), st.integers(0, 3)),  # valid minute, known gap in minutes
    min_size=1, max_size=6,
)
_examples = itertools.count()


def model(plan: Sequence[tuple[str, int, int, int]], key: str, t: int, k: int) -> int | None:
    """The value of the latest statement of ``key`` known at ``k`` whose valid time is at or
    before ``t`` (each statement holds from its valid time on)."""
    latest = None
    known = 0
    for stated, value, valid, gap in plan:
        known += gap
        if stated == key and known <= k and valid <= t:
            latest = value
    return latest


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=statements)
def test_evidence_is_the_latest_statement_known_then(vg: Vigente,
                                                     plan: list[tuple[str, int, int, int]]
                                                     ) -> None:
    """Guarantee 3, on both backends: for any sequence of user statements, the evidence at
    each ``(t, k)`` equals the model. Each example is its own account and conversation, dated
    a day after the previous example's, so one store serves them all."""
    n = next(_examples)
    base = _dt.datetime(2020, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(days=n)

    def minute(m: int) -> str:
        return (base + _dt.timedelta(minutes=m)).isoformat()

    conversation, account = f"c{n}", f"acct-{n}"
    open_chat(vg, conversation, account, at=minute(0))
    known = 0
    for i, (key, value, valid, gap) in enumerate(plan):
        known += gap
        say(vg, f"u{i}", f"{key} is {value}", minute(known), conversation)
        vg.runtime.record_memory(conversation, f"um{i}", sources=[f"u{i}"], kind="user",
                                 summary=f"{key} is {value}", facts={key: value},
                                 observed_at=minute(valid), record_as_fact=True,
                                 at=minute(known))
    last = known
    for key in ("a", "b"):
        for k in range(0, last + 2):
            for t in range(0, 14):
                e = vg.evidence(f"user.{key}", valid_at=minute(t), known_at=minute(k),
                                scope={"account": account})
                expected = model(plan, key, t, k)
                assert list(e.values) == ([] if expected is None else [expected]), (key, t, k)
                assert e.status.value == ("missing" if expected is None else "supported")


# -- the default extractor ------------------------------------------------------------------
def propose(*texts: str) -> list[ProposedUserMemory]:
    at = parse_instant("2026-01-01")
    return RuleUserMemoryExtractor().propose(
        [UserMessage(f"u{i}", text, at) for i, text in enumerate(texts)])


def facts_of(text: str) -> dict[str, Any]:
    found = propose(text)
    return found[0].facts if found else {}


def bfcl_messages() -> list[str]:
    """Every user message of the BFCL memory prerequisite conversations."""
    texts = []
    for path in sorted(shared_file(BFCL).glob("*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                for turn in json.loads(line)["question"]:
                    texts += [m["content"] for m in turn if m["role"] == "user"]
    return texts


def bfcl_sentence(start: str) -> str:
    """The BFCL user message holding a sentence that starts with ``start`` (skip if none)."""
    for text in bfcl_messages():
        if start in text:
            return text[text.index(start):].split(". ")[0] + "."
    pytest.skip(f"no BFCL message holds {start!r}")


@pytest.mark.parametrize(("start", "expected"), [
    ("My name is Michael", {"name": "Michael"}),
    ("I'm 35 years old, live in Seattle", {"age": 35}),
    ("I work as a freelance graphic designer", {"occupation": "freelance graphic designer"}),
    # what the sentences do not state as the rules read them: nothing is proposed
    ("My favorite class this semester is", {}),
    ("I live with two roommates", {}),
    ("Since I live on campus", {}),
    ("Archie is three years old now", {}),
])
def test_the_default_extractor_on_real_sentences(start: str, expected: dict[str, Any]) -> None:
    """Guarantee 4: on real BFCL user sentences the extractor proposes exactly what the
    sentence states, each value verbatim, and nothing for sentences outside its rules."""
    sentence = bfcl_sentence(start)
    facts = facts_of(sentence)
    assert facts == expected, sentence
    for value in facts.values():
        assert str(value) in sentence


def test_every_value_the_extractor_proposes_from_bfcl_is_in_its_message() -> None:
    messages = bfcl_messages()
    at = parse_instant("2026-01-01")
    proposals = RuleUserMemoryExtractor().propose(
        [UserMessage(f"u{i}", text, at) for i, text in enumerate(messages)])
    assert proposals
    for p in proposals:
        (source,) = p.sources
        text = messages[int(source[1:])]
        for value in p.facts.values():
            assert str(value) in text, (value, text)


@pytest.mark.parametrize(("text", "expected"), [
    ("my email is ada.l@example.org, thanks", {"email": "ada.l@example.org"}),
    ("My address is Via Roma 1, 20121 Milano.", {"address": "Via Roma 1, 20121 Milano"}),
    ("My favorite color is blue.", {"favorite_color": "blue"}),
    ("I live in New York City and love it.", {"lives_in": "New York City"}),
    ("I work at Acme Corp, in sales.", {"employer": "Acme Corp"}),
    ("I\u2019m 29 years old.", {"age": 29}),
    ("Is my email ada@example.org?", {}),
    ("My name is not Bob.", {}),
    ("I don't live in Paris.", {}),
    ("If my address is wrong, tell me.", {}),
])
def test_the_default_extractor_rules(text: str, expected: dict[str, Any]) -> None:
    assert facts_of(text) == expected


def test_the_default_extractor_meets_the_protocol() -> None:
    assert isinstance(RuleUserMemoryExtractor(), UserMemoryExtractor)


# -- running an extractor over a conversation ------------------------------------------------
def test_extraction_records_memories_once_with_their_messages(vg: Vigente) -> None:
    open_chat(vg)
    rt = vg.runtime
    say(vg, "u1", "Hello! My name is Ada and my address is Via Roma 1.", "2026-01-10")
    rt.start_run("c1", "r1", branch="main", participant="assistant", at="2026-01-10")
    rt.record_message("c1", "a1", branch="main", role="assistant", run="r1",
                      content="Noted: my name is HAL.", at="2026-01-10")
    say(vg, "u2", "I moved. My address is Via Verdi 2.", "2026-02-10")
    report = rt.extract_user_memories("c1", record_as_fact=True)
    assert [(m.id, m.sources, m.facts) for m in report.memories] == [
        ("u1#user", ("u1",), {"name": "Ada", "address": "Via Roma 1"}),
        ("u2#user", ("u2",), {"address": "Via Verdi 2"}),
    ]
    # the valid time is when the user said it; the assistant's words are never read
    assert ask(vg, "address", "2026-01-20", None) == ("supported", ["Via Roma 1"])
    assert ask(vg, "address", "2026-02-20", None) == ("supported", ["Via Verdi 2"])
    assert ask(vg, "name", "2026-02-20", None) == ("supported", ["Ada"])
    again = rt.extract_user_memories("c1", record_as_fact=True)
    assert again.memories == () and len(again.unchanged) == 3
    # moving back: the value u1 stated, said again in a new message, is a new statement
    say(vg, "u3", "I moved back: my address is Via Roma 1.", None)
    third = rt.extract_user_memories("c1", record_as_fact=True)
    assert [(m.id, m.facts, m.supersedes) for m in third.memories] == [
        ("u3#user", {"address": "Via Roma 1"}, ("u2#user",))]
    assert ask(vg, "address", third.memories[0].known_from, None) == ("supported",
                                                                       ["Via Roma 1"])
    assert ask(vg, "address", "2026-02-20", None) == ("supported", ["Via Verdi 2"])


class _Proposes:
    """An extractor that proposes what it is given (a caller's own extractor)."""

    name = "given/1"

    def __init__(self, *proposals: ProposedUserMemory) -> None:
        self.proposals = list(proposals)

    def propose(self, messages: Sequence[UserMessage]) -> list[ProposedUserMemory]:
        return self.proposals


def test_a_caller_extractor_may_cite_only_user_messages(sqlite_vg: Vigente) -> None:
    vg = sqlite_vg
    open_chat(vg)
    say(vg, "u1", "hi", "2026-01-10")
    rt = vg.runtime
    rt.start_run("c1", "r1", branch="main", participant="assistant", at="2026-01-10")
    rt.record_message("c1", "a1", branch="main", role="assistant", run="r1", content="hello",
                      at="2026-01-10")
    bad = _Proposes(ProposedUserMemory("s", {"name": "Ada"}, ("u1",)),
                    ProposedUserMemory("s", {"name": "HAL"}, ("a1",)))
    with pytest.raises(InvalidInput, match="'a1', not a user message"):
        rt.extract_user_memories("c1", extractor=bad, record_as_fact=True)
    assert user_memories(vg) == [] and vg.lineages() == []
    good = _Proposes(ProposedUserMemory("the user is Ada", {"name": "Ada"}, ("u1",)))
    assert [m.id for m in rt.extract_user_memories("c1", extractor=good).memories] == [
        "u1#user"]
    assert vg.lineages() == []  # without record_as_fact: graph nodes only


def test_the_cli_command(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    with Vigente.open(db) as vg:
        open_chat(vg)
        say(vg, "u1", "My name is Ada. I'm 36 years old.", "2026-01-10")

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, ["--db", str(db), *args])
        return result.exit_code, result.output

    code, out = run("runtime", "extract-user-memories", "--conversation", "c1",
                    "--record-as-fact", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["extractor"] == "rules-en/1"
    assert [(m["id"], m["facts"]) for m in data["memories"]] == [
        ("u1#user", {"name": "Ada", "age": 36})]
    code, out = run("runtime", "extract-user-memories", "--conversation", "c1")
    assert code == 0 and "recorded 0 user memory(ies); 2 fact(s) already held" in out
    code, out = run("ask", "user.age", "--at", "2026-02-01", "--scope", "account=acct-1",
                    "--json")
    assert code == 0 and json.loads(out)["values"] == [36], out
    code, out = run("runtime", "extract-user-memories", "--conversation", "nope")
    assert code == 1 and out.startswith("Error: unknown conversation 'nope'")


def test_the_llm_example_runs_offline(tmp_path: Path) -> None:
    import subprocess

    pytest.importorskip("langchain")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "user_memories_llm.py"),
                           str(tmp_path / "ex.db")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "user.address: supported ['Via Roma 1, Milan']" in done.stdout
    assert "user.occupation: missing []" in done.stdout  # the paraphrase was dropped
