"""User memories as facts of the account, and the step that proposes them from messages.

A user memory (``kind="user"``) is a runtime node of one conversation. Recorded with
``record_as_fact``, each of its facts also becomes a kernel statement about the conversation's
account: lineage ``user.<key>``, scope ``{"account": A}``, source ``user``, valid from when the
user said it (the memory's ``observed_at``, else its knowledge time), known from the memory's
knowledge time. A later statement of the same key supersedes the earlier one on both axes, as
any later statement of a kernel timeline does, so "what had the user told us about their
address, as known on k" is ``vg.evidence("user.address", valid_at=t, known_at=k,
scope={"account": A})``.

The kernel is append-only and an account purge erases runtime records only
(:mod:`vigente.runtime.retention`), so recording a memory as a fact is opt-in: a purged account's
facts stay in the kernel (docs/user-memories.md).

:class:`UserMemoryExtractor` is the small protocol that proposes user memories from a
conversation's user messages; :class:`RuleUserMemoryExtractor` is the deterministic default,
which proposes only what a few first-person English sentences state verbatim. A model-backed
extractor is the caller's (``examples/user_memories_llm.py``): vigente never calls a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from vigente.errors import AnsweredHistoryError, HistoryRewriteError, InvalidInput, InvalidName
from vigente.records.values import MAX_NAME_CHARS, JSONValue, Scope, canonical_json, check_name
from vigente.runtime.redact import redact_text, redact_value
from vigente.time import Instant, Interval

# The kernel's writer and the store contract are imported where they are used: the store
# backends import the runtime's rows (``vigente.runtime``), so this module loads before them.
if TYPE_CHECKING:
    from vigente.records.runtime import UserMemory
    from vigente.runtime.service import Runtime
    from vigente.store.base import Store, Write

__all__ = [
    "FACT_SOURCE",
    "ProposedUserMemory",
    "RuleUserMemoryExtractor",
    "UserMemoryExtraction",
    "UserMemoryExtractor",
    "UserMessage",
    "extract_user_memories",
    "user_fact_lineage",
]

#: The kernel source of every statement a user memory makes: the user said it.
FACT_SOURCE = "user"
_PREFIX = "user."


def user_fact_lineage(key: object) -> str:
    """The kernel lineage of a user fact ``key`` (``user.<key>``), checked by the kernel's name
    rules; a key that cannot name a lineage is refused, naming it."""
    if not isinstance(key, str):
        raise InvalidInput(f"user fact key {key!r} is not a string: name each fact with text")
    try:
        # the key itself follows the name rules (a blank key would name the lineage "user.")
        check_name("the key", key, limit=MAX_NAME_CHARS - len(_PREFIX))
        return check_name("lineage", _PREFIX + key)
    except InvalidName as exc:
        raise InvalidInput(f"user fact key {key[:80]!r} cannot name the lineage "
                           f"'user.<key>' ({exc}): rename the fact") from None


def account_scope(account: str, speaker: str | None = None) -> Scope:
    """The kernel scope of an account's user facts; those a named speaker stated (a group
    chat) are the speaker's: ``{"account": A, "speaker": S}``."""
    return Scope.of({"account": account} if speaker is None
                    else {"account": account, "speaker": speaker})


@dataclass(frozen=True, slots=True)
class FactStatements:
    """The kernel statements one user memory will make, checked before anything is written."""

    writes: tuple[Write, ...]
    keys: tuple[str, ...]


def fact_statements(account: str, facts: Mapping[str, Any], *, valid_from: Instant,
                    known_at: Instant, speaker: str | None = None) -> FactStatements:
    """One ``record`` statement per fact: every key and value is checked here, so that a bad
    one refuses the whole memory before anything is written (``speaker``: who stated them,
    see :func:`account_scope`)."""
    from vigente.kernel.ledger import statement

    scope = account_scope(account, speaker)
    writes, keys = [], []
    for key, value in facts.items():
        lineage = user_fact_lineage(key)
        try:
            value_json = canonical_json(value)
        except InvalidInput as exc:
            raise InvalidInput(f"user fact {key!r}: {exc}") from None
        writes.append(statement("record", lineage, value_json, scope=scope, source=FACT_SOURCE,
                                valid_from=valid_from, valid_to=None, known_at=known_at))
        keys.append(key)
    return FactStatements(tuple(writes), tuple(keys))


