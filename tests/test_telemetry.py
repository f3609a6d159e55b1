"""Observability with the real OpenTelemetry SDK's in-memory exporters (no mocks), on SQLite and
PostgreSQL: every surface (HTTP, MCP, CLI) emits its spans with the decision's attributes,
nested under the caller's trace (a ``traceparent``, a LangChain agent, an Agents SDK run);
metrics count assemblies, omissions by reason and branch, refusals and purges, with no id in
any label; ``/metrics`` is Prometheus text that prometheus_client's parser reads, for the admin
key only; and a secret planted in a tool result, a message and a query is in no exported span,
metric or log line."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families

from tests.conformance.test_runtime import C, session
from tests.http_server import Tenant, service_root, serving_tenant, tool_text, with_mcp
from tests.telemetry_capture import Captured, telemetry  # noqa: F401  (the fixture)
from vigente.cli import cli

ADMIN_KEY = "telemetry-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = {"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}


@pytest.fixture(params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path,
            telemetry: Captured) -> Iterator[Tenant]:  # noqa: F811
    """A real server with one empty tenant (``acme``), its metrics at /metrics."""
    with serving_tenant(service_root(request, tmp_path), ADMIN_KEY, lambda _: None,
                        metrics=True) as tenant:
        yield tenant


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    body: dict[str, Any] = response.json()
    return body


def _delta(before: dict[Any, float], after: dict[Any, float], name: str,
           **labels: Any) -> float:
    """How much the points of ``name`` whose labels include ``labels`` grew."""
    def total(points: dict[Any, float]) -> float:
        return sum(v for (n, lab), v in points.items()
                   if n == name and set(labels.items()) <= set(lab))
    return total(after) - total(before)


def _under(span: Any, ancestor: Any, spans: list[Any]) -> bool:
    """Whether ``ancestor`` is on ``span``'s parent chain."""
    by_id = {s.context.span_id: s for s in spans}
    current = span
    while current.parent is not None:
        if current.parent.span_id == ancestor.context.span_id:
            return True
        current = by_id.get(current.parent.span_id)
        if current is None:
            return False
    return False


