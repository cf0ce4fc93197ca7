"""Mask secrets in text we generate or move (spec 30.9: the rules of Hermes's redactor).

``redact(text)`` applies, in order: vendor-prefixed keys, upper-case env assignments and
config keys, JSON credential fields, YAML-style keys, Authorization and API-key headers,
Telegram bot tokens, private-key blocks, database connection strings, bare-token URL userinfo,
JWTs, pure form bodies and phone numbers. A long secret keeps its first 6 and last 4
characters (``sk-pro...6b5c``), a short one becomes ``***``. Ordinary text (hashes, UUIDs,
base64 images, URLs with query strings) passes through.

It runs on every summary, fallback summary, spill preview and report we write. The
environment variable ``HERMESCTX_REDACT`` (``0``/``false``/``no``/``off``) or the config key
``redaction.enabled: false`` turns it off; ``force=True`` ignores that switch.
"""

from __future__ import annotations

import os
import re
from typing import Any

_PREFIXES = [
    r"sk-[A-Za-z0-9_-]{10,}", r"ghp_[A-Za-z0-9]{10,}", r"github_pat_[A-Za-z0-9_]{10,}", r"gho_[A-Za-z0-9]{10,}",
    r"ghu_[A-Za-z0-9]{10,}", r"ghs_[A-Za-z0-9]{10,}", r"ghr_[A-Za-z0-9]{10,}", r"xapp-\d+-[A-Za-z0-9-]{10,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}", r"AIza[A-Za-z0-9_-]{30,}", r"pplx-[A-Za-z0-9]{10,}", r"fal_[A-Za-z0-9_-]{10,}",
    r"fc-[A-Za-z0-9]{10,}", r"bb_live_[A-Za-z0-9_-]{10,}", r"gAAAA[A-Za-z0-9_=-]{20,}", r"AKIA[A-Z0-9]{16}",
    r"sk_live_[A-Za-z0-9]{10,}", r"sk_test_[A-Za-z0-9]{10,}", r"rk_live_[A-Za-z0-9]{10,}", r"SG\.[A-Za-z0-9_-]{10,}",
    r"hf_[A-Za-z0-9]{10,}", r"r8_[A-Za-z0-9]{10,}", r"npm_[A-Za-z0-9]{10,}", r"pypi-[A-Za-z0-9_-]{10,}",
    r"dop_v1_[A-Za-z0-9]{10,}", r"doo_v1_[A-Za-z0-9]{10,}", r"am_[A-Za-z0-9_-]{10,}", r"sk_[A-Za-z0-9_]{10,}",
    r"tvly-[A-Za-z0-9]{10,}", r"exa_[A-Za-z0-9]{10,}", r"gsk_[A-Za-z0-9]{10,}", r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}", r"hsk-[A-Za-z0-9]{10,}", r"mem0_[A-Za-z0-9]{10,}", r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}", r"ntn_[A-Za-z0-9]{10,}", r"fw-[A-Za-z0-9]{30,}", r"fw_[A-Za-z0-9]{30,}",
    r"fpk_[A-Za-z0-9]{30,}",
]
# the literal start of each pattern: a cheap test before running the big alternation
_PREFIX_LITERALS = tuple(re.match(r"[^\[(\\.?*+|{^$]*", p).group(0) for p in _PREFIXES)
_PREFIX = re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(_PREFIXES) + r")(?![A-Za-z0-9_-])")

_ENV_NAMES = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)"
_ENV_ASSIGN = re.compile(rf"([A-Z0-9_]{{0,50}}{_ENV_NAMES}[A-Z0-9_]{{0,50}})\s*=\s*(['\"]?)(\S+)\2")
_CFG_NAMES = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential|auth)"
_CFG_VALUE = r"(['\"]?)([^\s&]+?)\2(?=[\s&]|$)"
_CFG_WORD = re.compile(_CFG_NAMES, re.IGNORECASE)  # every config-key match holds one: a linear pre-check
_CFG_DOTTED = re.compile(
    rf"((?:[A-Za-z0-9_\-]+\.)+[A-Za-z0-9_.\-]*{_CFG_NAMES}[A-Za-z0-9_.\-]*"
    rf"|[A-Za-z0-9_.\-]*{_CFG_NAMES}[A-Za-z0-9_.\-]*\.[A-Za-z0-9_.\-]+)={_CFG_VALUE}", re.IGNORECASE)
_CFG_LINE = re.compile(rf"(^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_\-]*{_CFG_NAMES}[A-Za-z0-9_\-]*)={_CFG_VALUE}",
                       re.IGNORECASE | re.MULTILINE)
_ENV_LOOKUP = re.compile(r"^(?:os\.(?:getenv|environ)|process\.env|\$ENV\{)")
_YAML_NAMES = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential)"
_YAML = re.compile(rf"(^[ \t]*[A-Za-z0-9_.\-]*{_YAML_NAMES}[A-Za-z0-9_.\-]*)(:[ \t]*)(?!['\"])([^\s&]+)",
                   re.IGNORECASE | re.MULTILINE)
