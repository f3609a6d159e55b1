"""The reads the assembler and the surfaces need: branch ancestry, a participant's candidates
at a knowledge time, the whole graph as it was known, the transcript, artifact contents.

Every read takes ``known_at`` (default: now) and sees only records known by then, so a read at
``k`` returns the same graph whatever is appended later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput
from vigente.records.runtime import (
    Branch,
    ContentRef,
    Conversation,
    Message,
    ModelRun,
    RuntimeRecord,
    ToolArtifact,
    from_record,
)
from vigente.runtime.redact import redact_record, redact_text
from vigente.time import (
    Instant,
    TimeLike,
    check_not_ahead,
    current_instant,
    parse_instant,
    to_instant,
)

if TYPE_CHECKING:
    from vigente.retrieval.embed import Embedder
    from vigente.runtime.recall import RecallResult
    from vigente.store.base import Store

__all__ = ["CONTENT_FIELDS", "CONTEXT_KINDS", "Candidate", "Candidates", "Graph", "RuntimeReads",
           "group_key", "index_row"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record the participant may see, and how it reached it: ``own``, ``branch`` (visible
    to the branch, possibly inherited through a fork), ``conversation``, ``shared``,
    ``promoted``. Memories carry their links as known at the read; calls their status."""

    node: Any
    reach: str
    superseded_by: tuple[str, ...] = ()
    conflicts_with: tuple[str, ...] = ()
    stale: bool = False
    status: str | None = None


