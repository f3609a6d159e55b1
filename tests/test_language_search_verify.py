"""Search hits and the answer check in the language asked, and MCP answers pinned to a ``now``.

A hit's ``why`` and citation (a title hit, a passage hit, a fact hit, superseded and revoked
ones) are Italian through the Python API, ``vigente search --lang it`` (the installed script in
a subprocess), ``POST /v1/search`` on a real uvicorn server and the MCP ``search`` tool through
the SDK's client at ``/mcp``, all one wording; the answer check's findings are Italian through
``verify(language=…)``, ``vigente verify --lang it``, ``POST /v1/verify`` and MCP
``verify_answer``; MCP ``ask_evidence`` and ``cite`` take ``now`` and answer what ``vigente ask
--now`` prints, and MCP ``search`` and ``verify_answer``'s question take it too. English stays
the default and the wording it always had; a bad language or a bad ``now`` is a clear error on
each surface, with nothing recorded. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from tests.http_server import Tenant, service_root, serving_tenant, tool_text, with_mcp
from vigente.api import Vigente
from vigente.errors import UnsupportedLanguage
from vigente.evidence import verify, verify_file
from vigente.evidence.documents import NewVersion
from vigente.retrieval import SearchResult

VIGENTE = Path(sys.executable).with_name("vigente")
DOCUMENTS = Path(__file__).parent / "data" / "documents"
ADMIN_KEY = "language-search-verify-admin-key-0123"
NOW = "2026-09-29"
EARLY = "2026-09-10"  # a "now" before Policy 3/2026 and the 100 MB value were learned
L = "svc/upload-limit-mb"
QUERY = "upload limit attachments"

#: (query, search options) whose hits are compared on every surface.
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    (QUERY, {"valid_at": NOW}),  # passage hits: a document and a fact
    ("Attachment policy", {"valid_at": NOW}),  # a title hit
    (QUERY, {"valid_at": NOW, "include_superseded": True}),  # superseded document and fact
    ("fax rules", {"valid_at": "2025-01-01", "include_superseded": True}),  # a revoked decree
]


def _seed(url: str) -> None:
    """The seed article's 50/80/100 MB limit as policies and as a fact, and a revoked decree."""
    with Vigente.open(url) as vg:

        def add(reference: str, text: str, valid_from: str, published: str, **kw: Any) -> None:
            vg.documents.add(
                NewVersion(
                    text=text,
                    valid_from=valid_from,
                    published=published,
                    reference=reference,
                    **{"lineage_id": "mail/attachments", "title": "Attachment policy", **kw},
                ),
                now=NOW,
            )

        add("Policy 1/2026", "Attachments: the upload limit is 50 MB.", "2026-01-01", "2025-12-15")
        add(
            "Policy 2/2026",
            "Attachments: the upload limit is 80 MB.",
            "2026-09-01",
            "2026-09-03",
            relation="amends",
            predecessor="Policy 1/2026",
        )
        add(
            "Policy 3/2026",
            "Announcement: the upload limit for attachments will be 100 MB.",
            "2026-10-01",
            "2026-09-20",
            relation="amends",
            predecessor="Policy 2/2026",
        )
        fax = {"lineage_id": "fax", "title": "Fax rules"}
        add("Decree 1/2020", "Fax rules: fax pages are kept.", "2020-01-01", "2019-12-01", **fax)
        add(
            "Decree 2/2024",
            "The fax rules are revoked.",
            "2024-01-01",
            "2023-12-01",
            relation="revokes",
            predecessor="Decree 1/2020",
            **fax,
        )
        for value, valid_from, known_at in (
            (50, "2026-01-01", "2026-01-01"),
            (80, "2026-09-01", "2026-09-03"),
            (100, "2026-10-01", "2026-09-20"),
        ):
            vg.record(L, value, valid_from=valid_from, known_at=known_at, source="policy", now=NOW)


