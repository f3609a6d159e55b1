"""How the runtime makes a memory: the extractor's memory of a successful tool result, and a
memory a caller gives, checked against what it cites (its sources resolved, the values no
source holds kept as the writer's assertion, its supersession and conflict links, its
freshness).

:class:`~vigente.runtime.service.Runtime` writes them (``record_tool_result``,
``record_memory``); the functions here take it for its look-ups inside the write's transaction.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput
from vigente.records.runtime import (
    FRESHNESS,
    PRIVACY,
    VISIBILITY,
    ContentRef,
    Link,
    RuntimeRecord,
    ToolArtifact,
    ToolMemory,
    UserMemory,
)
from vigente.runtime.arguments import one_of, string_list, utf8_text
from vigente.runtime.artifact_memory import decodes_to, parse_exact, reading, unheld
from vigente.runtime.redact import (
    redact_bytes,
    redact_extraction,
    redact_value,
)
from vigente.runtime.stated import held_by, unsupported
from vigente.time import MAX_MICROS, Instant, TimeLike

if TYPE_CHECKING:
    from vigente.runtime.service import Runtime
    from vigente.runtime.user_memory import FactStatements

__all__ = ["account_facts", "checked_references", "derived_memory", "memory_links",
           "memory_source", "stale_until", "supersession", "tool_memory", "user_memory"]

_SOURCE_KINDS = ("artifact", "tool_call", "memory", "user_memory", "message")


def stale_until(stale_after: Mapping[str, _dt.timedelta | None], freshness: str,
                observed: Instant) -> Instant | None:
    """When a memory of ``freshness`` observed at ``observed`` goes stale (None: never)."""
    delta = stale_after.get(freshness)
    if delta is None:
        return None
    micros = observed.micros + delta // _dt.timedelta(microseconds=1)
    # past the last readable instant it never goes stale within the range: no end
    return None if micros > MAX_MICROS else Instant(micros)


# -- the extractor's memory of a result ----------------------------------------------------
def derived_memory(rt: Runtime, artifact: ToolArtifact, arguments: bytes, result: bytes
                   ) -> ToolMemory | None:
    """The memory ``rt``'s extractor derives from a successful result (None: it derives
    none)."""
    shown_args, in_args = redact_bytes(arguments, artifact.arguments_ref.encoding, "arguments")
    shown_result, in_result = redact_bytes(result, artifact.result_ref.encoding)
    with reading(result):  # the result is parsed once, for all three
        extraction = rt.extractor.extract(artifact.tool_name, artifact.status,
                                          arguments, result)
        if extraction is None:
            return None
        parsed = parse_exact(result)
        # a memory is model-facing (runtime/redact.py; the artifact keeps the raw bytes): its
        # facts are read from the result as it was (a `KEY=sk_live_…` line parses as the
        # result wrote it), each value redacted; its summary and notes are written from the
        # arguments and result with their credentials taken out
        shown = None
        if in_args or in_result:
            shown = rt.extractor.extract(artifact.tool_name, artifact.status, shown_args,
                                         shown_result) or extraction
        extraction, found = redact_extraction(extraction, shown)
        redactions = tuple(dict.fromkeys((*in_result, *in_args, *found)))
        lossless = (bool(extraction.facts) and not redactions
                    and decodes_to(extraction.facts, result))
    freshness = "scoped"
    form = None if parsed is None else "object" if isinstance(parsed[0], dict) else "value"
    return ToolMemory(
        artifact.conversation_id, f"{artifact.id}#memory", artifact.known_from,
        summary=extraction.summary, sources=(artifact.id,),
        source_tools=(artifact.tool_name,), facts=extraction.facts,
        branch_id=artifact.branch_id, participant_id=artifact.participant_id,
        run_id=artifact.run_id, confidence=extraction.confidence,
        confidence_source=rt.extractor.name if extraction.confidence is not None else None,
        confidence_reason=extraction.confidence_reason,
        ambiguity_notes=extraction.ambiguity_notes, limit_notes=extraction.limit_notes,
        privacy=artifact.privacy, visibility=artifact.visibility, freshness=freshness,
        observed_at=artifact.known_from,
        stale_after=stale_until(rt.stale_after, freshness, artifact.known_from),
        revalidate_with=(artifact.tool_name,), provenance=(f"artifact:{artifact.id}",),
        resolution_status=artifact.status, extractor=rt.extractor.name,
        anchor=artifact.anchor, form=form,
        # a memory with a credential taken out is not the result as it was
        lossless=lossless,
        redactions=tuple(r.as_dict() for r in redactions),
    )


# -- a memory the caller gives -------------------------------------------------------------
def checked_references(memory: str, kind: str, record_as_fact: bool,
                       sources: Sequence[str], supersedes: Sequence[str],
                       conflicts_with: Sequence[str]
                       ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A memory's ``sources``, ``supersedes`` and ``conflicts_with`` as tuples, checked before
    anything is read: its kind, at least one source, no memory naming itself."""
    one_of("memory kind", kind, ("tool", "user"))
    if not isinstance(record_as_fact, bool):
        raise InvalidInput(f"record_as_fact must be true or false, got {record_as_fact!r}")
    if record_as_fact and kind != "user":
        raise InvalidInput('record_as_fact is for user memories (kind "user"): a tool '
                           "memory's facts stay in its conversation")
    sources = string_list("sources", sources)
    supersedes = string_list("supersedes", supersedes)
    conflicts_with = string_list("conflicts_with", conflicts_with)
    if not sources:
        raise InvalidInput("a memory needs at least one source (call, artifact or memory "
                           "id): provenance is what makes it verifiable")
    for name, ids in (("supersede", supersedes), ("conflict with", conflicts_with)):
        if memory in ids:
            raise InvalidInput(f"memory {memory!r} cannot {name} itself: name an earlier "
                               "memory")
    return sources, supersedes, conflicts_with


