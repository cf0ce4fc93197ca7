"""Settings: defaults < config file < environment < flags, each value remembering its source.

The config file is YAML with Hermes's own keys (a Hermes ``config.yaml`` works unchanged) plus
hermesctx's sections. It is found by ``--config FILE``, then ``HERMESCTX_CONFIG``, then
``./hermesctx.yaml``, then ``$XDG_CONFIG_HOME/hermesctx/config.yaml``. Environment variables
are ``HERMESCTX_`` + the dotted key upper-cased with dots as underscores
(``HERMESCTX_COMPRESSION_THRESHOLD``). Unlike Hermes, values are validated: a typo is an error, not a silent default.

A ``./hermesctx.yaml`` found in the working directory (not named with ``--config`` or
``HERMESCTX_CONFIG``) is used, but when it sets where the summarizer sends transcripts and keys
(a base URL, a provider, a summarizer, an API key), every command says so on stderr, naming the
file and the destination. ``redaction.enabled: false`` turns secret redaction off for the
process (:func:`hermesctx.redact.configure`), also said on stderr.
"""

from __future__ import annotations

import os
import sys

from hermesctx import lazyre, registry
from hermesctx.errors import FileIOError, UsageError
from hermesctx.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


@record(frozen=True)
class Key:
    default: Any
    kind: type | tuple  # expected Python type(s) after coercion
    check: Callable[[Any], bool] | None = None
    allowed: str = ""  # human wording of the allowed range, for errors
    doc: str = ""


def _between(lo: float, hi: float, *, open_low: bool = False) -> Callable[[Any], bool]:
    return (lambda v: lo < v <= hi) if open_low else (lambda v: lo <= v <= hi)


# a plugin's name as an entry point spells it (whether one is installed is checked when used,
# and by `config check`: settings load on every command and must not scan the entry points)
_PLUGIN_NAME = lazyre.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
_NUMBER = (int, float)
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))