_JSON_NAMES = (r"(?:api_?[Kk]ey|token|secret|password|access_token|refresh_token|auth_token|bearer|"
               r"secret_value|raw_secret|secret_input|key_material)")
_JSON_FIELD = re.compile(rf'("{_JSON_NAMES}")\s*:\s*"([^"]+)"', re.IGNORECASE)
_AUTH_HEADER = re.compile(r"((?:Proxy-)?Authorization:\s*)([A-Za-z][\w.+-]*\s+)?([^\s\"']+)", re.IGNORECASE)
_KEY_HEADER = re.compile(r"((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)"
                         r"\s*:\s*)(\S+)", re.IGNORECASE)
_TELEGRAM = re.compile(r"(bot)?(\d{8,}):([-A-Za-z0-9_]{30,})")
_PRIVATE_KEY = re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----")
_DB_URL = re.compile(r"((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)", re.IGNORECASE)
_URL_TOKEN = re.compile(r"((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@[^\s]+)", re.IGNORECASE)
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}")
_FORM = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*(?:&[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*)+$")
_FORM_KEYS = frozenset({"access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "client_secret",
                        "password", "auth", "jwt", "session", "secret", "key", "code", "signature",
                        "x-amz-signature"})
_URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)([^\s:@/]+):([^\s@/]+)@")
_PHONE = re.compile(r"(\+[1-9]\d{6,14})(?![A-Za-z0-9])")
_OFF = {"0", "false", "no", "off"}


def enabled(environ=None) -> bool:
    value = (environ if environ is not None else os.environ).get("HERMESCTX_REDACT", "true")
    return value.strip().lower() not in _OFF


def mask(token: str) -> str:
    """Keep 6 + 4 characters of a secret of 18 or more; hide a shorter one entirely."""
    if not token or len(token) < 18:
        return "***"
    return f"{token[:6]}...{token[-4:]}"


def _keep_lookups(sub):
    def apply(m: re.Match) -> str:
        return m.group(0) if _ENV_LOOKUP.match(m.group(3)) else sub(m)
    return apply


def _assignment(m: re.Match) -> str:
    return f"{m.group(1)}={m.group(2)}{mask(m.group(3))}{m.group(2)}"


def _form_body(text: str) -> str:
    if "\n" in text or not _FORM.match(text.strip()):
        return text
    pairs = []
    for pair in text.strip().split("&"):
        key, eq, _ = pair.partition("=")
        pairs.append(f"{key}=***" if eq and key.lower() in _FORM_KEYS else pair)
    return "&".join(pairs)


def _phone(m: re.Match) -> str:
    phone = m.group(1)
    return phone[:2] + "****" + phone[-2:] if len(phone) <= 8 else phone[:4] + "****" + phone[-4:]


def redact(text: Any, *, force: bool = False, on: bool | None = None, url_credentials: bool = False) -> Any:
    """``text`` with every secret masked (None stays None; other values are ``str()``-ed).

    ``url_credentials=True`` also masks the password of ``scheme://user:password@host`` in any
    URL (Hermes leaves web URLs alone; hermesctx asks for it on text it writes itself)."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    if not text or not (force or (enabled() if on is None else on)):
        return text
    if any(p in text for p in _PREFIX_LITERALS):
        text = _PREFIX.sub(lambda m: mask(m.group(1)), text)
    if "=" in text:
        text = _ENV_ASSIGN.sub(_keep_lookups(_assignment), text)
        if "://" not in text and _CFG_WORD.search(text):
            # (the pre-check spares the quadratic key scan on long word runs without a key name)
            text = _CFG_DOTTED.sub(_keep_lookups(_assignment), text)
            text = _CFG_LINE.sub(_keep_lookups(_assignment), text)
    if ":" in text and '"' in text:
        text = _JSON_FIELD.sub(
            lambda m: m.group(0) if _ENV_LOOKUP.match(m.group(2)) else f'{m.group(1)}: "{mask(m.group(2))}"', text)
    if ":" in text and "://" not in text:
        text = _YAML.sub(_keep_lookups(lambda m: f"{m.group(1)}{m.group(2)}{mask(m.group(3))}"), text)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = _AUTH_HEADER.sub(lambda m: m.group(1) + (m.group(2) or "") + mask(m.group(3)), text)
    if ":" in text:
        text = _KEY_HEADER.sub(lambda m: m.group(1) + mask(m.group(2)), text)
        text = _TELEGRAM.sub(lambda m: f"{m.group(1) or ''}{m.group(2)}:***", text)
    if "BEGIN" in text and "-----" in text:
        text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    if "://" in text:
        text = _DB_URL.sub(lambda m: f"{m.group(1)}***{m.group(3)}", text)
        text = _URL_TOKEN.sub(lambda m: f"{m.group(1)}{mask(m.group(2))}{m.group(3)}", text)
    if "eyJ" in text:
        text = _JWT.sub(lambda m: mask(m.group(0)), text)
    if "&" in text and "=" in text:
        text = _form_body(text)
    if "+" in text:
        text = _PHONE.sub(_phone, text)
    if url_credentials and "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:***@", text)
    return text
