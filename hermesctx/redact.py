"""Mask secrets in text we generate or move (the rules of Hermes's redactor, and more).

``redact(text)`` applies, in order: vendor-prefixed keys, upper-case env assignments and
config keys, JSON credential fields, YAML-style keys, Authorization and API-key headers,
Telegram bot tokens, private-key blocks, database connection strings, bare-token URL userinfo,
JWTs, pure form bodies and phone numbers (Hermes's thirteen rules), then hermesctx's own:
credential keys inside a line (``db_password: …``, ``"password": "…"`` also JSON-escaped inside
tool arguments), ``curl -u user:pw``, ``--password PW``, ``mysql -pPW``, ``sshpass -p PW``,
Azure ``AccountKey=``/``Password=`` connection strings, a bare 40-character AWS secret key
beside an AWS context, a private key block whose end was cut off, and the password of any
``scheme://user:password@host`` URL. A long secret keeps its first 6 and last 4 characters
(``sk-pro...6b5c``), a short one becomes ``***``.

Ordinary code and text passes through: hashes, UUIDs, base64 images, URLs with query strings,
and assignments whose value cannot be a secret (``MAX_TOKENS = 4096``, ``token_count = 12``,
``password_field = forms.CharField()``, ``api_key: str``, ``TOKEN=${TOKEN}``,
``os.environ["API_KEY"]``, ``secret_name: app-db``) — Hermes masks some of these; hermesctx
does not (every other value Hermes masks, hermesctx masks too).

Every regex here is bounded (no nested or unbounded repetition that can backtrack across a long
run of word characters), so the cost is linear in the text.

It runs on every summary, fallback summary, provider prompt, spill preview, report and error
text we write, on the full text before any cut. The config key ``redaction.enabled: false``
(applied by :func:`hermesctx.config.load_settings` through :func:`configure`) or the
environment variable ``HERMESCTX_REDACT`` (``0``/``false``/``no``/``off``) turns it off;
``HERMESCTX_REDACT=hermes`` keeps Hermes 0.19.0's rules only (the differential tests use it);
``force=True`` ignores the switch.
"""

from __future__ import annotations

import os

from hermesctx import lazyre

TYPE_CHECKING = False
if TYPE_CHECKING:
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
_PREFIX_LITERALS = tuple(p[:next((i for i, c in enumerate(p) if c in "[(\\.?*+|{^$"), len(p))]
                         for p in _PREFIXES)
# (each body is one character class ended by a negative lookahead: a failed match costs the run once)
_PREFIX = lazyre.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(_PREFIXES) + r")(?![A-Za-z0-9_-])")

_ENV_NAMES = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)"
# keys are bounded ({0,50}: Hermes's own bound; {0,64} where Hermes has none) so that no rule can
# backtrack across a long run of key characters
_ENV_ASSIGN = lazyre.compile(rf"([A-Z0-9_]{{0,50}}{_ENV_NAMES}[A-Z0-9_]{{0,50}})\s*=\s*(['\"]?)(\S+)\2")
_CFG_NAMES = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential|auth)"
_CFG_VALUE = r"(['\"]?)([^\s&]+?)\2(?=[\s&]|$)"
_CFG_WORD = lazyre.compile(_CFG_NAMES, lazyre.IGNORECASE)  # every config-key match holds one: a linear pre-check
# a dotted key (``spring.datasource.password``): a run of key characters ending at '=' (found by
# _CFG_KEY_RUN), of which Hermes masks the leftmost suffix that _CFG_DOTTED_KEY matches whole
_CFG_KEY_RUN = lazyre.compile(r"(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]{1,128}(?==)")
_CFG_VALUE_AT = lazyre.compile(r"(['\"]?)([^\s&]+?)\1(?=[\s&]|$)")  # _CFG_VALUE with its own group numbers
_CFG_DOTTED_KEY = lazyre.compile(rf"(?:[A-Za-z0-9_\-]+\.)+[A-Za-z0-9_.\-]*{_CFG_NAMES}[A-Za-z0-9_.\-]*"
                             rf"|[A-Za-z0-9_.\-]*{_CFG_NAMES}[A-Za-z0-9_.\-]*\.[A-Za-z0-9_.\-]+", lazyre.IGNORECASE)