def memory_source(rt: Runtime, conversation: str, source: str, kind: str) -> RuntimeRecord:
    """The record a memory's ``source`` id names: a call stands for its latest result; a user
    memory comes from the user's messages (or user memories) only."""
    found = rt._find(conversation, _SOURCE_KINDS, record_ids=[source])
    if not found:
        rt._one(conversation, _SOURCE_KINDS, source, "source",
                "a memory cites calls, artifacts, memories or messages recorded before it")
    by_kind = {r.kind: r for r in found}
    if kind == "user":
        record = by_kind.get("message") or by_kind.get("user_memory")
        if record is None or (record.kind == "message" and record.payload["role"] != "user"):
            raise InvalidInput(
                f"source {source!r} is tool or assistant output: a user memory comes from the "
                "user's own messages only (record a tool memory instead)")
        return record
    if "tool_call" in by_kind and "artifact" not in by_kind:
        artifacts = rt._find(conversation, ["artifact"], target_ids=[source])
        if artifacts:
            return artifacts[-1]
    return (by_kind.get("artifact") or by_kind.get("tool_call") or by_kind.get("memory")
            or by_kind.get("user_memory") or by_kind["message"])


def account_facts(rt: Runtime, conversation: str, facts: Mapping[str, Any], k: Instant, *,
                  stamped: bool, observed_at: TimeLike | None, speaker: str | None = None
                  ) -> tuple[Instant, FactStatements]:
    """The knowledge time of a user memory recorded as facts of the conversation's account
    (``stamped``: the caller gave no time) and the kernel statements it will make
    (``runtime/user_memory.py``)."""
    from vigente.runtime.user_memory import fact_statements, fact_time

    for key, value in facts.items():  # a statement is read by every model that asks
        found = redact_value(value, str(key))[1]
        if found:
            raise InvalidInput(
                f"fact {key!r} holds a credential ({found[0].rule}): a credential is never "
                "recorded as an account's fact; leave it out, or record the memory without "
                "record_as_fact")
    (home,) = rt.store.runtime_conversations(ids=[conversation])
    k = fact_time(rt.store, home.account, list(facts), k, stamped=stamped, speaker=speaker)
    return k, fact_statements(
        home.account, facts, known_at=k,
        valid_from=k if observed_at is None else rt.instant(observed_at), speaker=speaker)


