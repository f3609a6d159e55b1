"""Field-level redaction of credentials in what a model or an API client reads (DESIGN.md,
invariant 10).

A tool result, a message, a call's arguments or a memory may hold a credential the caller never
tagged: an API key in a config dump, a bearer token in an HTTP trace, a card number in a payment
record. :func:`redact_text` replaces each one with a marker naming its rule
(``[redacted:github_token]``; a card number keeps its last four digits,
``[redacted:card_number, last four 4242]``, which is what a next question about "the card ending
4242" needs) and returns one :class:`Redaction` per replacement — the rule and the path
(``payment.card``, ``items[2].token``, ``line 3``), never the value.

**Every other byte stays.** A JSON text is redacted in place (:func:`redact_json`): a scanner
walks its tokens and replaces only the string values, keys and numbers a rule matched, each by
a valid JSON string holding the marker; number texts (``10.50``, ``1e400``, ``-0.0``), key
order, escapes and whitespace are the bytes given. Nothing is parsed and written again. A text
without any credential comes back as the very same string, and the step is a pure function of
the text, so the same policy and snapshot give the same request text. The raw artifact keeps
the bytes for the audit (``vigente runtime artifact``), behind the privacy and rehydration
checks.

**A number is a card only when its context says so.** A Luhn-valid number with a card network's
issuer prefix is masked when its key names a card (``card``, ``card_number``, ``pan``, ``cc`` …),
when its key is a bare ``number``/``value`` inside an object or under a key that names one
(``{"brand": "visa", "number": …}``, ``{"card": {"digits": …}}``), or, in text, when a card
word (``card``, ``visa``, ``mastercard``, ``carta``, ``tarjeta`` …) stands just before it or a
card word, expiry or CVV just after; ``"order_number": 4111111111111111`` and ``order
4111111111111111`` stay.

The patterns are written here rather than taken from ``detect-secrets``: that tool scans files
line by line through global settings and reports a line, not a span or a JSON path, and has no
card-number rule that keeps the last four digits. Sources of the patterns:

* provider tokens: the rules of gitleaks' default configuration
  (github.com/gitleaks/gitleaks, ``config/gitleaks.toml``: ``aws-access-token``,
  ``github-pat``, ``github-fine-grained-pat``, ``github-oauth``, ``github-app-token``,
  ``github-refresh-token``, ``gitlab-pat``, ``slack-bot-token`` … ``slack-user-token``,
  ``slack-webhook-url``, ``stripe-access-token``, ``openai-api-key``, ``anthropic-api-key``,
  ``gcp-api-key``, ``npm-access-token``, ``pypi-upload-token``, ``huggingface-access-token``,
  ``sendgrid-api-token``, ``digitalocean-pat``, ``shopify-access-token``,
  ``azure-storage-account-key``, ``jwt``, ``private-key``) and the providers' documented
  prefixes (GitHub: ``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``; Stripe:
  ``sk_live_``, ``rk_live_``, ``whsec_``; Anthropic: ``sk-ant-``; OpenAI: ``sk-``,
  ``sk-proj-``);
* bearer and basic credentials: RFC 6750 §2.1 (``Authorization: Bearer <b64token>``),
  RFC 7617 (``Authorization: Basic <base64>``) and any other ``Authorization`` header value;
  credentials in a URL: RFC 3986 §3.2.1 (``user:password@host``);
* assignments in text (env files, URL query strings, config lines): ``password=…``,
  ``db_password: …``, ``aws_secret_access_key=…``, ``AWS_SECRET_ACCESS_KEY: …``,
  ``api_key=…``, ``?token=…``, ``client_secret=…``, as detect-secrets' ``KeywordDetector``
  and ``AWSKeyDetector`` do;
* secrets by field name (``password``, ``api_key``, ``client_secret``, ``cvv`` …);
* card numbers: ISO/IEC 7812 — 13 to 19 digits (spaces or hyphens between groups allowed)
  with a valid Luhn check digit and an issuer prefix of a card network (Visa 4; Mastercard
  51–55, 2221–2720; American Express 34, 37; Discover 6011, 644–649, 65; JCB 3528–3589;
  Diners Club 300–305, 36, 38, 39; UnionPay 62), in a card's context (above).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vigente.records.runtime import when_forgotten

__all__ = ["CARD_FIELDS", "RAW_ARGUMENTS", "RULES", "SECRET_FIELDS", "Redaction", "Rule",
           "card_number", "redact_arguments", "redact_bytes", "redact_content", "redact_extraction",
           "redact_json", "redact_memory", "redact_message", "redact_record", "redact_text",
           "redact_value"]

#: The key under which the runtime keeps a call's arguments as the model wrote them (a JSON
#: text, redacted in place like a result).
RAW_ARGUMENTS = "__raw__"


@dataclass(frozen=True, slots=True)
class Redaction:
    """One credential taken out: the rule that matched and where (never the value)."""

    rule: str
    path: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path}


# -- card numbers ------------------------------------------------------------------------------
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
    """The digits of ``text`` when it is a payment card number, else None (the number alone:
    whether its context makes it a card is :func:`redact_text`'s and the JSON walk's)."""
    digits = re.sub(r"[ -]", "", text)
    if not (13 <= len(digits) <= 19 and digits.isascii() and digits.isdigit()):
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


#: Words that say a number is a payment card (in a key, a neighbouring value, or the text
#: around it), in the languages of the seeds and the common card networks.
_CARD_WORDS = re.compile(  # (on a lowercased text: a case-insensitive pattern is far slower)
    r"card|carta|tarjeta|karte|carte|cart[aã]o|kaart|\bvisa\b|master ?card|\bamex\b|"
    r"american express|\bdiscover\b|\bjcb\b|\bdiners\b|union ?pay|\bmaestro\b|\bpan\b|\bcc\b|"
    r"\bccn\b|credit|debit|\bcvv|\bcvc|\bexp(?:iry|ires|iration)?\b|scadenza|信用卡|银行卡|卡号|"
    r"\bpa(?:y|ys|id|ying) (?:with|by)\b|\b(?:charged|billed) to\b"
)


def _says_card_words(text: str) -> bool:
    """Does ``text`` hold a word that says card?"""
    return _CARD_WORDS.search(text.lower()) is not None


@functools.lru_cache(maxsize=8_192)
def _short_says_card(value: str) -> bool:
    """:func:`_says_card_words` of a short value (they repeat: remembered)."""
    return _says_card_words(value)


# after a number: a card word, an expiry (MM/YY, MM/YYYY) or a CVV
_CARD_AFTER = re.compile(r"(?:\b(?:0[1-9]|1[0-2])/(?:\d\d){1,2}\b)")
_BEFORE, _AFTER = 40, 24
#: Keys that say nothing of what a number is: their object (or the key above) decides.
_GENERIC_KEYS = frozenset({"", "n", "no", "nr", "num", "number", "numbers", "value", "digits",
                           "numero", "nummer", "numer", "nro"})


def _words(key: str) -> str:
    """A key as words (``ccNumber`` → ``cc number``, ``card_no`` → ``card no``)."""
    return re.sub(r"[_\-.]+", " ", re.sub(r"([a-z])([A-Z])", r"\1 \2", key)).lower()


@functools.lru_cache(maxsize=4_096)
def _names_card(key: str) -> bool:
    return _CARD_WORDS.search(_words(key)) is not None  # (_words lowercases)


def _near_card_words(text: str, a: int, b: int) -> bool:
    """Does the text around ``text[a:b]`` (its line, a few words either side) say card?"""
    start = max(0, a - _BEFORE)
    line_start = text.rfind("\n", start, a)
    before = text[line_start + 1 if line_start >= 0 else start:a]
    end = min(len(text), b + _AFTER)
    line_end = text.find("\n", b, end)
    after = text[b:line_end if line_end >= 0 else end]
    return bool(_says_card_words(before) or _says_card_words(after)
                or _CARD_AFTER.search(after))


def _marker(rule: str) -> str:
    return f"[redacted:{rule}]"


def _card_marker(digits: str) -> str:
    return f"[redacted:card_number, last four {digits[-4:]}]"


# -- the text rules ----------------------------------------------------------------------------
def _token_like(value: str) -> bool:
    """A value an assignment's key may hold as a secret: not a plain word (``token: expired``,
    ``secret_note: rotated``), not empty or masked, not a marker."""
    if value.startswith("[redacted:") or set(value) <= {"*", "x", "X", "."}:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return len(value) >= 8 and ((has_digit and has_alpha) or len(value) >= 20)


def _any_value(value: str) -> bool:
    """A password's value: anything but a mask, a marker or an empty word."""
    return bool(value) and not value.startswith("[redacted:") and set(value) != {"*"} \
        and value.lower() not in ("null", "none", "true", "false", "undefined")