# a bare key at a line start; the key characters up to '=' are one run (no backtracking), checked
# for a name by _named (Hermes: `[A-Za-z0-9_\-]*NAME[A-Za-z0-9_\-]*`)
_CFG_LINE = lazyre.compile(rf"(^[ \t]*(?:export[ \t]+)?(?:[A-Za-z0-9_\-]|(?<=api)[ .](?=key))+)={_CFG_VALUE}",
                       lazyre.IGNORECASE | lazyre.MULTILINE)
_ENV_LOOKUP = lazyre.compile(r"^(?:os\.(?:getenv|environ)|process\.env|\$ENV\{)")
_YAML_NAMES = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential)"
_YAML_WORD = lazyre.compile(_YAML_NAMES, lazyre.IGNORECASE)
_YAML = lazyre.compile(r"(^[ \t]*(?:[A-Za-z0-9_.\-]|(?<=api)[ ](?=key))+)(:[ \t]*)(?!['\"])([^\s&]+)",
                   lazyre.IGNORECASE | lazyre.MULTILINE)  # the key is checked by _YAML_WORD
_JSON_NAMES = (r"(?:api_?[Kk]ey|token|secret|password|access_token|refresh_token|auth_token|bearer|"
               r"secret_value|raw_secret|secret_input|key_material)")
_JSON_FIELD = lazyre.compile(rf'("{_JSON_NAMES}")\s*:\s*"([^"]+)"', lazyre.IGNORECASE)
_AUTH_HEADER = lazyre.compile(r"((?:Proxy-)?Authorization:\s*)([A-Za-z][\w.+-]*\s+)?([^\s\"']+)", lazyre.IGNORECASE)
_KEY_HEADER = lazyre.compile(r"((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)"
                         r"\s*:\s*)(\S+)", lazyre.IGNORECASE)
_TELEGRAM = lazyre.compile(r"(bot)?(\d{8,}):([-A-Za-z0-9_]{30,})")
_YAML_HINTS = ("key", "token", "secret", "passw", "credential")  # one is in every _YAML_NAMES match
# a private key block, BEGIN to the first END after it (paired by _private_keys: linear, where
# Hermes's lazy `[\s\S]*?` scans to the end of the text for every BEGIN without an END)
_PK_BEGIN = lazyre.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----")
_PK_END = lazyre.compile(r"-----END[A-Z ]*PRIVATE KEY-----")
_DB_URL = lazyre.compile(r"((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)", lazyre.IGNORECASE)
_URL_TOKEN = lazyre.compile(r"((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@[^\s]+)", lazyre.IGNORECASE)
_JWT = lazyre.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}")
_FORM = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*(?:&[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*)+$")
_FORM_KEYS = frozenset({"access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "client_secret",
                        "password", "auth", "jwt", "session", "secret", "key", "code", "signature",
                        "x-amz-signature"})
_PHONE = lazyre.compile(r"(\+[1-9]\d{6,14})(?![A-Za-z0-9])")

# --- hermesctx's additions ---------------------------------------------------------------------
# scheme://user:password@ (the password may hold '@': up to the last one before the path)
_URL_USERINFO = lazyre.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,30}://)([^\s:@/]{1,256}):([^\s/?#]{1,256})@")
# a URL password cut before its '@' (an argument cut to a length ends `...` or `...[truncated]`)
_URL_CUT = lazyre.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:@/]{1,256}:)([^\s@/.]{1,256})(?=\.\.\.|…)")
# a credential key anywhere in a line: `db_password: x`, `"apiKey": "x"`, `\"password\": \"x\"`, `secret_key=x`
_SECRET_WORD = lazyre.compile(r"pass|pwd|secret|token|key|credential", lazyre.IGNORECASE)
_INLINE = lazyre.compile(  # matched at a key's start by _inline_all
    r"([A-Za-z_][\w.\-]{0,63})"
    r"(\\{0,15}[\"']?[ \t]*[:=][ \t]*)"
    r"(?:(\\{0,15}\")([^\"\\\n]{1,300})\\{0,15}\"|(')([^'\n]{1,300})'|([^\s\"'`,;&<>]{1,300}))")
