"""The assembly policy: immutable, versioned (id, version, content hash), read from TOML.

A :class:`Policy` is fixed before any candidate is selected; the assembler records its id,
version and hash in every :class:`~vigente.assemble.record.ContextAssembly` and keeps the whole
document there, so ``explain --rebuild`` works even when the file is gone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vigente.assemble.call_ids import CALL_IDS
from vigente.errors import InvalidInput
from vigente.jsonlimits import json_depth
from vigente.records.runtime import PRIVACY

__all__ = [
    "ENCODINGS",
    "Policy",
    "default_policy",
    "load_policy",
    "policy_from_document",
    "shipped_policies",
]

ENCODINGS = ("o200k_base", "cl100k_base")
# "turn": the exchanges of the current agent turn (since the latest user message) stay as they
# were; "latest": the latest N exchanges, whatever turn they belong to
RECENCY_SCOPES = ("turn", "latest")
# when a later reading of the same thing supersedes a tool memory
NEWER_READING = ("next_turn", "at_once", "off")

# section -> key -> (type, check) ; every key is required after defaults are merged
_SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "budget": {"tokens": int, "encoding": str},
    "recency": {
        "tool_exchanges": int,
        "max_result_bytes": int,
        "scope": str,
        "keep_small_bytes": int,
        "compact_lossless": bool,
    },
    "freshness": {"stale": str},
    "supersession": {"newer_reading": str},
    "privacy": {"raw": dict, "summary": dict},
    "recovery": {"protect": list, "protect_retry_critical": bool},
    "rehydration": {"max_bytes": int},
    "speakers": {"label_others": bool},
    "retention": {"assembly_days": int},
    "modes": {"moderators": list},
    "serialization": {"call_ids": str},
    "recall": {"enabled": bool, "share": (float, int), "max_share": (float, int), "k": int,
               "mode": str},
}


def _canonical(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Policy:
    """One validated policy document. ``hash`` is the sha256 of its canonical JSON."""

    id: str
    version: int
    hash: str
    document_json: str
    # the document parsed once: the rules read it for every candidate
    _parsed: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_parsed", json.loads(self.document_json))

    @property
    def document(self) -> dict[str, Any]:
        """A fresh copy of the document (the caller may change it)."""
        doc: dict[str, Any] = json.loads(self.document_json)
        return doc

    def get(self, section: str, key: str) -> Any:
        """One setting, as read from the document (shared: do not change it)."""
        return self._parsed[section][key]

    # the rules read these often: small accessors
    @property
    def budget(self) -> int:
        return int(self.get("budget", "tokens"))

    @property
    def encoding(self) -> str:
        return str(self.get("budget", "encoding"))

    def allows(self, kind: str, privacy: str, provider: str) -> bool:
        """May content of ``privacy`` go to ``provider`` as ``kind`` (``raw`` / ``summary``)?"""
        allowed = self.get("privacy", kind).get(privacy, [])
        return "*" in allowed or provider in allowed

    def routable(self, kind: str, privacy: str) -> bool:
        """Is there any provider that may receive it (else the reason is ``privacy``)?"""
        return bool(self.get("privacy", kind).get(privacy, []))

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "hash": self.hash}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "privacy":
            out[key] = _merge(out[key], value)
        elif key == "privacy" and isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = value
    return out


def _validate(doc: dict[str, Any], where: str) -> None:
    def bad(msg: str) -> InvalidInput:
        return InvalidInput(f"policy {where}: {msg}")

    if not isinstance(doc.get("id"), str) or not doc["id"].strip():
        raise bad("`id` must be a non-empty string")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise bad("`version` must be an integer >= 1")
    for section in doc:
        if section not in ("id", "version") and section not in _SCHEMA:
            raise bad(f"unknown section [{section}]: known are {', '.join(_SCHEMA)}")
    for section, keys in _SCHEMA.items():
        table = doc.get(section)
        if not isinstance(table, dict):
            raise bad(f"[{section}] must be a table")
        for key in table:
            if key not in keys:
                raise bad(f"unknown key {section}.{key}: known are {', '.join(keys)}")
        for key, kind in keys.items():
            value = table.get(key)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise bad(f"{section}.{key} must be {getattr(kind, '__name__', kind)}")
    if doc["budget"]["tokens"] < 1:
        raise bad("budget.tokens must be >= 1")
    if doc["budget"]["encoding"] not in ENCODINGS:
        raise bad(f"budget.encoding must be one of {', '.join(ENCODINGS)}")
    if (
        min(doc["recency"][k] for k in ("tool_exchanges", "max_result_bytes", "keep_small_bytes"))
        < 0
    ):
        raise bad("recency values must be >= 0")
    if doc["recency"]["scope"] not in RECENCY_SCOPES:
        raise bad(f"recency.scope must be one of {', '.join(map(repr, RECENCY_SCOPES))}")
    if doc["supersession"]["newer_reading"] not in NEWER_READING:
        raise bad(
            f"supersession.newer_reading must be one of {', '.join(map(repr, NEWER_READING))}"
        )
    if doc["serialization"]["call_ids"] not in CALL_IDS:
        raise bad(f"serialization.call_ids must be one of {', '.join(map(repr, CALL_IDS))}")
    if not 0 <= doc["recall"]["share"] <= 1:
        raise bad("recall.share must be a fraction of the budget from 0 to 1")
    if not 0 <= doc["recall"]["max_share"] <= 1:
        raise bad("recall.max_share must be a fraction of the budget from 0 to 1")
    if not 1 <= doc["recall"]["k"] <= 100:
        raise bad("recall.k must be from 1 to 100")
    if doc["recall"]["mode"] not in ("lexical", "semantic", "hybrid", "auto"):
        raise bad('recall.mode must be "lexical", "semantic", "hybrid" or "auto"')
    if doc["rehydration"]["max_bytes"] < 0:
        raise bad("rehydration.max_bytes must be >= 0")
    if doc["retention"]["assembly_days"] < 0:
        raise bad("retention.assembly_days must be >= 0 (0: keep until the account is deleted)")
    if doc["freshness"]["stale"] not in ("marker", "omit"):
        raise bad('freshness.stale must be "marker" or "omit"')
    for name in ("raw", "summary"):
        for cls, providers in doc["privacy"][name].items():
            if cls not in PRIVACY:
                raise bad(
                    f"privacy.{name}: unknown privacy class {cls!r} (known: {', '.join(PRIVACY)})"
                )
            if not isinstance(providers, list) or not all(isinstance(p, str) for p in providers):
                raise bad(f"privacy.{name}.{cls} must be a list of provider names")
    if not all(isinstance(m, str) for m in doc["modes"]["moderators"]):
        raise bad("modes.moderators must be a list of participant ids or labels")
    for status in doc["recovery"]["protect"]:
        if status not in ("pending", "failed", "deferred"):
            raise bad(f"recovery.protect: {status!r} is not pending, failed or deferred")


def _defaults() -> dict[str, Any]:
    text = resources.files("vigente.assemble").joinpath("default_policy.toml").read_text("utf-8")
    return tomllib.loads(text)


def policy_from_document(doc: dict[str, Any], where: str = "document") -> Policy:
    """A :class:`Policy` of a parsed document (the seed's defaults fill what it leaves out)."""
    merged = _merge(_defaults(), doc)
    _validate(merged, where)
    text = _canonical(merged)
    return Policy(merged["id"], merged["version"], hashlib.sha256(text.encode()).hexdigest(), text)


@functools.lru_cache(maxsize=1)
def default_policy() -> Policy:
    """The seed's defaults (immutable: built once)."""
    return policy_from_document({}, "default")


#: The largest policy file read, and its deepest nesting of arrays and inline tables.
MAX_POLICY_BYTES = 1 << 20
MAX_POLICY_DEPTH = 32


def shipped_policies() -> tuple[str, ...]:
    """The names of the policies shipped with vigente (``vigente/assemble/policies/NAME.toml``),
    which :func:`load_policy` reads by name, e.g. ``cache-stable``."""
    found = resources.files("vigente.assemble").joinpath("policies")
    return tuple(
        sorted(f.name[: -len(".toml")] for f in found.iterdir() if f.name.endswith(".toml"))
    )


def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy TOML file, or a shipped policy by name
    (:func:`shipped_policies`) when no file has that name; bad input is an
    :class:`InvalidInput`. The size and nesting are bounded before the TOML parser (which
    recurses) reads it."""
    p = Path(path)
    if not p.exists() and str(path) in shipped_policies():
        text = resources.files("vigente.assemble").joinpath("policies", f"{path}.toml")
        return policy_from_document(tomllib.loads(text.read_text("utf-8")), f"shipped {path!r}")
    try:
        if p.exists() and not p.is_file():
            raise InvalidInput(f"policy file {str(p)!r} is not a regular file: give a TOML file")
        with p.open("rb") as handle:
            raw = handle.read(MAX_POLICY_BYTES + 1)
        if len(raw) > MAX_POLICY_BYTES:
            raise InvalidInput(f"policy file {str(p)!r} is larger than {MAX_POLICY_BYTES} bytes: "
                               "a policy is a short TOML file (`vigente policy show` prints one)")
        if json_depth(raw, stop_above=MAX_POLICY_DEPTH) > MAX_POLICY_DEPTH:
            raise InvalidInput(f"policy file {str(p)!r} nests arrays or tables more than "
                               f"{MAX_POLICY_DEPTH} levels deep: a policy is a short TOML file")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise InvalidInput(
            f"policy file {str(p)!r} not found: give a TOML file or a shipped policy's name "
            f"({', '.join(shipped_policies())}; `vigente policy show` prints the default)"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"policy file {str(p)!r} is not valid TOML ({exc}): fix it") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read policy file {str(p)!r}: {exc.strerror}") from None
    if "id" not in data or "version" not in data:
        raise InvalidInput(
            f"policy {str(p)!r}: a policy file must give its own `id` and "
            "`version` (a changed policy is a new version)"
        )
    return policy_from_document(data, repr(str(p)))