def test_http_spans_carry_each_decision_under_the_callers_trace(
    service: Tenant, telemetry: Captured  # noqa: F811
) -> None:
    c, key = service.client, service.key
    before = telemetry.points()
    imported = _ok(c.post("/v1/runtime/events", json={"events": session()}, headers=key))
    body = {"conversation": C, "branch": "main", "participant": "agent"}
    asm = _ok(c.post("/v1/assemble", json=body, headers={**key, **PARENT}))
    recalled = _ok(c.post("/v1/recall", json={"query": "trains Milan", "conversation": C,
                                              "mode": "lexical"}, headers=key))
    _ok(c.post("/v1/statements", headers=key, json={"statements": [
        {"op": "record", "lineage": "lim", "value": 80, "source": "policy",
         "valid_from": "2026-09-01", "known_at": "2026-09-03"}]}))
    answer = _ok(c.post("/v1/ask", headers=key, json={"lineage": "lim", "valid_at": "2026-09-10",
                                                     "known_at": "2026-09-10"}))
    _ok(c.post("/v1/search", headers=key, json={"query": "upload limit",
                                                "valid_at": "2026-09-10", "mode": "lexical"}))
    purged = _ok(c.delete("/v1/accounts/acct-demo", headers=key))

    # the request's server span joins the caller's trace; the assembly's span is its child
    server = telemetry.one("POST /v1/assemble")
    assert server.kind is SpanKind.SERVER
    assert f"{server.context.trace_id:032x}" == TRACE_ID
    assert server.attributes["http.route"] == "/v1/assemble"
    assert server.attributes["http.response.status_code"] == 200
    span = telemetry.one("vigente.assemble")
    assert span.parent is not None and span.parent.span_id == server.context.span_id
    a = span.attributes
    assert a["vigente.assembly.id"] == asm["assembly_id"]
    assert (a["vigente.policy.id"], a["vigente.policy.version"], a["vigente.policy.hash"]) == (
        asm["policy"]["id"], str(asm["policy"]["version"]), asm["policy"]["hash"])
    assert a["vigente.assembly.tokens.assembled"] == asm["tokens"]["assembled"]
    assert a["gen_ai.usage.input_tokens"] == asm["tokens"]["assembled"]
    assert a["vigente.assembly.tokens.replay"] == asm["tokens"]["replay"]
    assert a["vigente.assembly.snapshot"] == asm["snapshot"]
    assert a["gen_ai.conversation.id"] == C and a["vigente.branch.id"] == "main"
    assert (a["gen_ai.provider.name"], a["gen_ai.request.model"]) == ("openai", "gpt-4o")
    shown: dict[str, int] = {}
    for d in asm["included"]:
        shown[d["as"]] = shown.get(d["as"], 0) + 1
    assert {k: v for k, v in a.items() if k.startswith("vigente.assembly.included.")} == {
        f"vigente.assembly.included.{k}": v for k, v in shown.items()}
    assert {k: v for k, v in a.items() if k.startswith("vigente.assembly.omitted.")} == {
        f"vigente.assembly.omitted.{k}": v for k, v in asm["omission_counts"].items()}
    assert asm["omission_counts"].get("other_branch")  # the sibling branch's records

    events = telemetry.one("vigente.events.import").attributes
    assert events["vigente.events.count"] == imported["events"] == 15
    recall = telemetry.one("vigente.recall").attributes
    assert recall["vigente.recall.hits"] == len(recalled["hits"]) > 0
    assert recall["vigente.recall.mode"] == "lexical"
    evidence = telemetry.one("vigente.evidence").attributes
    assert (evidence["vigente.evidence.status"], evidence["vigente.evidence.interpretation"]) == (
        answer["status"], answer["interpretation"])
    assert evidence["vigente.evidence.admitted"] == len(answer["admitted"]) == 1
    assert evidence["vigente.evidence.excluded"] == len(answer["excluded"])
    assert telemetry.one("vigente.search").attributes["vigente.search.mode"] == "lexical"
    purge = telemetry.one("vigente.purge").attributes
    assert purge["vigente.purge.outcome"] == "complete" and purged["conversations"] == [C]
    assert "acct-demo" not in json.dumps(dict(purge))  # a purge's span names no account

    after = telemetry.points()
    assert _delta(before, after, "vigente.assemblies", mode="chat") == 1
    assert _delta(before, after, "vigente.assembly.omissions", reason="other_branch",
                  branch="other") == asm["omission_counts"]["other_branch"]
    assert _delta(before, after, "vigente.assembly.tokens", kind="assembled") == (
        asm["tokens"]["assembled"])
    assert _delta(before, after, "vigente.operation.duration", surface="http",
                  operation="/v1/assemble", status="200") == 1
    assert _delta(before, after, "vigente.recall.queries", mode="lexical") == 1
    assert _delta(before, after, "vigente.purges", outcome="complete") == 1
    assert _delta(before, after, "vigente.evidence.answer_reading", status="supported") == 1
    # low cardinality: no label holds an id of the session, the tenant or the assembly
    labels = json.dumps([list(lab) for (_, lab) in after])
    for an_id in (C, "acct-demo", "acme", asm["assembly_id"], "trip", "t1", "m2"):
        assert f'"{an_id}"' not in labels

    # the access log: one JSON line per request, by template, with the request's trace id
    access = [line for line in telemetry.log_lines() if line["logger"] == "vigente.http.access"]
    line = next(x for x in access if x["http_route"] == "/v1/assemble")
    assert line["trace_id"] == TRACE_ID and line["http_status"] == 200
    assert any(x["http_route"] == "/v1/accounts/{account:path}" for x in access)
    assert "acct-demo" not in telemetry.log.getvalue() and C not in telemetry.log.getvalue()


