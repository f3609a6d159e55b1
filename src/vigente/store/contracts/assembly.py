"""The assembly domain's contracts (:mod:`vigente.assemble`): the assembly log, and the running
token counts an assembly compares itself with."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from vigente.store.contracts.transaction import Transactional
from vigente.time import Instant

__all__ = ["AssemblyLog", "TokenCounts"]


class AssemblyLog(Transactional):
    """Context assemblies (:mod:`vigente.assemble`): append-only records of what reached a model
    request; purged with their account."""

    @abstractmethod
    def append_runtime_assembly(self, assembly_id: str, conversation_id: str,
                                created_micros: int, snapshot_micros: int,
                                payload_json: str) -> None:
        """Keep one assembly record (its JSON), in the caller's transaction."""

    @abstractmethod
    def runtime_assembly(self, assembly_id: str) -> tuple[str, str] | None:
        """``(conversation_id, payload_json)`` of an assembly, or None."""

    @abstractmethod
    def runtime_assembly_ids(self, conversation_id: str) -> list[str]:
        """The assemblies of a conversation, oldest first."""

    @abstractmethod
    def delete_runtime_assemblies(self, conversation_id: str, assembly_ids: list[str]) -> int:
        """Delete these assemblies of the conversation (their retention has run out), in the
        caller's transaction; how many rows went."""


class TokenCounts(Transactional):
    """Running token counts of a conversation's records per counter (``encoding/format``), a
    read cache of the runtime graph (mark ``tokens:<counter>``): rows ``(seq, branch_id,
    position, known_micros, tokens, messages)``, summed per branch, so that the tokens a full
    replay would send are a seek. Purged with the account."""

    @abstractmethod
    def append_runtime_token_counts(self, conversation_id: str, counter: str,
                                    rows: Sequence[tuple[int, str, int, int, int, int]],
                                    through: int) -> None:
        """Token rows of one counter in ``seq`` order (rows counted already are skipped),
        with running sums per branch, and the counter's mark moved to ``through``."""

    @abstractmethod
    def runtime_token_total(self, conversation_id: str, counter: str,
                            windows: Sequence[tuple[str, int | None]],
                            known_at: Instant) -> tuple[int, int]:
        """``(tokens, messages)`` of the counted rows known at ``known_at`` on each branch of
        ``windows`` at positions ``<= upto`` (``None``: all): a running sum read per branch."""
