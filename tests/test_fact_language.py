"""A fact answer in the language asked, on every surface: the Python API
(``Vigente.evidence(language=…)``), ``POST /v1/ask`` on a real uvicorn server and the MCP tools
through the SDK's client at ``/mcp`` word the statement exactly as ``vigente ask --lang it``
prints it (the installed script, run as a subprocess on the same store), English stays the
default and unchanged, and a language vigente cannot word is a clear error on each surface. On
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client

from tests.http_server import Tenant, service_root, serving_tenant, tool_text, with_mcp
from vigente.api import Vigente
from vigente.errors import UnsupportedLanguage
from vigente.evidence import verify
from vigente.evidence.wording import fact_statement

VIGENTE = Path(sys.executable).with_name("vigente")
ADMIN_KEY = "fact-language-admin-key-0123456789"
NOW = "2026-09-29"
L = "svc/upload-limit-mb"
R = "svc/retention-days"  # two sources disagree; a precedence rule settles it from NOW
MAIL = {"product": "mail"}


@dataclass(frozen=True)
class Question:
    lineage: str
    valid_at: str
    known_at: str | None  # None: as known now
    scope: dict[str, str]
    expect: str  # the interpretation, or "conflict"

    def cli_args(self) -> list[str]:
        known = [] if self.known_at is None else ["--known-at", self.known_at]
        scope = [f"--scope={k}={v}" for k, v in self.scope.items()]
        return [self.lineage, "--at", self.valid_at, *known, *scope]

    def fields(self) -> dict[str, Any]:
        return {"valid_at": self.valid_at, "known_at": self.known_at, "scope": self.scope}


QUESTIONS = [  # the seed article's table, a conflict and a conflict a precedence rule settles
    Question(L, "2026-09-29", None, {}, "current"),
    Question(L, "2026-08-20", None, {}, "historical"),
    Question(L, "2026-09-02", None, {}, "retrospective"),
    Question(L, "2026-09-02", "2026-09-02", {}, "known_then"),
    Question(L, "2026-10-02", None, {}, "announced_future"),
    Question(L, "2025-12-01", None, {}, "missing"),
    Question(L, "2026-11-02", "2026-09-10", {}, "projected"),
    Question(R, "2026-09-01", "2026-09-20", MAIL, "conflict"),
    Question(R, "2026-09-01", None, MAIL, "retrospective"),
]
#: Questions whose answer does not depend on the moment they are asked (an explicit k in the
#: past): the MCP tools take no ``now``, so the CLI is run without ``--now`` for them.
DATED = [q for q in QUESTIONS if q.known_at is not None]


def _seed(url: str) -> None:
    with Vigente.open(url) as vg:
        for value, valid_from, known_at in (
            (50, "2026-01-01", "2026-01-01"),
            (80, "2026-09-01", "2026-09-03"),
            (100, "2026-10-01", "2026-09-20"),
        ):
            vg.record(L, value, valid_from=valid_from, known_at=known_at, source="policy", now=NOW)
        for value, source, known_at in ((30, "policy", "2026-01-01"), (45, "mirror", "2026-02-01")):
            vg.record(
                R,
                value,
                valid_from="2026-01-01",
                known_at=known_at,
                source=source,
                scope=MAIL,
                now=NOW,
            )
        vg.set_precedence(["policy", "mirror"], known_at=NOW, scope=MAIL, lineage=R, now=NOW)


def _cli(db: str, q: Question, lang: str, *, now: bool = True) -> dict[str, Any]:
    """``vigente ask … --json --lang LANG`` on ``db``, the installed script in a subprocess."""
    args = [str(VIGENTE), "--db", db, "ask", *q.cli_args(), "--lang", lang, "--json"]
    if now:
        args += ["--now", NOW]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _check_italian(italian: str, english: str, q: Question) -> None:
    """An Italian statement that is not the English one and reads as Italian."""
    assert italian != english
    if q.expect == "conflict":
        assert italian.startswith("Conflitto: le fonti non concordano"), italian
    else:
        assert "come noto" in italian.lower(), italian
    for word in ("as known", "source:", "valid from", "Conflict"):
        assert word not in italian, italian


# -- the Python API ---------------------------------------------------------------------------
def test_the_api_words_a_fact_answer_as_the_cli_does(vg: Vigente, store_url: str) -> None:
    _seed(store_url)
    for q in QUESTIONS:
        kernel = vg.evidence(q.lineage, now=NOW, **q.fields())
        italian = vg.evidence(q.lineage, now=NOW, language="it", **q.fields())
        conflict = q.expect == "conflict"
        assert (kernel.status if conflict else kernel.interpretation).value == q.expect, q
        assert italian.as_dict() == _cli(store_url, q, "it"), q
        assert italian.statement == fact_statement(kernel, "it")
        _check_italian(italian.statement, kernel.statement, q)
        # only the statement is worded: every value, version and reason is the kernel's
        assert replace(italian, statement=kernel.statement) == kernel
        assert vg.evidence(q.lineage, now=NOW, language="en", **q.fields()) == kernel
        # the Italian statement keeps every qualifier the answer check asks for
        verdict = verify(italian.statement, italian.as_dict())
        assert verdict.passed, (italian.statement, [f.message for f in verdict.findings])
    announced = vg.evidence(L, valid_at="2026-10-02", now=NOW, language="it")
    assert announced.statement == (
        "svc/upload-limit-mb è annunciato pari a 100 dal 1° ottobre 2026 (fonte: policy, valido "
        "dal 1° ottobre 2026), come noto ora (29 settembre 2026). Annunciato, non ancora in "
        "vigore al 29 settembre 2026; un annuncio può ancora cambiare."
    )
    for q in QUESTIONS[3:5]:  # English: the default, as the CLI prints it without --lang
        assert vg.evidence(q.lineage, now=NOW, **q.fields()).as_dict() == _cli(store_url, q, "en")


def test_the_api_refuses_a_language_before_recording_anything(vg: Vigente, store_url: str) -> None:
    _seed(store_url)
    with pytest.raises(UnsupportedLanguage, match="language 'fr' is not supported: use one of"):
        vg.evidence(L, valid_at="2026-09-29", now=NOW, language="fr", record=True)
    assert vg.decisions() == []
    recorded = vg.evidence(L, valid_at="2026-09-29", now=NOW, language="it", record=True)
    assert recorded.decision_id is not None and recorded.statement.startswith(L + " è 80 il ")
    # the decision keeps the kernel's answer (its wording is the English one, as before)
    payload = vg.decision(recorded.decision_id).as_dict()
    assert json.dumps(recorded.values) in json.dumps(payload)
    assert recorded.statement not in json.dumps(payload, ensure_ascii=False)


# -- HTTP and MCP, on a real server ------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    """A server with one tenant whose store holds the questions' facts."""
    root = service_root(request, tmp_path)
    with serving_tenant(root, ADMIN_KEY, _seed) as tenant:
        yield tenant


