"""Field-level redaction of credentials in what a model sees (DESIGN.md, invariant 10).

A tool result may hold a credential the caller never tagged: an API key in a config dump, a
bearer token in an HTTP trace, a card number in a payment record. :func:`redact_text` replaces
each one with a marker naming its rule (``[redacted:github_token]``; a card number keeps its
last four digits, ``[redacted:card_number, last four 4242]``, which is what a next question
about "the card ending 4242" needs) and returns one :class:`Redaction` per replacement — the
rule and the path (``payment.card``, ``items[2].token``, ``line 3``), never the value. The
rest of the result reaches the model unchanged, and a text without any credential comes back
as the very same string. The step is a pure function of the text, so the same policy and
snapshot give the same request text. The raw artifact keeps the bytes for the audit, behind
the privacy and rehydration checks.

The patterns are written here rather than taken from ``detect-secrets``: that tool scans files
line by line through global settings and reports a line, not a span or a JSON path, and has no
card-number rule that keeps the last four digits. Sources of the patterns:

* provider tokens: the rules of gitleaks' default configuration
  (github.com/gitleaks/gitleaks, ``config/gitleaks.toml``: ``aws-access-token``,
  ``github-pat``, ``github-fine-grained-pat``, ``github-oauth``, ``github-app-token``,
  ``github-refresh-token``, ``gitlab-pat``, ``slack-bot-token`` … ``slack-user-token``,
  ``stripe-access-token``, ``openai-api-key``, ``anthropic-api-key``, ``gcp-api-key``,
  ``jwt``, ``private-key``) and the providers' documented prefixes (GitHub: ``ghp_``,
  ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``; Stripe: ``sk_live_``,
  ``rk_live_``; Anthropic: ``sk-ant-``; OpenAI: ``sk-``, ``sk-proj-``);
* bearer tokens: RFC 6750 §2.1 (``Authorization: Bearer <b64token>``); credentials in a URL:
  RFC 3986 §3.2.1 (``user:password@host``);
* passwords and other secrets by field name (``password``, ``api_key``, ``client_secret``,
  ``cvv`` …), as detect-secrets' ``KeywordDetector`` does;
* card numbers: ISO/IEC 7812 — 13 to 19 digits (spaces or hyphens between groups allowed)
  with a valid Luhn check digit and an issuer prefix of a card network (Visa 4; Mastercard
  51–55, 2221–2720; American Express 34, 37; Discover 6011, 644–649, 65; JCB 3528–3589;
  Diners Club 300–305, 36, 38, 39; UnionPay 62), so that order numbers and timestamps stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from vigente.records.runtime import when_forgotten

__all__ = ["RULES", "Redaction", "card_number", "redact_content", "redact_memory", "redact_text",
           "redact_value"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """One credential taken out: the rule that matched and where (never the value)."""

    rule: str
    path: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path}


def _luhn(digits: str) -> bool:
    total = 0
    for n, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if n % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _issuer(digits: str) -> bool:
    """Does ``digits`` start with the issuer prefix of a card network (ISO/IEC 7812)?"""
    n = len(digits)
    two, three, four = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return n == 16
    if two in (34, 37):
        return n == 15
    if four == 6011 or 644 <= three <= 649 or two == 65:
        return 16 <= n <= 19
    if 3528 <= four <= 3589:
        return 16 <= n <= 19
    if 300 <= three <= 305 or two in (36, 38, 39):
        return 14 <= n <= 19
    if two == 62:
        return 16 <= n <= 19
    return False


def card_number(text: str) -> str | None:
    """The digits of ``text`` when it is a payment card number, else None."""
    digits = re.sub(r"[ -]", "", text)
    if not (13 <= len(digits) <= 19 and digits.isdigit()):
        return None
    return digits if _issuer(digits) and _luhn(digits) else None


def _cards(run: str, offset: int) -> list[tuple[int, int, str]]:
    """The card numbers inside a run of digit groups (``qty 2 4242 4242 4242 4242`` holds
    one after its first group): the whole run, else the longest span from one group boundary
    to another, left to right."""
    digits = card_number(run)
    if digits is not None:
        return [(offset, offset + len(run), digits)]
    starts = [0] + [n + 1 for n, ch in enumerate(run) if ch in " -"]
    ends = [n for n, ch in enumerate(run) if ch in " -"] + [len(run)]
    out: list[tuple[int, int, str]] = []
    at = 0
    for a in starts:
        if a < at:
            continue
        for b in reversed(ends):
            if b <= a:
                break
            digits = card_number(run[a:b])
            if digits is not None:
                out.append((offset + a, offset + b, digits))
                at = b
                break
    return out


def _marker(rule: str) -> str:
    return f"[redacted:{rule}]"


def _card_marker(digits: str) -> str:
    return f"[redacted:card_number, last four {digits[-4:]}]"


#: (rule, pattern, the group holding the secret: 0 for the whole match). Applied in order;
#: a marker matches no later rule.
RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private_key", re.compile(
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"), 0),
    ("jwt", re.compile(
        r"\bey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]*(?![A-Za-z0-9_-])"), 0),
    ("aws_access_key_id", re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"), 0),
    ("github_token", re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("stripe_secret_key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,99}\b"), 0),
    ("anthropic_api_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
    ("openai_api_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), 0),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,}=*)"), 1),
    ("url_password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]]+:([^\s@/\[\]]+)@"), 1),
    ("password_field", re.compile(
        r"(?i)\b(?:password|passwd|passphrase|secret|client[_-]?secret|api[_-]?key|"
        r"access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|cvv|cvc)"
        r"\b\"?\s*[:=]\s*\"?([^\s\"',;\[\]]{3,})"), 1),
)

# a run of digits that may be a card number (groups of digits split by single spaces/hyphens)
_CARD_RUN = re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d])")

#: Field names whose value is a secret whatever it looks like (compared lowercased, without
#: ``_``, ``-`` and spaces), as detect-secrets' KeywordDetector.
SECRET_FIELDS = frozenset({
    "password", "passwd", "passphrase", "pwd", "secret", "clientsecret", "apisecret",
    "apikey", "accesstoken", "refreshtoken", "authtoken", "idtoken", "sessiontoken", "token",
    "bearertoken", "privatekey", "secretkey", "secretaccesskey", "awssecretaccesskey",
    "authorization", "cvv", "cvc", "cvv2", "cvc2", "securitycode", "cardsecuritycode", "pin",
})
#: Field names whose digits are a card number even without a valid check digit.
CARD_FIELDS = frozenset({"cardnumber", "creditcardnumber", "pan", "primaryaccountnumber",
                         "ccnumber", "cardno"})

# a cheap first look: a text matching none of these holds no credential of the rules above
_SUSPECT = re.compile(
    r"PRIVATE KEY|\bey[A-Za-z0-9_-]{15,}\.|\b(?:A3T|AKIA|ASIA|ABIA|ACCA)|gh[pousr]_|github_pat_|"
    r"glpat-|xox[abposr]-|[sr]k_(?:live|test)_|\bsk-|AIza|(?i:bearer)|://[^\s/@]+:[^\s@/]+@|"
    r"\d(?:[ -]?\d){12}|"
    r"(?i:password|passwd|passphrase|pwd|secret|api[_-]?key|token|private[_-]?key|"
    r"authorization|cvv|cvc|cvv2|securitycode|\bpin\b|card|pan\b|primaryaccountnumber)"
)


def _line(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1}"


def redact_text(text: str, path: str = "") -> tuple[str, tuple[Redaction, ...]]:
    """``text`` with every credential replaced by its marker, and the redactions in text
    order. ``path``: where the text sits (a JSON path); a bare text's redactions name their
    line. Spans are found in the original text, earlier rules first (a span an earlier rule
    took is not matched again). Without a credential, ``text`` itself comes back."""
    if not _SUSPECT.search(text):
        return text, ()
    spans: list[tuple[int, int, str, str]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e, _, _ in spans)

    for rule, pattern, group in RULES:
        for m in pattern.finditer(text):
            a, b = m.span(group)
            if free(a, b):
                spans.append((a, b, rule, _marker(rule)))
    for m in _CARD_RUN.finditer(text):
        for a, b, digits in _cards(m.group(0), m.start()):
            if free(a, b):
                spans.append((a, b, "card_number", _card_marker(digits)))
    if not spans:
        return text, ()
    spans.sort()
    parts: list[str] = []
    at = 0
    for a, b, _, marker in spans:
        parts += [text[at:a], marker]
        at = b
    parts.append(text[at:])
    return "".join(parts), tuple(Redaction(rule, path or _line(text, a))
                                 for a, _, rule, _ in spans)


def _field(key: str) -> str:
    return re.sub(r"[\s_-]", "", key.lower())


def redact_value(value: Any, path: str = "") -> tuple[Any, tuple[Redaction, ...]]:
    """A JSON value with its credentials redacted: every string by :func:`redact_text`, a
    number that is a card number, and the whole value of a secret field (``password``,
    ``api_key`` …: :data:`SECRET_FIELDS`). Paths are ``a.b[0].c`` (``$`` for the root).
    Without a credential, ``value`` itself comes back."""
    found: list[Redaction] = []
    out = _walk(value, path, found.append)
    return (value, ()) if not found else (out, tuple(found))


def _walk(value: Any, path: str, add: Callable[[Redaction], None]) -> Any:
    if isinstance(value, str):
        text, found = redact_text(value, path or "$")
        for r in found:
            add(r)
        return text
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        digits = card_number(str(value)) if value >= 10**12 else None
        if digits is not None:
            add(Redaction("card_number", path or "$"))
            return _card_marker(digits)
        return value
    if isinstance(value, list):
        return [_walk(v, f"{path}[{n}]", add) for n, v in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            name = _field(str(key))
            if name in SECRET_FIELDS and _secret_value(item):
                add(Redaction("secret_field", where))
                out[key] = _marker("secret_field")
            elif name in CARD_FIELDS and _card_like(item):
                digits = re.sub(r"\D", "", str(item))
                add(Redaction("card_number", where))
                out[key] = _card_marker(digits)
            else:
                out[key] = _walk(item, where, add)
        return out
    return value


def _secret_value(item: Any) -> bool:
    if isinstance(item, bool) or item is None:
        return False
    if isinstance(item, str):
        plain = item.strip()
        return bool(plain) and not plain.startswith("[redacted:") and set(plain) != {"*"}
    return isinstance(item, int)


def _card_like(item: Any) -> bool:
    if isinstance(item, bool) or not isinstance(item, str | int):
        return False
    text = str(item)
    return not text.startswith("[redacted:") and 12 <= len(re.sub(r"\D", "", text)) <= 19 \
        and re.fullmatch(r"[\d \-]+", text.strip()) is not None


_CACHE: dict[tuple[str, str], tuple[str, tuple[Redaction, ...]]] = {}
_CACHE_LIMIT = 4_096
when_forgotten(_CACHE.clear)  # a purge (in any process) forgets the texts kept here


def redact_content(text: str, encoding: str, sha256: str | None = None
                   ) -> tuple[str, tuple[Redaction, ...]]:
    """A tool result's text as the model may see it. A JSON text (``json``, or ``utf-8``
    text holding a JSON object or array) is redacted field by field and, when anything was
    taken out, written again as JSON; any other text line by line; ``binary`` (a summary the
    assembler wrote) as it is. ``sha256``: the raw bytes' hash, to remember the answer (it
    is a pure function of the text)."""
    if encoding == "binary":
        return text, ()
    if sha256 is None:
        return _redact_content(text, encoding)
    found = _CACHE.get((sha256, encoding))
    if found is None:
        found = _redact_content(text, encoding)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[(sha256, encoding)] = found
    return found


def _redact_content(text: str, encoding: str) -> tuple[str, tuple[Redaction, ...]]:
    if not _SUSPECT.search(text):
        return text, ()
    stripped = text.lstrip()
    if encoding == "json" or stripped[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except ValueError:
            value = _NOT_JSON
        if value is not _NOT_JSON:
            out, found = redact_value(value)
            if not found:
                return text, ()
            return json.dumps(out, ensure_ascii=False), found
    return redact_text(text)


_NOT_JSON = object()


_MEMORIES: dict[int, tuple[Any, Any, tuple[Redaction, ...]]] = {}
when_forgotten(_MEMORIES.clear)


def redact_memory(node: Any) -> tuple[Any, tuple[Redaction, ...]]:
    """A memory (:class:`~vigente.records.runtime.ToolMemory` or ``UserMemory``) as a model
    may see it: its summary and facts redacted (paths ``summary`` and ``facts.…``), with the
    redactions its derivation made before (``redactions``) and these. Without a credential,
    ``node`` itself comes back (remembered by node: nodes are immutable)."""
    found = _MEMORIES.get(id(node))
    if found is not None and found[0] is node:
        return found[1], found[2]
    summary, in_summary = redact_text(node.summary, "summary")
    facts, in_facts = redact_value(node.facts, "facts")
    earlier = tuple(Redaction(r["rule"], r["path"]) for r in getattr(node, "redactions", ()))
    out = node
    if in_summary or in_facts:
        out = replace(node, summary=summary, facts=facts)
    answer = (out, (*earlier, *in_summary, *in_facts))
    if len(_MEMORIES) >= _CACHE_LIMIT:
        _MEMORIES.clear()
    _MEMORIES[id(node)] = (node, *answer)
    return answer
