"""Redaction covers every path a model or an API client reads, and changes nothing else
(issue 35, item 8; DESIGN.md invariant 10).

The pure step as properties over generated JSON texts (number texts as given, escapes,
whitespace, credentials planted at any path, escaped or not); then, on both backends, a secret
in a call's arguments, a user or assistant message, a writer's memory summary, a checkpoint and
a result never reaching an assembled request in any format, nor the graph read (with and
without ``content=false``), the transcript, a recall hit or ``explain``; and a hostile model
through the real MCP client (stdio and ``/mcp``) recording secrets and reading them back."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.http_server import running, tool_text
from tests.test_mcp import _run, _vigente_command
from vigente import InvalidInput, Vigente
from vigente.application.runtime import apply_events
from vigente.assemble import FORMATS
from vigente.http import ServiceConfig, create_app
from vigente.runtime.artifact_memory import DefaultExtractor
from vigente.runtime.redact import (
    card_number,
    redact_content,
    redact_extraction,
    redact_json,
    redact_text,
    redact_value,
)

# -- the pure step: documents as text --------------------------------------------------------
SPACE = st.sampled_from(["", " ", "\n", "\t", "  ", "\r\n "])
NUMBER_TEXT = st.one_of(
    st.sampled_from(["10.50", "1e400", "-0.0", "1E+2", "0", "-0", "1.0", "2.50e-3",
                     "123456789012345678901234567890", "4111111111111111", "-1E-400"]),
    st.from_regex(r"-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,12})?([eE][+-]?[0-9]{1,4})?",
                  fullmatch=True),
)
NEUTRAL_KEYS = st.sampled_from(["id", "name", "price", "order_number", "items", "total",
                                "flight", "balance", "notes", "qty", "invoice", "ref"])
PLAIN = st.text("aeioumnlr ", min_size=0, max_size=12)  # spells no rule's keyword


def _escape(text: str, escaped: frozenset[int], ascii_only: bool) -> str:
    """``text`` as the inside of a JSON string, the characters at ``escaped`` as ``\\uXXXX``."""
    out = []
    for n, ch in enumerate(text):
        if n in escaped and ch not in '"\\' and ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(json.dumps(ch, ensure_ascii=ascii_only)[1:-1])
    return "".join(out)


@dataclass(frozen=True)
class Piece:
    """A part of a string: its text in the input, and what the output has in its place."""

    given: str
    shown: str
    secret: str = ""  # the credential it holds (never in the output)


@st.composite
def json_string(draw: Any, pieces: st.SearchStrategy[list[Piece]]) -> tuple[str, str, list[str]]:
    """A JSON string token as input and as expected output (escapes drawn per character)."""
    parts = draw(pieces)
    ascii_only = draw(st.booleans())
    given, shown = ['"'], ['"']
    for p in parts:
        escaped = frozenset(draw(st.sets(st.integers(0, max(0, len(p.given) - 1)), max_size=3)))
        given.append(_escape(p.given, escaped, ascii_only))
        shown.append(_escape(p.shown, escaped if p.given == p.shown else frozenset(),
                             ascii_only))
    given.append('"')
    shown.append('"')
    return "".join(given), "".join(shown), [p.secret for p in parts if p.secret]


def _plain_pieces() -> st.SearchStrategy[list[Piece]]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
    return st.lists(text.filter(lambda t: redact_text(t)[0] == t).map(lambda t: Piece(t, t)),
                    max_size=2)


@st.composite
def document(draw: Any, leaf: Any, depth: int = 3) -> tuple[str, str, list[str]]:
    """A JSON document as text (input, expected output, planted secrets)."""
    kind = draw(st.sampled_from(["leaf", "object", "array"] if depth else ["leaf"]))
    if kind == "leaf":
        given, shown, secrets = draw(leaf)
        return given, shown, secrets
    items = draw(st.lists(document(leaf, depth - 1), max_size=4))
    given_parts, shown_parts, secrets = [], [], []
    for n, (g, s, found) in enumerate(items):
        before, after = draw(SPACE), draw(SPACE)
        sep = "," if n else ""
        if kind == "object":
            key = json.dumps(draw(NEUTRAL_KEYS))
            colon = draw(SPACE) + ":" + draw(SPACE)
            given_parts.append(f"{sep}{before}{key}{colon}{g}{after}")
            shown_parts.append(f"{sep}{before}{key}{colon}{s}{after}")
        else:
            given_parts.append(f"{sep}{before}{g}{after}")
            shown_parts.append(f"{sep}{before}{s}{after}")
        secrets += found
    open_, close = ("{", "}") if kind == "object" else ("[", "]")
    inner = draw(SPACE)
    return (open_ + inner + "".join(given_parts) + close,
            open_ + inner + "".join(shown_parts) + close, secrets)


def _same(token: Any) -> tuple[str, str, list[str]]:
    return token, token, []


clean_leaf = st.one_of(
    NUMBER_TEXT.map(_same),
    st.sampled_from(["true", "false", "null"]).map(_same),
    json_string(_plain_pieces()),
)


@settings(max_examples=300, deadline=None)
@given(doc=document(clean_leaf))
def test_a_credential_free_json_text_comes_back_byte_for_byte(doc: tuple[str, str, list[str]]
                                                               ) -> None:
    """Number texts as given (``10.50``, ``1e400``, ``-0.0``, ``1E+2``, a Luhn-valid
    ``order_number``), escapes, key order and whitespace: the very same text, nothing named."""
    text, expected, _ = doc
    assert expected == text
    json.loads(text)  # (the generator writes JSON)
    assert redact_json(text) == (text, ())
    assert redact_content(text, "json") == (text, ())
    assert redact_content(text, "utf-8") == (text, ())


# credentials as (given, shown, secret): a token whole, an assignment's value, a card in context
alnum = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=40,
                max_size=44)


def _whole(rule: str) -> Any:
    return lambda token: [Piece(token, f"[redacted:{rule}]", token)]


def _after(head: str, rule: str) -> Any:
    """An assignment: ``head`` stays, the value is replaced."""
    return lambda value: [Piece(head, head), Piece(value, f"[redacted:{rule}]", value)]


def _luhn_complete(body: str) -> str:
    for check in "0123456789":
        if card_number(body + check):
            return body + check
    raise AssertionError(body)


cards = st.tuples(st.sampled_from(["4", "51", "55", "2221", "6011", "65"]),
                  st.integers(0, 10**14)).map(
    lambda t: _luhn_complete((t[0] + str(t[1]).zfill(14))[:15]))

credential = st.one_of(
    alnum.map(lambda s: "ghp_" + s[:36]).map(_whole("github_token")),
    alnum.map(lambda s: "sk-ant-" + s).map(_whole("anthropic_api_key")),
    alnum.map(lambda s: "AKIA" + s.upper()[:16]).map(_whole("aws_access_key_id")),
    alnum.map(lambda s: "xoxb-" + s).map(_whole("slack_token")),
    alnum.map(lambda s: "sk_live_" + s).map(_whole("stripe_secret_key")),
    alnum.map(lambda s: "npm_" + s[:36]).map(_whole("npm_token")),
    alnum.map(lambda s: "AIza" + s[:35]).map(_whole("google_api_key")),
    alnum.map(lambda s: s[:40]).map(_after("aws_secret_access_key=", "aws_secret_access_key")),
    alnum.map(lambda s: s[:12] + "9").map(_after("DB_PASSWORD=", "password_field")),
    alnum.map(lambda s: s[:20] + "7").map(
        _after("https://api.example/v1?token=", "secret_assignment")),
    cards.map(lambda c: [Piece("visa ", "visa "),
                         Piece(c, f"[redacted:card_number, last four {c[-4:]}]", c)]),
)


@st.composite
def planted_string(draw: Any) -> tuple[str, str, list[str]]:
    parts = [Piece(p, p) for p in draw(st.lists(PLAIN, min_size=1, max_size=2))]
    cred = draw(credential)
    at = draw(st.integers(0, len(parts)))
    # a space on each side: a token stands as a word
    parts[at:at] = [Piece(" ", " "), *cred, Piece(" ", " ")]
    return draw(json_string(st.just(parts)))


@st.composite
def secret_field(draw: Any) -> tuple[str, str, list[str]]:
    """``{"password": …}`` (any string or number), replaced whole."""
    key = draw(st.sampled_from(["password", "api_key", "client_secret", "cvv", "Authorization",
                                "x-api-key"]))
    value = draw(st.one_of(alnum.map(lambda s: json.dumps(s)),
                           st.integers(10**11, 10**12).map(str)))
    space = draw(SPACE)
    secret = json.loads(value) if value.startswith('"') else value
    return (f'{{"{key}":{space}{value}}}', f'{{"{key}":{space}"[redacted:secret_field]"}}',
            [str(secret)])


@st.composite
def card_field(draw: Any) -> tuple[str, str, list[str]]:
    """A card number under a card's key or beside a card word, as a number or a string."""
    card = draw(cards)
    as_number = draw(st.booleans())
    value = card if as_number else json.dumps(card)
    marker = json.dumps(f"[redacted:card_number, last four {card[-4:]}]")
    shape = draw(st.sampled_from(["card_number", "pan", "cc", "brand", "nested"]))
    if shape == "brand":
        return (f'{{"brand": "visa", "number": {value}}}',
                f'{{"brand": "visa", "number": {marker}}}', [card])
    if shape == "nested":
        return f'{{"card": {{"digits": {value}}}}}', f'{{"card": {{"digits": {marker}}}}}', [card]
    return f'{{"{shape}": {value}}}', f'{{"{shape}": {marker}}}', [card]


