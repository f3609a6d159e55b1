"""A LangChain retriever over ``vg.search``: time-filtered retrieval for RAG chains.

``VigenteRetriever(vg=vg, valid_at="2025-04-01")`` returns, as LangChain ``Document``\\ s, the
passages admissible at the reference date (``valid_at``; a date the question names — "as of
2015", "in vigore al 3 marzo 2025" — takes precedence) as known at ``known_at`` (default: now).
Each document's metadata carries the citation (the chain: "Circular 12/2025, in force from 3
March 2025, replacing Circular 7/2023"), the version and lineage ids, the validity interval,
why it was admitted, and, for a superseded version (``include_superseded=True``), its
successor (``superseded_by`` and ``superseded_by_label``); ``decision_id`` names the recorded
admissibility decision (``record=True``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from vigente.retrieval import ALL_SCOPES
from vigente.time import TimeLike, today

__all__ = ["VigenteRetriever"]


class VigenteRetriever(BaseRetriever):
    """``vg.search`` as a retriever: ``k`` passages in force at ``valid_at`` (default: the
    current date) as known at ``known_at`` (default: now), in ``scope`` (default: all)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    vg: Any
    valid_at: TimeLike | None = None
    known_at: TimeLike | None = None
    scope: Any = ALL_SCOPES
    k: int = 4
    include_superseded: bool = False
    mode: str = "auto"
    date_from_query: bool = True
    record: bool = True

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = self.vg.retrieval.search(
            query,
            valid_at=self.valid_at if self.valid_at is not None else today(),
            known_at=self.known_at,
            scope=self.scope,
            k=self.k,
            include_superseded=self.include_superseded,
            mode=self.mode,
            date_from_query=self.date_from_query,
            record=self.record,
        )
        docs = []
        for hit in result.hits:
            metadata = {k: v for k, v in hit.as_dict().items() if k != "passage"}
            metadata.update(
                valid_at=result.valid_at.isoformat(),
                known_at=result.known_at.isoformat(),
                decision_id=result.decision_id,
                superseded=hit.admission == "superseded",
            )
            docs.append(Document(page_content=hit.passage, metadata=metadata, id=hit.version_id))
        return docs