KEYS: dict[str, Key] = {
    # Hermes's keys
    "compression.enabled": Key(True, bool, doc="compress at all (run: compress stages are skipped when false)"),
    "compression.threshold": Key(0.50, _NUMBER, _between(0, 1, open_low=True), "in (0, 1]",
                                 "fraction of the context window that triggers compression"),
    "compression.target_ratio": Key(0.20, _NUMBER, _between(0.10, 0.80), "in [0.10, 0.80]",
                                    "protected tail as a fraction of the threshold"),
    "compression.protect_last_n": Key(20, int, lambda v: v >= 1, ">= 1",
                                      "messages always kept at the end (floor of the tail)"),
    "compression.protect_first_n": Key(3, int, lambda v: v >= 0, ">= 0",
                                       "messages always kept at the start"),
    "compression.min_saving_usd": Key(None, (int, float, type(None)), lambda v: v is None or v >= 0, ">= 0",
                                      "the minimum-gain gate in money: decline a compaction whose net saving "
                                      "over the requests expected is under this many USD"),
    "compression.abort_on_summary_failure": Key(False, bool),
    "compression.min_gain": Key(None, _OPT_INT, lambda v: v is None or v >= 0, ">= 0",
                                "the minimum-gain gate (compress, replay): decline a compaction that saves fewer "
                                "tokens per later request, or would not repay the prompt cache it breaks"),
    "compression.hygiene_hard_message_limit": Key(5000, int, lambda v: v > 0, "> 0"),
    "compression.codex_gpt55_autoraise": Key(True, bool),
    "compression.codex_gpt55_autoraise_notice": Key(True, bool),
    "compression.codex_app_server_auto": Key("native", str),
    "compression.in_place": Key(True, bool),
    "compression.hermes_note": Key(None, (bool, type(None)),
                                   doc="Hermes's MEMORY.md/USER.md sentence in the compaction note "
                                       "(null: only for a Hermes transcript)"),
    "compression.budget_rules": Key("documented", str, lambda v: v in ("documented", "hermes-0.19"),
                                    "documented or hermes-0.19", "which budget formulas apply (documented: Hermes's docs; hermes-0.19: its code)"),
    "model.default": Key(None, _OPT_STR, doc="model name (context window, encoding, prices)"),
    "model.provider": Key(None, _OPT_STR),
    "model.base_url": Key(None, _OPT_STR),
    "model.context_length": Key(None, _OPT_INT, lambda v: v is None or v > 0, "> 0"),
    "model.max_tokens": Key(None, _OPT_INT, lambda v: v is None or v > 0, "> 0"),
    "auxiliary.compression.provider": Key("auto", str),
    "auxiliary.compression.model": Key(None, _OPT_STR),
    "auxiliary.compression.base_url": Key(None, _OPT_STR),
    "auxiliary.compression.api_key": Key(None, _OPT_STR),
    "auxiliary.compression.timeout": Key(120, _NUMBER, lambda v: v > 0, "> 0"),
    "auxiliary.compression.context_length": Key(None, _OPT_INT, lambda v: v is None or v > 0, "> 0"),
    "auxiliary.compression.extra_body": Key({}, dict),
    "auxiliary.compression.reasoning_effort": Key("", str),
    "prompt_caching.cache_ttl": Key("5m", str, lambda v: v in ("5m", "1h"), "5m or 1h"),
    "context.engine": Key("compressor", str, lambda v: v == "" or bool(_PLUGIN_NAME.fullmatch(v)),
                          "compressor or an installed engine's name",
                          "what compacts a transcript in compress and run: the built-in compressor, or a "
                          "plugin engine (entry-point group hermesctx.engines) by name"),
    # hermesctx's own sections
    "spill.dir": Key(None, _OPT_STR, doc="directory for spilled tool results"),
    "spill.thresholds": Key({}, dict, doc="per-tool spill thresholds in characters"),
    "spill.default_threshold": Key(100_000, int, lambda v: v > 0, "> 0"),
    "spill.turn_budget": Key(200_000, int, lambda v: v > 0, "> 0"),
    "summarizer.name": Key(None, _OPT_STR, lambda v: v is None or bool(_PLUGIN_NAME.fullmatch(v)),
                           f"{', '.join(registry.names(registry.SUMMARIZERS))} or an installed plugin summarizer's name",
                           "who writes summaries (a plugin: entry-point group hermesctx.summarizers)"),
    "summarizer.retries": Key(3, int, lambda v: v >= 0, ">= 0"),
    "summarizer.max_failures": Key(3, int, lambda v: v >= 0, ">= 0",
                                   "consecutive failed summaries before the provider is no longer called "
                                   "in this run (0: never stop)"),
    "summarizer.fallback": Key(True, bool, doc="when the requested summarizer fails, the extractive one "
                                               "(then Hermes's static fallback) stands in, with a warning; "
                                               "false: exit 4 instead"),
    "redaction.enabled": Key(True, bool, doc="mask secrets in every text hermesctx writes (default true)"),
    "archive.path": Key(None, _OPT_STR, doc="where compress --archive keeps compacted messages: a .sqlite/.db "
                                            "file is the searchable store (recall), a directory holds JSON Lines"),
    "archive.dir": Key(None, _OPT_STR, doc="the JSON Lines archive directory (archive.path wins when both are set)"),
    "input.max_bytes": Key(None, (int, str, type(None)), lambda v: v is None or _size(v) is not None,
                           "a size above 0 (bytes, or 512M, 4G...)",
                           "what gzip input may inflate to (default: 4 GiB, and at most 64x its compressed size)"),
    # Without a `pipeline:` (a Hermes config.yaml as it is), `run` does what Hermes does on each
    # turn: compress when over the threshold, then place the prompt-cache breakpoints.
    "pipeline": Key([{"compress": {"if_needed": True}}, "cache-mark"], list,
                    doc="stages run by `hermesctx run`"),
}

# Sections whose whole subtree belongs to Hermes and is accepted without checking.
_PASSTHROUGH_SECTIONS = ("agent", "terminal", "toolsets", "display", "memory", "skills",
                         "gateway", "platforms", "mcp_servers", "providers", "custom_providers",
                         "fallback_model", "tts", "stt", "browser", "delegation", "security",
                         "approvals", "honcho", "plugins", "logging", "web", "voice", "cron",
                         "smart_model_routing", "session_reset", "code_execution", "checkpoints",
                         "auxiliary", "model", "compression", "prompt_caching", "context")


# Keys whose values are structured (lists, mappings): set in the config file or by flags only.
NO_ENV = frozenset({"pipeline", "spill.thresholds", "auxiliary.compression.extra_body"})


def _size(value: Any) -> int | None:
    from hermesctx.jsonio import parse_size

    return parse_size(value)


def env_name(key: str) -> str:
    return "HERMESCTX_" + key.upper().replace(".", "_")


@record
class Settings:
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    path: str | None = None
    notices: list[str] = field(default_factory=list)  # said on stderr once per process

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")

    def with_flags(self, flags: Mapping[str, Any]) -> Settings:
        """A copy with flag values (dotted keys; None = not given) on top, each checked as a
        config value is; ``self`` when no flag is given (nothing read again)."""
        given = {key: value for key, value in flags.items() if value is not None}
        if not given:
            return self
        out = Settings(dict(self.values), dict(self.sources), self.path, self.notices)
        for key, value in given.items():
            out.values[key] = coerce(key, value, "flag")
            out.sources[key] = "flag"
        return out


# keys that decide where transcripts and API keys are sent
ROUTING_KEYS = ("auxiliary.compression.base_url", "auxiliary.compression.provider", "auxiliary.compression.api_key",
                "model.base_url", "model.provider", "summarizer.name")
