"""Time-filtered retrieval for a LangChain RAG chain: ``VigenteRetriever`` over ``vg.search``.

The passages in force at the question's date, superseded versions marked with their successor,
and the citation of each in its metadata. ``python examples/retriever_rag.py [DB]``.
"""

from __future__ import annotations

import sys

from vigente import Vigente
from vigente.evidence.documents import NewVersion
from vigente.integrations.retriever import VigenteRetriever


def main(db: str = ":memory:") -> None:
    with Vigente.open(db) as vg:
        vg.documents.add(
            NewVersion(
                lineage_id="kyc/due-diligence",
                reference="Circular 7/2023",
                title="Due diligence",
                text="Banks must verify a customer's identity within 30 days.",
                valid_from="2023-06-01",
                published="2023-05-20",
            )
        )
        vg.documents.add(
            NewVersion(
                lineage_id="kyc/due-diligence",
                reference="Circular 12/2025",
                title="Due diligence",
                text="Banks must verify a customer's identity before opening the account.",
                valid_from="2025-03-03",
                published="2025-02-20",
                relation="supersedes",
                predecessor="Circular 7/2023",
            )
        )
        retriever = VigenteRetriever(vg=vg, k=3, include_superseded=True, mode="lexical")
        for question in (
            "when must banks verify a customer's identity as of 2024-01-10",
            "when must banks verify a customer's identity",
        ):
            print("Q:", question)
            for doc in retriever.invoke(question):
                m = doc.metadata
                mark = f" (superseded by {m['superseded_by_label']})" if m["superseded"] else ""
                print(f"  [{m['valid_at']}] {doc.page_content}{mark}")
                print(f"    cite: {m['citation']}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
