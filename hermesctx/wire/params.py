"""The top-level request keys each API takes: one home for the send path (which keeps only
these) and the rules (which flag any other)."""

# CreateChatCompletionRequest's properties (openai-openapi f85dbe2, allOf flattened)
OPENAI = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model",
    "moderation", "n", "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_options", "prompt_cache_retention", "reasoning_effort", "response_format",
    "safety_identifier", "seed", "service_tier", "stop", "store", "stream", "stream_options",
    "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options"})

# Anthropic MessageCreateParams (anthropic-sdk-python 009b035)
ANTHROPIC = frozenset({
    "cache_control", "container", "diagnostics", "inference_geo", "max_tokens", "messages",
    "metadata", "model", "output_config", "service_tier", "speed", "stop_sequences", "stream",
    "system", "temperature", "thinking", "tool_choice", "tools", "top_k", "top_p",
    "user_profile_id", "workspace_id"})
# ... and the beta MessageCreateParams' own keys (sent with an `anthropic-beta` header): kept by
# the send path, reported by the rules as a risk (a 400 without the header)
ANTHROPIC_BETA = frozenset({"mcp_servers", "context_management", "output_format", "betas"})

# the Responses API's CreateResponse body (OpenAI API reference, POST /responses; server-side
# compaction's context_management: https://developers.openai.com/api/docs/guides/compaction)
RESPONSES = frozenset({
    "background", "context_management", "conversation", "include", "input", "instructions",
    "max_output_tokens", "max_tool_calls", "metadata", "model", "parallel_tool_calls",
    "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_retention", "reasoning",
    "safety_identifier", "service_tier", "store", "stream", "stream_options", "temperature", "text",
    "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user"})