def supersession(rt: Runtime, conversation: str, memory: str, kind: str,
                 resolved: list[RuntimeRecord], facts: Mapping[str, Any] | None,
                 summary: str, supersedes: tuple[str, ...]
                 ) -> tuple[tuple[str, ...], tuple[dict[str, str], ...], tuple[str, ...]]:
    """What a tool memory asserts (the paths of its facts that no source holds, and
    ``summary`` when its summary states a value no source holds), the summary's values no
    source holds (``runtime/stated.py``: kind, value, reason), and the extractor's memories
    it replaces beyond those it names: none when it asserts anything, for a writer's claim
    never replaces a reading."""
    if kind != "tool":
        return (), (), _replaced_extractions(rt, conversation, resolved, supersedes)
    results = _source_results(rt, conversation, resolved)
    asserted = _unheld_facts(results, dict(facts or {}))
    tools = [str(r.payload.get("tool_name") or r.payload.get("name") or "")
             for r in resolved if r.kind in ("artifact", "tool_call")]
    claims = tuple(unsupported(summary, held_by(results, tools))) if summary else ()
    if claims:
        asserted += ("summary",)
    if asserted:
        _no_replacing(rt, conversation, memory, supersedes, asserted, claims)
        return asserted, claims, ()
    return asserted, claims, _replaced_extractions(rt, conversation, resolved, supersedes)


def _source_results(rt: Runtime, conversation: str, resolved: list[RuntimeRecord]
                    ) -> list[bytes | None]:
    """The raw results a memory's sources stand for: an artifact's own, a memory's sources'
    (followed down to their artifacts); a message or an unanswered call holds no tool
    value."""
    results: list[bytes | None] = []
    seen: set[str] = set()
    todo = list(resolved)
    while todo:
        r = todo.pop(0)
        if r.record_id in seen:
            continue
        seen.add(r.record_id)
        if r.kind == "artifact":
            ref = ContentRef.from_dict(r.payload["result_ref"])
            results.append(rt.store.runtime_content(conversation, ref.sha256))
        elif r.kind == "memory":
            for s in r.payload.get("sources", ()):
                found = rt._find(conversation, ["artifact", "memory"], record_ids=[s])
                todo.extend(found[-1:])
    return results


def _unheld_facts(results: list[bytes | None], facts: dict[str, Any]) -> tuple[str, ...]:
    """The paths of ``facts`` that no source's raw result holds exactly."""
    if not facts:
        return ()
    unheld_by = [unheld(facts, data) for data in results] or [unheld(facts, None)]
    common = set.intersection(*(set(u) for u in unheld_by))
    return tuple(p for p in unheld_by[0] if p in common)


def _no_replacing(rt: Runtime, conversation: str, memory: str, supersedes: tuple[str, ...],
                  asserted: tuple[str, ...], claims: tuple[dict[str, str], ...]) -> None:
    """A memory holding values its sources do not hold may not supersede an extractor's
    memory of a result: the reading stays, the claim goes beside it, labelled."""
    what = [p for p in asserted if p != "summary"]
    what += [f"{c['kind']} {c['value']!r} in its summary" for c in claims[:5]]
    if len(claims) > 5:
        what.append(f"{len(claims) - 5} more values in its summary")
    for r in rt._find(conversation, ["memory"], record_ids=list(supersedes)):
        if r.payload.get("extractor") is not None:
            raise InvalidInput(
                f"memory {memory!r} holds {', '.join(what)}, a value its sources do not "
                f"hold, so it cannot supersede {r.record_id!r} (the extractor's reading of "
                "the tool result): drop it from `supersedes` (the memory then goes to the "
                "model labelled as your assertion), or give only values the result holds")


def _replaced_extractions(rt: Runtime, conversation: str, resolved: list[RuntimeRecord],
                          given: tuple[str, ...]) -> tuple[str, ...]:
    """The extractor's memories of the artifacts a given memory is about: the caller's
    memory replaces them (an explicit, recorded supersession, not an overwrite)."""
    ids = [f"{r.record_id}#memory" for r in resolved if r.kind == "artifact"]
    if not ids:
        return ()
    found = rt._find(conversation, ["memory"], record_ids=ids)
    replaced = {r.target_id for r in rt._find(
        conversation, ["link"], target_ids=[r.record_id for r in found])
        if r.payload["relation"] == "supersedes"}
    return tuple(r.record_id for r in found
                 if r.record_id not in given and r.record_id not in replaced)


def memory_links(conversation: str, memory: str, k: Instant, supersedes: tuple[str, ...],
                 conflicts_with: tuple[str, ...], implicit: tuple[str, ...]) -> list[Link]:
    """The links a memory records: those it names (``supersedes``, ``conflicts_with``), then
    the supersessions it implies (``implicit``)."""
    links = [Link(conversation, f"{memory}>supersedes>{m}", k, "supersedes", memory, m)
             for m in supersedes]
    links += [Link(conversation, f"{memory}>conflicts_with>{m}", k, "conflicts_with",
                   memory, m) for m in conflicts_with]
    links += [Link(conversation, f"{memory}>supersedes>{m}", k, "supersedes", memory, m)
              for m in implicit]
    return links


