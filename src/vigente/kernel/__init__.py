"""The kernel: versions on two time axes, bitemporal writes and evidence with reasons.

=============  ==========================================================================
module         holds
=============  ==========================================================================
service        :class:`Kernel`, the service the facade composes: facts, questions, imports
knowledge      :class:`Knowledge`, the protocol the document and retrieval services take
ledger         writes: statements, the versions they close and append, precedence rules
horizon        the answered horizon that keeps every answer once given unchanged
admission      which candidate rows are admitted at ``(t, k)``, the status, the label
answer         :class:`Evidence` and its parts: the structured answer
statement      the answer's sentence: one walker, a phrasebook per language
integrity      stored instants that cannot be read back, and their repair
=============  ==========================================================================
"""

from vigente.kernel.answer import Evidence, Exclusion, Interpretation, PrecedenceOutcome, Status
from vigente.kernel.knowledge import Knowledge
from vigente.kernel.ledger import WriteResult
from vigente.kernel.service import ImportReport, Kernel

__all__ = [
    "Evidence",
    "Exclusion",
    "ImportReport",
    "Interpretation",
    "Kernel",
    "Knowledge",
    "PrecedenceOutcome",
    "Status",
    "WriteResult",
]