_KEY_PARTS = lazyre.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_PARTS = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "token", "credential",
                           "credentials", "apikey", "pass"})
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "account", "signing", "encryption", "master",
                             "client", "app", "auth", "session", "shared", "license", "subscription"})
# key suffixes naming something that is not the secret itself
_REFERENCE_PARTS = frozenset({"name", "id", "ids", "url", "uri", "endpoint", "path", "file", "dir", "count", "limit",
                              "length", "len", "size", "type", "field", "ttl", "header", "env", "var", "prefix",
                              "format", "policy", "version", "mode", "enabled", "required", "ref", "max", "min",
                              "expiry", "expires", "lifetime", "timeout", "label", "hint", "regex", "pattern",
                              "algorithm", "hash", "digest", "index", "budget", "usage", "used", "tokens", "keys",
                              "secrets", "provider", "store", "manager", "location", "source", "class", "kind"})
# words holding a credential word that are something else
_NOT_SECRET_WORDS = frozenset({"tokenizer", "tokenizers", "tokenize", "tokenized", "tokenization", "keyboard",
                               "keystroke", "keystrokes", "keyword", "keywords", "passage", "passenger", "passthrough",
                               "bypass", "compass", "author", "authority", "from", "ref", "refs"})
_CURL_USER = lazyre.compile(r"(\b(?:curl|wget|http)\b[^\n]{0,400}?[ \t](?:-u|--user|--proxy-user)(?:[ \t]+|=)['\"]?"
                        r"[^\s:'\"]{1,128}:)([^\s'\"]{1,256})")
_PASSWORD_FLAG = lazyre.compile(r"((?<![\w-])--(?:[a-z]{1,20}-)?(?:password|passwd|pass)(?:=|[ \t]+))(['\"]?)([^\s'\"]{1,256})\2")
_MYSQL_P = lazyre.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n]{0,400}?"
                      r"[ \t]-p)([^\s'\"]{1,256})")
_SSHPASS = lazyre.compile(r"(\bsshpass[ \t]+-p[ \t]*)(['\"]?)([^\s'\"]{1,256})\2")
_CONN_STRING = lazyre.compile(r"((?<![\w])(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)[ \t]*=[ \t]*)"
                          r"([^;\s\"']{1,512})", lazyre.IGNORECASE)
_CONN_PASSWORD = lazyre.compile(r"((?:^|;)[ \t]*(?:Password|Pwd)[ \t]*=[ \t]*)([^;\s\"']{1,256})(?=;|$|[\s\"'])",
                            lazyre.IGNORECASE | lazyre.MULTILINE)
_AWS_CONTEXT = lazyre.compile(r"aws|AKIA|ASIA|amazon", lazyre.IGNORECASE)
_AWS_SECRET = lazyre.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# the value after an AWS secret key's name, whole or cut (a cut one no longer has 40 characters)
_AWS_NAMED = lazyre.compile(r"((?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?[ \t]*[:= \t][ \t]*[\"']?)"
                        r"([A-Za-z0-9/+=]{8,40})")
_CUT_KEY = lazyre.compile(r"-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,\-]*")