def test_a_refused_history_rewrite_is_counted_and_metrics_are_prometheus_text(
    service: Tenant, telemetry: Captured  # noqa: F811
) -> None:
    c, key = service.client, service.key
    record = {"op": "record", "lineage": "lim", "value": 80, "source": "policy",
              "valid_from": "2026-09-01", "known_at": "2026-09-03"}
    _ok(c.post("/v1/statements", headers=key, json={"statements": [record]}))
    _ok(c.post("/v1/ask", headers=key, json={"lineage": "lim", "valid_at": "2026-09-10",
                                             "known_at": "2026-09-10"}))
    before = telemetry.points()
    late = {**record, "value": 90, "source": "mirror", "known_at": "2026-09-04"}
    refused = c.post("/v1/statements", headers=key, json={"statements": [late]})
    assert refused.status_code == 409, refused.text
    after = telemetry.points()
    assert _delta(before, after, "vigente.history.refusals", kind="answered_history",
                  surface="http") == 1
    statuses = [s.attributes["http.response.status_code"]
                for s in telemetry.spans("POST /v1/statements")]
    assert statuses == [200, 409]
    # a runtime event dated before its conversation is a refusal too (answered 409 by the
    # application layer's ApiError, raised from the runtime's own error)
    setup = c.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "conversation", "id": "c", "account": "a", "at": "2026-10-05T08:00:00Z"},
        {"event": "branch", "conversation": "c", "id": "main"}]})
    assert setup.status_code == 200, setup.text
    before = telemetry.points()
    late = c.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "message", "conversation": "c", "id": "m", "branch": "main", "role": "user",
         "content": "x", "at": "2026-10-05T07:00:00Z"}]})
    assert late.status_code == 409, late.text
    assert _delta(before, telemetry.points(), "vigente.history.refusals",
                  kind="runtime_history", surface="http") == 1

    # /metrics: the admin key only, in the text format Prometheus's own client parses
    assert c.get("/metrics").status_code == 401
    tenant = c.get("/metrics", headers=key)
    assert tenant.status_code == 403 and set(tenant.json()) == {"error"}
    scraped = c.get("/metrics", headers=ADMIN)
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(scraped.text)}
    refusals = families["vigente_history_refusals"]
    assert any(s.labels.get("kind") == "answered_history" and s.value >= 1
               for s in refusals.samples)
    assert "vigente_operation_duration_seconds" in families
    assert families["vigente_operation_duration_seconds"].type == "histogram"
    size = families["vigente_store_size_bytes"]
    backend = "postgresql" if service.store.startswith("postgres") else "sqlite"
    assert any(s.labels["backend"] == backend and s.value > 0 for s in size.samples)


def test_mcp_tool_calls_hold_vigentes_spans(service: Tenant, telemetry: Captured  # noqa: F811
                                            ) -> None:
    _ok(service.client.post("/v1/runtime/events", json={"events": session()},
                            headers=service.key))

    async def call(client: Any) -> None:
        result = await client.call_tool("assemble_context", {
            "conversation": C, "branch": "main", "participant": "agent"})
        assert not result.is_error, tool_text(result)

    before = telemetry.points()
    with_mcp(service, call)
    after = telemetry.points()
    assert _delta(before, after, "vigente.operation.duration", surface="mcp",
                  operation="assemble_context", status="ok") == 1
    spans = telemetry.spans()
    tool = telemetry.one("tools/call assemble_context")
    assert tool.attributes["gen_ai.tool.name"] == "assemble_context"
    assembly = telemetry.one("vigente.assemble")
    assert assembly.context.trace_id == tool.context.trace_id
    assert _under(assembly, tool, spans)
    assert assembly.attributes["gen_ai.conversation.id"] == C


def test_cli_commands_are_spans_with_the_work_inside(
    store_url: str, telemetry: Captured  # noqa: F811
) -> None:
    runner = CliRunner()
    wrote = runner.invoke(cli, ["--db", store_url, "record", "lim", "80", "--source", "policy",
                                "--valid-from", "2026-09-01", "--known-at", "2026-09-03"])
    assert wrote.exit_code == 0, wrote.output
    asked = runner.invoke(cli, ["--db", store_url, "ask", "lim", "--at", "2026-09-10"])
    assert asked.exit_code == 0, asked.output
    command = telemetry.one("vigente ask")
    assert command.parent is None and command.attributes["vigente.cli.command"] == "ask"
    evidence = telemetry.one("vigente.evidence")
    assert evidence.parent is not None and evidence.parent.span_id == command.context.span_id
    assert evidence.attributes["vigente.evidence.status"] == "supported"
    assert evidence.attributes["vigente.evidence.kind"] == "fact"
    added = runner.invoke(cli, ["--db", store_url, "documents", "add", "cdd", "--text",
                                "Uploads need two identity documents.", "--valid-from",
                                "2025-03-03", "--published", "2025-02-14"])
    assert added.exit_code == 0, added.output
    telemetry.exporter.clear()
    doc = runner.invoke(cli, ["--db", store_url, "ask", "cdd", "--at", "2025-06-01"])
    assert doc.exit_code == 0, doc.output
    document = telemetry.one("vigente.evidence").attributes
    assert (document["vigente.evidence.kind"], document["vigente.evidence.status"],
            document["vigente.evidence.admitted"]) == ("document", "supported", 1)
    failed = runner.invoke(cli, ["--db", store_url, "ask", "lim", "--at", "not-a-date"])
    assert failed.exit_code == 1
    errors = [s for s in telemetry.spans("vigente ask") if s.status.is_ok is False]
    assert errors and errors[0].attributes["error.type"].endswith("InvalidTime")
    assert errors[0].status.description is None  # the message (it quotes the input) is not kept


