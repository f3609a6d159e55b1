"""``vigente recall``: what the runtime holds, most relevant first, as known at K (RUNTIME.md
section 4) — a thin call of ``vg.runtime.recall``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from vigente.cli._app import cli, console, open_store
from vigente.errors import ImportFileError, InvalidInput
from vigente.jsonl import json_objects, read_lines
from vigente.runtime.recall import RECALL_MODES, RecallResult

_QUERY_KEYS = ("query", "conversation", "account", "known_at", "k", "branch", "participant",
               "mode")


def _snippet(text: str, limit: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _print(result: RecallResult) -> None:
    out = console()
    out.print(f"[bold]{len(result.hits)} hit(s)[/] · {result.mode} · "
              f"known at {result.known_at.isoformat()}", markup=True)
    if result.hits:
        table = Table("#", "score", "ref", "kind", "at", "text")
        for n, h in enumerate(result.hits, start=1):
            table.add_row(str(n), f"{h.score:.4f}", f"{h.conversation}/{h.ref}",
                          f"{h.kind} ({h.speaker})", h.at.isoformat(), _snippet(h.text))
        out.print(table)
    for note in result.notes:
        out.print(f"note: {note}", markup=False)


def _request(number: int, line: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(line) - set(_QUERY_KEYS))
    if unknown:
        raise ImportFileError(number, f"unknown key {unknown[0]!r}: a query line holds "
                              f"{', '.join(_QUERY_KEYS)}")
    if not isinstance(line.get("query"), str):
        raise ImportFileError(number, 'each line needs "query": the words to look for')
    for key in ("conversation", "account", "known_at", "branch", "participant", "mode"):
        if line.get(key) is not None and not isinstance(line[key], str):
            raise ImportFileError(number, f"{key!r} must be a string")
    if "k" in line and (isinstance(line["k"], bool) or not isinstance(line["k"], int)):
        raise ImportFileError(number, '"k" must be a whole number')
    request = {**defaults, **{k: v for k, v in line.items() if v is not None}}
    if "conversation" in line or "account" in line:  # the line's scope replaces the default
        for key in ("conversation", "account"):
            if key not in line:
                request.pop(key, None)
    return request


@cli.command(epilog="""\b
Examples:
  vigente recall "where does the user live" --conversation c1 --json
  vigente recall "what did I say about trains last week" --account acct --k 5
  vigente recall --queries questions.jsonl --account acct --json""")
@click.argument("query", required=False)
@click.option("--conversation", help="Search one conversation.")
@click.option("--account", help="Search all of an account's conversations together.")
@click.option("--branch", help="With --participant: only what that participant could see on "
                               "this branch.")
@click.option("--participant", help="With --branch: whose view to search.")
@click.option("--known-at", metavar="K", help="Only records known at K (default: now).")
@click.option("--k", "k", default=10, show_default=True, type=int, help="How many hits.")
@click.option("--mode", type=click.Choice(list(RECALL_MODES)), default="auto",
              show_default=True, help="auto: words and meaning when the embedding model is "
                                      "installed, words only otherwise.")
@click.option("--queries", "queries_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Many queries: one JSON object per line in, one answer per line out.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.pass_context
def recall(ctx: click.Context, query: str | None, conversation: str | None,
           account: str | None, branch: str | None, participant: str | None,
           known_at: str | None, k: int, mode: str, queries_file: Path | None,
           as_json: bool) -> None:
    """Messages, memories and tool results most relevant to QUERY, as known at K."""
    if (query is None) == (queries_file is None):
        raise click.UsageError("give a QUERY or --queries FILE (one of them)")
    runtime = open_store(ctx).runtime
    given = (("conversation", conversation), ("account", account), ("branch", branch),
             ("participant", participant), ("known_at", known_at), ("k", k), ("mode", mode))
    defaults: dict[str, Any] = {key: v for key, v in given if v is not None}
    if queries_file is not None:
        requests = [_request(n, line, defaults)
                    for n, line in json_objects(read_lines(queries_file))]
        for n, request in enumerate(requests, start=1):
            try:
                answer = runtime.recall(request.pop("query"), **request)
            except InvalidInput as exc:
                raise InvalidInput(f"query {n}: {exc}") from None
            click.echo(json.dumps(answer.as_dict(), ensure_ascii=False))
        return
    assert query is not None
    result = runtime.recall(query, **defaults)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    else:
        _print(result)