planted_leaf = st.one_of(clean_leaf, planted_string(), secret_field(), card_field())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=document(planted_leaf))
def test_planted_credentials_go_and_every_other_byte_stays(doc: tuple[str, str, list[str]]
                                                           ) -> None:
    """Credentials at any path, in any string (escaped or not), as a secret field's value or a
    card in its context: none survives, in the text or in its decoded strings; the output is
    exactly the input with each credential's span replaced by its marker (every other byte as
    it was); it parses as JSON; and redacting it again changes nothing."""
    text, expected, secrets = doc
    assume(secrets)
    json.loads(text)
    out, found = redact_json(text) or ("", ())
    assert out == expected
    decoded = json.dumps(json.loads(out), ensure_ascii=False)
    for secret in secrets:
        assert secret not in out and secret not in decoded
    assert len(found) >= len(secrets)
    for r in found:
        assert not any(secret in r.path for secret in secrets)
    assert redact_json(out) == (out, ())


@settings(max_examples=200, deadline=None)
@given(card=cards, spaced=st.booleans(),
       key=st.sampled_from(["order_number", "invoice", "tracking_id", "ref", "order"]),
       words=st.sampled_from(["order {}", "invoice no {} shipped", "tracking {}", "ref: {}"]))
def test_a_number_is_a_card_only_in_a_card_context(card: str, spaced: bool, key: str,
                                                   words: str) -> None:
    """A Luhn-valid number with an issuer prefix but no card context stays, as a JSON number,
    a JSON string or in text; beside a card's key or word it is masked, keeping the last four."""
    shown = " ".join(card[n:n + 4] for n in range(0, len(card), 4)) if spaced else card
    plain = json.dumps({key: int(card), "note": words.format(shown)})
    assert redact_content(plain, "json") == (plain, ())
    assert redact_text(words.format(shown)) == (words.format(shown), ())
    assert redact_value({key: int(card)}) == ({key: int(card)}, ())
    mask = f"[redacted:card_number, last four {card[-4:]}]"
    for doc in ({"card": int(card)}, {"card_number": shown}, {"pan": card},
                {"cc": shown}, {"brand": "mastercard", "number": int(card)},
                {"payment": {"card": {"value": shown}}}, {"note": f"paid by card {shown}"},
                {"note": f"carta {shown}"}, {"note": f"{shown} exp 12/29"},
                {"cards": [shown]}):
        out, found = redact_content(json.dumps(doc), "json")
        assert card not in out and shown not in out and mask in out, doc
        assert [r.rule for r in found] == ["card_number"]
        value, _ = redact_value(doc)
        assert card not in json.dumps(value) and shown not in json.dumps(value), doc


