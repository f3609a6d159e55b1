"""Context assembly commands: ``vigente assemble``, ``vigente explain``, ``vigente policy
show|check`` — thin calls of ``vg.assembly`` (RUNTIME.md §2-3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from vigente.assemble import FORMATS, default_policy, load_policy
from vigente.cli._app import cli, console, open_store, renamed_option
from vigente.runtime import MODES


def _emit(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False))


@cli.command()
@click.option("--conversation", required=True, help="The conversation's id.")
@click.option("--branch", required=True, help="The active branch.")
@click.option("--participant", required=True, help="Whose model request this is.")
@click.option("--mode", type=click.Choice(MODES), default="chat", show_default=True)
@click.option("--provider", help="The model provider (default: the participant's).")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="openai-chat", show_default=True
)
@click.option("--budget", type=click.IntRange(min=1), help="Token budget (default: the policy's).")
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A policy TOML file or a shipped policy's name, e.g. cache-stable (default: "
    "vigente's own, `vigente policy show`).",
)
@click.option(
    "--rehydrate",
    multiple=True,
    metavar="REF",
    help="Ask for the raw evidence of one artifact (repeatable).",
)
@click.option(
    "--known-at", "as_of", metavar="K",
    help="Assemble from the graph as known at K (default: now), as in ask, search, recall.",
)
@renamed_option("--as-of", "--known-at", "as_of")
@click.option(
    "--query", metavar="TEXT",
    help="What the call is about (default: the latest user message): when the history does "
         "not fit, the older records most relevant to it are recalled.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the assembly as JSON.")
@click.pass_context
def assemble(
    ctx: click.Context,
    conversation: str,
    branch: str,
    participant: str,
    mode: str,
    provider: str | None,
    fmt: str,
    budget: int | None,
    policy_file: Path | None,
    rehydrate: tuple[str, ...],
    as_of: str | None,
    query: str | None,
    as_json: bool,
) -> None:
    """Build the next model request of PARTICIPANT on BRANCH from the runtime graph."""
    policy = load_policy(policy_file) if policy_file is not None else None
    result = open_store(ctx).assembly.assemble(
        conversation,
        branch,
        participant,
        mode=mode,
        provider=provider,
        format=fmt,
        budget=budget,
        policy=policy,
        rehydrate=rehydrate,
        as_of=as_of,
        query=query,
    )
    data = result.as_dict()
    if as_json:
        _emit(data)
        return
    tok = data["tokens"]
    click.echo(
        f"assembly {result.id}: {len(data['included'])} included, "
        f"{len(data['omitted'])} omitted; {tok['assembled']} tokens "
        f"(replay {tok['replay']}, {tok['encoding']})"
    )
    for d in data["included"]:
        click.echo(f"  + {d['ref']} ({d['kind']}) as {d['as']}  [{d['rule']}]")
    for d in data["omitted"]:
        click.echo(f"  - {d['ref']} ({d['kind']}): {d['reason']}  [{d['rule']}]")
    _print_messages(data["messages"])
    stale = [d for d in data["included"] if d["as"] == "stale_marker"]
    memories = [d for d in data["included"] if d["kind"] == "memory"]
    if as_of is None and memories and len(stale) * 2 >= len(memories):
        last = open_store(ctx).runtime.graph(conversation).as_dict()["records"]
        latest = max((r["known_from"] for r in last), default=None)
        click.echo(
            f"note: {len(stale)} of {len(memories)} memories are stale as of now; to see the "
            f"session as it stood, assemble it as known then: --known-at {latest}", err=True)


def _print_messages(messages: list[dict[str, Any]]) -> None:
    """The request's messages, as the model will read them (rich panels, one per message)."""
    from rich.panel import Panel
    from rich.text import Text

    out = console()
    out.print(f"messages ({len(messages)}):")
    for n, m in enumerate(messages, start=1):
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
        extra = ", ".join(k for k in m if k not in ("role", "content"))
        title = f"{n}. {m.get('role', '?')}" + (f" ({extra})" if extra else "")
        out.print(Panel(Text(content or ""), title=title, title_align="left", expand=False))