def fact_time(store: Store, account: str, keys: Sequence[str], k: Instant, *,
              stamped: bool, speaker: str | None = None) -> Instant:
    """The knowledge time of a user memory recorded as facts, inside its transaction (the
    timelines locked first). ``stamped`` (the caller gave no ``at``: learned now): moved after
    every answer already given and every statement of those timelines, as ``Vigente.record``
    dates a write learned now; otherwise ``k`` as given (a write behind them is refused)."""
    from vigente.store.base import Timeline

    timelines = sorted({Timeline(user_fact_lineage(key), account_scope(account, speaker),
                                 FACT_SOURCE)
                        for key in keys}, key=Timeline.order)
    if not timelines:
        return k
    store.lock_timelines(timelines)
    if not stamped:
        return k
    for latest in store.latest_knowledge_many(timelines):  # a tie is no rewrite
        if latest is not None and k < latest:
            k = latest
    horizon = store.answered_horizon()  # an answer given at the horizon is final: after it
    if horizon is not None and k <= horizon:
        k = Instant(horizon.micros + 1)
    return k


def write_facts(store: Store, memory: str, planned: FactStatements) -> int:
    """Apply a memory's statements (inside its transaction, before its node is appended): a
    statement that would change nothing (the key already holds that value from then on) is
    left out. The number applied; a kernel refusal raises, naming the memory and the key."""
    from vigente.kernel.ledger import StatementRefused, apply_writes

    todo: list[tuple[str, Write]] = []
    for key, w in zip(planned.keys, planned.writes, strict=True):
        held = store.current_versions_overlapping(w.lineage, w.scope, w.source,
                                                  Interval(w.valid_from, None))
        if (len(held) == 1 and held[0].value_json == w.value_json and held[0].valid_to is None
                and held[0].valid_from <= w.valid_from):
            continue
        todo.append((key, w))
    try:
        apply_writes(store, [w for _, w in todo])
    except StatementRefused as refused:
        error, key = refused.error, todo[refused.index][0]
        why = (f"user memory {memory!r}: the kernel refused fact {key!r}, so nothing of the "
               f"memory was written: {error}")
        if isinstance(error, AnsweredHistoryError):
            raise AnsweredHistoryError(why, error.horizon) from None
        if isinstance(error, HistoryRewriteError):
            raise HistoryRewriteError(why) from None
        raise error from None
    return len(todo)


# -- the extraction protocol ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user message an extractor reads: its id, its text, when it became known and who
    said it (``speaker``: a display name, when several people share the user role)."""

    id: str
    text: str
    known_at: Instant
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class ProposedUserMemory:
    """What an extractor proposes: a summary, the facts, and the ids of the user messages
    that state them (the memory's sources)."""

    summary: str
    facts: dict[str, JSONValue]
    sources: tuple[str, ...]


@runtime_checkable
class UserMemoryExtractor(Protocol):
    """Proposes user memories from a conversation's user messages (oldest first). It must
    propose only what the messages state; ``name`` says which extractor proposed a memory."""

    name: str

    def propose(self, messages: Sequence[UserMessage]) -> list[ProposedUserMemory]:
        """The user memories the messages state (none: an empty list)."""
        ...


_APOS = "['\u2019]"
_NAME = r"[A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*){0,3}"
_PLACE = r"[A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*){0,4}"
_UNTIL = r"[^,;:.!?\n\u2014()]+?"  # up to the clause's end
_END = r"(?=\s*(?:[,;:!?\n\u2014()]|\.(?:\s|$)|$| and | but | which | so ))"
_ARTICLE = re.compile(r"^(?:a|an|the) ", re.IGNORECASE)
#: (key or None for "favorite_<group 1>", pattern): the statements the rules recognise.
_RULES: tuple[tuple[str | None, re.Pattern[str]], ...] = (
    ("name", re.compile(rf"\b(?i:my name is) ({_NAME})\b")),
    ("address", re.compile(r"\b(?i:my (?:home |postal )?address is) ([^;!?\n]+?)"
                           r"(?=\s*(?:[;!?\n]|\.(?:\s|$)|$))")),
    ("lives_in", re.compile(rf"\b(?i:I live in) ({_PLACE})\b")),
    ("age", re.compile(rf"\b(?i:I{_APOS}m|I am) (\d{{1,3}}) (?i:years? old)\b")),
    ("email", re.compile(r"\b(?i:my e-?mail(?: address)? is) ([\w.+-]+@[\w-]+(?:\.[\w-]+)+)")),
    ("occupation", re.compile(rf"\b(?i:I work as) ({_UNTIL}){_END}")),
    ("employer", re.compile(rf"\b(?i:I work at|I work for) ({_UNTIL}){_END}")),
    (None, re.compile(rf"\b(?i:my favou?rite) ([a-z]+) (?i:is) ({_UNTIL}){_END}")),
)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+(?=\s|$)|$)|[^\n]+")