_BENIGN = lazyre.compile(
    r"""(?:[-+]?\d{1,12}(?:\.\d+)?[kKmM]?                       # numbers, counts, limits
    |(?i:true|false|null|none|nil|undefined|yes|no|on|off|required|optional|empty|redacted|hidden)
    |\$\{?[A-Za-z_][A-Za-z0-9_]{0,63}(?::?-[^}]{0,64})?\}?      # $VAR, ${VAR}, ${VAR:-x}
    |\$?\{\{[^{}]{0,128}(?:\}\})?|<[^<>]{0,128}>|%\([\w]{0,64}\)s  # templates, <placeholders>
    |\*{3,}|x{3,}|X{3,}|\.{3}|…|\[REDACTED[^\]]{0,30}\]             # placeholders, masked already
    |(?:(?:os|self|cls|this|settings|config|conf|cfg|env|request|req|args|opts|options|params|kwargs|ctx|process|
        secrets|vault|keyring|props)\.[\w.\[\]"'()]{0,128})      # attribute lookups
    |[A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){0,8}\([^\n]{0,200}\)  # calls: forms.CharField(), getpass()
    |[A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){1,8}              # attribute chains: models.TextField
    |[A-Za-z_]\w{0,63}\[[^\n]{0,200}\]                          # subscripts: env["X"], Optional[str]
    |(?:str|int|bool|bytes|float|dict|list|string|number|boolean|any|object|SecretStr|SecretBytes|Secret|
        char|varchar|text|uuid|password|secret|token)             # types and the key name itself
    )[,;]?""", lazyre.VERBOSE)

_OFF = {"0", "false", "no", "off"}
_switch: dict[str, Any] = {"on": True}  # set by configure() from the config key redaction.enabled


def configure(enabled: bool = True) -> None:
    """The process-wide default of :func:`enabled` (the config key ``redaction.enabled``)."""
    _switch["on"] = bool(enabled)


def enabled(environ=None) -> bool:
    value = (environ if environ is not None else os.environ).get("HERMESCTX_REDACT", "true")
    return value.strip().lower() not in _OFF and (environ is not None or _switch["on"])


def hermes_only(environ=None) -> bool:
    """``HERMESCTX_REDACT=hermes``: only Hermes 0.19.0's rules, its false positives included."""
    return (environ if environ is not None else os.environ).get("HERMESCTX_REDACT", "").strip().lower() == "hermes"


def mask(token: str) -> str:
    """Keep 6 + 4 characters of a secret of 18 or more; hide a shorter one entirely."""
    if not token or len(token) < 18:
        return "***"
    return f"{token[:6]}...{token[-4:]}"


def benign(value: str, key: str = "") -> bool:
    """Whether a value given to a credential-named key cannot be a secret: a number (unless the
    key is a password), a boolean, a variable or template reference, a placeholder, an already
    masked value, code (a call, an attribute chain, a subscript, a type name), or any value of a
    key that names something else (``secret_name``, ``token_url``, ``max_tokens``)."""
    value = value.strip().strip("'\"")
    if not value:
        return True
    if key and _is_reference_key(key):
        return True
    if not _BENIGN.fullmatch(value):
        return False
    if value.rstrip(",;").lstrip("+-").replace(".", "", 1).isdigit():
        return not _PIN_KEY.search(key)
    return True


def _key_parts(key: str) -> list[str]:
    return [p.lower() for p in _KEY_PARTS.findall(key)]


def _is_reference_key(key: str) -> bool:
    parts = _key_parts(key)
    return bool(parts) and (parts[-1] in _REFERENCE_PARTS or any(p in _NOT_SECRET_WORDS for p in parts))


def _is_secret_key(key: str) -> bool:
    """``db_password``, ``apiKey``, ``AccountKey``, ``client-secret``, ``auth_token`` (not
    ``tokenizer``, ``keyboard``, ``primary_key``, ``secret_name``)."""
    parts = _key_parts(key)
    if not parts or _is_reference_key(key):
        return False
    for i, part in enumerate(parts):
        if part in _SECRET_PARTS or part.endswith(("password", "passwd", "secret", "token")):
            return True
        if part == "key" and i and parts[i - 1] in _KEY_QUALIFIERS:
            return True
    return False


def _keep_lookups(sub, extended: bool):
    def apply(m: re.Match) -> str:
        if _ENV_LOOKUP.match(m.group(3)) or (extended and benign(m.group(3), m.group(1))):
            return m.group(0)
        return sub(m)
    return apply


def _named(word: re.Pattern, sub):
    """``sub`` where the key (group 1) holds a credential name, else the match unchanged."""
    def apply(m: re.Match) -> str:
        return sub(m) if word.search(m.group(1)) else m.group(0)
    return apply


def _assignment(m: re.Match) -> str:
    return f"{m.group(1)}={m.group(2)}{mask(m.group(3))}{m.group(2)}"


