"""Who writes and reads the runtime through a surface, and what its role lets it do: the one
place the rules of trust live. The HTTP API and the MCP server (over stdio and at ``/mcp``)
both hand their caller's :class:`Principal` to these functions, so the same role gets the
same answer on every surface (DESIGN.md, invariants 7, 9 and 10).

Two roles:

* ``service`` — the application's own logging and operations (its back end with a service
  key, ``vigente runtime import``, ``vg.runtime``): trusted. It writes instructions (system
  messages, skill states, read-only tool declarations), shares and promotions, reads the whole
  graph and purges accounts.
* ``agent`` — a model-facing client (an MCP client, a model's own tool loop, ``vigente mcp``):
  what it writes is its *claim*. It writes no instruction, share or promotion; the messages,
  tool calls, tool results and memories it logs are kept with ``claimed_by`` (its name),
  reach a model labelled so, and never displace what a trusted writer logged (the budget
  drops a claim first; a claim supersedes no trusted reading). It reads only what one
  participant may see (``assemble``, ``recall`` with a participant and branch, ``explain``);
  never the raw graph. An agent key may be scoped to one conversation, and within it to one
  participant: every request is then checked against the scope, and a read that names
  neither uses the scope's.

A key that names no role (every key created before roles existed) is an agent key: trust is
granted explicitly, never assumed (docs/deployment.md, "Keys").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from vigente.application.errors import ApiError
from vigente.errors import InvalidInput

__all__ = [
    "ROLES",
    "SERVICE",
    "Principal",
    "Role",
    "check_assemble",
    "check_assembly",
    "check_conversation",
    "check_role",
    "check_scope",
    "claimed_events",
    "recall_scope",
    "service_only",
]

Role = Literal["service", "agent"]
ROLES: tuple[str, ...] = get_args(Role)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts as: its ``role``, its ``name`` as a claim names it (``agent key
    0123abcd…``, ``vigente mcp``), and for an agent the conversation and participant it is
    scoped to (None: not scoped)."""

    role: Role
    name: str
    conversation: str | None = None
    participant: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether it writes as the application (instructions; records that are not claims)."""
        return self.role == "service"

    def describe(self) -> str:
        """How an error names it: its name and scope."""
        scope = [f"{k} {v!r}" for k, v in (("conversation", self.conversation),
                                           ("participant", self.participant)) if v]
        return self.name + (f" (scoped to {', '.join(scope)})" if scope else "")


#: The application itself (a surface with no key: the CLI's ``runtime import``, vg.runtime).
SERVICE = Principal("service", "the application")


def check_role(role: str, conversation: str | None, participant: str | None) -> Role:
    """``role`` when it names one and its scope fits it (a scope is an agent's, and a
    participant is one of a conversation), else :class:`InvalidInput` saying what to fix."""
    if role not in ROLES:
        raise InvalidInput(f"role {role!r} is not one of {', '.join(ROLES)}: 'service' for the "
                           "application's own logging, 'agent' for a model-facing client")
    if role == "service" and (conversation or participant):
        raise InvalidInput("a service key is the application's own and is not scoped: give "
                           "conversation and participant to an agent key only")
    if participant and not conversation:
        raise InvalidInput("a participant is one of a conversation: give the conversation "
                           "the participant belongs to")
    return role  # type: ignore[return-value]


def _forbidden(principal: Principal, message: str) -> ApiError:
    return ApiError(403, "forbidden", f"{principal.describe()}: {message}")


def service_only(principal: Principal, what: str) -> None:
    """Refuse ``what`` (an operation on every participant's records) to an agent."""
    if not principal.trusted:
        raise _forbidden(
            principal,
            f"{what} needs a service key (it shows or changes every participant's records); "
            "a model-facing client reads through assemble and recall, which show only what "
            "its participant may see")


def check_conversation(principal: Principal, conversation: str) -> None:
    """Refuse a conversation outside an agent's scope."""
    if principal.conversation is not None and conversation != principal.conversation:
        raise _forbidden(principal, f"conversation {conversation!r} is outside this key's "
                         f"scope: use conversation {principal.conversation!r}")


def _scoped(principal: Principal, what: str, given: str | None) -> str | None:
    """``given`` (a conversation or participant), checked against the scope, or the scope's."""
    held: str | None = getattr(principal, what)
    if given is not None and held is not None and given != held:
        raise _forbidden(principal, f"{what} {given!r} is outside this key's scope: use "
                         f"{what} {held!r} (or leave it out)")
    return given if given is not None else held


def _event_conversation(event: dict[str, Any]) -> Any:
    return event.get("id") if event.get("event") == "conversation" else event.get("conversation")


def check_scope(principal: Principal, events: list[dict[str, Any]], *, batch: bool,
                run_owner: Callable[[str, str], str | None] = lambda _c, _r: None) -> None:
    """Refuse an event outside an agent's scope: another conversation, or (participant
    scope) a participant or run of another participant, or a message, call, checkpoint or
    skill state in such a run (``run_owner(conversation, run)``: the participant of a stored
    run). Named by its index in a batch."""
    if principal.trusted:
        return
    runs: dict[tuple[Any, Any], Any] = {}  # the batch's own runs -> their participant
    for index, event in enumerate(events):
        where = f"events[{index}]: " if batch else ""
        conversation = _event_conversation(event)
        if principal.conversation is not None and conversation != principal.conversation:
            raise _forbidden(principal, f"{where}conversation {conversation!r} is outside this "
                             f"key's scope: log into conversation {principal.conversation!r}; "
                             "nothing was written")
        kind, participant = event.get("event"), None
        if kind == "participant":
            participant = event.get("id")
        elif kind == "run":
            participant = event.get("participant")
        if kind == "run":
            runs[(conversation, event.get("id"))] = participant
        elif isinstance(event.get("run"), str) and isinstance(conversation, str):
            key = (conversation, event["run"])
            participant = runs[key] if key in runs else run_owner(conversation, event["run"])
        if principal.participant is not None and participant is not None and \
                participant != principal.participant:
            raise _forbidden(principal, f"{where}participant {participant!r} is not this key's: "
                             f"log runs of participant {principal.participant!r}; nothing was "
                             "written")


def claimed_events(principal: Principal, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` as ``principal`` writes them: an agent's memories are written by it,
    whatever ``writer`` they name (a claim cannot pass itself off as the extractor's)."""
    if principal.trusted:
        return events
    return [dict(e, writer=principal.name) if e.get("event") == "memory" else e for e in events]


def recall_scope(principal: Principal, conversation: str | None, account: str | None,
                 branch: str | None, participant: str | None
                 ) -> tuple[str | None, str | None, str | None, str | None]:
    """What an agent recalls: one participant's view of one branch of one conversation (the
    key's scope fills what the request leaves out), never an account's every conversation
    nor what another participant or an unpromoted subagent holds. A service recalls as
    asked. Returns (conversation, account, branch, participant)."""
    if principal.trusted:
        return conversation, account, branch, participant
    if account is not None:
        raise _forbidden(principal, "recall by account searches every conversation of it, "
                         "every participant's: an agent key recalls one conversation as one "
                         "participant (give conversation, branch and participant)")
    conversation = _scoped(principal, "conversation", conversation)
    participant = _scoped(principal, "participant", participant)
    missing = [name for name, value in (("conversation", conversation), ("branch", branch),
                                        ("participant", participant)) if value is None]
    if missing:
        raise InvalidInput(
            f"{principal.describe()} recalls only what one participant may see on one branch: "
            f"give {', '.join(missing)} (a model-facing read never searches every "
            "participant's records)")
    return conversation, None, branch, participant


def check_assemble(principal: Principal, conversation: str, participant: str,
                   policy: dict[str, Any] | None) -> None:
    """Refuse an agent's assembly outside its scope, or under a policy of its own (a policy
    decides what a participant may see: the application's to choose)."""
    if principal.trusted:
        return
    _scoped(principal, "conversation", conversation)
    _scoped(principal, "participant", participant)
    if policy is not None:
        raise _forbidden(principal, "a policy decides what a participant may see, so only a "
                         "service key passes one: leave `policy` out to assemble under the "
                         "application's")


def check_assembly(principal: Principal, record: dict[str, Any]) -> None:
    """Refuse an agent's look at a recorded assembly outside its scope (another
    conversation's, or another participant's model call)."""
    if principal.trusted:
        return
    for what in ("conversation", "participant"):
        held = getattr(principal, what)
        if held is not None and record.get(what) != held:
            raise _forbidden(principal, f"this assembly is of {what} "
                             f"{json.dumps(record.get(what))}, outside this key's scope "
                             f"({what} {held!r})")