class RuleUserMemoryExtractor:
    """The default, deterministic extractor: a few first-person English statements ("my name
    is X", "my address is X", "I live in X", "I'm N years old", "my email is X", "I work as
    X", "I work at X", "my favorite X is Y"), each value exactly as written (an article before
    an occupation or employer left out, an age as its number). A question or a negated
    sentence proposes nothing; anything else it does not recognise is left alone."""

    name = "rules-en/1"

    def propose(self, messages: Sequence[UserMessage]) -> list[ProposedUserMemory]:
        out = []
        for message in messages:
            facts: dict[str, JSONValue] = {}
            said: list[str] = []
            for sentence in _sentences(message.text):
                for key, value, span in _statements(sentence):
                    if key not in facts:
                        facts[key] = value
                        said.append(span)
            if facts:
                who = "The user" if message.speaker is None else message.speaker
                out.append(ProposedUserMemory(f"{who} said: " + "; ".join(said) + ".",
                                              facts, (message.id,)))
        return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


_NEGATED = re.compile(r"\b(?:not|never|no longer)\b|n['\u2019]t\b", re.IGNORECASE)


def _statements(sentence: str) -> list[tuple[str, JSONValue, str]]:
    if sentence.endswith("?") or re.match(r"(?i)(?:if|when|whether|unless)\b", sentence):
        return []
    found: list[tuple[str, JSONValue, str]] = []
    for key, pattern in _RULES:
        for m in pattern.finditer(sentence):
            if _NEGATED.search(sentence[:m.end()]):
                continue
            if key is None:
                the_key, raw = f"favorite_{m.group(1).lower()}", m.group(2)
            else:
                the_key, raw = key, m.group(1)
            text = raw.strip()
            if key in ("occupation", "employer"):
                text = _ARTICLE.sub("", text)
            if not text:
                continue
            value: JSONValue = int(text) if key == "age" else text
            found.append((the_key, value, m.group(0).strip()))
    return found


# -- running an extractor over a conversation ----------------------------------------------
@dataclass(frozen=True, slots=True)
class UserMemoryExtraction:
    """What one extraction run recorded: the memories (in order) and, as ``(key, sources)``,
    the proposed facts it left out because the conversation already held them."""

    extractor: str
    memories: tuple[UserMemory, ...]
    unchanged: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "memories": [{"id": m.id, "summary": m.summary, "facts": m.facts,
                          "sources": list(m.sources), "supersedes": list(m.supersedes),
                          "known_from": m.known_from.isoformat(),
                          **({"speaker": m.speaker} if m.speaker else {})}
                         for m in self.memories],
            "unchanged": [{"key": key, "sources": list(sources)}
                          for key, sources in self.unchanged],
        }