def _dotted(text: str, extended: bool) -> str:
    """Hermes's dotted config-key rule, left to right, without its backtracking."""
    out: list[str] = []
    pos = 0
    for run in _CFG_KEY_RUN.finditer(text):
        if run.start() < pos:
            continue
        key = run.group(0)
        if "." not in key or not _CFG_WORD.search(key):
            continue
        value = _CFG_VALUE_AT.match(text, run.end() + 1)
        if value is None:
            continue
        start = next((i for i in range(len(key)) if _CFG_DOTTED_KEY.fullmatch(key, i)), None)
        if start is None:
            continue
        secret = value.group(2)
        if _ENV_LOOKUP.match(secret) or (extended and benign(secret, key[start:])):
            continue
        quote = value.group(1)
        out += [text[pos:run.start() + start], f"{key[start:]}={quote}{mask(secret)}{quote}"]
        pos = value.end()
    return "".join(out) + text[pos:] if out else text


def _form_body(text: str) -> str:
    if "\n" in text or not _FORM.match(text.strip()):
        return text
    pairs = []
    for pair in text.strip().split("&"):
        key, eq, _ = pair.partition("=")
        pairs.append(f"{key}=***" if eq and key.lower() in _FORM_KEYS else pair)
    return "&".join(pairs)


def _private_keys(text: str) -> str:
    ends = [(m.start(), m.end()) for m in _PK_END.finditer(text)]
    if not ends:
        return text
    out: list[str] = []
    pos = j = 0
    for m in _PK_BEGIN.finditer(text):
        if m.start() < pos:
            continue
        while j < len(ends) and ends[j][0] < m.end():
            j += 1
        if j == len(ends):
            break
        out += [text[pos:m.start()], "[REDACTED PRIVATE KEY]"]
        pos = ends[j][1]
        j += 1
    return "".join(out) + text[pos:] if out else text


def _phone(m: re.Match) -> str:
    phone = m.group(1)
    return phone[:2] + "****" + phone[-2:] if len(phone) <= 8 else phone[:4] + "****" + phone[-4:]


def _inline(m: re.Match) -> str:
    key, sep = m.group(1), m.group(2)
    if m.group(4) is not None:
        quote, value = m.group(3), m.group(4)
    elif m.group(6) is not None:
        quote, value = "'", m.group(6)
    else:
        quote, value = "", m.group(7)
    tail = ""
    if not quote:  # `{password: pw}`: closing brackets after the value stay
        while value and value[-1] in ")]}" and value.count(value[-1]) > value.count(_OPENER[value[-1]]):
            value, tail = value[:-1], value[-1] + tail
    if not value or _MASKED.fullmatch(value) or not _is_secret_key(key) or benign(value, key) \
            or _ENV_LOOKUP.match(value):
        return m.group(0)
    parts = _key_parts(key)
    if len(parts) == 1 and parts[0] in _SECRET_PARTS and not quote and value.isalpha() and value.islower():
        return m.group(0)  # a bare word after a bare name: `password=foo`, `the token: it` in prose
    return f"{key}{sep}{quote}{mask(value)}{quote}{tail}"


_OPENER = {")": "(", "]": "[", "}": "{"}
_PIN_KEY = lazyre.compile(r"pass|pwd|secret|pin", lazyre.IGNORECASE)
# a password said in prose: "the password is hunter2", "the root password for db1 was `S3cr3t!`"
_PROSE_PASSWORD = lazyre.compile(
    r"(\b(?:password|passphrase|passcode|passwd|pwd)\b"
    r"(?:[ \t]+(?:for|of|to|on)(?:[ \t]+[^\s:=`'\"]{1,40}){1,4}?)?"
    r"[ \t]+(?:is|was|will[ \t]+be|is[ \t]+now|has[ \t]+been[ \t]+set[ \t]+to|set[ \t]+to)[ \t]*:?[ \t]*)"
    r"(?:(['\"`])([^'\"`\n]{1,256})\2|([^\s'\"`]{1,256}))", lazyre.IGNORECASE)