def _ask(served: Tenant, q: Question, **extra: Any) -> httpx.Response:
    body = {"lineage": q.lineage, "now": NOW, **q.fields(), **extra}
    return served.client.post("/v1/ask", headers=served.key, json=body)


def _over_http(cli: dict[str, Any]) -> dict[str, Any]:
    """The CLI's ``ask --json`` of a fact as ``/v1/ask`` answers it (its optional fields
    null when unset)."""
    return {"kind": "fact", "earlier_values": None, "decision_id": None, **cli}


def test_http_ask_words_a_fact_answer_as_the_cli_does(served: Tenant) -> None:
    for q in QUESTIONS:
        italian = _ask(served, q, language="it")
        assert italian.status_code == 200, italian.text
        assert italian.json() == _over_http(_cli(served.store, q, "it")), q
        english = _ask(served, q).json()
        assert _ask(served, q, language="en").json() == english
        _check_italian(italian.json()["statement"], english["statement"], q)
    for q in QUESTIONS[3:5]:
        assert _ask(served, q).json() == _over_http(_cli(served.store, q, "en"))

    # the answer check of /v1/verify asks the same question, in Italian
    q = QUESTIONS[4]
    statement = _ask(served, q, language="it").json()["statement"]
    question = {"lineage": q.lineage, "now": NOW, "language": "it", **q.fields()}
    for answer, passed in ((statement, True), ("Il limite è 100 MB.", False)):
        verdict = served.client.post(
            "/v1/verify", headers=served.key, json={"answer": answer, "ask": question}
        )
        assert verdict.status_code == 200, verdict.text
        assert verdict.json()["passed"] is passed, verdict.json()


def test_http_ask_refuses_a_language_in_the_one_error_shape(served: Tenant) -> None:
    for language in ("fr", "IT", "", 1):
        refused = _ask(served, QUESTIONS[0], language=language, record=True)
        assert refused.status_code == 422, refused.text
        error = refused.json()
        assert set(error) == {"error"} and error["error"]["status"] == 422
        assert error["error"]["code"] == "invalid_request"
        assert "body language: Input should be 'en' or 'it'" in error["error"]["message"]
    decisions = served.client.get("/v1/decisions", headers=served.key)
    assert decisions.status_code == 200 and decisions.json() == []  # nothing was recorded
    schema = served.client.get("/openapi.json").json()["components"]["schemas"]["AskRequest"]
    assert schema["properties"]["language"]["enum"] == ["en", "it"]
    assert "fact" in schema["properties"]["language"]["description"]


def test_mcp_tools_word_a_fact_answer_as_the_cli_does(served: Tenant) -> None:
    cli = [{lang: _cli(served.store, q, lang, now=False) for lang in ("it", "en")} for q in DATED]

    async def session(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("ask_evidence", "cite"):
            language = tools[name].input_schema["properties"]["language"]
            assert language["enum"] == ["en", "it"] and "statement" in language["description"]
        for q, printed in zip(DATED, cli, strict=True):
            args = {"lineage": q.lineage, **q.fields()}
            for lang, extra in (("it", {"language": "it"}), ("en", {}), ("en", {"language": "en"})):
                asked = await client.call_tool("ask_evidence", {**args, **extra})
                assert not asked.is_error, tool_text(asked)
                expected = {"kind": "fact", **printed[lang]}
                assert {k: v for k, v in asked.structured_content.items() if k != "now"} == {
                    k: v for k, v in expected.items() if k != "now"
                }, (q, lang)
                cited = await client.call_tool("cite", {**args, **extra})
                assert not cited.is_error, tool_text(cited)
                assert cited.structured_content["statement"] == printed[lang]["statement"]
            _check_italian(printed["it"]["statement"], printed["en"]["statement"], q)

        projected = {"lineage": L, "valid_at": "2026-11-02", "known_at": "2026-09-10"}
        for extra, citation in (
            ({"language": "it"}, "policy, valido dal 1° settembre 2026"),
            ({}, "policy, valid from 2026-09-01"),
        ):
            cited = await client.call_tool("cite", {**projected, **extra})
            assert [c["citation"] for c in cited.structured_content["citations"]] == [citation]

        for name in ("ask_evidence", "cite"):
            refused = await client.call_tool(name, {**projected, "language": "fr"})
            assert refused.is_error, tool_text(refused)
            assert "language" in tool_text(refused) and "'en' or 'it'" in tool_text(refused)

    with_mcp(served, session)