def test_framework_runs_nest_vigentes_spans_under_the_caller(
    sqlite_vg: Any, telemetry: Captured  # noqa: F811
) -> None:
    pytest.importorskip("langchain")
    pytest.importorskip("agents")
    from agents import Agent, Runner
    from agents.testing import ScriptedModel, assistant_message
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from vigente.integrations.langchain import VigenteMiddleware
    from vigente.integrations.openai_agents import VigenteSession
    from vigente.integrations.testing import ScriptedChatModel

    tracer = trace.get_tracer("the-agent-app")
    model = ScriptedChatModel(messages=iter([AIMessage(content="Hello.")]))
    agent = create_agent(model, tools=[], middleware=[VigenteMiddleware(sqlite_vg)],
                         checkpointer=InMemorySaver())
    with tracer.start_as_current_span("invoke_agent langchain") as outer:
        agent.invoke({"messages": [{"role": "user", "content": "hi"}]},
                     {"configurable": {"thread_id": "t-1"}})
    spans = telemetry.spans()
    call = telemetry.one("vigente.model_call")
    assert _under(call, outer, spans)
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assembly = telemetry.one("vigente.assemble")
    assert assembly.parent is not None and assembly.parent.span_id == call.context.span_id
    assert call.attributes["vigente.assembly.id"] == assembly.attributes["vigente.assembly.id"]

    telemetry.exporter.clear()
    scripted = ScriptedModel([[assistant_message("Hi.", item_id="m1")]])
    sdk_agent = Agent(name="airline", instructions="Airline agent.", model=scripted)
    with tracer.start_as_current_span("invoke_agent openai") as outer:
        asyncio.run(Runner.run(sdk_agent, "hi", session=VigenteSession("s-1", sqlite_vg)))
    spans = telemetry.spans()
    read = telemetry.one("vigente.session.get_items")
    assert _under(read, outer, spans)
    assert _under(telemetry.one("vigente.assemble"), read, spans)


def test_a_planted_secret_is_in_no_span_metric_or_log_line(
    service: Tenant, telemetry: Captured  # noqa: F811
) -> None:
    secret = "sekret-" + secrets.token_hex(12)
    events = session()
    for e in events:
        if e["event"] == "tool_result" and e["call"] == "t1":
            e["content"] = {"trains": [{"id": "FR-9512", "note": secret}]}
        if e["event"] == "message" and e.get("id") == "m1":
            e["content"] = f"Trains from Turin to Milan tomorrow? My code is {secret}"
    c, key = service.client, service.key
    _ok(c.post("/v1/runtime/events", json={"events": events}, headers=key))
    body = {"conversation": C, "branch": "main", "participant": "agent"}
    asm = _ok(c.post("/v1/assemble", json=body, headers=key))
    assert secret in json.dumps(asm["messages"])  # the model sees it; telemetry must not
    _ok(c.post("/v1/recall", json={"query": f"code {secret}", "conversation": C,
                                   "mode": "lexical"}, headers=key))
    _ok(c.post("/v1/search", headers=key, json={"query": secret, "valid_at": "2026-09-10",
                                                "mode": "lexical"}))
    bad = c.post("/v1/ask", headers=key, json={"lineage": "lim", "valid_at": secret})
    assert bad.status_code == 400 and secret in bad.text  # the caller is told; no one else

    async def call(client: Any) -> None:
        await client.call_tool("recall_memory", {"query": secret, "conversation": C})
        await client.call_tool("ask_evidence", {"lineage": "lim", "valid_at": secret})

    with_mcp(service, call)
    runner = CliRunner()
    runner.invoke(cli, ["--db", service.store, "ask", "lim", "--at", secret])
    runner.invoke(cli, ["--db", service.store, "recall", secret, "--conversation", C])
    scraped = c.get("/metrics", headers=ADMIN).text
    telemetry.gate.inner.force_flush()
    exported = telemetry.exported_text()
    assert telemetry.spans("vigente.assemble") and telemetry.spans("vigente.recall")
    assert secret not in exported and secret not in scraped