def test_inline_assignments_and_headers_are_named_rules() -> None:
    """The text rules missed before: each a named rule, the key kept, the value gone."""
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    cases = {
        f"aws_secret_access_key={aws}": "aws_secret_access_key",
        f"AWS_SECRET_ACCESS_KEY: {aws}": "aws_secret_access_key",
        f'export AWS_SECRET_ACCESS_KEY="{aws}"': "aws_secret_access_key",
        "DB_PASSWORD=hunter2": "password_field",
        "password: correct-horse": "password_field",
        "https://api.example/cb?code=x&token=abc123def456ghi": "secret_assignment",
        "client_secret=9f8e7d6c5b4a3f2e1d": "secret_assignment",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==": "authorization_header",
        "Authorization: Token 7c4a8d09ca3762af61e59520943dc26494f8941b": "authorization_header",
        "Authorization: Bearer abcdef0123456789.xyz": "bearer_token",
        "postgres://app:s3cr3tPw@db.internal/app": "url_password",
        "hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX": "slack_webhook",
        "SG." + "a" * 22 + "." + "b" * 43: "sendgrid_api_key",
        "hf_" + "a" * 34: "huggingface_token",
        "pypi-AgEIcHlwaS5vcmc" + "a" * 60: "pypi_token",
        "whsec_" + "a1" * 16: "stripe_webhook_secret",
    }
    for text, rule in cases.items():
        out, found = redact_text(text)
        assert [r.rule for r in found] == [rule], text
        assert f"[redacted:{rule}]" in out
    # plain words after a keyword are not secrets
    for text in ("token: expired", "the secret: rotated weekly", "api_key: none",
                 "password reset requested", "Password:\n\nEnter your name"):
        assert redact_text(text) == (text, ()), text