def _search(vg: Vigente, query: str, options: dict[str, Any], **extra: Any) -> SearchResult:
    return vg.search(query, now=NOW, mode="lexical", **options, **extra)


def _worded(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each hit's id, citation and why; a search as known now reads at its very moment, which
    they word to the minute: the minute is left out, as two searches may fall either side of
    one."""
    def minute(text: str) -> str:
        return re.sub(r"\d\d:\d\d UTC", "HH:MM UTC", text)

    return [(h["version_id"], minute(h["citation"]), minute(h["why"])) for h in result["hits"]]


def _unworded(result: dict[str, Any]) -> dict[str, Any]:
    """The result without what the language changes: every hit, score and exclusion."""
    hits = [{k: v for k, v in h.items() if k not in ("citation", "why")} for h in result["hits"]]
    return {**result, "hits": hits}


# -- the Python API ---------------------------------------------------------------------------
IN_FORCE_80_IT = (
    "in vigore il 29 settembre 2026, dal 1° settembre 2026 fino al 1° ottobre 2026 (escluso), "
    "come noto al 29 settembre 2026 (nell'archivio dal 20 settembre 2026); sostituita dal 1° "
    "ottobre 2026 dalla Policy 3/2026 (pubblicata il 20 settembre 2026)"
)
IN_FORCE_80_EN = (
    "in force on 2026-09-29 (from 2026-09-01 until 2026-10-01) and known on 2026-09-29 (held "
    "since 2026-09-20); replaced from 2026-10-01 by Policy 3/2026 (published 2026-09-20)"
)


def test_the_api_words_hits_in_italian(vg: Vigente, store_url: str) -> None:
    _seed(store_url)
    passage = _search(vg, QUERY, {"valid_at": NOW}, language="it")
    document, fact = passage.hits[0], passage.hits[1]
    assert (document.kind, document.reference, document.matched_field) == (
        "document",
        "Policy 2/2026",
        None,
    )
    assert document.why == IN_FORCE_80_IT
    assert document.citation == (
        "Policy 2/2026 “Attachment policy”, in vigore dal 1° settembre 2026, che modifica la "
        "Policy 1/2026, che sarà modificata il 1° ottobre 2026 dalla Policy 3/2026"
    )
    assert (fact.kind, fact.value) == ("fact", 80)
    assert fact.citation == (
        "svc/upload-limit-mb = 80 (fonte: policy, valido dal 1° settembre 2026 fino al 1° "
        "ottobre 2026 (escluso), come noto al 29 settembre 2026 (nell'archivio dal 20 settembre "
        "2026))"
    )
    assert fact.why == (
        "valido il 29 settembre 2026, dal 1° settembre 2026 fino al 1° ottobre 2026 (escluso), "
        "come noto al 29 settembre 2026 (nell'archivio dal 20 settembre 2026)"
    )

    title = _search(vg, "Attachment policy", {"valid_at": NOW}, language="it").hits[0]
    assert (title.reference, title.matched_field) == ("Policy 2/2026", "title")
    assert title.why == IN_FORCE_80_IT + "; il suo titolo corrisponde alla query"

    old = _search(vg, QUERY, {"valid_at": NOW, "include_superseded": True}, language="it")
    ended = {
        (h.kind, h.valid_from.isoformat()): h.why for h in old.hits if h.admission != "in_force"
    }
    assert ended == {
        ("document", "2026-01-01"): "superata il 1° settembre 2026 dalla Policy 2/2026; "
        "restituita perché sono state chieste anche le versioni superate",
        ("fact", "2026-01-01"): "non più valido il 29 settembre 2026, dal 1° gennaio 2026 fino "
        "al 1° settembre 2026 (escluso); restituito perché sono state chieste anche le versioni "
        "superate",
    }
    fax = _search(
        vg, "fax rules", {"valid_at": "2025-01-01", "include_superseded": True}, language="it"
    )
    revoked = next(h for h in fax.hits if h.reference == "Decree 1/2020")
    assert revoked.why == (  # a decree is masculine; a revocation is "abrogato"
        "abrogato il 1° gennaio 2024 dal Decree 2/2024; restituito perché sono state chieste "
        "anche le versioni superate; il suo titolo corrisponde alla query"
    )
    assert "abrogato il 1° gennaio 2024 dal Decree 2/2024" in revoked.citation

    for query, options in SEARCHES:
        italian = _search(vg, query, options, language="it").as_dict()
        english = _search(vg, query, options).as_dict()
        assert _search(vg, query, options, language="en").as_dict() == english
        # only the wording changes: the same hits, ranks, scores and exclusions
        assert _unworded(italian) == _unworded(english)
        for (_, it_citation, it_why), (_, en_citation, en_why) in zip(
            _worded(italian), _worded(english), strict=True
        ):
            assert it_why != en_why
            for word in ("in force", "known on", "held since", "valid ", "returned", "source "):
                assert word not in it_why and word not in it_citation.split("”")[-1], it_why
            if en_citation.startswith(L):
                assert it_citation != en_citation


def test_english_hits_keep_their_wording(vg: Vigente, store_url: str) -> None:
    _seed(store_url)
    passage = _search(vg, QUERY, {"valid_at": NOW})
    assert passage.hits[0].why == IN_FORCE_80_EN
    assert "in force from 1 September 2026" in passage.hits[0].citation
    assert passage.hits[1].citation == (
        "svc/upload-limit-mb = 80 (source policy, valid from 2026-09-01 until 2026-10-01, known "
        "on 2026-09-29 (held since 2026-09-20))"
    )
    assert passage.hits[1].why == (
        "valid on 2026-09-29 (from 2026-09-01 until 2026-10-01) and known on 2026-09-29 (held "
        "since 2026-09-20)"
    )
    title = _search(vg, "Attachment policy", {"valid_at": NOW}).hits[0]
    assert title.why == IN_FORCE_80_EN + "; its title matches the query"
    old = _search(vg, QUERY, {"valid_at": NOW, "include_superseded": True})
    whys = [h.why for h in old.hits if h.admission == "superseded"]
    assert (
        "superseded on 2026-09-01 by Policy 2/2026; returned because superseded versions were "
        "asked for"
    ) in whys


def test_the_api_refuses_a_language_before_indexing_or_recording(
    vg: Vigente, store_url: str
) -> None:
    _seed(store_url)
    for language in ("fr", "IT", ""):
        with pytest.raises(UnsupportedLanguage, match="is not supported: use one of en, it"):
            vg.retrieval.search(QUERY, valid_at=NOW, now=NOW, language=language, record=True)
        with pytest.raises(UnsupportedLanguage):
            vg.search(QUERY, valid_at=NOW, now=NOW, language=language)
    assert vg.decisions() == [] and vg.retrieval.stats().passages == 0  # nothing was touched
    recorded = vg.retrieval.search(QUERY, valid_at=NOW, now=NOW, language="it", record=True)
    assert recorded.decision_id is not None and vg.retrieval.stats().passages > 0


# -- the answer check -------------------------------------------------------------------------
def _evidence(vg: Vigente, valid_at: str, known_at: str | None = None) -> dict[str, Any]:
    return vg.evidence(L, valid_at=valid_at, known_at=known_at, now=NOW).as_dict()


#: (valid_at, known_at, answer, Italian words its finding must hold, an answer that follows it)
ANSWERS = [
    ("2026-09-29", None, "The upload limit is 100 MB.", "non è tra i valori ammessi (80)", None),
    (
        "2026-10-02",
        None,
        "The upload limit is 100 MB.",
        "è un valore annunciato (announced_future) per il 2 ottobre 2026, come noto al 29 "
        "settembre 2026, ma è indicato senza",
        "Annunciato, dal 1° ottobre 2026: il limite sarà di 100 MB.",
    ),
    (
        "2026-08-20",
        None,
        "The limit was 50 MB.",
        "è un valore storico (historical) per il 20 agosto 2026",
        "Il 20 agosto 2026 il limite era di 50 MB.",
    ),
    (
        "2026-09-02",
        "2026-09-02",
        "The limit is 50 MB.",
        "la data della conoscenza (per esempio 'come noto al 2 settembre 2026')",
        "Come noto al 2 settembre 2026, il limite era di 50 MB.",
    ),
    (
        "2025-12-01",
        None,
        "The limit was 50 MB.",
        "l'evidenza per il 1° dicembre 2025, come noto al 29 settembre 2026, è mancante",
        "Per il 1° dicembre 2025 non è registrato alcun limite.",
    ),
]


def test_findings_are_worded_in_italian(vg: Vigente, store_url: str) -> None:
    _seed(store_url)
    for valid_at, known_at, answer, words, fixed in ANSWERS:
        evidence = _evidence(vg, valid_at, known_at)
        english, italian = verify(answer, evidence), verify(answer, evidence, language="it")
        assert english == verify(answer, evidence, language="en")
        assert not italian.passed and italian.passed == english.passed
        assert [(f.code, f.span) for f in italian.findings] == [
            (f.code, f.span) for f in english.findings
        ]
        (finding,) = italian.findings
        assert words in finding.message, finding.message
        assert finding.message != english.findings[0].message
        for word in ("as known", "is stated", "keep the qualifier", "state only"):
            assert word not in finding.message, finding.message
        if fixed is not None:  # doing what the Italian message says passes the check
            assert verify(fixed, evidence, language="it").passed, fixed
    announced = verify("The upload limit is 100 MB.", _evidence(vg, "2026-10-02"), language="it")
    assert announced.findings[0].message == (
        "'100' è un valore annunciato (announced_future) per il 2 ottobre 2026, come noto al 29 "
        "settembre 2026, ma è indicato senza la data di inizio o 'annunciato' (per esempio "
        "'annunciato, dal 1° ottobre 2026'): tenere la qualificazione accanto al valore"
    )
    # English keeps its messages (tests/test_verify.py holds the rest)
    assert verify("The upload limit is 100 MB.", _evidence(vg, "2026-10-02")).findings[
        0
    ].message == (
        "'100' is a announced_future value for 2026-10-02 as known on 2026-09-29 but is stated "
        "without its start date or 'announced' (e.g. 'announced, from 1 October 2026'): keep the "
        "qualifier next to the value"
    )


def test_document_findings_agree_with_the_act_in_italian() -> None:
    evidence = json.loads((DOCUMENTS / "evidence_circular_current.json").read_text())
    (finding,) = verify("Circular 7/2023 is in force.", evidence, language="it").findings
    assert finding.code.value == "superseded_as_in_force"
    assert finding.message == (
        "'Circular 7/2023' è citata come 'in force', ma per il 29 novembre 2026, come noto al 29 "
        "novembre 2026, risulta superata: citare Circular 12/2025 come versione in vigore, "
        "oppure dire che Circular 7/2023 non è più in vigore"
    )
    february = json.loads((DOCUMENTS / "evidence_circular_february_2025.json").read_text())
    (early,) = verify("La Circolare 12/2025 è vigente.", february, language="it").findings
    assert early.code.value == "value_not_admitted"
    assert early.message.startswith("'Circolare 12/2025' è citata come 'vigente', ma non è in ")
    assert "citare la versione in vigore (Circular 7/2023)" in early.message


def test_verify_refuses_a_language(tmp_path: Path) -> None:
    evidence = json.loads((DOCUMENTS / "evidence_circular_current.json").read_text())
    for language in ("fr", "IT", ""):
        with pytest.raises(UnsupportedLanguage, match="is not supported: use one of en, it"):
            verify("Circular 7/2023 is in force.", evidence, language=language)
        with pytest.raises(UnsupportedLanguage):  # named before the file is even read
            verify_file(
                tmp_path / "missing.json", "Circular 7/2023 is in force.", language=language
            )


# -- the CLI ----------------------------------------------------------------------------------
def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VIGENTE), *args], capture_output=True, text=True, timeout=120, check=False
    )


def _cli_search(db: str, query: str, options: dict[str, Any], lang: str | None) -> dict[str, Any]:
    args = ["--db", db, "search", query, "--at", options["valid_at"], "--now", NOW]
    args += ["--mode", "lexical", "--json"]
    if options.get("include_superseded"):
        args.append("--include-superseded")
    if lang is not None:
        args += ["--lang", lang]
    done = _run(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_cli_words_search_and_verify_as_the_api_does(
    vg: Vigente, store_url: str, tmp_path: Path
) -> None:
    _seed(store_url)
    vg.retrieval.index(embed=False)  # neither search then notes that it had to index first
    for query, options in SEARCHES[:3]:
        for lang in ("it", None):
            api = _search(vg, query, options, language=lang or "en").as_dict()
            assert _cli_search(store_url, query, options, lang) == api, (query, lang)
    refused = _run("--db", store_url, "search", QUERY, "--at", NOW, "--lang", "fr")
    assert refused.returncode == 2 and "Invalid value for '--lang': 'fr'" in refused.stderr

    path = tmp_path / "evidence.json"
    evidence = _evidence(vg, "2026-10-02")
    path.write_text(json.dumps(evidence))
    answer = "The upload limit is 100 MB."
    for lang in ("it", "en"):
        done = _run("verify", answer, "--evidence", str(path), "--lang", lang, "--json")
        assert done.returncode == 1, done.stderr  # the answer fails the check
        assert json.loads(done.stdout) == verify(answer, evidence, language=lang).as_dict()
    printed = _run("verify", answer, "--evidence", str(path), "--lang", "it")
    assert printed.stdout.startswith("fail\n  missing_date_qualifier: '100' è un valore annunciato")
    assert (
        _run("verify", answer, "--evidence", str(path)).stdout
        == _run("verify", answer, "--evidence", str(path), "--lang", "en").stdout
    )
    refused = _run("verify", answer, "--evidence", str(path), "--lang", "de")
    assert refused.returncode == 2 and "Invalid value for '--lang': 'de'" in refused.stderr


# -- HTTP and MCP, on a real server ------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    """A server with one tenant whose store holds the policies, the decrees and the fact."""
    root = service_root(request, tmp_path)
    with serving_tenant(root, ADMIN_KEY, _seed) as tenant:
        yield tenant


def _api(served: Tenant) -> Vigente:
    return Vigente.open(served.store)


def test_http_search_and_verify_in_the_language_asked(served: Tenant) -> None:
    with _api(served) as vg:
        expected = {
            (n, lang): _worded(_search(vg, query, options, language=lang).as_dict())
            for n, (query, options) in enumerate(SEARCHES)
            for lang in ("it", "en")
        }
        evidence = _evidence(vg, "2026-10-02")
    post = served.client.post
    for n, (query, options) in enumerate(SEARCHES):
        body = {"query": query, "now": NOW, "mode": "lexical", **options}
        for lang, extra in (("it", {"language": "it"}), ("en", {}), ("en", {"language": "en"})):
            found = post("/v1/search", headers=served.key, json={**body, **extra})
            assert found.status_code == 200, found.text
            assert _worded(found.json()) == expected[(n, lang)], (query, lang)

    answer = "The upload limit is 100 MB."
    question = {"lineage": L, "valid_at": "2026-10-02", "now": NOW}
    for lang in ("it", "en"):
        want = verify(answer, evidence, language=lang).as_dict()
        for given in ({"evidence": evidence}, {"ask": question}):
            verdict = post(
                "/v1/verify", headers=served.key, json={"answer": answer, **given, "language": lang}
            )
            assert verdict.status_code == 200, verdict.text
            assert verdict.json() == want, (lang, given)
    default = post("/v1/verify", headers=served.key, json={"answer": answer, "evidence": evidence})
    assert default.json() == verify(answer, evidence).as_dict()

    for language in ("fr", "IT", "", 1):
        for path, body in (
            ("/v1/search", {"query": QUERY, "valid_at": NOW, "record": True}),
            ("/v1/verify", {"answer": answer, "evidence": evidence}),
        ):
            refused = post(path, headers=served.key, json={**body, "language": language})
            assert refused.status_code == 422, refused.text
            error = refused.json()
            assert set(error) == {"error"} and error["error"]["code"] == "invalid_request"
            assert "body language: Input should be 'en' or 'it'" in error["error"]["message"]
    assert served.client.get("/v1/decisions", headers=served.key).json() == []
    schemas = served.client.get("/openapi.json").json()["components"]["schemas"]
    for name, words in (("SearchRequest", "citation and why"), ("VerifyRequest", "findings")):
        language = schemas[name]["properties"]["language"]
        assert language["enum"] == ["en", "it"] and words in language["description"]


def _cli_ask(db: str, *args: str) -> dict[str, Any]:
    done = _run("--db", db, "ask", *args, "--json")
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_mcp_search_verify_and_now(served: Tenant) -> None:
    answer = "The upload limit is 100 MB."
    with _api(served) as vg:
        # without now, the MCP search's k is the clock's, as here (and k=5, its default)
        expected = {
            (n, lang): _worded(vg.search(query, k=5, language=lang, **options).as_dict())
            for n, (query, options) in enumerate(SEARCHES)
            for lang in ("it", "en")
        }
        evidence = _evidence(vg, "2026-10-02")
        asked_now = vg.evidence(L, valid_at="2026-10-02").as_dict()  # verify_answer's question
        # now pinned before Policy 3/2026 and the 100 MB value were learned (2026-09-20)
        early = {
            lang: _worded(
                vg.search(QUERY, valid_at="2026-10-02", k=5, now=EARLY, language=lang).as_dict()
            )
            for lang in ("it", "en")
        }
        clock = _worded(vg.search(QUERY, valid_at="2026-10-02", k=5).as_dict())
        assert early["en"] != clock  # the pinned now changes the hits
        asked_early = vg.evidence(L, valid_at="2026-10-02", now=EARLY).as_dict()
    verdicts = {lang: verify(answer, evidence, language=lang).as_dict() for lang in ("it", "en")}
    asked_verdicts = {
        lang: verify(answer, asked_now, language=lang).as_dict() for lang in ("it", "en")
    }
    early_verdicts = {
        lang: verify(answer, asked_early, language=lang).as_dict() for lang in ("it", "en")
    }
    assert early_verdicts["en"] != asked_verdicts["en"]  # 100 MB was not known yet
    # "as known now" questions, pinned to NOW: what `vigente ask --now` prints
    pinned = {
        lang: [
            _cli_ask(served.store, L, "--at", at, "--now", NOW, "--lang", lang)
            for at in ("2026-09-29", "2026-10-02", "2026-09-02")
        ]
        for lang in ("it", "en")
    }
    timestamp = "2026-09-29T09:30:00+02:00"
    at_minute = _cli_ask(served.store, L, "--at", "2026-09-29", "--now", timestamp, "--lang", "it")

    async def session(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("ask_evidence", "cite", "search", "verify_answer"):
            now = tools[name].input_schema["properties"]["now"]
            assert "--now" in json.dumps(now) and "offset" in json.dumps(now)
        for name, words in (("search", "citation and why"), ("verify_answer", "findings")):
            language = tools[name].input_schema["properties"]["language"]
            assert language["enum"] == ["en", "it"] and words in language["description"]

        for n, (query, options) in enumerate(SEARCHES):
            for lang, extra in (("it", {"language": "it"}), ("en", {})):
                found = await client.call_tool("search", {"query": query, **options, **extra})
                assert not found.is_error, tool_text(found)
                assert _worded(found.structured_content) == expected[(n, lang)], (query, lang)

        for lang, extra in (("it", {"language": "it"}), ("en", {})):
            for given in ({"evidence": evidence}, {"lineage": L, "valid_at": "2026-10-02"}):
                checked = await client.call_tool(
                    "verify_answer", {"answer": answer, **given, **extra}
                )
                assert not checked.is_error, tool_text(checked)
                want = verdicts[lang] if "evidence" in given else asked_verdicts[lang]
                assert checked.structured_content == want, (lang, given)
                assert not want["passed"] and want["findings"]

        for lang in ("it", "en"):
            pinned_search = {"query": QUERY, "valid_at": "2026-10-02", "now": EARLY}
            found = await client.call_tool("search", {**pinned_search, "language": lang})
            assert not found.is_error, tool_text(found)
            assert _worded(found.structured_content) == early[lang], lang
            question = {"lineage": L, "valid_at": "2026-10-02", "now": EARLY}
            checked = await client.call_tool(
                "verify_answer", {"answer": answer, **question, "language": lang}
            )
            assert not checked.is_error, tool_text(checked)
            assert checked.structured_content == early_verdicts[lang], lang

        for lang in ("it", "en"):
            for at, printed in zip(
                ("2026-09-29", "2026-10-02", "2026-09-02"), pinned[lang], strict=True
            ):
                args = {"lineage": L, "valid_at": at, "now": NOW, "language": lang}
                asked = await client.call_tool("ask_evidence", args)
                assert not asked.is_error, tool_text(asked)
                assert asked.structured_content == {"kind": "fact", **printed}, (at, lang)
                cited = await client.call_tool("cite", args)
                assert not cited.is_error, tool_text(cited)
                assert cited.structured_content["statement"] == printed["statement"]
        clock = await client.call_tool("ask_evidence", {"lineage": L, "valid_at": "2026-09-29"})
        assert clock.structured_content["now"] != NOW  # unpinned: the answer is as of the clock
        minute = await client.call_tool(
            "ask_evidence",
            {"lineage": L, "valid_at": "2026-09-29", "now": timestamp, "language": "it"},
        )
        assert minute.structured_content == {"kind": "fact", **at_minute}
        assert "come noto ora (29 settembre 2026, 07:30 UTC)" in at_minute["statement"]
        document = await client.call_tool("cite", {"lineage": "mail/attachments", "now": NOW})
        assert not document.is_error, tool_text(document)
        assert [c["reference"] for c in document.structured_content["citations"]] == [
            "Policy 2/2026"
        ]

        for name in ("ask_evidence", "cite"):
            for now, words in (
                ("2026-13-01", "2026-13-01"),
                ("2026-09-29T10:00:00", "offset"),
                ("tomorrow", "tomorrow"),
            ):
                refused = await client.call_tool(name, {"lineage": L, "valid_at": NOW, "now": now})
                text = tool_text(refused)
                assert refused.is_error and words in text, (name, now, text)
        for name, args in (
            ("search", {"query": QUERY, "valid_at": NOW}),
            ("verify_answer", {"answer": answer, "lineage": L, "valid_at": NOW}),
        ):
            refused = await client.call_tool(name, {**args, "now": "2026-13-01"})
            assert refused.is_error and "2026-13-01" in tool_text(refused), tool_text(refused)
        for name, args in (
            ("search", {"query": QUERY, "valid_at": NOW}),
            ("verify_answer", {"answer": answer, "evidence": evidence}),
        ):
            refused = await client.call_tool(name, {**args, "language": "fr"})
            assert refused.is_error, tool_text(refused)
            assert "language" in tool_text(refused) and "'en' or 'it'" in tool_text(refused)

    with_mcp(served, session)
