"""The calls an agent loop makes: ``vg.runtime``.

Every write is one transaction (nested calls join the caller's, so an import is one) and is
appended with the time it became known (``at``; default: now). Knowledge never goes back within a
conversation: a record known earlier than what the conversation already holds is refused, so a
read at ``k`` never changes when later records arrive. References are checked before anything is
written: an unknown or foreign id, a result on another branch, a second result, a branch cycle,
a self-superseding memory are refused with what to do instead.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vigente import telemetry
from vigente.errors import FutureKnowledgeError, InvalidInput, RuntimeHistoryConflict
from vigente.records.runtime import (
    MODES,
    PRIVACY,
    PROMOTION_AS,
    STATUSES,
    VISIBILITY,
    Branch,
    ContentRef,
    ContinuationCheckpoint,
    Conversation,
    Message,
    ModelRun,
    Node,
    Participant,
    Promotion,
    RuntimeRecord,
    Share,
    SkillState,
    ToolArtifact,
    ToolCall,
    ToolDeclaration,
    ToolMemory,
    UserMemory,
    from_record,
    to_record,
)
from vigente.records.values import Scope, check_name
from vigente.runtime import memories
from vigente.runtime.arguments import one_of, string_list, utf8_text
from vigente.runtime.artifact_memory import DefaultExtractor, Extractor
from vigente.runtime.content import (
    COUNT_AT_IMPORT,
    INLINE_LIMIT,
    TokenCounter,
    raw_bytes,
    reference,
    replay_text,
)
from vigente.runtime.reader import RuntimeReads
from vigente.runtime.speakers import check_speaker
from vigente.runtime.trust import check_names
from vigente.store.base import Store
from vigente.time import Instant, TimeLike, check_not_ahead, current_instant

if TYPE_CHECKING:
    from vigente.retrieval.embed import Embedder
    from vigente.runtime.events import RuntimeImportReport
    from vigente.runtime.retention import GCReport, PurgeReport
    from vigente.runtime.user_memory import UserMemoryExtraction, UserMemoryExtractor

__all__ = ["DEFAULT_STALE_AFTER", "Runtime"]

#: How long a memory of each freshness class stays current after it was observed.
DEFAULT_STALE_AFTER: dict[str, _dt.timedelta | None] = {
    "volatile": _dt.timedelta(hours=1),
    "session": _dt.timedelta(hours=24),
    "scoped": _dt.timedelta(days=7),
    "durable": _dt.timedelta(days=90),
    "permanent": None,
}
_FINAL = ("succeeded", "failed")
_NO_SCOPE = Scope.of(None)
_REFERABLE = ("message", "run", "tool_call", "artifact", "memory", "user_memory",
              "skill_state", "checkpoint")


class _Unit:
    """What one runtime transaction has written, so that an import into a conversation it
    created answers its own look-ups without asking the database again."""

    def __init__(self) -> None:
        self.fresh: set[str] = set()  # conversations created in this transaction
        self.conversations: set[str] = set()  # conversations known to exist
        self.latest: dict[str, Instant | None] = {}
        self.by_id: dict[tuple[str, str], list[RuntimeRecord]] = {}
        self.by_target: dict[tuple[str, str], list[RuntimeRecord]] = {}
        self.by_run: dict[tuple[str, str], list[RuntimeRecord]] = {}
        self.written: dict[str, None] = {}  # conversations appended to, in order

    def add(self, record: RuntimeRecord) -> None:
        c = record.conversation_id
        self.written[c] = None
        self.by_id.setdefault((c, record.record_id), []).append(record)
        if record.target_id is not None:
            self.by_target.setdefault((c, record.target_id), []).append(record)
        if record.run_id is not None:
            self.by_run.setdefault((c, record.run_id), []).append(record)
        latest = self.latest.get(c)
        if c in self.latest and (latest is None or record.known_from > latest):
            self.latest[c] = record.known_from


class Runtime(RuntimeReads):
    """The agent runtime graph over one :class:`Store` (composed by ``Vigente.runtime``).

    ``inline_limit``: raw contents up to this many bytes stay in the database, larger ones go
    to the blob store. ``stale_after``: the freshness classes' defaults. ``extractor`` derives
    a memory from each successful result the caller gives no memory for. ``token_counters``:
    the encodings in which a result over ``count_above`` bytes has its tokens counted when it
    is recorded (kept beside its bytes, read by the assembler's transcript-replay count
    instead of tokenizing the result again); none: the assembler counts it on first need.
    Every transaction writes the recall index rows of what it appended (``_index``);
    ``index_embedder``: also their vectors of that model, once it has committed.
    """

    def __init__(self, store: Store, *, default_zone: str | None = None,
                 inline_limit: int = INLINE_LIMIT,
                 stale_after: Mapping[str, _dt.timedelta | None] | None = None,
                 extractor: Extractor | None = None,
                 token_counters: Sequence[TokenCounter] = (),
                 count_above: int = COUNT_AT_IMPORT,
                 index_embedder: Embedder | None = None) -> None:
        self.store = store
        #: When set, what a transaction appended is embedded by it once committed.
        self.index_embedder = index_embedder
        self.default_zone = default_zone
        self.inline_limit = inline_limit
        self.stale_after = {**DEFAULT_STALE_AFTER, **(stale_after or {})}
        self.extractor: Extractor = extractor or DefaultExtractor()
        self.token_counters = tuple(token_counters)
        self.count_above = count_above
        self._local = threading.local()

    # -- plumbing --------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit of runtime writes (blobs written for a unit that fails are removed)."""
        if getattr(self._local, "unit", None) is not None:
            with self.store.transaction():
                yield
            return
        unit = self._local.unit = _Unit()
        try:
            with self.store.transaction():
                yield
                self._index(unit.written)
        except BaseException:
            self.store.end_runtime_blobs(False)
            raise
        finally:
            self._local.unit = None
        self.store.end_runtime_blobs(True)
        if self.index_embedder is not None and unit.written:
            self.embed_written(unit.written, self.index_embedder)

    def _index(self, conversations: Iterable[str]) -> None:
        """The recall index rows of what this transaction appended, written in it: a recall
        after a write (an import of 100,000 records as much as one message) has nothing to
        catch up, and the rows commit or roll back with their records."""
        from vigente.runtime.recall import Recall

        recall = Recall(self)
        for c in conversations:
            recall.catch_up(c)

    def embed_written(self, conversations: Iterable[str], embedder: Embedder) -> int:
        """Embed the indexed records of ``conversations`` that have no vector of
        ``embedder``'s model, in batches of their own transactions (after the records'
        commit: a write never waits on the model, and a batch cut short is finished by the
        next recall); how many records were embedded."""
        from vigente.runtime.recall import Recall

        recall = Recall(self, embedder=embedder)
        return sum(recall.embed_missing(c, embedder) for c in conversations)

    @contextmanager
    def claims_of(self, writer: str) -> Iterator[None]:
        """Record the messages, tool calls, tool results and memories written inside the block
        as ``writer``'s claims (a model-facing writer: an agent key, ``vigente mcp``): each is
        kept with ``claimed_by``, reaches a model labelled so, and never displaces what a
        trusted writer logged (application/roles.py)."""
        previous = getattr(self._local, "claimant", None)
        self._local.claimant = writer
        try:
            yield
        finally:
            self._local.claimant = previous

    def _claimant(self, claimed_by: str | None = None) -> str | None:
        """Whose claim a record written now is: ``claimed_by``, else the block's writer."""
        if claimed_by is not None:
            return utf8_text("claimed_by", claimed_by)
        writer: str | None = getattr(self._local, "claimant", None)
        return writer

    def _unit(self) -> _Unit | None:
        unit: _Unit | None = getattr(self._local, "unit", None)
        return unit

    def _find(self, conversation: str, kinds: Sequence[str], *,
              record_ids: Sequence[str] | None = None, target_ids: Sequence[str] | None = None,
              run: str | None = None) -> list[RuntimeRecord]:
        """Records by id, by target or by run, in ``seq`` order (answered from the unit's own
        writes for a conversation it created)."""
        unit = self._unit()
        if unit is not None and conversation in unit.fresh:
            found: dict[int, RuntimeRecord] = {}
            for index, keys in ((unit.by_id, record_ids), (unit.by_target, target_ids),
                                (unit.by_run, [run] if run is not None else None)):
                for key in keys or ():
                    for r in index.get((conversation, key), ()):
                        if r.kind in kinds:
                            found[r.seq] = r
            return [found[seq] for seq in sorted(found)]
        if run is not None:
            return [r for r in self.store.runtime_records(conversation, kinds=kinds)
                    if r.run_id == run]
        return self.store.runtime_records(conversation, kinds=kinds, record_ids=record_ids,
                                          target_ids=target_ids)

    def _known(self, conversation: str, at: TimeLike | None) -> Instant:
        """The knowledge time of a record written now into ``conversation``. Writers of one
        conversation are serialised (an advisory lock on PostgreSQL, the database's write lock
        on SQLite), and everything below runs after the lock is taken: so a record without
        ``at`` is dated by the clock read inside the lock, at or after every record already
        held (learned now, never refused), and a record with an ``at`` before those is a real
        conflict (:class:`RuntimeHistoryConflict`, HTTP 409)."""
        self.store.lock_timeline(f"runtime/{conversation}", _NO_SCOPE, "runtime")
        now = current_instant()
        unit = self._unit()
        if unit is not None and conversation in unit.latest:
            latest = unit.latest[conversation]
        else:
            latest = self.store.runtime_latest_knowledge(conversation)
            if unit is not None:
                unit.latest[conversation] = latest
        if at is None:
            # another host's clock may run ahead of this one: the record still comes after
            return now if latest is None or latest <= now else latest
        k = self.instant(at)
        if k > now and not k.same_moment(now):
            raise FutureKnowledgeError(
                f"at {k} is after now ({now}): a record cannot become known in the future")
        if latest is not None and k < latest:
            raise RuntimeHistoryConflict(
                f"conversation {conversation!r} already holds records known on {latest}; a "
                f"record known on {k} would rewrite history: give an `at` on or after {latest}, "
                "or leave `at` out to record it as known now")
        return k

    def _append(self, *nodes: Node) -> list[RuntimeRecord]:
        records = [to_record(n) for n in nodes]
        seqs = self.store.append_runtime_records(records)
        stored = [RuntimeRecord(**{**_fields(r), "seq": s}) for r, s in zip(records, seqs,
                                                                             strict=True)]
        unit = self._unit()
        if unit is not None:
            for r in stored:
                unit.add(r)
        return stored

    def _one(self, conversation: str, kinds: Sequence[str], record_id: str, what: str,
             hint: str) -> RuntimeRecord:
        found = self._find(conversation, kinds, record_ids=[record_id])
        if found:
            return found[-1]
        homes = [c for c, kind in self.store.runtime_record_homes(record_id)
                 if kind in kinds and c != conversation]
        if homes:
            raise InvalidInput(
                f"{what} {record_id!r} belongs to conversation {homes[0]!r}, not "
                f"{conversation!r}: a record may only cite records of its own conversation")
        held = sorted({r.record_id for r in self.store.runtime_records(conversation,
                                                                       kinds=kinds)})
        listed = (f" (it has {', '.join(map(repr, held[:10]))}"
                  f"{f' and {len(held) - 10} more' if len(held) > 10 else ''})") if held \
            else f" (it has no {what} yet)"
        raise InvalidInput(f"unknown {what} {record_id!r} in conversation {conversation!r}"
                           f"{listed}: {hint}")

    def _absent(self, conversation: str, kinds: Sequence[str], record_id: str, what: str
                ) -> str:
        check_name(f"{what} id", record_id)
        if self._find(conversation, kinds, record_ids=[record_id]):
            raise InvalidInput(f"{what} {record_id!r} already exists in conversation "
                               f"{conversation!r}: ids are unique; use a new id")
        return record_id

    def _conversation(self, conversation: str) -> None:
        unit = self._unit()
        if unit is not None and conversation in unit.conversations:
            return
        if not self.store.runtime_conversations(ids=[conversation]):
            raise InvalidInput(f"unknown conversation {conversation!r}: open it first "
                               "(a `conversation` event)")
        if unit is not None:
            unit.conversations.add(conversation)

    def _run(self, conversation: str, run: str) -> ModelRun:
        node: ModelRun = from_record(self._one(conversation, ["run"], run, "run",
                                               "record the run first"))
        return node

    # -- conversations, participants, branches, runs ---------------------------------------
    def open_conversation(self, conversation: str, account: str, *, title: str | None = None,
                          at: TimeLike | None = None) -> Conversation:
        """Start a conversation owned by ``account`` (the unit an account purge deletes)."""
        check_name("conversation id", conversation)
        check_name("account", account)
        with self.transaction():
            existing = self.store.runtime_conversations(ids=[conversation])
            if existing:
                raise InvalidInput(f"conversation {conversation!r} already exists: use a new id")
            node = Conversation(conversation, account, self._known(conversation, at),
                                None if title is None else utf8_text("title", title))
            self.store.append_runtime_conversation(node)
            unit = self._unit()
            if unit is not None:
                unit.fresh.add(conversation)
                unit.conversations.add(conversation)
                unit.latest[conversation] = node.known_from
        return node

    def add_participant(self, conversation: str, participant: str, *, model: str,
                        provider: str = "openai", label: str | None = None,
                        at: TimeLike | None = None) -> Participant:
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["participant"], participant, "participant")
            node = Participant(conversation, participant, self._known(conversation, at),
                               check_name("model", model), check_name("provider", provider),
                               label)
            self._append(node)
        return node

    def fork_branch(self, conversation: str, branch: str, *, parent: str | None = None,
                    fork_after: str | None = None, at_start: bool = False,
                    at: TimeLike | None = None) -> Branch:
        """A root branch (no ``parent``) or a branch inheriting ``parent``'s records up to and
        including the message ``fork_after`` (default: everything the parent holds now);
        ``at_start``: forked from ``parent`` before its first record, inheriting none of them
        (a LangGraph fork from a thread's first checkpoint)."""
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["branch"], branch, "branch")
            if parent == branch:
                raise InvalidInput(f"branch {branch!r} names itself as its parent: a branch "
                                   "forks from another, earlier branch")
            position = None
            if parent is not None:
                self._one(conversation, ["branch"], parent, "parent branch",
                          "record the parent branch first (links may not form a cycle)")
                if fork_after is not None and at_start:
                    raise InvalidInput("give fork_after or at_start, not both")
                if fork_after is not None:
                    position = self._fork_position(conversation, parent, fork_after)
                elif at_start:
                    position = 0  # before every position: nothing of the parent is inherited
            elif fork_after is not None or at_start:
                raise InvalidInput("fork_after and at_start need a parent branch")
            node = Branch(conversation, branch, self._known(conversation, at), parent,
                          fork_after, position)
            self._append(node)
        return node

    def _fork_position(self, conversation: str, parent: str, message: str) -> int:
        found = self._one(conversation, ["message"], message, "message",
                          "fork after a message of the parent branch")
        windows = dict(self.ancestry(conversation, parent))
        home = found.branch_id
        if home is None or home not in windows or (
                windows[home] is not None and found.seq > (windows[home] or 0)):
            raise InvalidInput(f"message {message!r} is on branch {found.branch_id!r}, not on "
                               f"branch {parent!r} or what it inherits: fork after one of its "
                               "messages")
        return found.seq

    def start_run(self, conversation: str, run: str, *, branch: str, participant: str,
                  mode: str = "chat", parent_run: str | None = None,
                  at: TimeLike | None = None) -> ModelRun:
        """One generation attempt; ``parent_run`` makes it a subagent child of that run."""
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["run"], run, "run")
            self._one(conversation, ["branch"], branch, "branch", "record the branch first")
            self._one(conversation, ["participant"], participant, "participant",
                      "record the participant first")
            one_of("mode", mode, MODES)
            if parent_run is not None:
                self._run(conversation, parent_run)
            node = ModelRun(conversation, run, self._known(conversation, at), branch,
                            participant, mode, parent_run)
            self._append(node)
        return node

    # -- transcript ------------------------------------------------------------------------
    def record_message(self, conversation: str, message: str, *, branch: str, role: str,
                       content: str, run: str | None = None, speaker: str | None = None,
                       at: TimeLike | None = None, claimed_by: str | None = None) -> Message:
        """A node of the user-visible transcript; an assistant answer of a top-level run is
        branch context, one of a subagent child stays the child's until promoted.
        ``speaker``: who said it, when several people share a role (a display name, checked
        by :func:`~vigente.runtime.speakers.check_speaker`; None: nobody named).
        ``claimed_by``: the model-facing writer whose claim it is (see :meth:`claims_of`)."""
        said_by = check_speaker(speaker)
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["message"], message, "message")
            self._one(conversation, ["branch"], branch, "branch", "record the branch first")
            one_of("role", role, ("system", "user", "assistant"))
            participant = None
            visibility = "branch"
            if run is not None:
                owner = self._run(conversation, run)
                if owner.branch_id != branch:
                    raise InvalidInput(f"run {run!r} is on branch {owner.branch_id!r}, the "
                                       f"message on {branch!r}: record it on the run's branch")
                participant = owner.participant_id
                if owner.parent_run is not None:
                    visibility = "participant"
            node = Message(conversation, message, self._known(conversation, at), branch, role,
                           utf8_text("content", content), run, participant, visibility,
                           self._claimant(claimed_by), said_by)
            self._append(node)
        return node

    # -- tools -----------------------------------------------------------------------------
    def record_tool_call(self, conversation: str, call: str, *, run: str, name: str,
                         arguments: Mapping[str, Any], raw_arguments: str | None = None,
                         at: TimeLike | None = None, claimed_by: str | None = None
                         ) -> ToolCall:
        """A call a run asked for (``raw_arguments``: the arguments exactly as the model
        wrote them, when they were a string; ``claimed_by``: see :meth:`claims_of`)."""
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["tool_call"], call, "tool call")
            owner = self._run(conversation, run)
            if not isinstance(arguments, Mapping):
                raise InvalidInput("tool call arguments must be a JSON object")
            args = dict(arguments)
            if raw_arguments is not None:
                args = {**args, "__raw__": utf8_text("raw arguments", raw_arguments)}
            json.dumps(args, allow_nan=False)
            node = ToolCall(conversation, call, self._known(conversation, at), run,
                            owner.branch_id, owner.participant_id, check_name("tool name", name),
                            args, claimed_by=self._claimant(claimed_by))
            self._append(node)
        return node

    def record_tool_result(self, conversation: str, call: str, *, status: str, content: Any,
                           privacy: str = "public", visibility: str = "participant",
                           retry_critical: bool = False, branch: str | None = None,
                           provider: str | None = None, tool_version: str | None = None,
                           derive: bool = True, at: TimeLike | None = None,
                           claimed_by: str | None = None) -> ToolArtifact:
        """Keep a call's raw result (or error) as its artifact before anything truncates it;
        a successful result gets a memory from the extractor unless ``derive`` is false.
        ``claimed_by`` (see :meth:`claims_of`): a claim answers only a call the same kind of
        writer logged, never one the application logged (it would take that call's place)."""
        one_of("status", status, STATUSES)
        one_of("privacy", privacy, PRIVACY)
        one_of("visibility", visibility, VISIBILITY)
        with self.transaction():
            self._conversation(conversation)
            found = self._find(conversation, ["tool_call"], record_ids=[call])
            if not found:
                self._one(conversation, ["tool_call"], call, "call id",
                          "record the tool_call before its result")
            the_call: ToolCall = from_record(found[0])
            claimant = self._claimant(claimed_by)
            if claimant is not None and the_call.claimed_by is None:
                raise InvalidInput(
                    f"call {call!r} was logged by the application: {claimant} cannot record "
                    "its result (a claimed result never takes the place of what the "
                    "application logs); log the call and its result under new ids, as your "
                    "own claim, or let the application record the result")
            if branch is not None and branch != the_call.branch_id:
                raise InvalidInput(f"call {call!r} was made on branch {the_call.branch_id!r}: a "
                                   f"result on branch {branch!r} cannot answer it")
            earlier = [from_record(r) for r in self._find(conversation, ["artifact"],
                                                          target_ids=[call])]
            if earlier and earlier[-1].status in _FINAL:
                raise InvalidInput(f"call {call!r} already has a {earlier[-1].status} result: a "
                                   "call gets one final result (a deferred or pending one may "
                                   "be followed by its outcome)")
            k = self._known(conversation, at)
            run = self._run(conversation, the_call.run_id)
            args = dict(the_call.arguments)
            raw_args = args.pop("__raw__", None)
            arg_bytes, arg_encoding = raw_bytes(raw_args if raw_args is not None else args)
            result_bytes, result_encoding = raw_bytes(content)
            arg_ref = self._keep(conversation, arg_bytes, arg_encoding)
            result_ref = self._keep(conversation, result_bytes, result_encoding)
            self._count_tokens(conversation, result_ref, result_bytes)
            skills = self._find(conversation, ["skill_state"], run=run.id)
            active = tuple(skills[-1].payload.get("skills", ())) if skills else ()
            node = ToolArtifact(
                conversation, call if not earlier else f"{call}@{len(earlier) + 1}", k, call,
                run.id, run.branch_id, run.participant_id, the_call.name, status, arg_ref,
                result_ref, found[0].seq, run.mode, privacy, visibility, bool(retry_critical),
                (), active, provider, tool_version, status == "failed", claimant)
            nodes: list[Node] = [node]
            if derive and status == "succeeded":
                memory = memories.derived_memory(self, node, arg_bytes, result_bytes)
                if memory is not None:
                    # the extractor's reading of a claim is the same claim
                    nodes.append(memory if claimant is None
                                 else dataclasses.replace(memory, claimed_by=claimant))
            self._append(*nodes)
        return node

    def _keep(self, conversation: str, data: bytes, encoding: str) -> ContentRef:
        ref = reference(data, encoding, self.inline_limit)
        self.store.put_runtime_content(conversation, ref.sha256, data, inline=not ref.in_blob)
        return ref

    def _count_tokens(self, conversation: str, ref: ContentRef, data: bytes) -> None:
        """A large result's replay-text tokens, counted once here, where its bytes are in
        hand: an assembly then reads the count, never the bytes (issue 23)."""
        if ref.bytes <= self.count_above or not self.token_counters:
            return
        text = replay_text(data, ref.encoding)
        self.store.put_runtime_content_tokens(
            conversation, [(ref.sha256, c.name, c.count(text)) for c in self.token_counters])

    # -- memories --------------------------------------------------------------------------
    def record_memory(self, conversation: str, memory: str, *, sources: Sequence[str],
                      summary: str, facts: Mapping[str, Any] | None = None, kind: str = "tool",
                      freshness: str | None = None, observed_at: TimeLike | None = None,
                      stale_after: TimeLike | None = None,
                      revalidate_with: Sequence[str] | None = None,
                      confidence: float | None = None, confidence_source: str | None = None,
                      confidence_reason: str | None = None,
                      supersedes: Sequence[str] = (), conflicts_with: Sequence[str] = (),
                      privacy: str | None = None, visibility: str | None = None,
                      writer: str | None = None, record_as_fact: bool = False,
                      at: TimeLike | None = None, claimed_by: str | None = None
                      ) -> ToolMemory | UserMemory:
        """A memory derived from tool calls, artifacts or other memories (``kind="tool"``), or
        a user memory from the user's own messages (``kind="user"``, never from tool output).
        ``supersedes``/``conflicts_with`` name earlier memories of this conversation; the
        reverse links (``superseded_by``) are read from them.

        A tool memory's facts and summary are checked against its sources' raw results: the
        paths whose value no source holds exactly are kept as ``asserted`` (with ``summary``
        when the summary states a value no source holds: ``unsupported`` names each,
        ``runtime/stated.py``), the claims of ``writer`` (who wrote it: a surface or agent
        name; default ``api``). Such a memory goes to a model
        labelled as the writer's assertion and never supersedes the extractor's memory of a
        result (naming one in ``supersedes`` is refused, naming the key).

        ``record_as_fact`` (user memories only; opt-in because an account purge cannot erase
        kernel statements): each fact also becomes a kernel statement about the conversation's
        account, in the same transaction (``runtime/user_memory.py``, docs/user-memories.md).

        A memory is a claim (``claimed_by``) when a model-facing writer writes it
        (:meth:`claims_of`) or when it cites a claim (a user memory of a message an agent key
        logged is not from the user's own messages): it supersedes no memory that is not a
        claim itself, and it is never recorded as a fact of the account."""
        sources, supersedes, conflicts_with = memories.checked_references(
            memory, kind, record_as_fact, sources, supersedes, conflicts_with)
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["memory", "user_memory"], memory, "memory")
            resolved = [memories.memory_source(self, conversation, s, kind) for s in sources]
            claimant = self._claimant(claimed_by) or next(
                (str(r.payload["claimed_by"]) for r in resolved if r.payload.get("claimed_by")),
                None)
            if claimant is not None:
                self._no_displacing(conversation, memory, claimant, supersedes,
                                    conflicts_with, record_as_fact)
            for m in (*supersedes, *conflicts_with):
                self._one(conversation, ["memory", "user_memory"], m, "memory",
                          "a memory supersedes or conflicts with an earlier memory")
            k = self._known(conversation, at)
            said_by = memories.memory_speaker(memory, resolved) if kind == "user" else None
            as_facts = None
            if record_as_fact and facts:
                k, as_facts = memories.account_facts(self, conversation, facts, k,
                                                     stamped=at is None, observed_at=observed_at,
                                                     speaker=said_by)
            owner = next((r for r in resolved if r.participant_id is not None), resolved[0])
            asserted, claims, implicit = memories.supersession(
                self, conversation, memory, kind, resolved, facts, summary, supersedes)
            if claimant is not None:  # a claim replaces only claims
                implicit = tuple(m for m in implicit if self._claimed(conversation, m))
            links = memories.memory_links(conversation, memory, k, supersedes, conflicts_with,
                                          implicit)
            if kind == "user":
                node: ToolMemory | UserMemory = memories.user_memory(
                    conversation, memory, k, summary, sources, facts, owner, privacy,
                    visibility, (*supersedes, *implicit), said_by)
            else:
                node = memories.tool_memory(
                    self, conversation, memory, k, resolved, owner, summary, facts, freshness,
                    observed_at, stale_after, revalidate_with, confidence, confidence_source,
                    confidence_reason, (*supersedes, *implicit), conflicts_with, privacy,
                    visibility, writer or "api", asserted, claims)
            if claimant is not None:
                node = dataclasses.replace(node, claimed_by=claimant)
            if as_facts is not None:  # refused by the kernel: nothing of the memory is written
                from vigente.runtime.user_memory import write_facts

                write_facts(self.store, memory, as_facts)
            self._append(node, *links)
        return node

    def _claimed(self, conversation: str, memory: str) -> bool:
        found = self._find(conversation, ["memory", "user_memory"], record_ids=[memory])
        return bool(found and found[-1].payload.get("claimed_by"))

    def _no_displacing(self, conversation: str, memory: str, claimant: str,
                       supersedes: Sequence[str], conflicts_with: Sequence[str],
                       record_as_fact: bool) -> None:
        """Refuse a claim that would displace what a trusted writer logged: superseding a
        memory that is not a claim, marking one as in conflict with it (the trusted reading
        would go to the model disputed), or becoming a fact of the account."""
        if record_as_fact:
            raise InvalidInput(
                f"memory {memory!r} is {claimant}'s claim (written by it, or citing what it "
                "logged): a claim is never recorded as a fact of the account; leave out "
                "record_as_fact")
        for field, ids, verb in (("supersedes", supersedes, "supersede"),
                                 ("conflicts_with", conflicts_with, "conflict with")):
            for m in ids:
                if self._find(conversation, ["memory", "user_memory"], record_ids=[m]) and \
                        not self._claimed(conversation, m):
                    raise InvalidInput(
                        f"memory {memory!r} is {claimant}'s claim: it cannot {verb} {m!r}, "
                        "which the application logged (a claim never displaces a trusted "
                        f"writer's record); leave it out of {field}")

    # -- skills, checkpoints, promotions, shares -------------------------------------------
    def record_skill_state(self, conversation: str, run: str, *, skills: Sequence[str],
                           tools: Sequence[str] = (), profile: str | None = None,
                           state_id: str | None = None, at: TimeLike | None = None
                           ) -> SkillState:
        with self.transaction():
            self._conversation(conversation)
            owner = self._run(conversation, run)
            if state_id is None:
                count = len(self._find(conversation, ["skill_state"], record_ids=[run]))
                state_id = run if not count else f"{run}@{count + 1}"
                while self._find(conversation, ["skill_state"], record_ids=[state_id]):
                    count += 1
                    state_id = f"{run}@{count + 1}"
            self._absent(conversation, ["skill_state"], state_id, "skill state")
            # names only: they become system text (runtime/trust.py)
            node = SkillState(conversation, state_id, self._known(conversation, at), run,
                              owner.branch_id, owner.participant_id,
                              check_names("skill", string_list("skills", skills)),
                              check_names("tool", string_list("tools", tools)),
                              None if profile is None
                              else check_names("profile", [utf8_text("profile", profile)])[0])
            self._append(node)
        return node

    def declare_tool(self, conversation: str, name: str, *, read_only: bool = False,
                     description: str | None = None, at: TimeLike | None = None
                     ) -> ToolDeclaration:
        """Declare what a tool of the conversation does (the ``tool`` event). Only a tool
        declared ``read_only`` is ever suggested to a model to read a stale value again; a
        later declaration of the same name replaces this one from its knowledge time on."""
        if not isinstance(read_only, bool):
            raise InvalidInput(f"read_only must be true or false, got {read_only!r}")
        with self.transaction():
            self._conversation(conversation)
            check_name("tool name", name)
            count = len(self._find(conversation, ["tool"], record_ids=[name]))
            tool_id = name if not count else f"{name}@{count + 1}"
            while self._find(conversation, ["tool"], record_ids=[tool_id]):
                count += 1
                tool_id = f"{name}@{count + 1}"
            node = ToolDeclaration(conversation, tool_id, self._known(conversation, at), name,
                                   read_only,
                                   None if description is None
                                   else utf8_text("description", description))
            self._append(node)
        return node

    def tool_declarations(self, conversation: str, *, known_at: TimeLike | None = None
                          ) -> dict[str, ToolDeclaration]:
        """Each declared tool's latest declaration as known at ``known_at`` (default: now)."""
        k = self._at(known_at)
        out: dict[str, ToolDeclaration] = {}
        for r in self.store.runtime_records(conversation, kinds=["tool"], known_at=k):
            node: ToolDeclaration = from_record(r)
            out[node.name] = node  # in seq order: the latest wins
        return out

    def record_checkpoint(self, conversation: str, checkpoint: str, *, run: str,
                          state: Mapping[str, Any], at: TimeLike | None = None
                          ) -> ContinuationCheckpoint:
        with self.transaction():
            self._conversation(conversation)
            self._absent(conversation, ["checkpoint"], checkpoint, "checkpoint")
            owner = self._run(conversation, run)
            if not isinstance(state, Mapping):
                raise InvalidInput("a checkpoint state must be a JSON object")
            json.dumps(dict(state), allow_nan=False)
            node = ContinuationCheckpoint(conversation, checkpoint,
                                          self._known(conversation, at), run, owner.branch_id,
                                          owner.participant_id, dict(state))
            self._append(node)
        return node

    def promote(self, conversation: str, run: str, refs: Sequence[str], *,
                as_: str = "final_report", at: TimeLike | None = None) -> list[Promotion]:
        """Make a subagent child's records visible to its parent run's participant."""
        one_of("promotion", as_, PROMOTION_AS)
        refs = string_list("refs", refs)
        with self.transaction():
            self._conversation(conversation)
            child = self._run(conversation, run)
            if child.parent_run is None:
                raise InvalidInput(f"run {run!r} has no parent_run: only a subagent child's "
                                   "records are promoted")
            parent = self._run(conversation, child.parent_run)
            k = self._known(conversation, at)
            nodes = []
            for ref in refs:
                record = self._one(conversation, _REFERABLE, ref, "record",
                                   "promote records of the child run")
                if record.run_id != run and not self._descends(conversation, record.run_id, run):
                    raise InvalidInput(f"{ref!r} is not a record of run {run!r}: a promotion "
                                       "makes the child's own records visible")
                nodes.append(Promotion(conversation, f"{ref}~{parent.id}~{as_}", k, run, ref,
                                       parent.participant_id, as_, parent.id))
            nodes = [n for n in nodes
                     if not self._find(conversation, ["promotion"], record_ids=[n.id])]
            self._append(*nodes)
        return nodes

    def _descends(self, conversation: str, run: str | None, ancestor: str) -> bool:
        seen = set()
        while run is not None and run not in seen:
            seen.add(run)
            if run == ancestor:
                return True
            run = self._run(conversation, run).parent_run
        return False

    def share(self, conversation: str, ref: str, with_: Sequence[str], *,
              at: TimeLike | None = None) -> list[Share]:
        """Make a record visible to other participants."""
        participants = string_list("with", with_)
        with self.transaction():
            self._conversation(conversation)
            self._one(conversation, _REFERABLE, ref, "record", "share a recorded record")
            k = self._known(conversation, at)
            nodes = []
            for p in participants:
                self._one(conversation, ["participant"], p, "participant",
                          "share with a recorded participant")
                share = Share(conversation, f"{ref}~{p}", k, ref, p)
                if not self._find(conversation, ["share"], record_ids=[share.id]):
                    nodes.append(share)
            self._append(*nodes)
        return nodes

    # -- imports and erasure ---------------------------------------------------------------
    @telemetry.traced("vigente.events.import")
    def import_events(self, source: str | Path | Iterable[bytes | str], *,
                      now: TimeLike | None = None, trusted: bool = True,
                      writer: str | None = None) -> RuntimeImportReport:
        """Import an event log (``RUNTIME.md``) atomically; a bad line names its number.
        ``trusted=False`` for a log a model wrote (an MCP tool, an agent key; ``writer`` names
        it): it may not write system messages, skill states, read-only tool declarations,
        shares or promotions, and what it logs is recorded as its claim."""
        from vigente.runtime.events import import_events

        report = import_events(self, source, now=None if now is None else self.instant(now),
                               trusted=trusted, writer=writer)
        telemetry.record_import(report.by_kind)
        telemetry.annotate({"vigente.events.count": report.events,
                            "vigente.events.conversations": len(report.conversations),
                            "vigente.events.warnings": len(report.warnings),
                            "vigente.events.trusted": trusted,
                            **{f"vigente.events.kind.{kind}": n
                               for kind, n in report.by_kind.items()}})
        return report

    def import_openai(self, path: str | Path, *, conversation: str, account: str,
                      trial: int | None = None, model: str = "unknown",
                      at: TimeLike | None = None) -> RuntimeImportReport:
        """Import an OpenAI-format transcript as one conversation, atomically."""
        from vigente.runtime.openai import import_openai

        return import_openai(self, path, conversation=conversation, account=account,
                             trial=trial, model=model,
                             at=None if at is None else self.instant(at))

    def extract_user_memories(self, conversation: str, *,
                              extractor: UserMemoryExtractor | None = None,
                              record_as_fact: bool = False) -> UserMemoryExtraction:
        """Record the user memories ``extractor`` (default: the rule-based English one) finds
        in the conversation's user messages, in one transaction; a key already held with the
        same value is not recorded again (``runtime/user_memory.py``)."""
        from vigente.runtime.user_memory import extract_user_memories

        return extract_user_memories(self, conversation, extractor=extractor,
                                     record_as_fact=record_as_fact)

    @telemetry.traced("vigente.purge")
    def purge_account(self, account: str, *, dry_run: bool = False) -> PurgeReport:
        """Delete an account's conversations and everything derived from them. (Its span and
        metric name no account: only the outcome and the counts.)"""
        from vigente.runtime.retention import purge_account

        report = purge_account(self, check_name("account", account), dry_run=dry_run)
        outcome = "dry_run" if dry_run else ("complete" if report.complete else "incomplete")
        telemetry.record_purge(outcome)
        telemetry.annotate({"vigente.purge.outcome": outcome,
                            "vigente.purge.conversations": len(report.conversations),
                            "vigente.purge.rows": report.rows,
                            "vigente.purge.blobs": report.blobs})
        return report

    def gc(self, *, now: TimeLike | None = None, dry_run: bool = False) -> GCReport:
        """Apply the retention classes as of ``now`` (default: this moment)."""
        from vigente.runtime.retention import collect

        at = current_instant() if now is None else check_not_ahead(self.instant(now), "now")
        return collect(self, now=at, dry_run=dry_run)


def _fields(record: RuntimeRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in RuntimeRecord.__dataclass_fields__}
