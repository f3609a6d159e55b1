"""Policy-governed context assembly (seed 003, sections 3-5 and 7-9).

``vg.assembly`` is an :class:`Assembler`: ``assemble(conversation, branch, participant, …)``
builds a provider-ready request from the runtime graph by an explicit, versioned
:class:`Policy` and records a :class:`ContextAssembly`; ``explain`` / ``why_not`` /
``rebuild`` answer "why did the model see this, and why not that?".
"""

from __future__ import annotations

from vigente.assemble.policy import (
    Policy,
    default_policy,
    load_policy,
    policy_from_document,
    shipped_policies,
)
from vigente.assemble.serialize import FORMATS, Serializer, serializer
from vigente.assemble.service import ASSEMBLER_VERSION, Assembler, ContextAssembly
from vigente.assemble.tokens import Tokenizer, count_message_tokens, tiktoken_tokenizer

__all__ = [
    "ASSEMBLER_VERSION",
    "FORMATS",
    "Assembler",
    "ContextAssembly",
    "Policy",
    "Serializer",
    "Tokenizer",
    "count_message_tokens",
    "default_policy",
    "load_policy",
    "policy_from_document",
    "serializer",
    "shipped_policies",
    "tiktoken_tokenizer",
]