def _vigente(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run([sys.executable, "-m", "vigente", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env={**clean, **env}, check=False)


def test_the_otel_variables_turn_telemetry_on_for_a_command(tmp_path: Path) -> None:
    db = str(tmp_path / "v.db")
    wrote = _vigente(["--db", db, "record", "lim", "80", "--source", "s", "--valid-from",
                      "2026-09-01", "--known-at", "2026-09-03"], {}, tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    asked = _vigente(["--db", db, "ask", "lim", "--at", "2026-09-10"],
                     {"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "agents-prod"},
                     tmp_path)
    assert asked.returncode == 0, asked.stderr
    # the console exporter prints each span (flushed when the command ends) as JSON objects
    assert '"name": "vigente.evidence"' in asked.stdout
    assert '"name": "vigente ask"' in asked.stdout
    assert '"service.name": "agents-prod"' in asked.stdout
    off = _vigente(["--db", db, "ask", "lim", "--at", "2026-09-10"], {}, tmp_path)
    assert off.returncode == 0 and '"name"' not in off.stdout  # nothing configured: nothing
    bad = _vigente(["--db", db, "lineages"], {"OTEL_TRACES_EXPORTER": "zipkinn"}, tmp_path)
    assert bad.returncode == 1
    assert bad.stderr.startswith("Error: OTEL_TRACES_EXPORTER='zipkinn' names an exporter")


def test_serve_refuses_metrics_it_could_only_serve_from_one_worker(tmp_path: Path) -> None:
    refused = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "d"), "--metrics",
                                       "--workers", "2"])
    assert refused.exit_code == 1
    assert "OTEL_METRICS_EXPORTER=otlp" in refused.output


def test_the_telemetry_benchmark_reports_each_set_up(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "vigente.bench", "telemetry", "--turns", "5",
                           "--reads", "3", "--rounds", "1", "--json"], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    for op in ("assemble", "ask"):
        for mode in ("off", "noop", "memory"):
            assert figures[f"{op}_{mode}_p50_ms"] > 0
        assert figures[f"{op}_memory_vs_off"] > 0
    assert list(tmp_path.iterdir()) == [], "the benchmark left files behind"


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=st.text(alphabet=string.ascii_letters + string.digits + " -_.", min_size=12,
                      max_size=40).map(lambda s: "Zq" + s + "Xj"),
       where=st.sampled_from(["message", "result", "argument"]),
       budget=st.sampled_from([None, 60, 400]))
def test_whatever_text_an_assembly_holds_no_span_or_metric_holds_it(
    vg: Any, telemetry: Captured, secret: str, where: str, budget: int | None  # noqa: F811
) -> None:
    """Property, both backends: text planted anywhere in what an assembly and a recall read
    (a user message, a tool result, a call's arguments, the query), and any budget, is in no
    exported span or metric point."""
    telemetry.exporter.clear()
    conversation = "prop-" + secrets.token_hex(6)
    events = [dict(e, conversation=conversation) if e["event"] != "conversation"
              else dict(e, id=conversation) for e in session()]
    for e in events:
        if where == "message" and e["event"] == "message" and e.get("id") == "m1":
            e["content"] = f"{e['content']} {secret}"
        if where == "result" and e["event"] == "tool_result" and e["call"] == "t1":
            e["content"] = {"trains": [{"id": "FR-9512", "note": secret}]}
        if where == "argument" and e["event"] == "tool_call" and e["id"] == "t1":
            e["arguments"] = {"from": "TRN", "to": secret}
    vg.runtime.import_events([json.dumps(e) for e in events])
    vg.assembly.assemble(conversation, "main", "agent", budget=budget, query=secret)
    vg.runtime.recall(secret, conversation=conversation, mode="lexical")
    assert telemetry.spans("vigente.assemble") and telemetry.spans("vigente.recall")
    assert secret not in telemetry.exported_text()
