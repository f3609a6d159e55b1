"""The argument types the tools share: each one's validation and the description a model
reads in the tool's input schema."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

__all__ = ["Date", "FindingsLanguage", "Language", "Now", "Scope", "SearchLanguage"]

Date = Annotated[
    str, Field(description="YYYY-MM-DD or an RFC 3339 timestamp with an offset", max_length=64)
]
Scope = Annotated[
    dict[str, str | int],
    Field(description='scope entries, e.g. {"product": "mail"}; {} (default) is the global scope'),
]
Language = Annotated[
    Literal["en", "it"],
    Field(description="language of the statement and its citations (facts and documents)"),
]
SearchLanguage = Annotated[
    Literal["en", "it"], Field(description="language of each hit's citation and why")
]
FindingsLanguage = Annotated[
    Literal["en", "it"], Field(description="language of the findings' messages")
]
Now = Annotated[
    Date | None,
    Field(
        description=(
            "treat this moment as now (a date or an RFC 3339 timestamp with an offset), so that "
            "an answer as known now is pinned to it, as the CLI's --now; default: the clock"
        )
    ),
]
