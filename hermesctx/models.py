"""Model metadata: context windows, resolved offline the way Hermes 0.19.0 resolves them
when no network is reachable: an explicit length, then (provider
``openai-codex``) the Codex table, then the longest table key that is a substring of the
lower-cased name, then 256,000. Provider ``bedrock`` has its own table (default 128,000).
Provider names are compared as given, as Hermes does (``OpenAI-Codex`` is not Codex).
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.record import record

DEFAULT_CONTEXT_LENGTH = 256_000

# Hermes 0.19.0's built-in table, in its order (ties in key length keep this order). Keys with
# capitals never match a lower-cased name; they are kept so the table stays complete.
CONTEXT_LENGTHS: tuple[tuple[str, int], ...] = (
    ("claude-fable-5", 1_000_000), ("claude-fable", 1_000_000), ("claude-sonnet-5", 1_000_000),
    ("claude-opus-4-8", 1_000_000), ("claude-opus-4.8", 1_000_000),
    ("claude-opus-4-7", 1_000_000), ("claude-opus-4.7", 1_000_000),
    ("claude-opus-4-6", 1_000_000), ("claude-sonnet-4-6", 1_000_000),
    ("claude-opus-4.6", 1_000_000), ("claude-sonnet-4.6", 1_000_000), ("claude", 200_000),
    ("gpt-5.6-luna", 1_050_000), ("gpt-5.6-terra", 1_050_000), ("gpt-5.6-sol", 1_050_000),
    ("gpt-5.5", 1_050_000), ("gpt-5.4-nano", 400_000), ("gpt-5.4-mini", 400_000),
    ("gpt-5.4", 1_050_000), ("gpt-5.3-codex-spark", 128_000), ("gpt-5.1-chat", 128_000),
    ("gpt-5", 400_000), ("gpt-4.1", 1_047_576), ("gpt-4", 128_000),
    ("gemini", 1_048_576), ("gemma-4", 256_000), ("gemma4", 256_000), ("gemma-4-31b", 256_000),
    ("gemma-3", 131_072), ("gemma", 8_192),
    ("deepseek-v4-pro", 1_000_000), ("deepseek-v4-flash", 1_000_000),
    ("deepseek-chat", 1_000_000), ("deepseek-reasoner", 1_000_000), ("deepseek", 128_000),
    ("llama", 131_072),
    ("qwen3.6-plus", 1_048_576), ("qwen3.7-plus", 1_048_576), ("qwen3-coder-plus", 1_000_000),
    ("qwen3-coder", 262_144), ("qwen3-max", 262_144), ("qwen", 131_072),
    ("minimax-m3", 1_000_000), ("minimax", 204_800), ("glm-5.2", 1_048_576), ("glm", 202_752),
    ("grok-composer", 200_000), ("grok-build-latest", 500_000), ("grok-build", 256_000),
    ("grok-code-fast", 256_000), ("grok-2-vision", 8_192), ("grok-4-fast", 2_000_000),
    ("grok-4.20", 2_000_000), ("grok-4.5", 500_000), ("grok-4.3", 1_000_000),
    ("grok-4", 256_000), ("grok-3", 131_072), ("grok-2", 131_072), ("grok", 131_072),
    ("kimi-k3", 1_048_576), ("kimi", 262_144),
    ("solar-open2", 262_144), ("solar-pro3", 131_072), ("solar-pro2", 65_536),
    ("solar-mini", 32_768), ("hy3-preview", 262_144), ("hy3", 262_144),
    ("nemotron", 131_072), ("trinity", 262_144), ("elephant", 262_144),
    ("Qwen/Qwen3.5-397B-A17B", 131_072), ("Qwen/Qwen3.5-35B-A3B", 131_072),
    ("deepseek-ai/DeepSeek-V3.2", 65_536), ("moonshotai/Kimi-K2.5", 262_144),
    ("moonshotai/Kimi-K2.6", 262_144), ("moonshotai/Kimi-K2-Thinking", 262_144),
    ("MiniMaxAI/MiniMax-M2.5", 204_800), ("XiaomiMiMo/MiMo-V2-Flash", 262_144),
    ("mimo-v2-pro", 1_048_576), ("mimo-v2.5-pro", 1_048_576), ("mimo-v2.5", 1_048_576),
    ("mimo-v2-omni", 262_144), ("mimo-v2-flash", 262_144), ("zai-org/GLM-5", 202_752),
)

# Provider openai-codex only (ChatGPT-account Codex caps these windows).
CODEX_CONTEXT_LENGTHS: tuple[tuple[str, int], ...] = (
    ("gpt-5.3-codex-spark", 128_000),
    *((key, 272_000) for key in (
        "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5.3-codex", "gpt-5.2-codex",
        "gpt-5.4-mini", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5", "gpt-5.4",
        "gpt-5.2", "gpt-5")),
)

# Provider bedrock only: Hermes's static Bedrock table (its offline answer; the live probe needs
# AWS), longest key first, anything else 128,000.
BEDROCK_CONTEXT_LENGTHS: tuple[tuple[str, int], ...] = (
    *((key, 1_000_000) for key in (
        "anthropic.claude-fable-5", "anthropic.claude-fable", "anthropic.claude-sonnet-5",
        "anthropic.claude-opus-4-8", "anthropic.claude-opus-4-7", "anthropic.claude-opus-4-6",
        "anthropic.claude-sonnet-4-6")),
    *((key, 200_000) for key in (
        "anthropic.claude-sonnet-4-5", "anthropic.claude-haiku-4-5", "anthropic.claude-opus-4",
        "anthropic.claude-sonnet-4", "anthropic.claude-3-5-sonnet", "anthropic.claude-3-5-haiku",
        "anthropic.claude-3-opus", "anthropic.claude-3-sonnet", "anthropic.claude-3-haiku")),
    ("amazon.nova-pro", 300_000), ("amazon.nova-lite", 300_000), ("amazon.nova-micro", 128_000),
    ("meta.llama4-maverick", 128_000), ("meta.llama4-scout", 128_000),
    ("meta.llama3-3-70b-instruct", 128_000), ("mistral.mistral-large", 128_000),
    ("deepseek.v3", 128_000),
)
BEDROCK_DEFAULT_CONTEXT_LENGTH = 128_000

# `provider:` prefixes Hermes strips from a model name (its 75 provider names).
PROVIDER_PREFIXES = frozenset("""
alibaba aliyun anthropic arcee arcee-ai arceeai claude copilot copilot-acp custom dashscope
deep-infra deep-seek deepinfra deepseek gemini github github-copilot github-models glm gmi
gmi-cloud gmicloud go google google-ai-studio google-gemini grok kilo kilocode kimi kimi-cn
kimi-coding kimi-coding-cn local mimo minimax minimax-cn minimax-oauth moonshot moonshot-cn
nemotron nim nous novita novita-ai novitaai nvidia nvidia-nim ollama ollama-cloud openai-codex
opencode opencode-go opencode-zen openrouter qwen qwen-oauth qwen-portal stepfun tencent
tencent-cloud tencent-tokenhub tencentmaas tokenhub x-ai x.ai xai xiaomi xiaomi-mimo z-ai z.ai
zai zen zhipu
""".split())

_OLLAMA_TAG = lazyre.compile(r"^(\d+\.?\d*b|latest|stable|q\d|fp?\d|instruct|chat|coder|vision|text)",
                         lazyre.IGNORECASE)


def _longest_first(table: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(table, key=lambda kv: len(kv[0]), reverse=True))


_TABLE_BY_LENGTH = _longest_first(CONTEXT_LENGTHS)
_CODEX_BY_LENGTH = _longest_first(CODEX_CONTEXT_LENGTHS)
_BEDROCK_BY_LENGTH = _longest_first(BEDROCK_CONTEXT_LENGTHS)


def strip_provider_prefix(model: str) -> str:
    """Drop a ``provider:`` prefix unless what follows looks like an Ollama tag (``qwen:0.5b``)."""
    if ":" not in model or model.startswith("http"):
        return model
    prefix, rest = model.split(":", 1)
    if prefix.strip().lower() in PROVIDER_PREFIXES and not _OLLAMA_TAG.match(rest.strip()):
        return rest
    return model


@record(frozen=True)
class ContextWindow:
    length: int
    source: str  # "flag" | "codex-table" | "bedrock-table" | "table" | "default"
    matched: str | None = None  # the table key that matched


def resolve_context_length(model: str | None, *, context_length: int | None = None,
                           provider: str | None = None) -> ContextWindow:
    """The context window of ``model``; ``source`` says how it was found (``default``: unknown)."""
    if isinstance(context_length, int) and not isinstance(context_length, bool) and context_length > 0:
        return ContextWindow(context_length, "flag")
    name = strip_provider_prefix(model or "").lower()
    if provider == "bedrock":
        for key, length in _BEDROCK_BY_LENGTH:
            if key in name:
                return ContextWindow(length, "bedrock-table", key)
        return ContextWindow(BEDROCK_DEFAULT_CONTEXT_LENGTH, "default")
    if provider == "openai-codex":
        for key, length in _CODEX_BY_LENGTH:
            if key in name:
                return ContextWindow(length, "codex-table", key)
    for key, length in _TABLE_BY_LENGTH:
        if key in name:
            return ContextWindow(length, "table", key)
    return ContextWindow(DEFAULT_CONTEXT_LENGTH, "default")