def test_facts_derived_from_a_redacted_text_are_not_garbled() -> None:
    """The seen bug: ``STRIPE=sk_live_…`` (and ``key: sk_live_…``) came back as a fact
    ``"STRIPE=[redacted": "stripe_secret_key]"``. The extractor reads the result as it was;
    its facts keep their keys, each value redacted whole."""
    key = "sk_live_" + "a1B2" * 6
    result = f"STRIPE: {key}\nmode: live\nnote: STRIPE={key}\n".encode()
    extraction = DefaultExtractor().extract("env", "succeeded", b"{}", result)
    assert extraction is not None
    shown, found = redact_extraction(extraction)
    assert shown.facts == {"STRIPE": "[redacted:stripe_secret_key]", "mode": "live",
                           "note": "STRIPE=[redacted:stripe_secret_key]"}
    assert key not in json.dumps([shown.facts, shown.summary, shown.limit_notes])
    assert {r.path for r in found} >= {"STRIPE", "note"}


# -- on both backends: every path a model or a client reads ----------------------------------
C = "vault-7"
T0 = "2026-10-05T08:00:00+00:00"
FRESH = "2026-10-05T09:00:00+00:00"  # the memories still fresh: results go as they were
_SEQ = itertools.count()
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = {
    "arg_password": "Tr0ub4dor&3-arg",
    "arg_token": "ghp_" + "A" * 36,
    "raw_token": "sk_live_" + "R4w" * 8,
    "user": "sk-ant-" + "U5er" * 6,
    "assistant": "xoxb-" + "4ss1st4nt" * 3,
    "summary": AWS,
    "checkpoint": "glpat-" + "ch3ckp01nt" * 3,
    "result": "AKIA" + "RESULTKEY0123456",
    "result_password": "p4ss-in-the-result",
    "card": "4539 1488 0343 6467",
}