@dataclass(frozen=True, slots=True)
class Candidates:
    """What one participant may see on a branch at ``known_at`` (``records``, in graph
    order) and the records it reached that policy keeps from a model (``hidden``: record and
    reason, ``audit_only`` or ``not_promoted``)."""

    conversation: str
    branch: str
    participant: str
    known_at: Instant
    ancestry: tuple[tuple[str, int | None], ...]
    records: tuple[Candidate, ...]
    hidden: tuple[tuple[Any, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Graph:
    """Every record of a conversation known at ``known_at``, typed, in graph order, with the
    links and statuses derived from later records (as known then)."""

    conversation: Conversation
    known_at: Instant
    nodes: tuple[Any, ...]
    call_status: dict[str, str] = field(default_factory=dict)
    superseded_by: dict[str, tuple[str, ...]] = field(default_factory=dict)
    conflicts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    shared_with: dict[str, tuple[str, ...]] = field(default_factory=dict)
    promoted: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Any]:
        return [n for n in self.nodes if n.KIND == kind]

    def as_dict(self, *, content: bool = True) -> dict[str, Any]:
        """The graph as an API client reads it: every record with its links and statuses,
        each text and value as a model may see it (runtime/redact.py: no credential; the raw
        artifact bytes are never here). ``content=False``: the structure only — no message
        text, call arguments, memory summary, facts or notes, checkpoint state."""
        from vigente.records.runtime import to_record

        def plain(node: Any) -> dict[str, Any]:
            shown, _ = redact_record(node)
            r = to_record(shown)
            row = {"kind": r.kind, "id": r.record_id, "known_from": r.known_from.isoformat(),
                   "seq": r.seq}
            for name in ("branch_id", "participant_id", "run_id", "target_id", "visibility"):
                if getattr(r, name) is not None:
                    row[name] = getattr(r, name)
            payload = dict(r.payload)
            if not content:
                for name in CONTENT_FIELDS.get(r.kind, ()):
                    payload.pop(name, None)
            row.update(payload)
            if r.kind == "tool_call":
                row["status"] = self.call_status.get(r.record_id, "pending")
            if r.kind in ("memory", "user_memory"):
                row["superseded_by"] = list(self.superseded_by.get(r.record_id, ()))
                row["conflicts"] = list(self.conflicts.get(r.record_id, ()))
                stale = getattr(node, "stale_after", None)
                row["stale"] = stale is not None and self.known_at >= stale
            if r.record_id in self.shared_with:
                row["shared_with"] = list(self.shared_with[r.record_id])
            if r.record_id in self.promoted:
                row["promoted_as"] = list(self.promoted[r.record_id])
            return row

        c = self.conversation
        title = None if c.title is None else redact_text(c.title, "title")[0]
        return {"conversation": {"id": c.id, "account": c.account, "title": title,
                                 "known_from": c.known_from.isoformat()},
                "known_at": self.known_at.isoformat(),
                "records": [plain(n) for n in self.nodes]}


#: The fields of each kind that hold content (text or values a tool, a model or a user
#: wrote), left out of a graph read with ``content=False``.
CONTENT_FIELDS: dict[str, tuple[str, ...]] = {
    "message": ("content",),
    "tool_call": ("arguments",),
    "memory": ("summary", "facts", "limit_notes", "ambiguity_notes"),
    "user_memory": ("summary", "facts", "limit_notes", "ambiguity_notes"),
    "checkpoint": ("state",),
}

#: The records an assembly decides on (the rest is structure: participants, branches, runs,
#: links, shares, promotions), each a row of the store's read index.
CONTEXT_KINDS = ("message", "tool_call", "artifact", "memory", "user_memory", "skill_state",
                 "checkpoint")
_BATCH = 5_000

#: The records a participant reaches, by ``seq``: each with how it reached them.
_Rows = dict[int, tuple[RuntimeRecord, str]]


def group_key(branch: str | None, participant: str | None, visibility: str | None) -> str:
    """The read index's group of a record: its branch, owner and visibility."""
    return "\x1f".join((branch or "", participant or "", visibility or ""))


def _flag(r: RuntimeRecord) -> str:
    """The protected-state class an assembly looks a record up by ('' for none)."""
    if r.kind == "message":
        return {"system": "instruction", "user": "user"}.get(r.payload.get("role", ""), "")
    if r.kind == "artifact":
        troubled = r.payload.get("status") in ("failed", "deferred") or bool(
            r.payload.get("retry_critical"))
        return "troubled" if troubled else ""
    if r.kind in ("skill_state", "checkpoint"):
        return r.kind
    return ""


def index_row(r: RuntimeRecord) -> tuple[Any, ...]:
    """A record as a row of the store's read index (see :class:`~vigente.store.base.Store`)."""
    group = None if r.kind == "artifact" else group_key(r.branch_id, r.participant_id,
                                                         r.visibility)
    return (r.seq, r.kind, r.record_id, r.target_id, r.branch_id or "", group,
            r.known_from.micros, _flag(r))


def _reach(r: RuntimeRecord, windows: dict[str, int | None], participant: str) -> str | None:
    """How a record read by id reaches ``participant`` (as the branch reads above decide),
    or None (grants aside)."""
    if r.visibility == "conversation":
        on = r.branch_id in windows and (windows[r.branch_id] is None
                                         or r.position <= (windows[r.branch_id] or 0))
        return ("own" if r.participant_id == participant else "branch") if on else "conversation"
    if r.branch_id not in windows:
        return None
    upto = windows[r.branch_id]
    if upto is not None and r.position > upto:
        return None
    if r.participant_id == participant:
        return "own"
    return "branch" if r.visibility == "branch" else None


class RuntimeReads:
    """Read methods of :class:`~vigente.runtime.service.Runtime`."""

    store: Store
    default_zone: str | None

    def _at(self, known_at: TimeLike | None) -> Instant:
        """A read's knowledge time: now, or ``known_at`` (never ahead of the store's clock: an
        answer as known in the future would change with every later write)."""
        if known_at is None:
            return current_instant()
        return check_not_ahead(self.instant(known_at), "known_at")

    def instant(self, value: TimeLike) -> Instant:
        """A date, an RFC 3339 timestamp with an offset, or a datetime, as an instant (a naive
        timestamp only with ``default_zone``)."""
        if isinstance(value, str):
            return parse_instant(value, default_zone=self.default_zone)
        return to_instant(value, default_zone=self.default_zone)

    def catch_up_index(self, conversation: str) -> None:
        """Take the records appended since the read index's mark into it (once per record;
        an assembly calls this before it reads the index)."""
        mark, batch = self.store.runtime_records_after_mark(conversation, "index", _BATCH)
        while batch:
            rows = [index_row(r) for r in batch if r.kind in CONTEXT_KINDS]
            with self.store.transaction():
                self.store.append_runtime_index(conversation, rows, batch[-1].seq)
            mark = batch[-1].seq
            batch = self.store.runtime_records_after(conversation, mark, _BATCH)

    def conversation(self, conversation: str) -> Conversation:
        found = self.store.runtime_conversations(ids=[conversation])
        if not found:
            raise InvalidInput(f"unknown conversation {conversation!r}: list them with "
                               "`vigente runtime show` or import an event log first")
        return found[0]

    def conversations(self, account: str | None = None) -> list[Conversation]:
        return self.store.runtime_conversations(account=account)

    def ancestry(self, conversation: str, branch: str, *, known_at: TimeLike | None = None,
                 branches: Sequence[RuntimeRecord] | None = None
                 ) -> list[tuple[str, int | None]]:
        """``(branch, last inherited position)`` from ``branch`` (``None``: all of it) up to
        its root: a branch sees its parent's records up to its fork point only.
        ``branches``: the conversation's branch records known at ``known_at``, when the
        caller has read them (none is read again)."""
        k = self._at(known_at)
        by_id = None if branches is None else {r.record_id: r for r in branches}
        chain: list[tuple[str, int | None]] = []
        upto: int | None = None
        current: str | None = branch
        while current is not None:
            if any(b == current for b, _ in chain):  # cannot happen: parents precede children
                raise InvalidInput(f"branch links of {conversation!r} form a cycle at {current!r}")
            if by_id is None:
                found = self.store.runtime_records(conversation, kinds=["branch"],
                                                   record_ids=[current], known_at=k)
            else:
                found = [by_id[current]] if current in by_id else []
            if not found:
                held = sorted({r.record_id for r in self.store.runtime_records(
                    conversation, kinds=["branch"], known_at=k)})
                raise InvalidInput(f"unknown branch {current!r} in conversation "
                                   f"{conversation!r} (as known at {k}; its branches: "
                                   f"{', '.join(held) or 'none'})")
            node: Branch = from_record(found[0])
            chain.append((current, upto))
            if node.parent is not None:
                fork = node.fork_position if node.fork_position is not None else found[0].seq
                upto = fork if upto is None else min(upto, fork)
            current = node.parent
        return chain

    def candidates(self, conversation: str, branch: str, participant: str, *,
                   known_at: TimeLike | None = None, run: str | None = None,
                   since: int = 0, include: Sequence[str] = (),
                   read: Sequence[RuntimeRecord] | None = None,
                   ancestry: Sequence[tuple[str, int | None]] | None = None,
                   granted: Sequence[RuntimeRecord] | None = None) -> Candidates:
        """What ``participant`` may see on ``branch`` as known at ``known_at``: its own records
        and those visible to the branch along the ancestry (up to each fork point), records
        visible to the whole conversation, and records shared with or promoted to it. A
        subagent child's records reach only that child's runs (``run``) unless promoted.
        Each part is an indexed read, so the cost follows what is returned, not the size of
        the conversation.

        ``since``: only records at ``seq >= since`` (a read horizon), with the calls of the
        results read, and the records ``include`` names (by id, or as a call's results),
        when they are visible. ``read``: the caller has read every record at ``seq >=
        since`` known at ``known_at`` already; the visible ones are taken from it.
        ``ancestry``: the branch's :meth:`ancestry` at ``known_at``, when the caller has it;
        ``granted``: the conversation's share and promotion records known at ``known_at``
        (with ``read``, what reaches the participant through the whole conversation is then
        read from them, not from the store)."""
        k = self._at(known_at)
        chain = (list(ancestry) if ancestry is not None
                 else self.ancestry(conversation, branch, known_at=k))
        rows = self._on_branches(conversation, chain, participant, k, since, read)
        grants = self._add_reachable(conversation, participant, k, since, read, granted, rows)
        if since or include:
            self._add_named(conversation, chain, participant, k, include, rows)
        if grants:
            self._add_granted(conversation, grants, k, rows)
        visible, hidden = self._sort_out(conversation, [rows[s] for s in sorted(rows)], run, k)
        return Candidates(conversation, branch, participant, k, tuple(chain), tuple(visible),
                          tuple(hidden))

    def _on_branches(self, conversation: str, chain: list[tuple[str, int | None]],
                     participant: str, k: Instant, since: int,
                     read: Sequence[RuntimeRecord] | None) -> _Rows:
        """The records visible to ``participant`` along the ancestry, each with its reach
        (``own`` or ``branch``; ``conversation`` too when taken from what the caller has
        ``read``)."""
        rows: _Rows = {}
        if read is None:
            for b, upto in chain:
                for r in self.store.runtime_branch_records(conversation, b, upto, participant,
                                                           k, since):
                    rows[r.seq] = (r, "own" if r.participant_id == participant else "branch")
        else:
            windows = dict(chain)
            for r in read:
                reach = _reach(r, windows, participant) if r.kind in CONTEXT_KINDS else None
                if reach is not None:
                    rows[r.seq] = (r, reach)
        return rows

    def _add_reachable(self, conversation: str, participant: str, k: Instant, since: int,
                       read: Sequence[RuntimeRecord] | None,
                       granted: Sequence[RuntimeRecord] | None, rows: _Rows) -> dict[str, str]:
        """Add to ``rows`` the records visible to the whole conversation; the ids shared with
        or promoted to ``participant``, with how (``shared`` or ``promoted``)."""
        grants: dict[str, str] = {}
        if read is not None and granted is not None:  # as runtime_reachable, from these
            reachable = [*(r for r in read if r.visibility == "conversation"),
                         *(r for r in granted if r.kind in ("share", "promotion")
                           and r.branch_id is None and r.participant_id == participant)]
        else:
            reachable = self.store.runtime_reachable(conversation, participant, k, since)
        for r in reachable:
            if r.kind in ("share", "promotion"):
                assert r.target_id is not None
                grants[r.target_id] = "shared" if r.kind == "share" else "promoted"
            elif r.seq not in rows:  # visible to every branch, fork points regardless
                rows[r.seq] = (r, "conversation")
        return grants

    def _add_named(self, conversation: str, chain: list[tuple[str, int | None]],
                   participant: str, k: Instant, include: Sequence[str], rows: _Rows) -> None:
        """Add to ``rows`` the visible records ``include`` names and the calls of the results
        in ``rows`` (a read from a horizon holds results whose calls came before it)."""
        held = {r.record_id for r, _ in rows.values() if r.kind == "tool_call"}
        wanted: set[str] = set(include) | {
            r.target_id for r, _ in rows.values()
            if r.kind == "artifact" and r.target_id is not None
            and r.target_id not in held}
        if wanted:
            windows = dict(chain)
            for r in self.store.runtime_records(conversation, record_ids=sorted(wanted),
                                                target_ids=sorted(wanted), known_at=k):
                if r.seq in rows or r.kind in ("share", "promotion", "link"):
                    continue
                reach = _reach(r, windows, participant)
                if reach is not None:
                    rows[r.seq] = (r, reach)

    def _add_granted(self, conversation: str, grants: dict[str, str], k: Instant,
                     rows: _Rows) -> None:
        """Add to ``rows`` the records shared with or promoted to the participant (a call's
        grant reaches its results), reached through the grant."""
        for r in self.store.runtime_records(conversation, record_ids=list(grants),
                                            target_ids=list(grants), known_at=k):
            if r.kind in ("share", "promotion", "link"):
                continue
            ref = r.record_id if r.record_id in grants else r.target_id
            assert ref is not None
            rows[r.seq] = (r, grants[ref])  # the grant is what lets it through

    def _sort_out(self, conversation: str, records: list[tuple[RuntimeRecord, str]],
                  run: str | None, k: Instant
                  ) -> tuple[list[Candidate], list[tuple[Any, str]]]:
        """The records reached, in ``seq`` order, as candidates with their links, staleness
        and call status, and those policy keeps from a model (``audit_only``,
        ``not_promoted``)."""
        # the runs, memory links and call results of the records: one read
        calls = [r.record_id for r, _ in records if r.kind == "tool_call"]
        related = self._related(
            conversation, {r.run_id for r, _ in records if r.run_id} | ({run} if run else set()),
            [r.record_id for r, _ in records if r.kind in ("memory", "user_memory")], calls, k)
        runs = self._runs(conversation, related[0], k)
        superseded, conflicts = self._links(related[1])
        status = self._statuses(calls, related[2])
        visible: list[Candidate] = []
        hidden: list[tuple[Any, str]] = []
        for r, reach in records:
            node = from_record(r)
            if r.visibility == "audit":
                hidden.append((node, "audit_only"))
                continue
            if reach not in ("promoted", "shared") and not self._reaches(runs, r.run_id, run):
                hidden.append((node, "not_promoted"))
                continue
            visible.append(Candidate(
                node, reach, superseded.get(r.record_id, ()),
                tuple(dict.fromkeys((*getattr(node, "conflicts_with", ()),
                                     *conflicts.get(r.record_id, ())))),
                bool(getattr(node, "stale_after", None) is not None
                     and k >= node.stale_after),
                status.get(r.record_id)))
        return visible, hidden

    def _related(self, conversation: str, run_ids: set[str], memory_ids: list[str],
                 call_ids: list[str], k: Instant
                 ) -> tuple[list[RuntimeRecord], list[RuntimeRecord], list[RuntimeRecord]]:
        """The run records named, the links targeting these memories and the artifacts
        answering these calls, known at ``k``, each in ``seq`` order: one read."""
        kinds = [kind for kind, ids in (("run", run_ids), ("link", memory_ids),
                                        ("artifact", call_ids)) if ids]  # fmt: skip
        if not kinds:
            return [], [], []
        memories, calls = set(memory_ids), set(call_ids)
        found = self.store.runtime_records(conversation, kinds=kinds,
                                           record_ids=sorted(run_ids) if run_ids else None,
                                           target_ids=[*memory_ids, *call_ids] or None,
                                           known_at=k)
        return ([r for r in found if r.kind == "run" and r.record_id in run_ids],
                [r for r in found if r.kind == "link" and r.target_id in memories],
                [r for r in found if r.kind == "artifact" and r.target_id in calls])

    def _runs(self, conversation: str, found: list[RuntimeRecord], k: Instant
              ) -> dict[str, ModelRun]:
        """The runs read (``found``), with their parent chains (to tell a subagent child's
        records)."""
        runs: dict[str, ModelRun] = {}
        while found:
            wanted: set[str] = set()
            for r in found:
                node: ModelRun = from_record(r)
                runs[node.id] = node
                if node.parent_run and node.parent_run not in runs:
                    wanted.add(node.parent_run)
            found = (self.store.runtime_records(conversation, kinds=["run"],
                                                record_ids=sorted(wanted), known_at=k)
                     if wanted else [])
        return runs

    @staticmethod
    def _reaches(runs: dict[str, ModelRun], owner: str | None, reader: str | None) -> bool:
        """A record of a subagent child run reaches only that run and its own children."""
        if owner is None or owner not in runs or runs[owner].parent_run is None:
            return True
        seen = set()
        while reader is not None and reader not in seen:
            if reader == owner:
                return True
            seen.add(reader)
            reader = runs[reader].parent_run if reader in runs else None
        return False

    @staticmethod
    def _links(links: list[RuntimeRecord]
               ) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """Who supersedes and who contradicts each memory, from the links targeting them."""
        superseded: dict[str, list[str]] = {}
        conflicts: dict[str, list[str]] = {}
        for r in links:
            target = r.target_id
            assert target is not None
            into = superseded if r.payload["relation"] == "supersedes" else conflicts
            into.setdefault(target, []).append(r.payload["source_id"])
        return ({m: tuple(v) for m, v in superseded.items()},
                {m: tuple(v) for m, v in conflicts.items()})

    @staticmethod
    def _statuses(calls: list[str], artifacts: list[RuntimeRecord]) -> dict[str, str]:
        """Each call's status: its latest result's (``pending`` without one)."""
        status = dict.fromkeys(calls, "pending")
        for r in artifacts:
            assert r.target_id is not None
            status[r.target_id] = r.payload["status"]
        return status

    def graph(self, conversation: str, *, known_at: TimeLike | None = None,
              branch: str | None = None) -> Graph:
        """Every record of the conversation known at ``known_at`` (of one branch and what it
        inherits, when ``branch`` is given)."""
        k = self._at(known_at)
        conv = self.conversation(conversation)
        records = self.store.runtime_records(conversation, known_at=k)
        if branch is not None:
            windows = dict(self.ancestry(conversation, branch, known_at=k))
            records = [r for r in records if r.branch_id is None or (
                r.branch_id in windows and (windows[r.branch_id] is None
                                            or r.position <= (windows[r.branch_id] or 0)))]
        status: dict[str, str] = {}
        superseded: dict[str, list[str]] = {}
        conflicts: dict[str, list[str]] = {}
        shared: dict[str, list[str]] = {}
        promoted: dict[str, list[str]] = {}
        for r in records:
            if r.kind == "artifact" and r.target_id:
                status[r.target_id] = r.payload["status"]
            elif r.kind == "link" and r.target_id:
                source = r.payload["source_id"]
                if r.payload["relation"] == "supersedes":
                    superseded.setdefault(r.target_id, []).append(source)
                else:
                    conflicts.setdefault(r.target_id, []).append(source)
                    conflicts.setdefault(source, []).append(r.target_id)
            elif r.kind == "share" and r.target_id and r.participant_id:
                shared.setdefault(r.target_id, []).append(r.participant_id)
            elif r.kind == "promotion" and r.target_id:
                promoted.setdefault(r.target_id, []).append(r.payload["as_"])
        return Graph(conv, k, tuple(from_record(r) for r in records), status,
                     {m: tuple(v) for m, v in superseded.items()},
                     {m: tuple(dict.fromkeys(v)) for m, v in conflicts.items()},
                     {m: tuple(v) for m, v in shared.items()},
                     {m: tuple(v) for m, v in promoted.items()})

    def recall(self, query: str, *, conversation: str | None = None,
               account: str | None = None, branch: str | None = None,
               participant: str | None = None, known_at: TimeLike | None = None,
               k: int = 10, mode: str = "auto", embedder: Embedder | None = None
               ) -> RecallResult:
        """The records of one conversation (or all of an account's) most relevant to
        ``query`` as known at ``known_at`` (RUNTIME.md section 4; vigente.runtime.recall):
        with ``branch`` and ``participant``, only what that participant could see there."""
        from vigente.runtime.recall import Recall

        return Recall(self, embedder=embedder).recall(
            query, conversation=conversation, account=account, branch=branch,
            participant=participant, known_at=known_at, k=k, mode=mode)

    def transcript(self, conversation: str, branch: str, *,
                   known_at: TimeLike | None = None) -> list[Message]:
        """The user-visible projection of a branch: its messages and those it inherits, in
        order; runtime records never appear in it (nor a subagent child's own messages). Each
        message as a client may read it: no credential (runtime/redact.py)."""
        k = self._at(known_at)
        self.conversation(conversation)
        messages: list[Message] = []
        for b, upto in self.ancestry(conversation, branch, known_at=k):
            for r in self.store.runtime_records(conversation, kinds=["message"], known_at=k):
                if r.branch_id == b and (upto is None or r.seq <= upto) \
                        and r.visibility == "branch":
                    messages.append(redact_record(from_record(r))[0])
        return sorted(messages, key=lambda m: m.seq)

    def artifacts(self, artifact: str, *, conversation: str | None = None) -> list[ToolArtifact]:
        """The artifacts kept for a call id (every result of it, in order)."""
        homes = sorted({c for c, kind in self.store.runtime_record_homes(artifact)
                        if kind == "artifact"})
        if conversation is None:
            if len(homes) > 1:
                raise InvalidInput(f"artifact {artifact!r} exists in conversations "
                                   f"{', '.join(homes)}: name one with --conversation")
            if not homes:
                base = artifact.split("@")[0]
                homes = sorted({c for c, kind in self.store.runtime_record_homes(base)
                                if kind == "tool_call"})[:1]
            conversation = homes[0] if homes else None
        if conversation is None:
            raise InvalidInput(f"unknown artifact {artifact!r}: artifacts share their call's id")
        found = self.store.runtime_records(conversation, kinds=["artifact"],
                                           record_ids=[artifact], target_ids=[artifact])
        if not found:
            raise InvalidInput(f"unknown artifact {artifact!r} in conversation "
                               f"{conversation!r}: artifacts share their call's id")
        return [from_record(r) for r in found]

    def content(self, conversation: str, ref: ContentRef) -> bytes | None:
        """The raw bytes a :class:`ContentRef` of ``conversation`` names (inline or from the
        blob store), or ``None`` when retention erased them."""
        return self.store.runtime_content(conversation, ref.sha256)

    def artifact_content(self, artifact: ToolArtifact, *, part: str = "result") -> bytes:
        """The raw bytes kept for an artifact's ``result`` or ``arguments``."""
        ref = artifact.result_ref if part == "result" else artifact.arguments_ref
        data = self.content(artifact.conversation_id, ref)
        if data is None:
            raise InvalidInput(f"the raw {part} of artifact {artifact.id!r} was erased by "
                               f"retention; its sha256 {ref.sha256} and size ({ref.bytes} "
                               "bytes) are kept")
        return data