@cli.command()
@click.argument("assembly_id")
@click.option("--why-not", "why_not", metavar="REF", help="Why REF did not reach the model.")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Assemble again from the stored snapshot and "
    "policy; report whether the selection matches.",
)
@click.option(
    "--diff",
    "diff_from",
    metavar="BEFORE",
    help="What changed from assembly BEFORE to this one (`explain --diff A B`).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def explain(
    ctx: click.Context,
    assembly_id: str,
    why_not: str | None,
    rebuild: bool,
    diff_from: str | None,
    as_json: bool,
) -> None:
    """What a recorded assembly included and why; why a record was left out."""
    if sum((why_not is not None, rebuild, diff_from is not None)) > 1:
        raise click.UsageError("give one of --why-not, --rebuild, --diff")
    assembly = open_store(ctx).assembly
    if diff_from is not None:
        data = assembly.diff(diff_from, assembly_id)
        if as_json:
            _emit(data)
            return
        click.echo(
            f"{diff_from} -> {assembly_id}: tokens {data['tokens'][0]} -> "
            f"{data['tokens'][1]}" + ("; policy changed" if data["policy_changed"] else "")
        )
        for d in data["added"]:
            click.echo(f"  + {d['ref']} ({d['kind']}) as {d['as']}  [{d['rule']}]")
        for d in data["removed"]:
            click.echo(
                f"  - {d['ref']} ({d['kind']}) was {d['as']}, now {d['after'] or 'not a candidate'}"
            )
        for d in data["changed"]:
            click.echo(f"  ~ {d['ref']} ({d['kind']}) {d['before']} -> {d['after']}")
        return
    if why_not is not None:
        data = assembly.why_not(assembly_id, why_not)
        # a short wire id the request gave a tool call is answered for that call
        ref = why_not if data["ref"] == why_not else f"{why_not} ({data['ref']})"
        if as_json:
            _emit(data)
        elif data["candidate"] and data["reason"] is None:
            click.echo(f"{ref} reached the model as {data.get('included_as')} [{data['rule']}]")
        elif data["candidate"]:
            click.echo(f"{ref} was omitted: {data['reason']} [{data['rule']}]")
        else:
            click.echo(f"{ref}: {data['rule']}")
        return
    if rebuild:
        data = assembly.rebuild(assembly_id)
        if as_json:
            _emit(data)
        else:
            click.echo(
                f"rebuild of {assembly_id} at {data['snapshot']}: "
                + ("matches" if data["matches"] else f"differs in {', '.join(data['differences'])}")
            )
        return
    data = assembly.explain(assembly_id)
    if as_json:
        _emit(data)
        return
    p = data["policy"]
    click.echo(
        f"assembly {assembly_id}: policy {p['id']} v{p['version']} ({p['hash'][:12]}), "
        f"{data['assembler_version']}, snapshot {data['snapshot']}"
    )
    for d in data["included"]:
        click.echo(f"  + {d['ref']} ({d['kind']}) as {d['as']}  [{d['rule']}]")
    for d in data["omitted"]:
        click.echo(f"  - {d['ref']} ({d['kind']}): {d['reason']}  [{d['rule']}]")


@cli.group()
def policy() -> None:
    """Context-assembly policies (TOML): print or validate one."""


@policy.command("show", short_help="A policy (default: vigente's own) with its hash.")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def policy_show(file: Path | None, as_json: bool) -> None:
    """Print a policy (a file, a shipped policy's name such as cache-stable, or by default
    vigente's own) as TOML, with its id, version and hash: what --policy and `policy check`
    read (--json: JSON)."""
    import tomli_w

    pol = load_policy(file) if file is not None else default_policy()
    data = {**pol.summary(), "document": pol.document}
    if as_json:
        _emit(data)
        return
    # TOML, as --policy and `policy check` read it: save it, change it, give it a new version
    click.echo(f"# policy {pol.id} version {pol.version} sha256 {pol.hash}")
    click.echo(tomli_w.dumps(pol.document), nl=False)


@policy.command("check", short_help="Validate a policy file.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def policy_check(file: Path, as_json: bool) -> None:
    """Validate a policy file or a shipped policy's name (exit 1 with the reason when it is
    not valid)."""
    pol = load_policy(file)
    if as_json:
        _emit(pol.summary())
        return
    click.echo(f"ok: policy {pol.id} version {pol.version} sha256 {pol.hash}")


@cli.group()
def scenario() -> None:
    """Scenarios: an event log with `expect` lines, replayed, assembled and checked."""


@scenario.command("run", short_help="Replay FILE, assemble and check expectations.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def scenario_run(file: Path, as_json: bool) -> None:
    """Replay FILE into a fresh in-memory store, assemble each expectation and check it
    (exit 1 when a check fails)."""
    from vigente.assemble.scenario import run_scenario

    result = run_scenario(file)
    if as_json:
        _emit(result.as_dict())
    else:
        for r in result.requests:
            t = r["tokens"]
            click.echo(
                f"{r['name']}: {t['assembled']} tokens (replay {t['replay']}), "
                f"{r['included']} included, {r['omitted']} omitted"
            )
        for f in result.failures:
            click.echo(f"FAIL {f}")
        click.echo(f"{file}: {result.checks - len(result.failures)}/{result.checks} checks pass")
    if not result.passed:
        raise SystemExit(1)