def secret_events(conversation: str = C) -> list[dict[str, Any]]:
    """A session whose every writable text holds a secret."""
    raw = json.dumps({"user": "mia", "password": SECRETS["arg_password"],
                      "note": f"key {SECRETS['raw_token']}", "amount": 10.50})
    raw = raw.replace("10.5", "10.50")
    result = (
        '{"balance": 10.50, "big": 1e400, "order_number": 4111111111111111, '
        f'"login": {{"password": "{SECRETS["result_password"]}"}}, '
        f'"log": "aws_access_key_id={SECRETS["result"]}", '
        f'"payment": {{"brand": "visa", "number": "{SECRETS["card"]}"}}}}'
    )
    base: list[dict[str, Any]] = [
        dict(event="conversation", id=conversation, account="acct", at=T0),
        dict(event="participant", id="agent", model="gpt-4o"),
        dict(event="branch", id="main"),
        dict(event="message", id="u1", branch="main", role="user",
             content=f"my key is {SECRETS['user']}, please rotate it"),
        dict(event="run", id="r1", branch="main", participant="agent", mode="chat"),
        dict(event="tool_call", id="c1", run="r1", name="login",
             arguments={"user": "mia", "password": SECRETS["arg_password"],
                        "note": f"token={SECRETS['arg_token']}"}),
        dict(event="tool_result", call="c1", status="succeeded", content=result),
        dict(event="tool_call", id="c2", run="r1", name="transfer",
             arguments={"user": "mia"}, raw_arguments=raw),
        dict(event="tool_result", call="c2", status="succeeded", content='{"ok": true}'),
        dict(event="message", id="a1", branch="main", role="assistant", run="r1",
             content=f"Rotated; the old one was {SECRETS['assistant']}."),
        dict(event="checkpoint", id="k1", run="r1",
             state={"step": 2, "note": f"resume with {SECRETS['checkpoint']}"}),
        dict(event="memory", id="note", sources=["c1"],
             summary=f"login ok; AWS_SECRET_ACCESS_KEY={SECRETS['summary']}"),
        dict(event="message", id="u2", branch="main", role="user", content="What's my balance?"),
    ]
    return [e if e["event"] == "conversation" else dict(e, conversation=conversation)
            for e in base]


def _no_secret(text: str, where: str) -> None:
    for name, secret in SECRETS.items():
        assert secret not in text, f"{name} in {where}"
        assert secret.replace(" ", "") not in text, f"{name} in {where}"


