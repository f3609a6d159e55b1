"""Document-lineage commands: documents, decisions, derive/derived, review, verify,
import-corpus."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from vigente.cli._app import (
    Counted,
    cli,
    console,
    emit_json,
    json_option,
    knowledge,
    open_store,
    parse_scope,
    progress,
    renamed_option,
    scope_option,
)
from vigente.errors import InvalidInput
from vigente.evidence.documents import NewVersion
from vigente.evidence.in_force import DocumentEvidence
from vigente.jsonl import read_lines
from vigente.kernel.statement import moment


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text: re-encode it as UTF-8") from None


_emit = emit_json


# -- documents ---------------------------------------------------------------------------------
@cli.group()
def documents() -> None:
    """Document lineages: add versions with metadata, list and show them."""


@documents.command("add", short_help="Add a version to LINEAGE with its relation.")
@click.argument("lineage")
@click.option("--text", "text", help="The version's text.")
@click.option("--text-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Read the version's text from a UTF-8 file.")
@click.option("--valid-from", metavar="DATE", help="Entry into force (required unless it "
              "corrects a predecessor).")
@click.option("--valid-to", metavar="DATE", help="First day no longer in force, if stated.")
@click.option("--published", required=True, metavar="DATE",
              help="Publication date: when it could be known.")
@click.option("--reference", help='Official reference, e.g. "Circular 12/2025".')
@click.option("--title")
@click.option("--external-id", help="The id the source gives this version.")
@click.option("--source-url", "source_url", help="Where the source text is published.")
@renamed_option("--url", "--source-url", "source_url")
@click.option("--relation", type=click.Choice(
    ["supersedes", "amends", "supplements", "revokes", "corrects"]))
@click.option("--predecessor", help="Version id, external id or reference it relates to.")
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@scope_option
@json_option
def documents_add(lineage: str, text: str | None, text_file: Path | None,
                  scope: tuple[str, ...], now: str | None, as_json: bool,
                  **fields: str | None) -> None:
    """Add a version to LINEAGE and apply its relation to the predecessor."""
    if (text is None) == (text_file is None):
        raise click.UsageError("give exactly one of --text and --text-file")
    body = text if text_file is None else _read_text(text_file)
    assert body is not None
    version = open_store(click.get_current_context()).documents.add(
        NewVersion(lineage_id=lineage, text=body, scope=parse_scope(scope),
                   **fields),  # type: ignore[arg-type]
        now=now,
    )
    if as_json:
        _emit(version.as_dict())
        return
    click.echo(f"added {version.version_id}: {version.label}")


@documents.command("import", short_help="Versions from JSON Lines, all or nothing.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@json_option
@click.pass_context
def documents_import(ctx: click.Context, file: Path, now: str | None, as_json: bool) -> None:
    """Import versions with metadata from a JSON Lines FILE, all or nothing (a progress bar
    on a terminal)."""
    lines = read_lines(file)
    documents = open_store(ctx).documents
    with progress("checking versions", len(lines)) as step:
        added = documents.import_lines(Counted(lines, step, "adding versions"), now=now)
    if as_json:
        _emit({"versions": [v.as_dict() for v in added]})
        return
    click.echo(f"imported {len(added)} version(s)")


@documents.command("list")
@click.argument("lineage")
@json_option
@click.pass_context
def documents_list(ctx: click.Context, lineage: str, as_json: bool) -> None:
    """Every version of LINEAGE, in the order they were added."""
    versions = open_store(ctx).documents.versions(lineage)
    if not versions:  # with --json too: an empty list would read as "no versions yet"
        raise InvalidInput(
            f"no document lineage {lineage!r}: check the name (`vigente lineages` lists them)"
        )
    if as_json:
        _emit({"lineage": lineage, "versions": [v.as_dict() for v in versions]})
        return
    table = Table("version", "reference", "relation", "predecessor", "in force from",
                  "published", title=f"versions of {lineage}", title_justify="left")
    for v in versions:
        table.add_row(v.version_id, v.label, v.relation or "—", v.predecessor_id or "—",
                      str(v.valid_from), str(v.published))
    console().print(table)


@documents.command("show")
@click.argument("version_id")
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: the output "
              "is always one JSON object.")
@click.pass_context
def documents_show(ctx: click.Context, version_id: str, as_json: bool) -> None:
    """One version with its text, as JSON."""
    _emit(open_store(ctx).documents.get(version_id).as_dict(with_text=True))


def print_document_evidence(evidence: DocumentEvidence) -> None:
    """Human-readable document evidence (used by ``vigente ask`` on a document lineage)."""
    out = console()
    colour = {"supported": "green", "missing": "yellow", "conflict": "red"}[
        evidence.status.value]
    out.print(f"[bold {colour}]{evidence.status.value}[/] · {evidence.interpretation.value} · "
              f"t={moment(evidence.valid_at)} · k={knowledge(evidence.known_at, evidence.now)}")
    out.print(evidence.statement, markup=False)
    table = Table("", "version", "reference", "reason", "successor", "citation")
    for row in evidence.admitted:
        table.add_row("✓", row.version.version_id, row.version.label,
                      "superseded later" if row.superseded else "",
                      row.successor.label if row.successor else "", row.citation)
    for row in evidence.excluded:
        table.add_row("✗", row.version.version_id, row.version.label, row.reason or "",
                      row.successor.label if row.successor else "", row.citation)
    if evidence.admitted or evidence.excluded:
        out.print(table)
    if evidence.decision_id:
        out.print(f"decision recorded: {evidence.decision_id}")


# -- decisions ---------------------------------------------------------------------------------
@cli.group()
def decisions() -> None:
    """Recorded admissibility decisions: what an answer was allowed to see."""


@decisions.command("list")
@click.option("--limit", default=20, show_default=True)
@json_option
@click.pass_context
def decisions_list(ctx: click.Context, limit: int, as_json: bool) -> None:
    """The latest recorded decisions."""
    items = open_store(ctx).decisions(limit)
    if as_json:
        _emit({"decisions": [d.as_dict() for d in items]})
        return
    table = Table("decision", "kind", "subject", "recorded at", "status")
    for d in items:
        table.add_row(d.decision_id, d.kind, d.subject, str(d.recorded_at),
                      str(d.payload.get("status", "")))
    console().print(table)


@decisions.command("show", short_help="One recorded decision (JSON).")
@click.argument("decision_id")
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: the output "
              "is always one JSON object.")
@click.pass_context
def decisions_show(ctx: click.Context, decision_id: str, as_json: bool) -> None:
    """One recorded decision, as JSON: question, t, k, candidates, admitted, excluded."""
    _emit(open_store(ctx).decision(decision_id).as_dict())


# -- derivations -------------------------------------------------------------------------------
@cli.command()
@click.argument("kind")
@click.argument("label")
@click.option("--from", "sources", multiple=True, required=True, metavar="ID",
              help="A source: dv-… (document version), drv-… (derived) or a snapshot id.")
@click.option("--at", "valid_at", required=True, metavar="DATE", help="The t it was computed at.")
@click.option("--known-at", required=True, metavar="DATE", help="The k it was computed at.")
@json_option
@click.pass_context
def derive(ctx: click.Context, kind: str, label: str, sources: tuple[str, ...], valid_at: str,
           known_at: str, as_json: bool) -> None:
    """Record a derived item (chunk, summary, cached answer, memory) and its sources."""
    record = open_store(ctx).derivations.record(kind, label, sources=sources,
                                                valid_at=valid_at, known_at=known_at)
    if as_json:
        _emit(record.as_dict())
        return
    click.echo(f"derived {record.derived_id}")


@cli.command()
@click.option("--stale", is_flag=True, help="Only items a later version made stale.")
@json_option
@click.pass_context
def derived(ctx: click.Context, stale: bool, as_json: bool) -> None:
    """List derived items; with --stale, those to regenerate or drop, and why."""
    vg = open_store(ctx)
    stale_items = {s.derivation.derived_id: s for s in vg.derivations.stale()}
    records = [s.derivation for s in stale_items.values()] if stale else vg.derivations.all()
    rows = [
        {**r.as_dict(), "stale": r.derived_id in stale_items,
         "reasons": list(stale_items[r.derived_id].reasons) if r.derived_id in stale_items
         else []}
        for r in records
    ]
    if as_json:
        _emit({"derived": rows})
        return
    table = Table("derived", "kind", "label", "stale", "why")
    for row in rows:
        table.add_row(row["derived_id"], row["kind"], row["label"],
                      "yes" if row["stale"] else "no", "; ".join(row["reasons"]))
    console().print(table)


# -- review queue ------------------------------------------------------------------------------
@cli.group()
def review() -> None:
    """The review queue: bare documents wait until a person approves their fields."""


@review.command("submit", short_help="Queue bare FILES with their proposed fields.")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@json_option
@click.pass_context
def review_submit(ctx: click.Context, files: tuple[Path, ...], as_json: bool) -> None:
    """Extract lineage, reference, validity and relation from bare FILES and queue them."""
    queue = open_store(ctx).review
    items = [queue.submit(_read_text(path), filename=path.name) for path in files]
    if as_json:
        _emit({"proposals": [item.as_dict() for item in items]})
        return
    for path, item in zip(files, items, strict=True):
        state = "ready to approve" if item.proposal.approvable else "needs edits"
        click.echo(f"{item.proposal_id}: {path.name} ({state})")


@review.command("list")
@click.option("--status", type=click.Choice(["pending", "approved", "rejected"]))
@json_option
@click.pass_context
def review_list(ctx: click.Context, status: str | None, as_json: bool) -> None:
    """Proposals in the queue."""
    items = open_store(ctx).review.list(status)
    if as_json:
        _emit({"proposals": [i.as_dict() for i in items]})
        return
    table = Table("proposal", "status", "file", "lineage", "reference", "in force from",
                  "relation", "problems")
    for i in items:
        fields = {name: f.value for name, f in i.proposal.fields.items()}
        table.add_row(i.proposal_id, i.status, i.record.filename or "",
                      *(fields.get(name, "—") for name in ("lineage", "reference", "valid_from",
                                                           "relation")),
                      str(len(i.proposal.problems)))
    console().print(table)


@review.command("show", short_help="One proposal with spans and problems (JSON).")
@click.argument("proposal_id")
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: the output "
              "is always one JSON object.")
@click.pass_context
def review_show(ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """One proposal with its spans, confidences, problems and history, as JSON."""
    _emit(open_store(ctx).review.show(proposal_id).as_dict(with_text=True))


@review.command("edit")
@click.argument("proposal_id")
@click.option("--set", "assignments", multiple=True, metavar="FIELD=VALUE",
              help="Set a field (repeatable), e.g. --set valid_from=2025-03-03.")
@click.option("--clear", "cleared", multiple=True, metavar="FIELD", help="Remove a field.")
@click.option("--note")
@json_option
@click.pass_context
def review_edit(ctx: click.Context, proposal_id: str, assignments: tuple[str, ...],
                cleared: tuple[str, ...], note: str | None, as_json: bool) -> None:
    """Correct the proposed fields of a pending proposal."""
    values: dict[str, str | None] = dict(parse_scope(assignments))
    values.update({name: None for name in cleared})
    if not values:
        raise click.UsageError("give --set FIELD=VALUE or --clear FIELD")
    item = open_store(ctx).review.edit(proposal_id, note=note, **values)
    if as_json:
        _emit(item.as_dict())
        return
    state = "ready to approve" if item.proposal.approvable else "still needs edits"
    click.echo(f"{proposal_id}: edited ({state})")


@review.command("approve")
@click.argument("proposal_id")
@click.option("--note")
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@json_option
@click.pass_context
def review_approve(ctx: click.Context, proposal_id: str, note: str | None,
                   now: str | None, as_json: bool) -> None:
    """Approve a proposal: its version becomes admissible."""
    version = open_store(ctx).review.approve(proposal_id, note=note, now=now)
    if as_json:
        _emit(version.as_dict())
        return
    click.echo(f"{proposal_id}: approved as {version.version_id} ({version.label})")


@review.command("reject")
@click.argument("proposal_id")
@click.option("--note")
@json_option
@click.pass_context
def review_reject(ctx: click.Context, proposal_id: str, note: str | None,
                  as_json: bool) -> None:
    """Reject a proposal: nothing is added."""
    item = open_store(ctx).review.reject(proposal_id, note=note)
    if as_json:
        _emit(item.as_dict())
        return
    click.echo(f"{proposal_id}: rejected")


# -- answer check ------------------------------------------------------------------------------
@cli.command()
@click.argument("answer")
@click.option("--evidence", "evidence_file", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="The evidence JSON (`vigente ask … --json`).")
@click.option("--lang", "language", default="en", show_default=True,
              type=click.Choice(["en", "it"]), help="Language of the findings' messages.")
@json_option
def verify(answer: str, evidence_file: Path, language: str, as_json: bool) -> None:
    """Check a generated ANSWER against the evidence; exit 1 when it fails."""
    from vigente.evidence.verify import verify_file

    verdict = verify_file(evidence_file, answer, language=language)
    if as_json:
        _emit(verdict.as_dict())
    else:
        click.echo("pass" if verdict.passed else "fail")
        for finding in verdict.findings:
            click.echo(f"  {finding.code}: {finding.message}")
    if not verdict.passed:
        raise SystemExit(1)


# -- real corpora ------------------------------------------------------------------------------
@cli.command("import-corpus")
@click.argument("corpus", type=click.Choice(["legalize-ee"]))
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--limit", type=click.IntRange(min=1), help="Import only the first N lineages.")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as one JSON "
              "object.")
@click.pass_context
def import_corpus_command(ctx: click.Context, corpus: str, path: Path, limit: int | None,
                          as_json: bool) -> None:
    """Import a real versioned corpus (all or nothing) and report every anomaly found."""
    from vigente.corpus import legalize_ee
    from vigente.corpus.importer import import_corpus

    if not path.is_file():
        raise InvalidInput(f"no corpus file at {path}: give the path of versions.jsonl.xz")
    vg = open_store(ctx)
    with progress("importing lineages", limit) as step:
        result = import_corpus(vg, legalize_ee.read(path), limit=limit, progress=step)
    if as_json:
        _emit(result.as_dict())
        return
    click.echo(f"imported {result.lineages} lineage(s): {result.versions_added} version(s) "
               f"added, {result.versions_unchanged} already present, {result.knowledge_steps} "
               "knowledge step(s)")
    click.echo(result.report.summary())