@dataclass(frozen=True, slots=True)
class Rule:
    """A named credential pattern: ``group`` holds the secret (0: the whole match);
    ``accept``: a check of the matched secret (a plain word after ``token:`` is not one)."""

    name: str
    pattern: re.Pattern[str]
    group: int = 0
    accept: Callable[[str], bool] | None = field(default=None, compare=False)


# an identifier naming a secret in an assignment (``db_password``, ``AWS_SECRET_ACCESS_KEY``,
# ``x-api-key``), before ``=`` or ``:`` (optionally quoted, as in JSON written as text)
_KEY_PREFIX = r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*"
_KEY_SUFFIX = r"(?:[_.-][A-Za-z0-9]+)*[\"']?[ \t]*[:=][ \t]*[\"']?"
_VALUE = r"([^\s\"'&,;<>\[\]{}()]+)"

#: Applied in order; a span an earlier rule took is not matched again, and a marker matches
#: no rule (so redacting twice changes nothing).
RULES: tuple[Rule, ...] = (
    Rule("private_key", re.compile(
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)")),
    Rule("jwt", re.compile(
        r"\bey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]*(?![A-Za-z0-9_-])")),
    Rule("aws_access_key_id", re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    Rule("aws_secret_access_key", re.compile(
        r"(?i)(?<![A-Za-z0-9])aws[_.-]?secret(?:[_.-]?access)?[_.-]?key[\"']?\s*[:=]\s*[\"']?"
        r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 1),
    Rule("github_token", re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    Rule("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    Rule("slack_webhook", re.compile(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}")),
    Rule("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    Rule("stripe_secret_key", re.compile(r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b")),
    Rule("stripe_webhook_secret", re.compile(r"\bwhsec_[A-Za-z0-9+/=]{20,}")),
    Rule("anthropic_api_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    Rule("openai_api_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    Rule("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    Rule("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    Rule("pypi_token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    Rule("huggingface_token", re.compile(r"\bhf_[A-Za-z]{34}\b")),
    Rule("sendgrid_api_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b")),
    Rule("digitalocean_token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b")),
    Rule("shopify_token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    Rule("azure_storage_key", re.compile(r"(?i)\bAccountKey=([A-Za-z0-9+/]{86}==)"), 1),
    Rule("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,}=*)"), 1),
    Rule("authorization_header", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:[A-Za-z][A-Za-z0-9_-]{0,20}\s+)?([^\s\"',;\[\]{}]{8,})"), 1, _any_value),
    Rule("url_password", re.compile(
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]]+:([^\s@/\[\]]+)@"), 1),
    Rule("password_field", re.compile(
        r"(?i)" + _KEY_PREFIX + r"(?:password|passwd|passphrase|passcode|pwd|pin|cvv2?|cvc2?)"
        + _KEY_SUFFIX + _VALUE), 1, _any_value),
    Rule("secret_assignment", re.compile(
        r"(?i)" + _KEY_PREFIX
        + r"(?:secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|"
          r"credentials?|signature|sig)"
        + _KEY_SUFFIX + _VALUE), 1, _token_like),
)

# a run of digits that may be a card number (groups of digits split by single spaces/hyphens)
_CARD_RUN = re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?!\d)")

#: Field names whose value is a secret whatever it looks like (compared lowercased, without
#: ``_``, ``-`` and spaces), as detect-secrets' KeywordDetector.
SECRET_FIELDS = frozenset({
    "password", "passwd", "passphrase", "pwd", "secret", "clientsecret", "apisecret",
    "apikey", "accesstoken", "refreshtoken", "authtoken", "idtoken", "sessiontoken", "token",
    "bearertoken", "privatekey", "secretkey", "secretaccesskey", "awssecretaccesskey",
    "authorization", "cvv", "cvc", "cvv2", "cvc2", "securitycode", "cardsecuritycode", "pin",
    "dbpassword", "adminpassword", "userpassword", "newpassword", "oldpassword",
    "currentpassword", "confirmpassword", "passcode", "otp", "mfacode", "totp", "xapikey",
    "proxyauthorization", "cookie", "setcookie", "sessionid", "webhooksecret",
    "signingsecret", "encryptionkey", "masterkey", "accountkey", "connectionstring",
})
#: Field names whose digits are a card number even without a valid check digit.
CARD_FIELDS = frozenset({"cardnumber", "creditcardnumber", "debitcardnumber", "pan",
                         "primaryaccountnumber", "ccnumber", "cardno", "ccn", "cardnum",
                         "numerocarta", "numerotarjeta", "kartennummer"})

# A cheap first look, wider than the rules: a text none of these literals (in its lowercase
# form) and patterns finds holds no credential of the rules above; a JSON text none of the
# document's find holds none of the fields' either. (Literal alternatives over a lowercased
# text, not one case-insensitive pattern: about 20 times faster on a large result.)
_TEXT_WORDS = (
    "private", "hooks.slack", "accountkey", "bearer", "authori", "password", "passwd",
    "passphrase", "passcode", "secret", "token", "api_", "api-", "apikey", "access_", "access-",
    "accesskey", "auth_", "auth-", "authkey", "credential", "signature", "cvv", "cvc",
    # provider prefixes (lowercased: a superset of the case-sensitive rules)
    "akia", "asia", "abia", "acca", "a3t", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "k_live_",
    "k_test_", "k_prod_", "whsec_", "sk-", "aiza", "npm_", "pypi-", "hf_", "sg.", "_v1_",
    "shpat_", "shpca_", "shppa_", "shpss_",
)
_DOC_WORDS = (*_TEXT_WORDS, "key", "otp", "mfa", "cookie", "session", "security", "pin",
              "pwd", "pass", "connection", "p_w_d", "p-w-d", "p w d")
_LITERALS = re.compile("|".join(map(re.escape, _TEXT_WORDS))
                       + r"|(?:pin|pwd|pass)[\"']?\s*[:=]")
_DOC_LITERALS = re.compile("|".join(map(re.escape, _DOC_WORDS)))
_JWT_OR_URL = re.compile(r"ey[A-Za-z0-9_-]{15,}\.|://[^\s/@]+:[^\s@/]+@")
_DIGIT_RUN = re.compile(r"[0-9][0-9 -]{11,}")  # (a superset of a card's or a card field's)


def _suspect(text: str) -> bool:
    """Might ``text`` hold a credential of the text rules?"""
    return (_LITERALS.search(text.lower()) is not None or _JWT_OR_URL.search(text) is not None
            or _DIGIT_RUN.search(text) is not None)


def _suspect_document(text: str) -> bool:
    """Might a JSON ``text`` hold a credential of the text rules or the fields'?"""
    return (_DOC_LITERALS.search(text.lower()) is not None
            or _JWT_OR_URL.search(text) is not None or _DIGIT_RUN.search(text) is not None)


def _line(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1}"


def _spans(text: str, card_context: bool) -> list[tuple[int, int, str, str]]:
    """The credentials in ``text``: (start, end, rule, marker), in text order."""
    spans: list[tuple[int, int, str, str]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e, _, _ in spans)

    for rule in RULES:
        for m in rule.pattern.finditer(text):
            a, b = m.span(rule.group)
            if a < b and free(a, b) and (rule.accept is None or rule.accept(text[a:b])):
                spans.append((a, b, rule.name, _marker(rule.name)))
    for m in _CARD_RUN.finditer(text):
        for a, b, digits in _cards(m.group(0), m.start()):
            if free(a, b) and (card_context or _near_card_words(text, a, b)):
                spans.append((a, b, "card_number", _card_marker(digits)))
    spans.sort()
    return spans


def _splice(text: str, spans: list[tuple[int, int, str, str]]) -> str:
    parts: list[str] = []
    at = 0
    for a, b, _, marker in spans:
        parts += [text[at:a], marker]
        at = b
    parts.append(text[at:])
    return "".join(parts)


def redact_text(text: str, path: str = "", *, card_context: bool = False
                ) -> tuple[str, tuple[Redaction, ...]]:
    """``text`` with every credential replaced by its marker, and the redactions in text
    order. ``path``: where the text sits (a JSON path); a bare text's redactions name their
    line. ``card_context``: the text sits where a card number is expected (a card's field), so
    a card number in it needs no card word beside it. Spans are found in the original text,
    earlier rules first (a span an earlier rule took is not matched again). Without a
    credential, ``text`` itself comes back."""
    if not _suspect(text):
        return text, ()
    spans = _spans(text, card_context)
    if not spans:
        return text, ()
    return _splice(text, spans), tuple(Redaction(rule, path or _line(text, a))
                                       for a, _, rule, _ in spans)


@functools.lru_cache(maxsize=4_096)
def _field(key: str) -> str:
    return re.sub(r"[\s_-]", "", key.lower())


# -- what decides a JSON value -----------------------------------------------------------------
def _secret_string(value: str) -> bool:
    plain = value.strip()
    return bool(plain) and not plain.startswith("[redacted:") and set(plain) != {"*"}


def _card_digits(text: str) -> str | None:
    """The digits of a card field's value (12 to 19 digits, spaces or hyphens between)."""
    plain = text.strip()
    if plain.startswith("[redacted:") or re.fullmatch(r"[\d \-]+", plain) is None:
        return None
    digits = re.sub(r"\D", "", plain)
    return digits if 12 <= len(digits) <= 19 and digits.isascii() else None


def _says_card(key: str, frame_card: bool) -> bool:
    """Is a value under ``key`` (in an object or array whose neighbours say card when
    ``frame_card``) in a card's context? Its key decides, a generic one defers to the frame."""
    if _names_card(key):
        return True
    return frame_card and _field(key) in _GENERIC_KEYS


def _scalar_marker(key: str, kind: str, text: str, card: bool) -> tuple[str, str] | None:
    """The (rule, marker) that replaces a whole scalar under ``key``: a secret field's value,
    a card field's digits, a card number in a card's context; None: the scalar stays (a
    string still goes through the text rules). ``kind``: ``string`` or ``number``;
    ``text``: the string's value or the number's text."""
    name = _field(key)
    if name in SECRET_FIELDS and (kind == "number" or _secret_string(text)):
        return "secret_field", _marker("secret_field")
    if name in CARD_FIELDS:
        digits = _card_digits(text) if kind == "string" or text.isdigit() else None
        if digits is not None:
            return "card_number", _card_marker(digits)
    if kind == "number" and card and text.isdigit():
        digits = card_number(text)
        if digits is not None:
            return "card_number", _card_marker(digits)
    return None


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# -- JSON text, redacted in place --------------------------------------------------------------
_TOKEN = re.compile(
    r'[ \t\n\r]*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|'
    r"(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity))"
)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


def _decode(token: str) -> tuple[str, list[int]]:
    """A JSON string token's value and, for each of its characters, where it starts in the
    token (one more entry: the closing quote), so a span of the value is a span of bytes."""
    body = token[1:-1]
    if "\\" not in body:
        return body, list(range(1, len(token)))
    out: list[str] = []
    at: list[int] = []
    n = 0
    while n < len(body):
        ch = body[n]
        if ch != "\\":
            out.append(ch)
            at.append(n + 1)
            n += 1
            continue
        esc = body[n + 1]
        if esc != "u":
            out.append(_ESCAPES[esc])
            at.append(n + 1)
            n += 2
            continue
        code = int(body[n + 2:n + 6], 16)
        width = 6
        if 0xD800 <= code < 0xDC00 and body[n + 6:n + 8] == "\\u":
            low = int(body[n + 8:n + 12], 16)
            if 0xDC00 <= low < 0xE000:
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                width = 12
        out.append(chr(code))
        at.append(n + 1)
        n += width
    at.append(len(token) - 1)
    return "".join(out), at


# span, kind, key, the path of its object or array (None: the text's root), its key or index
_Item = tuple[int, int, str, str, "str | None", "int | str"]


@dataclass(slots=True)
class _Frame:
    """An object or array being read: its path, the key it sits under, its keys and short
    string values (what says "card"), and the scalars decided when it closes."""

    array: bool
    path: str
    key: str
    inherited: bool  # a key above names a card
    index: int = 0
    expect_key: bool = True
    current: str = ""  # the key of the value being read (objects)
    names_card: bool = False  # a key or short value of this object or array says card
    pending: list[_Item] = field(default_factory=list)




@functools.lru_cache(maxsize=4_096)
def _key_info(token: str) -> tuple[str, str, tuple[tuple[int, int, str, str], ...], bool]:
    """A key's token read once per text (keys repeat): its value, its value as shown, the
    spans to replace in the token (start, end, rule, escaped marker), whether it says card."""
    key, offsets = _decode(token)
    spans = _spans(key, False) if _suspect(key) else []
    edits = tuple((offsets[a], offsets[b], rule, _escaped(marker)) for a, b, rule, marker in spans)
    return key, _splice(key, spans) if spans else key, edits, _names_card(key)


def _matters(kind: str, token: str, key: str) -> bool:
    """Might a scalar under ``key`` be redacted? (Most are not: they are not kept for later.)"""
    name = _field(key)
    if name in SECRET_FIELDS or name in CARD_FIELDS:
        return True
    if kind == "number":
        return len(token) >= 13
    return "\\" in token or (_short_suspect(token) if len(token) <= 64 else _suspect(token))


@functools.lru_cache(maxsize=8_192)
def _short_suspect(token: str) -> bool:
    """:func:`_suspect` of a short token (they repeat: remembered)."""
    return _suspect(token)


class _Scan:
    """One JSON text's tokens, with what to replace (span, replacement) and the redactions."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.edits: list[tuple[int, int, str]] = []
        self.found: list[tuple[int, Redaction]] = []

    def run(self) -> None:
        text, stack = self.text, list[_Frame]()
        top: list[_Item] = []
        end = 0
        for m in _TOKEN.finditer(text):
            if m.end() == end:
                break
            end = m.end()
            group = m.lastindex or 0
            frame = stack[-1] if stack else None
            if group == 2:
                punct = m.group(2)
                if punct in "{[":
                    key, where = self._slot(frame)
                    card = frame is not None and (frame.inherited or _names_card(key))
                    stack.append(_Frame(punct == "[", where, key, card))
                elif punct in "}]":
                    self._close(stack.pop())
                elif punct == "," and frame is not None:
                    if frame.array:
                        frame.index += 1
                    else:
                        frame.expect_key = True
                continue
            token = m.group(group)
            if group == 1:
                if frame is not None and not frame.array and frame.expect_key:
                    self._key(frame, m.start(1), token)
                    continue
                kind = "string"
                if frame is not None and len(token) <= 42 and not frame.names_card \
                        and _short_says_card(token if "\\" not in token else _decode(token)[0]):
                    frame.names_card = True
            else:
                kind = "number"
                if token[:1] not in "-0123456789":
                    continue  # true, false, null, NaN, Infinity
            key = "" if frame is None else frame.key if frame.array else frame.current
            if not _matters(kind, token, key):
                continue
            a, b = m.span(1 if kind == "string" else 3)
            step: int | str = 0 if frame is None else frame.index if frame.array else key
            item: _Item = (a, b, kind, key, None if frame is None else frame.path, step)
            (frame.pending if frame is not None else top).append(item)
        if text[end:].strip():
            raise ValueError("not JSON text")  # (the caller parsed it first: never here)
        for item in top:
            self._decide(item, False)

    def _slot(self, frame: _Frame | None) -> tuple[str, str]:
        """The key and path of the value that starts now."""
        if frame is None:
            return "", self.path
        if frame.array:
            return frame.key, _child(frame.path, frame.index)
        return frame.current, _child(frame.path, frame.current)

    def _key(self, frame: _Frame, a: int, token: str) -> None:
        """A key: redacted like a string, named in paths as redacted; it may say card."""
        _, shown, edits, says_card = _key_info(token)
        for s, e, rule, marker in edits:
            self.edits.append((a + s, a + e, marker))
            self.found.append((a + s, Redaction(rule, _child(frame.path, shown))))
        frame.current = shown
        frame.expect_key = False
        if says_card:
            frame.names_card = True

    def _close(self, frame: _Frame) -> None:
        card = frame.names_card or frame.inherited
        for item in frame.pending:
            self._decide(item, card)

    def _decide(self, item: _Item, frame_card: bool) -> None:
        a, b, kind, key, above, step = item
        where = self.path if above is None else _child(above, step)
        token = self.text[a:b]
        value, offsets = _decode(token) if kind == "string" else (token, [])
        card = _says_card(key, frame_card)
        whole = _scalar_marker(key, kind, value, card)
        if whole is not None:
            rule, marker = whole
            self.edits.append((a, b, json.dumps(marker, ensure_ascii=False)))
            self.found.append((a, Redaction(rule, where or "$")))
            return
        if kind != "string" or not _suspect(value):
            return
        for s, e, rule, marker in _spans(value, card):
            self.edits.append((a + offsets[s], a + offsets[e], _escaped(marker)))
            self.found.append((a + offsets[s], Redaction(rule, where or "$")))


def _escaped(marker: str) -> str:
    """A marker as the inside of a JSON string."""
    return json.dumps(marker, ensure_ascii=False)[1:-1]


def redact_json(text: str, path: str = "") -> tuple[str, tuple[Redaction, ...]] | None:
    """A JSON text with its credentials redacted in place: each string value, key or number a
    rule matched replaced by a JSON string holding its marker (inside a string, the matched
    span only), every other byte as given — number texts, escapes, key order, whitespace.
    None when ``text`` is not JSON text. Without a credential, ``text`` itself comes back."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return None
    # escapes can spell a credential the raw text does not show (``pass\u0077ord``)
    if "\\" not in text and not _suspect_document(text):
        return text, ()
    scan = _Scan(text, path)
    scan.run()
    if not scan.edits:
        return text, ()
    scan.edits.sort()
    parts: list[str] = []
    at = 0
    for a, b, new in scan.edits:
        parts += [text[at:a], new]
        at = b
    parts.append(text[at:])
    return "".join(parts), tuple(r for _, r in sorted(scan.found, key=lambda f: f[0]))


# -- values (facts, arguments, payloads) -------------------------------------------------------
def redact_value(value: Any, path: str = "") -> tuple[Any, tuple[Redaction, ...]]:
    """A JSON value with its credentials redacted by the rules of :func:`redact_json`: every
    string by :func:`redact_text`, a number that is a card in a card's context, the whole
    value of a secret field (``password``, ``api_key`` …: :data:`SECRET_FIELDS`), keys too (a
    path names a redacted key by its marker); a call's raw arguments text
    (:data:`RAW_ARGUMENTS`) in place. Paths are ``a.b[0].c`` (``$`` for the root). A number
    kept as its text (an exact reading's ``JSONNumber``) is a number. Without a credential,
    ``value`` itself comes back."""
    found: list[Redaction] = []
    out = _walk(value, path, "", False, False, found.append)
    return (value, ()) if not found else (out, tuple(found))


def _number_text(value: Any) -> str | None:
    """A number's text, for the card check (``None``: not a number)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    text = getattr(value, "text", None)  # artifact_memory.JSONNumber
    return text if isinstance(text, str) else None


def _frame_card(value: Any) -> bool:
    """Do a container's keys or short string values say card?"""
    if isinstance(value, Mapping):
        return any(_names_card(str(k)) or (isinstance(v, str) and len(v) <= 40
                                           and _short_says_card(v))
                   for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(isinstance(v, str) and len(v) <= 40 and _short_says_card(v) for v in value)
    return False


#: A value a rule took whole: (its text, the rule, the marker), to take out where a text
#: restates it (an extractor's summary of its facts).
_Taken = tuple[str, str, str]


def _walk(value: Any, path: str, key: str, frame_card: bool, inherited: bool,
          add: Callable[[Redaction], None], take: Callable[[_Taken], None] | None = None
          ) -> Any:
    """``value`` under ``key`` (in a container whose neighbours say card: ``frame_card``)."""
    card = _says_card(key, frame_card)
    if isinstance(value, str):
        whole = _scalar_marker(key, "string", value, card)
        if whole is not None:
            add(Redaction(whole[0], path or "$"))
            if take is not None:
                take((value, *whole))
            return whole[1]
        if key == RAW_ARGUMENTS:
            redacted = redact_json(value, _parent(path))
            if redacted is not None:
                for r in redacted[1]:
                    add(r)
                return redacted[0]
        text, found = redact_text(value, path or "$", card_context=card)
        for r in found:
            add(r)
        return text
    number = _number_text(value)
    if number is not None:
        whole = _scalar_marker(key, "number", number, card)
        if whole is not None:
            add(Redaction(whole[0], path or "$"))
            if take is not None:
                take((number, *whole))
            return whole[1]
        return value
    if isinstance(value, Mapping):
        below = inherited or _names_card(key)
        here = below or _frame_card(value)
        out: dict[Any, Any] = {}
        for k, item in value.items():
            name = str(k)
            shown, in_key = redact_text(name, "")
            where = _child(path, shown)
            for r in in_key:
                add(Redaction(r.rule, where))
            out[shown if in_key else k] = _walk(item, where, name, here, below, add, take)
        return out
    if isinstance(value, list | tuple):
        below = inherited or _names_card(key)
        here = below or _frame_card(value)
        items = [_walk(v, _child(path, n), key, here, below, add, take)
                 for n, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    return value


def _scrub(text: str, taken: list[_Taken], path: str) -> tuple[str, list[Redaction]]:
    """``text`` without the values a rule took whole elsewhere (a PIN's ``1234`` restated in a
    summary as ``pin=1234``), each where it stands as a word."""
    found: list[Redaction] = []
    for value, rule, marker in dict.fromkeys(taken):
        if len(value.strip()) < 3 or value not in text:
            continue
        pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])")
        text, n = pattern.subn(marker.replace("\\", r"\\"), text)  # (a literal)
        found += [Redaction(rule, path)] * n
    return text, found


def _parent(path: str) -> str:
    """The path of the object holding ``path``'s last key (a raw arguments text stands for
    its call's arguments)."""
    return path.rpartition(".")[0]


def redact_arguments(arguments: Mapping[str, Any], path: str = "arguments"
                     ) -> tuple[dict[str, Any], tuple[Redaction, ...]]:
    """A call's arguments as a model or a client may read them: the values by
    :func:`redact_value`, the raw text the model wrote (:data:`RAW_ARGUMENTS`) in place, its
    redactions named by the argument's path (``arguments.password``)."""
    found: list[Redaction] = []
    out = _walk(dict(arguments), path, "", False, False, found.append)
    return (dict(arguments), ()) if not found else (out, tuple(found))


# -- tool results and memories -----------------------------------------------------------------
_CACHE: dict[tuple[str, str], tuple[str, tuple[Redaction, ...]]] = {}
_CACHE_LIMIT = 4_096
when_forgotten(_CACHE.clear)  # a purge (in any process) forgets the texts kept here


def redact_content(text: str, encoding: str, sha256: str | None = None
                   ) -> tuple[str, tuple[Redaction, ...]]:
    """A tool result's (or a message's) text as a model may see it. A JSON text (``json``, or
    ``utf-8`` text holding a JSON object or array) is redacted in place
    (:func:`redact_json`: every byte but the redacted spans as given); any other text by the
    text rules (paths ``line N``); ``binary`` (a summary the assembler wrote) as it is.
    ``sha256``: the raw bytes' hash, to remember the answer (it is a pure function of the
    text)."""
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
    if "\\" not in text and not _suspect_document(text):
        return text, ()
    if encoding == "json" or text.lstrip()[:1] in ("{", "["):
        redacted = redact_json(text)
        if redacted is not None:
            return redacted
    return redact_text(text)


def _notes(node: Any) -> tuple[dict[str, tuple[str, ...]], list[Redaction]]:
    """A record's ``limit_notes`` and ``ambiguity_notes`` that change when redacted."""
    changes: dict[str, tuple[str, ...]] = {}
    found: list[Redaction] = []
    for name in ("limit_notes", "ambiguity_notes"):
        notes = getattr(node, name, None) or ()
        shown = []
        for n, note in enumerate(notes):
            text, here = redact_text(note, f"{name}[{n}]")
            shown.append(text)
            found += here
        if tuple(shown) != tuple(notes):
            changes[name] = tuple(shown)
    return changes, found


def redact_extraction(extraction: Any, shown: Any = None) -> tuple[Any, tuple[Redaction, ...]]:
    """What an extractor derived from a result as it was (an
    :class:`~vigente.runtime.artifact_memory.Extraction`), with its credentials taken out: the
    facts value by value (paths as the result's: ``integration.password``), so a marker never
    splits a ``key: value`` line they were parsed from; the summary (``summary``) and notes of
    ``shown`` — the extraction of the result and arguments with their credentials taken out,
    when there were any — else of ``extraction``, by the text rules and without any value the
    facts' rules took whole."""
    found: list[Redaction] = []
    taken: list[_Taken] = []
    facts = _walk(extraction.facts, "", "", False, False, found.append, taken.append)
    source = extraction if shown is None else shown
    summary, in_summary = _scrub(source.summary, taken, "summary")
    summary, more = redact_text(summary, "summary")
    notes: dict[str, tuple[str, ...]] = {}
    for name in ("limit_notes", "ambiguity_notes"):
        texts = []
        for n, note in enumerate(getattr(source, name, None) or ()):
            text, here = _scrub(note, taken, f"{name}[{n}]")
            text, also = redact_text(text, f"{name}[{n}]")
            texts.append(text)
            in_summary += [*here, *also]
        notes[name] = tuple(texts)
    everything = (*found, *in_summary, *more)
    if not everything and shown is None:
        return extraction, ()
    return replace(source, facts=facts if found else extraction.facts, summary=summary,
                   **notes), everything


def redact_bytes(data: bytes, encoding: str, path: str = ""
                 ) -> tuple[bytes, tuple[Redaction, ...]]:
    """Raw call arguments or a result as a model may read them (``binary``: as they are): a
    JSON text in place (paths below ``path``), any other text by the text rules. Without a
    credential, ``data`` itself comes back."""
    if encoding == "binary":
        return data, ()
    text = data.decode("utf-8")
    if "\\" not in text and not _suspect_document(text):
        return data, ()
    redacted = redact_json(text, path) if encoding == "json" or \
        text.lstrip()[:1] in ("{", "[") else None
    if redacted is None:
        redacted = redact_text(text, path)
    return (data, ()) if not redacted[1] else (redacted[0].encode("utf-8"), redacted[1])


_MEMORIES: dict[int, tuple[Any, Any, tuple[Redaction, ...]]] = {}
_RECORDS: dict[int, tuple[Any, Any, tuple[Redaction, ...]]] = {}


def redact_record(node: Any) -> tuple[Any, tuple[Redaction, ...]]:
    """A message, a tool call or a checkpoint as a model may see it: a message's ``content``
    (a JSON text in place, else line by line: paths ``content``, ``content.a.b``) and its
    ``speaker`` (path ``speaker``: a name that is a credential is not shown), a call's
    ``arguments`` (``arguments.password``; its raw text in place), a checkpoint's ``state``
    (``state.…``); a memory by :func:`redact_memory`. Without a credential, ``node`` itself
    comes back (remembered by node: nodes are immutable)."""
    kind = getattr(node, "KIND", "")
    if kind in ("memory", "user_memory"):
        return redact_memory(node)
    found = _RECORDS.get(id(node))
    if found is not None and found[0] is node:
        return found[1], found[2]
    out: Any = node
    redactions: tuple[Redaction, ...] = ()
    if kind == "message":
        text, redactions = redact_message(node.content)
        speaker, in_speaker = (node.speaker, ()) if node.speaker is None else \
            redact_text(node.speaker, "speaker")
        if redactions or in_speaker:
            out = replace(node, content=text, speaker=speaker)
            redactions = (*redactions, *in_speaker)
    elif kind == "tool_call":
        arguments, redactions = redact_arguments(node.arguments)
        if redactions:
            out = replace(node, arguments=arguments)
    elif kind == "checkpoint":
        state, redactions = redact_value(node.state, "state")
        if redactions:
            out = replace(node, state=state)
    if len(_RECORDS) >= _CACHE_LIMIT:
        _RECORDS.clear()
    _RECORDS[id(node)] = (node, out, redactions)
    return out, redactions


def redact_message(text: str, path: str = "content") -> tuple[str, tuple[Redaction, ...]]:
    """A message's text as a model or a client may read it: a JSON text redacted in place
    (paths below ``path``), any other text by the text rules (paths ``path``)."""
    if "\\" not in text and not _suspect_document(text):
        return text, ()
    if text.lstrip()[:1] in ("{", "["):
        redacted = redact_json(text, path)
        if redacted is not None:
            return redacted
    return redact_text(text, path)


def redact_memory(node: Any) -> tuple[Any, tuple[Redaction, ...]]:
    """A memory (:class:`~vigente.records.runtime.ToolMemory` or ``UserMemory``) as a model
    may see it: its summary, facts and notes redacted (paths ``summary``, ``facts.…``,
    ``limit_notes[0]`` …), with the redactions its derivation made before (``redactions``)
    and these. Without a credential, ``node`` itself comes back (remembered by node: nodes
    are immutable)."""
    found = _MEMORIES.get(id(node))
    if found is not None and found[0] is node:
        return found[1], found[2]
    summary, in_summary = redact_text(node.summary, "summary")
    facts, in_facts = redact_value(node.facts, "facts")
    notes, in_notes = _notes(node)
    changes: dict[str, Any] = dict(notes)
    if in_summary and getattr(node, "unsupported", ()):
        # a claim's unsupported values quote its summary: one inside a credential is named so
        changes["unsupported"] = tuple(
            {**u, "value": "[redacted]", "reason": "a credential the claim states (redacted)"}
            if str(u.get("value", "")) not in summary else u
            for u in node.unsupported)
    earlier = tuple(Redaction(r["rule"], r["path"]) for r in getattr(node, "redactions", ()))
    out = node
    if in_summary or in_facts or changes:
        out = replace(node, summary=summary, facts=facts, **changes)
    answer = (out, (*earlier, *in_summary, *in_facts, *in_notes))
    if len(_MEMORIES) >= _CACHE_LIMIT:
        _MEMORIES.clear()
    _MEMORIES[id(node)] = (node, *answer)
    return answer


def _forget() -> None:
    """Forget every text remembered here (a purge forgets what it deleted): the answers by
    content hash and by node, and the keys and short values remembered by the scanner."""
    _CACHE.clear()
    _MEMORIES.clear()
    _RECORDS.clear()
    for cached in (_key_info, _short_says_card, _short_suspect, _names_card, _field):
        cached.cache_clear()


when_forgotten(_forget)