def test_a_secret_in_any_record_never_reaches_a_request_or_a_read(vg: Vigente) -> None:
    """A secret in a call's arguments (and their raw text), a user and an assistant message, a
    writer's memory summary, a checkpoint and a result: in no assembled request of any format
    (as it was, compacted, rehydrated), in no graph read (with or without ``content=false``),
    transcript, recall hit or explain; the request keeps the result's number texts (``10.50``,
    ``1e400``, a Luhn-valid order number) and the record names each rule and path, never the
    value."""
    apply_events(vg, secret_events())
    for fmt in FORMATS:
        for budget, rehydrate in ((None, ()), (400, ()), (None, ("c1",))):
            asm = vg.assembly.assemble(C, "main", "agent", format=fmt, budget=budget,
                                       rehydrate=rehydrate, as_of=FRESH)
            sent = json.dumps([asm.system, asm.messages], ensure_ascii=False)
            _no_secret(sent, f"{fmt} request (budget {budget}, rehydrate {rehydrate})")
            explained = json.dumps(vg.assembly.explain(asm.id), ensure_ascii=False)
            _no_secret(explained, "explain")
            if budget is None:
                assert "10.50" in sent and "1e400" in sent and "Infinity" not in sent
                assert "4111111111111111" in sent  # an order number is no card
    asm = vg.assembly.assemble(C, "main", "agent", as_of=FRESH)
    rules = {(r["ref"], r["rule"], r["path"]) for r in asm.record["redactions"]}
    assert rules >= {
        ("u1", "anthropic_api_key", "content"),
        ("a1", "slack_token", "content"),
        ("c1", "secret_field", "arguments.password"),
        ("c1", "github_token", "arguments.note"),
        ("c2", "secret_field", "arguments.password"),
        ("c2", "stripe_secret_key", "arguments.note"),
        ("c1", "secret_field", "login.password"),
        ("c1", "card_number", "payment.number"),
        ("c1", "aws_access_key_id", "log"),
        ("k1", "gitlab_token", "state.note"),
    }, rules
    # the call's raw arguments text is redacted in place: the model's bytes otherwise
    chat = vg.assembly.assemble(C, "main", "agent", format="openai-chat", as_of=FRESH)
    [raw] = [c["function"]["arguments"] for m in chat.messages for c in m.get("tool_calls") or ()
             if c["id"] == "c2"]
    assert raw == json.dumps({"user": "mia", "password": "[redacted:secret_field]",
                              "note": "key [redacted:stripe_secret_key]", "amount": 10.5}
                             ).replace("10.5", "10.50")
    assert vg.assembly.rebuild(asm.id)["matches"] is True
    # a caller's query holding a secret: explain shows it redacted (the record keeps it, so
    # the rebuild recalls the same)
    asked = vg.assembly.assemble(C, "main", "agent", as_of=FRESH, budget=300,
                                 query=f"login with {SECRETS['arg_token']}")
    _no_secret(json.dumps(vg.assembly.explain(asked.id), ensure_ascii=False), "explain query")
    assert vg.assembly.rebuild(asked.id)["matches"] is True
    # what an API client reads
    graph = vg.runtime.graph(C)
    for content in (True, False):
        _no_secret(json.dumps(graph.as_dict(content=content), ensure_ascii=False),
                   f"graph content={content}")
    bare = graph.as_dict(content=False)["records"]
    for row in bare:
        assert not {"content", "arguments", "summary", "facts", "state"} & set(row), row
    _no_secret(json.dumps([m.content for m in vg.runtime.transcript(C, "main")]), "transcript")
    for query in ("key rotate", "login password", "resume", "balance", "AWS secret"):
        hits = vg.runtime.recall(query, conversation=C, branch="main", participant="agent")
        _no_secret(json.dumps(hits.as_dict(), ensure_ascii=False), f"recall {query!r}")
    # the derived memory holds none either, and its facts keep their keys
    [memory] = [m for m in graph.of_kind("memory") if m.id.endswith("#memory") and "c1" in m.id]
    _no_secret(json.dumps([memory.summary, memory.facts, memory.limit_notes]), "memory")
    assert memory.facts["login"] == {"password": "[redacted:secret_field]"}
    # the raw artifact keeps the bytes for the audit (vigente runtime artifact --raw)
    [artifact] = vg.runtime.artifacts("c1", conversation=C)
    raw_result = vg.runtime.artifact_content(artifact).decode()
    assert SECRETS["result_password"] in raw_result and "10.50" in raw_result