SECRET_KEYS = frozenset({"auxiliary.compression.api_key"})
OFFLINE_SUMMARIZER = "extractive"  # (the default: named, it sends nothing anywhere)
_said: set = set()


def _notice(message: str) -> None:
    """A warning on stderr, once per process (settings are loaded by every stage of a pipeline).
    Said even under ``--quiet``: it is about where data goes."""
    if message not in _said:
        _said.add(message)
        print(f"hermesctx: warning: {message}", file=sys.stderr, flush=True)


def _found_in_cwd(path: str, explicit: str | None, env: Mapping[str, str]) -> bool:
    return not explicit and not env.get("HERMESCTX_CONFIG") and os.path.basename(path) == "hermesctx.yaml"


def routing_notice(path: str, flat: Mapping[str, Any]) -> str | None:
    """What a working-directory config file changes about where data is sent, or None."""
    set_keys = [k for k in ROUTING_KEYS if flat.get(k) not in (None, "", "auto")
                and not (k == "summarizer.name" and flat[k] == OFFLINE_SUMMARIZER)]
    if not set_keys:
        return None
    said = ", ".join(k if k in SECRET_KEYS else f"{k}={flat[k]}" for k in set_keys)
    return (f"{path}, found in the working directory, redirects the summarizer: {said} "
            "(name a config with --config to use one deliberately)")


def find_config(explicit: str | None, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    if explicit:
        return explicit
    if env.get("HERMESCTX_CONFIG"):
        return env["HERMESCTX_CONFIG"]
    local = os.path.join(cwd or os.getcwd(), "hermesctx.yaml")
    if os.path.isfile(local):
        return local
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    user = os.path.join(base, "hermesctx", "config.yaml")
    return user if os.path.isfile(user) else None


def _safe_load(path: str) -> Any:
    """``yaml.safe_load`` of a config file; what PyYAML cannot read (bad UTF-8, nesting too deep,
    an integer beyond Python's digit limit) is a one-line usage error, not an internal one."""
    import yaml

    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"config {path}: not valid UTF-8 (byte {exc.start})") from None
    if text.lstrip()[:1] in ("{", "["):  # JSON (a YAML document too): read by the JSON parser,
        from hermesctx import jsonio  # which reads 100 MB in a second, not the YAML one (minutes)
        from hermesctx.errors import InputError

        try:
            return jsonio.loads(raw)
        except InputError:
            pass  # YAML flow style, or not JSON: YAML reads it and words the error
    try:
        return yaml.safe_load(text)
    except RecursionError:
        raise UsageError(f"config {path}: nesting too deep") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise UsageError(f"config {path}: a value YAML cannot read ({str(exc).split(':')[0]})") from None