def memory_speaker(memory: str, resolved: Sequence[RuntimeRecord]) -> str | None:
    """Who stated a user memory: the one speaker of the messages (and user memories) it
    cites, or None when they name nobody. A memory citing what two people said is refused:
    in a group chat "my name is Ana" is Ana's, not the role's."""
    named = {str(r.payload["speaker"]) for r in resolved if r.payload.get("speaker")}
    if len(named) > 1:
        raise InvalidInput(
            f"user memory {memory!r} cites messages of {', '.join(sorted(map(repr, named)))}: "
            "a user memory states what one person said: record one memory per speaker")
    return next(iter(named), None)


def user_memory(conversation: str, memory: str, k: Instant, summary: str,
                sources: tuple[str, ...], facts: Mapping[str, Any] | None,
                owner: RuntimeRecord, privacy: str | None, visibility: str | None,
                supersedes: tuple[str, ...], speaker: str | None = None) -> UserMemory:
    """A user memory: of privacy ``user`` and visible to the whole conversation unless the
    caller says otherwise; ``speaker``: who stated it (:func:`memory_speaker`)."""
    return UserMemory(
        conversation, memory, k, utf8_text("summary", summary), sources,
        dict(facts or {}), owner.branch_id, None,
        one_of("privacy", privacy or "user", PRIVACY),
        one_of("visibility", visibility or "conversation", VISIBILITY),
        supersedes, speaker=speaker)


def tool_memory(rt: Runtime, conversation: str, memory: str, k: Instant,
                resolved: list[RuntimeRecord], owner: RuntimeRecord, summary: str,
                facts: Mapping[str, Any] | None, freshness: str | None,
                observed_at: TimeLike | None, stale_after: TimeLike | None,
                revalidate_with: Sequence[str] | None, confidence: float | None,
                confidence_source: str | None, confidence_reason: str | None,
                supersedes: tuple[str, ...], conflicts_with: tuple[str, ...],
                privacy: str | None, visibility: str | None, writer: str,
                asserted: tuple[str, ...], claims: tuple[dict[str, str], ...] = ()
                ) -> ToolMemory:
    """A tool memory: as private as its strictest source, owned and placed as its first
    owned source, revalidated with its sources' tools unless told otherwise."""
    fresh = one_of("freshness", freshness or "scoped", FRESHNESS)
    observed = k if observed_at is None else rt.instant(observed_at)
    if stale_after is None:
        stale = stale_until(rt.stale_after, fresh, observed)
    else:
        stale = rt.instant(stale_after)
    if confidence is not None and not (isinstance(confidence, int | float)
                                       and 0 <= confidence <= 1):
        raise InvalidInput("confidence must be a number between 0 and 1")
    tools = tuple(dict.fromkeys(
        str(r.payload.get("tool_name") or r.payload.get("name"))
        for r in resolved if r.kind in ("artifact", "tool_call")))
    levels = [r.payload.get("privacy", "public") for r in resolved]
    strictest = max(levels, key=PRIVACY.index) if levels else "public"
    return ToolMemory(
        conversation, memory, k, summary=utf8_text("summary", summary),
        sources=tuple(r.record_id for r in resolved), source_tools=tools,
        facts=dict(facts or {}), branch_id=owner.branch_id,
        participant_id=owner.participant_id, run_id=owner.run_id,
        confidence=None if confidence is None else float(confidence),
        confidence_source=confidence_source, confidence_reason=confidence_reason,
        privacy=one_of("privacy", privacy or strictest, PRIVACY),
        visibility=one_of("visibility", visibility or (owner.visibility or "participant"),
                          VISIBILITY),
        freshness=fresh, observed_at=observed, stale_after=stale,
        revalidate_with=string_list("revalidate_with", revalidate_with) or tools,
        provenance=tuple(f"{r.kind}:{r.record_id}" for r in resolved),
        supersedes=supersedes, conflicts_with=conflicts_with,
        anchor=owner.position if owner.branch_id is not None else None,
        writer=writer, asserted=asserted, unsupported=claims,
    )