# a GCP service account's key id ("private_key_id": "<40 hex>"), in JSON or as a key: value
_KEY_ID = lazyre.compile(r"((?i:private_key_id)\\{0,15}[\"']?[ \t]*[:=][ \t]*\\{0,15}[\"']?)([A-Za-z0-9]{16,128})")


def _prose_password(m: re.Match) -> str:
    quote = m.group(2) or ""
    value = m.group(3) if quote else m.group(4)
    tail = ""
    if not quote:  # the end of the sentence is not the password's
        while value and value[-1] in ".,;:!?)]}":
            value, tail = value[:-1], value[-1] + tail
        if not value or value.isalpha():  # a word of prose: "is incorrect", "is required"
            return m.group(0)
        if value.isdigit() and not tail and m.string[m.end():m.end() + 2][1:].isalpha():
            return m.group(0)  # a number in a sentence: "is 8 characters long"
    if _MASKED.fullmatch(value) or benign(value, "password") or _ENV_LOOKUP.match(value):
        return m.group(0)
    return f"{m.group(1)}{quote}{mask(value)}{quote}{tail}"
_ONE_CASE_HEX = lazyre.compile(r"[0-9a-f]+|[0-9A-F]+")
_UPPER = lazyre.compile(r"[A-Z]")
_LOWER = lazyre.compile(r"[a-z]")
_MASKED = lazyre.compile(r"\*\*\*|.{6}\.\.\..{4}")  # what mask() leaves (an earlier rule's work)


def _aws_secret(text: str):
    def apply(m: re.Match) -> str:
        token = m.group(0)
        if token.isdigit() or _ONE_CASE_HEX.fullmatch(token) or not _UPPER.search(token) \
                or not _LOWER.search(token) or token.isalpha():
            return token  # hashes, plain words
        window = text[max(0, m.start() - 300):m.end() + 300]
        return mask(token) if _AWS_CONTEXT.search(window) else token
    return apply


def _userinfo(m: re.Match) -> str:
    keep = m.group(3).startswith("$") and benign(m.group(3))  # user:${PASSWORD}@ names a variable
    return f"{m.group(1)}{m.group(2)}:{m.group(3) if keep else '***'}@"