def extract_user_memories(rt: Runtime, conversation: str, *,
                          extractor: UserMemoryExtractor | None = None,
                          record_as_fact: bool = False) -> UserMemoryExtraction:
    """Run ``extractor`` (default :class:`RuleUserMemoryExtractor`) over the conversation's
    user messages and record what it proposes as user memories, in one transaction. A fact
    whose key the conversation's user memories already hold with the same value is not
    recorded again, nor one already recorded from the same messages (so a second run records
    nothing new); a proposal left with no fact is dropped. A memory whose every key a new one
    restates is superseded by it."""
    from vigente.records.runtime import Message, UserMemory, from_record

    the_extractor = extractor or RuleUserMemoryExtractor()
    with rt.transaction():
        rt._conversation(conversation)  # an unknown conversation is refused, saying so
        records = rt.store.runtime_records(conversation, kinds=["message", "user_memory"])
        messages: dict[str, Message] = {}
        held: list[UserMemory] = []
        for r in records:
            node = from_record(r)
            if isinstance(node, Message) and node.role == "user":
                messages[node.id] = node
            elif isinstance(node, UserMemory):
                held.append(node)
        proposals = the_extractor.propose([UserMessage(m.id, m.content, m.known_from, m.speaker)
                                           for m in messages.values()])
        ids = {m.id for m in held}
        superseded = {old for m in held for old in m.supersedes}
        # (speaker, key) -> the canonical JSON the conversation holds: what one person said
        # of themselves is theirs ("my name is Ana" does not replace Bruno's name)
        latest: dict[tuple[str | None, str], str] = {}
        stated: set[tuple[str, str, str]] = set()  # (message, key, value) already recorded
        for m in held:
            for key, value in m.facts.items():
                latest[(m.speaker, key)] = canonical_json(value)
                stated.update((s, key, canonical_json(value)) for s in m.sources)

        def said_at(p: ProposedUserMemory) -> Instant:
            return max(messages[s].known_from for s in p.sources)

        for p in proposals:
            unknown = [s for s in p.sources if s not in messages]
            if not p.sources or unknown:
                raise InvalidInput(
                    f"extractor {the_extractor.name!r} proposed a user memory citing "
                    f"{', '.join(map(repr, unknown)) or 'no message'}, not a user message of "
                    f"conversation {conversation!r}: a user memory cites the user's own messages")
        recorded: list[UserMemory] = []
        unchanged: list[tuple[str, tuple[str, ...]]] = []
        for p in sorted(proposals, key=said_at):
            who = next((messages[s].speaker for s in p.sources if messages[s].speaker), None)
            facts = {}
            for key, value in p.facts.items():
                if redact_value(value, key)[1]:
                    continue  # a credential the user typed is never a memory's fact
                said = canonical_json(value)
                # restated (the key holds that value) or extracted before from these messages
                if latest.get((who, key)) == said or any((s, key, said) in stated
                                                         for s in p.sources):
                    unchanged.append((key, p.sources))
                else:
                    facts[key] = value
            if not facts:
                continue
            memory_id = _fresh_id(f"{p.sources[0]}#user", ids)
            # a message a model-facing writer logged is its claim, not the user's word: a
            # memory of it replaces no memory of the user's own messages, and is no fact
            claimed = any(messages[s].claimed_by for s in p.sources)
            replaces = [m.id for m in held if m.id not in superseded and m.facts
                        and m.speaker == who and set(m.facts) <= set(p.facts)
                        and (not claimed or m.claimed_by)]
            node = rt.record_memory(conversation, memory_id, sources=p.sources,
                                    summary=redact_text(p.summary, "summary")[0],
                                    facts=facts, kind="user",
                                    supersedes=replaces, observed_at=said_at(p),
                                    record_as_fact=record_as_fact and not claimed)
            assert isinstance(node, UserMemory)
            recorded.append(node)
            held.append(node)
            ids.add(memory_id)
            superseded.update(replaces)
            for key, value in facts.items():
                latest[(who, key)] = canonical_json(value)
                stated.update((s, key, canonical_json(value)) for s in p.sources)
    return UserMemoryExtraction(the_extractor.name, tuple(recorded), tuple(unchanged))


def _fresh_id(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}@{n}" in taken:
        n += 1
    return f"{base}@{n}"