def read_config_file(path: str) -> dict:
    import yaml

    try:
        data = _safe_load(path)
    except OSError as exc:
        raise FileIOError(f"cannot read config {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise UsageError(f"config {path}: not valid YAML{at}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config {path}: expected a mapping at the top level")
    return data


def flatten(data: Mapping[str, Any], *, strict: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Dotted keys we know, from a nested config; also the unknown keys seen."""
    flat: dict[str, Any] = {}
    unknown: list[str] = []

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for name, value in node.items():
            key = f"{prefix}{name}"
            if key in KEYS:
                flat[key] = value
            elif isinstance(value, dict) and any(k.startswith(key + ".") for k in KEYS):
                walk(value, key + ".")
            elif key == "model" and isinstance(value, str):
                flat["model.default"] = value  # Hermes accepts `model: name`
            elif key == "model.model":
                flat.setdefault("model.default", value)
            elif strict or key.split(".")[0] not in _PASSTHROUGH_SECTIONS:
                unknown.append(key)

    walk(data, "")
    return flat, unknown


def coerce(key: str, value: Any, origin: str) -> Any:
    """Coerce (strings from the environment, YAML ints for floats) and range-check a value."""
    spec = KEYS[key]
    kinds = spec.kind if isinstance(spec.kind, tuple) else (spec.kind,)
    if isinstance(value, str) and str not in kinds:
        value = _from_text(value, kinds)
    if bool in kinds and not isinstance(value, bool):
        value = str(value).strip().lower() in ("true", "1", "yes", "on")
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise UsageError(f"{origin}: {key} must be {_kind_words(kinds)}, got {_shown(key, value)}")
    if spec.check is not None and not spec.check(value):
        raise UsageError(f"{origin}: {key} = {_shown(key, value)} is out of range; allowed: {spec.allowed}")
    return value


def _shown(key: str, value: Any) -> str:
    """A value quoted in an error: redacted, and never an API key's."""
    from hermesctx.redact import redact

    return "a value (not shown)" if key in SECRET_KEYS else redact(repr(value), force=True)


def _from_text(text: str, kinds: tuple) -> Any:
    text = text.strip()
    if type(None) in kinds and text.lower() in ("", "none", "null"):
        return None
    for kind in (int, float):
        if kind in kinds:
            try:
                return kind(text)
            except ValueError:
                continue
    return text


def _kind_words(kinds: tuple) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             dict: "a mapping", list: "a list", type(None): "empty"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def load_settings(config_path: str | None = None, *, env: Mapping[str, str] | None = None,
                  flags: Mapping[str, Any] | None = None, cwd: str | None = None) -> Settings:
    """Merge defaults, the config file, ``HERMESCTX_*`` variables and flags (None = not given)."""
    env = os.environ if env is None else env
    settings = Settings({k: spec.default for k, spec in KEYS.items()})
    path = find_config(config_path, env, cwd)
    if path:
        settings.path = path
        flat, unknown = flatten(read_config_file(path))
        if unknown:
            raise UsageError(f"config {path}: unknown key {unknown[0]}",
                             hint="`hermesctx config check` lists every key")
        for key, value in flat.items():
            settings.values[key] = coerce(key, value, f"config {path}")
            settings.sources[key] = f"config {path}"
        if _found_in_cwd(path, config_path, env):
            notice = routing_notice(path, flat)
            if notice:
                settings.notices.append(notice)
    for key in KEYS:
        name = env_name(key)
        if name in env and key not in NO_ENV:
            settings.values[key] = coerce(key, env[name], name)
            settings.sources[key] = f"env {name}"
    settings = settings.with_flags(flags or {})
    _apply_redaction(settings, env)
    for notice in settings.notices:
        _notice(notice)
    return settings


def _apply_redaction(settings: Settings, env: Mapping[str, str]) -> None:
    on = settings["redaction.enabled"]
    if on and "HERMESCTX_REDACT" not in env and "hermesctx.redact" not in sys.modules:
        return  # the default, on: nothing to switch; the patterns load only in a command that redacts
    from hermesctx import redact

    if on and not redact.enabled(env):
        on, where = False, "env HERMESCTX_REDACT"
    else:
        where = settings.source("redaction.enabled")
    redact.configure(on)
    if not on:
        settings.notices.append(f"secret redaction is off ({where}): summaries, provider prompts, spill "
                                "previews and reports may contain keys and passwords")


def check_file(path: str) -> list[str]:
    """Every problem with the keys of a config file (not only the first): unknown keys, wrong
    types, values out of range. Empty when the keys are valid."""
    problems: list[str] = []
    try:
        data = read_config_file(path)
    except (UsageError, FileIOError) as exc:
        return [str(exc)]
    flat, unknown = flatten(data)
    problems += [f"unknown key {key}" for key in unknown]
    for key, value in flat.items():
        try:
            coerce(key, value, "x")
        except UsageError as exc:
            problems.append(str(exc).removeprefix("x: "))
    return problems


def render(settings: Settings, fmt: str, environ: Mapping[str, str], *, show_secrets: bool = False,
           plugins: list[dict] | None = None) -> bytes:
    """``config show``: every setting, its value and its source (secrets masked unless
    ``show_secrets``), as a table or as JSON; then the installed ``plugins``
    (:func:`hermesctx.plugins.listing`) when given."""
    from hermesctx import jsonio

    values = {key: settings[key] if show_secrets else _masked(key, settings[key]) for key in KEYS}
    if fmt == "json":
        return jsonio.dumps({"config": settings.path, "settings": {
            key: {"value": values[key], "source": settings.source(key), "env": None if key in NO_ENV else env_name(key)}
            for key in KEYS}, **({} if plugins is None else {"plugins": plugins})}, pretty=True)
    lines = [f"# config file: {settings.path or find_config(None, environ) or '(none)'}"]
    width = max(map(len, KEYS))
    for key in KEYS:
        value = values[key]
        shown = "null" if value is None else jsonio.dumps(value).decode().strip() if not isinstance(value, str) else value
        lines.append(f"{key:<{width}}  {shown}  ({settings.source(key)})")
    if plugins is not None:
        lines.append(f"# plugins: {len(plugins) or 'none'} installed")
        lines += [f"# {p['kind']} {p['name']}: {p['value']} ({p['package']})" for p in plugins]
    return ("\n".join(lines) + "\n").encode()


def _masked(key: str, value):
    """A setting as ``config show`` prints it: a key that is a secret masked whole, any other
    value with its secrets masked (a token in a URL, a password in ``extra_body``), whatever
    ``redaction.enabled`` says."""
    from hermesctx.redact import mask, redact, redact_value

    if key in SECRET_KEYS and value:
        return mask(value) if isinstance(value, str) else "***"
    return redact(value, force=True) if isinstance(value, str) else redact_value(value, on=True)