def test_a_derived_memory_restates_no_secret_its_facts_lost(vg: Vigente) -> None:
    """A secret field only the facts' rules know (an ``otp`` in a text result, a ``pin`` in
    the call's arguments) is in no part of the derived memory: not its facts, not the summary
    the extractor wrote from the result and the arguments."""
    apply_events(vg, [
        dict(event="conversation", id=C, account="acct", at=T0),
        dict(event="participant", conversation=C, id="agent", model="gpt-4o"),
        dict(event="branch", conversation=C, id="main"),
        dict(event="run", conversation=C, id="r1", branch="main", participant="agent",
             mode="chat"),
        dict(event="tool_call", conversation=C, id="c1", run="r1", name="send_otp",
             arguments={"user": "mia", "pin": "4821"}),
        dict(event="tool_result", conversation=C, call="c1", status="succeeded",
             content="otp: 839201"),
    ])
    [memory] = vg.runtime.graph(C).of_kind("memory")
    text = json.dumps([memory.summary, memory.facts, memory.limit_notes])
    assert "839201" not in text and "4821" not in text, text
    assert memory.facts == {"otp": "[redacted:secret_field]"}
    assert "mia" in memory.summary


def test_a_credential_is_never_a_user_memory_fact_nor_an_account_statement(vg: Vigente
                                                                          ) -> None:
    """A credential the user typed is no user memory's fact (the extractor's proposal loses
    it, its summary is redacted), and a writer's user memory recorded as the account's facts
    with one is refused, nothing written: a statement is read by every model that asks."""
    token = "sk-ant-" + "F4v0r1te" * 3
    apply_events(vg, [
        dict(event="conversation", id=C, account="acct", at=T0),
        dict(event="participant", conversation=C, id="agent", model="gpt-4o"),
        dict(event="branch", conversation=C, id="main"),
        dict(event="message", conversation=C, id="u1", branch="main", role="user",
             content=f"My name is Mia Li. My favorite key is {token}."),
    ])
    found = vg.runtime.extract_user_memories(C, record_as_fact=True)
    [memory] = found.memories
    assert memory.facts == {"name": "Mia Li"}
    assert token not in memory.summary
    before = len(vg.runtime.graph(C).nodes)
    with pytest.raises(InvalidInput, match="holds a credential"):
        vg.runtime.record_memory(C, "m2", sources=["u1"], kind="user", summary="key",
                                 facts={"api_key": token}, record_as_fact=True)
    assert len(vg.runtime.graph(C).nodes) == before


def test_a_purge_forgets_what_redaction_remembered(vg: Vigente) -> None:
    """Redaction remembers answers by content hash, by node, and the keys and short values it
    read; a purge of the account forgets them all (invariant 8: nothing names its data)."""
    from vigente.runtime import redact

    apply_events(vg, secret_events())
    vg.assembly.assemble(C, "main", "agent", as_of=FRESH)
    assert redact._RECORDS and redact._key_info.cache_info().currsize
    vg.runtime.purge_account("acct")
    assert not redact._RECORDS and not redact._MEMORIES and not redact._CACHE
    assert redact._key_info.cache_info().currsize == 0
    assert redact._short_suspect.cache_info().currsize == 0


# -- over HTTP and through the real MCP client: a client and a hostile model -------------------
ADMIN_KEY = "redaction-admin-key-0123456789abcdef"


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """A running service (URL) and one tenant's keys: the application's (a service key) and
    a model's (an agent key)."""
    root = (str(tmp_path / "data") if request.param == "sqlite"
            else request.getfixturevalue("postgres_url"))
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        c.post("/v1/admin/tenants", json={"name": "bank"}, headers=admin).raise_for_status()
        key = c.post("/v1/admin/tenants/bank/keys", json={"role": "service"},
                     headers=admin).json()["key"]
        model = c.post("/v1/admin/tenants/bank/keys", json={"role": "agent"},
                       headers=admin).json()["key"]
        yield url, key, model


