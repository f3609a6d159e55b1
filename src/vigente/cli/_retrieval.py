"""Retrieval commands: ``search`` (time-filtered hybrid search) and ``index`` (passages and
embeddings, with a progress bar)."""

from __future__ import annotations

import click
from rich.table import Table

from vigente.cli._app import (
    cli,
    console,
    emit_json,
    json_option,
    knowledge,
    open_store,
    parse_scope,
    progress,
    scope_option,
)
from vigente.kernel.statement import moment
from vigente.retrieval import (
    ALL_SCOPES,
    BUILTIN_MODELS,
    MINILM,
    SearchResult,
    builtin_embedder,
    embedding_available,
)
from vigente.retrieval.search import MODES

_emit = emit_json


def _snippet(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def print_search(result: SearchResult, *, known_now: bool = False) -> None:
    """The hits as a table; ``known_now`` when no knowledge date was given (k is now)."""
    out = console()
    k = result.known_at
    shown = moment(k)
    if known_now:  # the default knowledge date: today (a date) or this moment
        shown = f"today ({shown})" if k.is_date else knowledge(k, k)
    when = f"t={moment(result.valid_at)} · k={shown}"
    if result.date_phrase:
        when += f" (from the question: {result.date_phrase!r})"
    out.print(f"[bold]{len(result.hits)} hit(s)[/] · {result.mode} · {when}", markup=True)
    table = Table("#", "score", "version", "valid", "superseded by", "citation · passage")
    for hit in result.hits:
        valid = f"{hit.valid_from} → {hit.valid_to or '…'}"
        mark = "" if hit.admission == "in_force" else " [superseded]"
        table.add_row(
            str(hit.rank), f"{hit.score:.4g}", f"{hit.lineage_id}\n{hit.version_id}{mark}",
            valid, hit.superseded_by_label or "—",
            f"{hit.citation}\n[dim]{_snippet(hit.passage)}[/]",
        )
    if result.hits:
        out.print(table)
    if result.excluded:
        gone = Table("similarity rank", "version", "lineage", "reason", title="excluded",
                     title_justify="left")
        for e in result.excluded:
            gone.add_row(str(e.similarity_rank), e.version_id, e.lineage_id, e.reason)
        out.print(gone)
    for note in result.notes:
        out.print(f"note: {note}", markup=False)
    if result.decision_id:
        out.print(f"decision recorded: {result.decision_id}")


@cli.command(epilog="""\b
Examples:
  vigente search "upload limit for attachments" --at 2026-09-29 --json
  vigente search "limite allegati in vigore al 3 marzo 2025" --date-from-query""")
@click.argument("text")
@click.option("--at", "valid_at", metavar="DATE",
              help="Reference date t: what was in force then (required unless the question "
                   "names its date and --date-from-query is given).")
@click.option("--known-at", metavar="DATE", help="Knowledge snapshot (k); default: now.")
@click.option("--k", "k", default=10, show_default=True, type=int, help="How many hits.")
@click.option("--include-superseded", is_flag=True,
              help="Also return passages of versions that had ended by --at, marked, with "
                   "their successor.")
@click.option("--date-from-query", is_flag=True,
              help='Take t from the question ("as of 2015", "in vigore al 3 marzo 2025").')
@click.option("--mode", type=click.Choice(list(MODES)), default="auto", show_default=True,
              help="auto: hybrid when the store has vectors and the model is installed.")
@click.option("--lang", "language", default="en", show_default=True,
              type=click.Choice(["en", "it"]), help="Language of each hit's citation and why.")
@click.option("--now", metavar="DATE", help="Treat this date as today.")
@click.option("--record", is_flag=True, help="Store the admissibility decision.")
@json_option
@scope_option
@click.pass_context
def search(ctx: click.Context, text: str, valid_at: str | None, known_at: str | None, k: int,
           include_superseded: bool, date_from_query: bool, mode: str, language: str,
           now: str | None, record: bool, as_json: bool, scope: tuple[str, ...]) -> None:
    """Passages about TEXT that are admissible on --at as known on --known-at."""
    if valid_at is None and not date_from_query:
        raise click.UsageError("give --at DATE (or --date-from-query for a question that "
                               "names its date)")
    result = open_store(ctx).retrieval.search(
        text, valid_at=valid_at, known_at=known_at, k=k,
        include_superseded=include_superseded, date_from_query=date_from_query,
        mode=mode,  # type: ignore[arg-type]
        now=now, language=language, record=record,
        scope=parse_scope(scope) if scope else ALL_SCOPES,
    )
    if as_json:
        _emit(result.as_dict())
    else:
        print_search(result, known_now=known_at is None)


@cli.command()
@click.option("--embed/--no-embed", default=None,
              help="Embed passages that have no vector for the model (default: when "
                   "vigente[embed] is installed).")
@click.option("--model", "model_id", default=MINILM, show_default=True,
              type=click.Choice(sorted(BUILTIN_MODELS)), help="Embedding model.")
@click.option("--rechunk", is_flag=True, help="Forget every passage and vector and cut again.")
@click.option("--drop-model", metavar="MODEL_ID", multiple=True,
              help="Forget the vectors of a model no longer used (repeatable).")
@json_option
@click.pass_context
def index(ctx: click.Context, embed: bool | None, model_id: str, rechunk: bool,
          drop_model: tuple[str, ...], as_json: bool) -> None:
    """Cut passages for new versions and facts, and embed them (a progress bar on stderr)."""
    vg = open_store(ctx)
    retrieval = vg.retrieval
    dropped = {m: retrieval.drop_vectors(m) for m in drop_model}
    if embed is None:
        embed = embedding_available()
        if not embed and not as_json:
            click.echo("note: vigente[embed] is not installed: indexing for lexical search only")
    embedder = builtin_embedder(model_id) if embed else None
    with progress("embedding" if embedder is not None else "indexing") as step:
        report = retrieval.index(embed=embedder if embedder is not None else False,
                                 rechunk=rechunk, progress=step)
    data = report.as_dict() | {"dropped": dropped}
    if as_json:
        _emit(data)
        return
    click.echo(f"indexed {report.claims_indexed} claim(s), {report.passages_added} new "
               f"passage(s); {report.passages} passage(s) in all")
    if report.model_id:
        click.echo(f"{report.model_id}: {report.vectors_added} embedded, "
                   f"{report.vectors_reused} reused from identical passages")
    for model, count in dropped.items():
        click.echo(f"dropped {count} vector(s) of {model}")