def redact(text: Any, *, force: bool = False, on: bool | None = None, url_credentials: bool | None = None) -> Any:
    """``text`` with every secret masked (None stays None; other values are ``str()``-ed).

    ``url_credentials`` masks the password of ``scheme://user:password@host`` in any URL; it is
    on unless only Hermes's rules run (Hermes leaves web URLs alone)."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    if not text or not (force or (enabled() if on is None else on)):
        return text
    extended = not hermes_only()
    if url_credentials is None:
        url_credentials = extended
    # plain substring tests stand before the case-blind rules below; exact for ASCII text only
    # (IGNORECASE also folds a few other letters onto ASCII ones, e.g. the Kelvin sign onto k)
    low = text.lower() if text.isascii() else None
    if any(map(text.__contains__, _PREFIX_LITERALS)):  # (no generator: ~3x faster on a short line)
        text = _PREFIX.sub(lambda m: mask(m.group(1)), text)
    if "=" in text:
        text = _ENV_ASSIGN.sub(_keep_lookups(_assignment, extended), text)
        if "://" not in text and _CFG_WORD.search(text):
            text = _dotted(text, extended)
            text = _CFG_LINE.sub(_named(_CFG_WORD, _keep_lookups(_assignment, extended)), text)
    if ":" in text and '"' in text:
        text = _JSON_FIELD.sub(
            lambda m: m.group(0) if _ENV_LOOKUP.match(m.group(2)) or (extended and benign(m.group(2), m.group(1)))
            else f'{m.group(1)}: "{mask(m.group(2))}"', text)
    if ":" in text and "://" not in text and (low is None or _before_colon(low, _YAML_HINTS)):
        text = _YAML.sub(_named(_YAML_WORD, _keep_lookups(lambda m: f"{m.group(1)}{m.group(2)}{mask(m.group(3))}",
                                                          extended)), text)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = _AUTH_HEADER.sub(lambda m: m.group(0) if extended and benign(m.group(3)) else
                                m.group(1) + (m.group(2) or "") + mask(m.group(3)), text)
    if ":" in text and (low is None or _before_colon(low, ("key", "token"))):
        text = _KEY_HEADER.sub(lambda m: m.group(0) if extended and (benign(m.group(2)) or _ENV_LOOKUP.match(m.group(2)))
                               else m.group(1) + mask(m.group(2)), text)
    # (a long text has colons enough that the regex's own scan is the cheaper test)
    if ":" in text and (len(text) > 4096 or _digits_then_colon(text)):
        text = _TELEGRAM.sub(lambda m: f"{m.group(1) or ''}{m.group(2)}:***", text)
    if "BEGIN" in text and "-----" in text:
        text = _private_keys(text)
    if "://" in text:
        text = _DB_URL.sub(lambda m: f"{m.group(1)}***{m.group(3)}", text)
        text = _URL_TOKEN.sub(lambda m: f"{m.group(1)}{mask(m.group(2))}{m.group(3)}", text)
    if "eyJ" in text:
        text = _JWT.sub(lambda m: mask(m.group(0)), text)
    if "&" in text and "=" in text:
        text = _form_body(text)
    if "+" in text:
        text = _PHONE.sub(_phone, text)
    if extended:
        text = _more(text)
    if url_credentials and "://" in text:
        if "@" in text:
            text = _URL_USERINFO.sub(_userinfo, text)
        if "..." in text or "…" in text:
            text = _URL_CUT.sub(lambda m: m.group(1) + "***", text)
    return text


_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")


def _digits_then_colon(text: str) -> bool:
    """Whether eight digits end at a colon somewhere in ``text`` (what _TELEGRAM needs first)."""
    i = text.find(":", 8)
    while i != -1:
        if text[i - 8:i].isdigit():
            return True
        i = text.find(":", i + 1)
    return False


def _before_colon(low: str, words: tuple[str, ...]) -> bool:
    """Whether one of ``words`` stands before a colon with only key characters and blanks
    between: what a match of _YAML (a key holding a credential word) or of _KEY_HEADER needs."""
    n = len(low)
    for word in words:
        i = low.find(word)
        while i != -1:
            j = i + len(word)
            while j < n and (low[j].isalnum() or low[j] in "_.- \t\n\r\f\v"):
                j += 1
            if j < n and low[j] == ":":
                return True
            i = low.find(word, i + 1)
    return False


def _separator_follows(text: str, i: int) -> bool:
    """Whether the key characters from ``i`` on end at what _INLINE needs after a key:
    backslashes, a quote, blanks, then ``:`` or ``=``."""
    n = len(text)
    while i < n and (text[i].isalnum() or text[i] in "_.-"):
        i += 1
    while i < n and text[i] in "\\\"' \t":
        i += 1
    return i < n and text[i] in ":="


def _more(text: str) -> str:
    """hermesctx's rules, after Hermes's. Each runs only when a plain substring test (cheap, no
    regex) says it can match."""
    low = text.lower()
    if ("=" in text or ":" in text) and any(w in low for w in _SECRET_WORDS):
        text = _inline_all(text, low)
    if "-" in text:
        if (" -u" in text or "--user" in text or "--proxy-user" in text) and ("curl" in low or "wget" in low
                                                                            or "http" in low):
            text = _CURL_USER.sub(lambda m: m.group(1) + "***", text)
        if "--" in text and "pass" in low:
            text = _PASSWORD_FLAG.sub(lambda m: m.group(0) if benign(m.group(3)) else
                                      f"{m.group(1)}{m.group(2)}***{m.group(2)}", text)
        if "-p" in text:
            if "mysql" in low or "mariadb" in low:
                text = _MYSQL_P.sub(lambda m: m.group(1) + "***", text)
            if "sshpass" in text:
                text = _SSHPASS.sub(lambda m: f"{m.group(1)}{m.group(2)}***{m.group(2)}", text)
        if "PRIVATE KEY-----" in text:
            text = _CUT_KEY.sub("[REDACTED PRIVATE KEY]", text)
    if "=" in text:
        if "accountkey" in low or "sharedaccess" in low or "sharedsecret" in low:
            text = _CONN_STRING.sub(lambda m: m.group(1) + mask(m.group(2)), text)
        if ";" in text and ("password" in low or "pwd" in low):
            text = _CONN_PASSWORD.sub(lambda m: m.group(0) if benign(m.group(2)) else m.group(1) + "***", text)
    if "pass" in low or "pwd" in low:
        text = _PROSE_PASSWORD.sub(_prose_password, text)
    if "private_key_id" in low:
        text = _KEY_ID.sub(lambda m: m.group(1) + mask(m.group(2)), text)
    if "access" in low and "key" in low and "secret" in low:
        text = _AWS_NAMED.sub(lambda m: m.group(0) if benign(m.group(2)) else m.group(1) + mask(m.group(2)), text)
    if len(text) >= 40 and ("aws" in low or "akia" in low or "asia" in low or "amazon" in low):
        text = _AWS_SECRET.sub(_aws_secret(text), text)
    return text


def _word_hits(text: str, low: str) -> list[tuple[int, int]]:
    """Where a credential word is, found with ``str.find`` on the lower-cased text (much faster
    than a case-insensitive regex); by regex when lower-casing changed the length."""
    if len(low) != len(text):
        return [m.span() for m in _SECRET_WORD.finditer(text)]
    hits = []
    for word in _SECRET_WORDS:
        i = low.find(word)
        while i != -1:
            hits.append((i, i + len(word)))
            i = low.find(word, i + 1)
    return sorted(hits)


def _inline_all(text: str, low: str) -> str:
    """_INLINE at every credential word: the key around the word (back to its start), then the
    separator and the value. Linear: one backward scan of at most 64 characters per word."""
    out: list[str] = []
    pos = 0
    for start, word_end in _word_hits(text, low):
        if start < pos:
            continue
        floor = max(pos, start - 64)
        while start > floor and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            start -= 1
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-\\"):
            continue  # inside a longer key (or after a backslash)
        if not _separator_follows(text, word_end):
            continue  # no value after this key: the pattern cannot match
        m = _INLINE.match(text, start)
        if m is None or m.end(1) < word_end:
            continue
        out += [text[pos:start], _inline(m)]
        pos = m.end()
    return "".join(out) + text[pos:] if out else text


def redact_value(value: Any, *, on: bool | None = None) -> Any:
    """A parsed JSON value (tool-call arguments) with every string redacted and the string value
    of every credential-named key masked (``{"password": "x"}`` → ``{"password": "***"}``)."""
    if not (enabled() if on is None else on):
        return value
    if isinstance(value, str):
        return redact(value, on=True)
    if isinstance(value, list):
        return [redact_value(v, on=True) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, str) and isinstance(key, str) and not hermes_only() and _is_secret_key(key) \
                    and not benign(item, key):
                out[key] = mask(item)
            else:
                out[key] = redact_value(item, on=True)
        return out
    return value


def redact_strings(value: Any, *, force: bool = False) -> Any:
    """A JSON value (a report) with every string redacted, keys and structure kept, and no key
    treated as a credential name (``token_line`` is a report field); the same object when
    nothing changes."""
    if isinstance(value, str):
        return redact(value, force=force)
    if isinstance(value, list):
        items = [redact_strings(v, force=force) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, dict):
        items = {k: redact_strings(v, force=force) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    return value


# a secret is shorter than this, except a long private key block (whose cut-off form is caught too)
_MARGIN = 4_096


def redact_head(text: str, size: int, *, on: bool | None = None) -> str:
    """The start of ``redact(text)``, longer than ``size`` whenever ``redact(text)`` is: what a
    preview cut at ``size`` characters needs, without redacting a whole huge text. The text is
    redacted with a margin past the cut, so a secret that starts before the cut is whole."""
    if not isinstance(text, str) or not (enabled() if on is None else on):
        return text
    end = size + _MARGIN
    while end < len(text):
        head = redact(text[:end], on=True)
        if len(head) > size:
            return head
        end *= 2
    return redact(text, on=True)