def test_no_http_read_returns_a_secret(served: tuple[str, str, str]) -> None:
    """``GET /v1/conversations/{c}`` (with and without ``content=false``), the transcript,
    ``POST /v1/assemble`` in every format, the assembly's explain and ``POST /v1/recall``."""
    url, key, _ = served
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, timeout=60, headers=auth) as c:
        wrote = c.post("/v1/runtime/events", json={"events": secret_events()})
        assert wrote.status_code == 200, wrote.text
        for query in ("", "?content=false"):
            r = c.get(f"/v1/conversations/{C}{query}")
            assert r.status_code == 200, r.text
            _no_secret(r.text, f"GET conversation{query}")
        bare = c.get(f"/v1/conversations/{C}?content=false").json()["records"]
        assert all("arguments" not in row and "summary" not in row for row in bare)
        r = c.get(f"/v1/conversations/{C}/transcript")
        assert r.status_code == 200 and "please rotate it" in r.text
        _no_secret(r.text, "transcript")
        for fmt in FORMATS:
            asm = c.post("/v1/assemble", json={"conversation": C, "branch": "main",
                                               "participant": "agent", "format": fmt})
            assert asm.status_code == 200, asm.text
            _no_secret(asm.text, f"assemble {fmt}")
            explained = c.get(f"/v1/assemblies/{asm.json()['assembly_id']}")
            _no_secret(explained.text, "explain")
        hits = c.post("/v1/recall", json={"query": "rotate key login password",
                                          "conversation": C, "branch": "main",
                                          "participant": "agent"})
        assert hits.status_code == 200, hits.text
        _no_secret(hits.text, "recall")


HOSTILE = "vault-hostile"


async def _hostile_model(client: Client) -> None:
    """A model that records secrets in every event it may write, then tries each read to get
    them back (a refused write is fine: what matters is that no read returns a secret)."""
    for event in secret_events(HOSTILE):
        await client.call_tool("record_event", {"event": event})
    reads: list[Any] = []
    for fmt in FORMATS:
        reads.append(await client.call_tool("assemble_context", {
            "conversation": HOSTILE, "branch": "main", "participant": "agent", "format": fmt}))
        reads.append(await client.call_tool("assemble_context", {
            "conversation": HOSTILE, "branch": "main", "participant": "agent", "format": fmt,
            "rehydrate": ["c1", "c2"], "query": "what was the password of login?"}))
    for query in ("password", "my key rotate", "AWS_SECRET_ACCESS_KEY", "resume with",
                  "aws_access_key_id", "card visa number"):
        reads.append(await client.call_tool("recall_memory", {
            "query": query, "conversation": HOSTILE, "branch": "main", "participant": "agent"}))
    assembled = [r for r in reads if r.structured_content and "assembly_id" in
                 r.structured_content]
    assert assembled, [tool_text(r) for r in reads]
    for r in assembled:
        aid = r.structured_content["assembly_id"]
        reads.append(await client.call_tool("explain_assembly", {"assembly_id": aid}))
        reads.append(await client.call_tool("explain_assembly",
                                            {"assembly_id": aid, "why_not": "c1"}))
    for r in reads:
        _no_secret(tool_text(r) + json.dumps(r.structured_content or {}), "an MCP read")


def test_a_hostile_model_over_stdio_gets_no_secret_back(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    Vigente.open(db).close()
    command = _vigente_command()
    # the server runs this checkout's code (the SDK passes only a default environment)
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(command=command[0],
                                   args=[*command[1:], "--db", str(db), "mcp"], env=env)
    _run(_hostile_model, params)
    with Vigente.open(db) as vg:  # (it did write: the reads had something to leak)
        assert {n.id for n in vg.runtime.graph(HOSTILE).nodes} >= {"c1", "u2"}


def test_a_hostile_model_over_mcp_http_gets_no_secret_back(
    served: tuple[str, str, str],
) -> None:
    url, key, model = served
    _run(_hostile_model, url, model)  # the model's key; the application reads with its own
    with httpx.Client(base_url=url, timeout=60,
                      headers={"Authorization": f"Bearer {key}"}) as c:
        for query in ("", "?content=false"):
            r = c.get(f"/v1/conversations/{HOSTILE}{query}")
            assert r.status_code == 200 and '"c1"' in r.text, r.text
            _no_secret(r.text, f"GET conversation{query}")
