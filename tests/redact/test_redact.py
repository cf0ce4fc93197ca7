"""redact: Hermes's rules (spec 30.9 table), hermesctx's added secret forms, the two corpora
(tests/redaction_corpus.py: benign code unchanged, secrets gone), the switch, and the helpers
for parsed arguments and previews."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redaction_corpus import BENIGN, survivors
from redaction_corpus import SECRETS as SECRET_CORPUS

from hermesctx import redact as redact_module
from hermesctx.redact import benign, mask, redact, redact_head, redact_value

# input -> output, from the spec 30.9 table (Hermes's real outputs)
SPEC_TABLE = [
    ("key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c end", "key sk-pro...6b5c end"),
    ("short sk-abcdefghij1 end", "short *** end"),
    ("OPENAI_API_KEY=sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "OPENAI_API_KEY=***"),
    ("DB_PASSWORD = 'hunter2'", "DB_PASSWORD='***'"),
    ('config {"apiKey": "abcdefghijklmnopqrstuvwx", "token_count": 5}',
     'config {"apiKey": "abcdef...uvwx", "token_count": 5}'),
    ("password: hunter2hunter2", "password: ***"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "Authorization: Bearer abcdef...0123"),
    ("bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "bot123456789:***"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "[REDACTED PRIVATE KEY]"),
    ("postgres://admin:s3cret@db.local:5432/app", "postgres://admin:***@db.local:5432/app"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdEFGHijkl", "jwt eyJhbG...ijkl"),
    ("call +14155552671 now", "call +141****2671 now"),
    ("client_id=abc&client_secret=xyz123&grant_type=refresh", "client_id=abc&client_secret=***&grant_type=refresh"),
]


@pytest.mark.parametrize("text,expected", SPEC_TABLE)
def test_spec_table(text, expected, monkeypatch):
    assert redact(text, force=True) == expected
    monkeypatch.setenv("HERMESCTX_REDACT", "hermes")
    assert redact(text, force=True) == expected


@pytest.mark.parametrize("text", BENIGN)
def test_benign_corpus_unchanged(text):
    assert redact(text, force=True) == text


@pytest.mark.parametrize("text,secret", SECRET_CORPUS, ids=[s[:14] for _, s in SECRET_CORPUS])
def test_secret_corpus_gone(text, secret):
    out = redact(text, force=True)
    assert survivors(secret, out) == [], out


_PRINTABLE = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SECRET_CORPUS), _PRINTABLE, _PRINTABLE, st.sampled_from(["\n", " ", "\n\n", "; "]))
def test_a_planted_secret_never_survives_its_surroundings(pair, before, after, sep):
    text, secret = pair
    assert survivors(secret, redact(before + sep + text + sep + after, force=True)) == []


def test_corpora_sizes():
    assert len(BENIGN) >= 40 and len(SECRET_CORPUS) >= 40


@pytest.mark.parametrize("text,secret", SECRET_CORPUS, ids=[s[:14] for _, s in SECRET_CORPUS])
def test_secret_corpus_gone_inside_json_arguments(text, secret):
    """A tool call's arguments are a JSON string: the secret JSON-escaped inside it is found too."""
    raw = json.dumps({"command": text, "note": "run it"})
    out = redact(raw, force=True)
    assert survivors(secret, out) == [] and survivors(json.dumps(secret)[1:-1], out) == [], out
    assert survivors(secret, json.dumps(redact_value(json.loads(raw), on=True))) == []


@pytest.mark.parametrize("text,expected", [
    ("MAX_TOKENS = 4096", "MAX_TOKENS = 4096"),  # Hermes: MAX_TOKENS=***
    ("max_tokens: 4096", "max_tokens: 4096"),  # Hermes: max_tokens: ***
    ("tokenizer: cl100k_base", "tokenizer: cl100k_base"),
    ("DB_PASSWORD=123456", "DB_PASSWORD=***"),  # a number is a password's value all the same
    ("{password: pw9}", "{password: ***}"),
    ("user db_password: Kx9mQ2vL7z, host", "user db_password: ***, host"),
])
def test_false_positives_fixed_and_passwords_kept(text, expected):
    assert redact(text, force=True) == expected


def test_hermes_only_mode_keeps_its_false_positives(monkeypatch):
    monkeypatch.setenv("HERMESCTX_REDACT", "hermes")
    assert redact("MAX_TOKENS = 4096", force=True) == "MAX_TOKENS=***"
    assert redact("curl -u deploy:Hx7Qm2Lw9Zr4 https://x", force=True) == "curl -u deploy:Hx7Qm2Lw9Zr4 https://x"
    assert redact_value({"password": "Hx7Qm2Lw9Zr4"}, on=True) == {"password": "Hx7Qm2Lw9Zr4"}


def test_redact_value_masks_credential_keys_of_parsed_arguments():
    args = {"user": "bob", "password": "pw", "nested": [{"apiKey": "Kr9Hc1Jb6Gd5Sf0AeRy2x"}],
            "token_count": 12, "db": "postgres://a:Kc1Hb6Jd3Gf5@h/db", "password_field": "forms.CharField()"}
    assert redact_value(args, on=True) == {
        "user": "bob", "password": "***", "nested": [{"apiKey": "Kr9Hc1...Ry2x"}], "token_count": 12,
        "db": "postgres://a:***@h/db", "password_field": "forms.CharField()"}
    assert redact_value(args, on=False) is args


def test_benign_values():
    assert benign("4096", "MAX_TOKENS") and not benign("4096", "DB_PASSWORD")
    assert benign("forms.CharField()") and benign("${X}") and benign("<your-key>") and benign("x", "secret_name")
    assert not benign("hunter2") and not benign("Tr0ub4dor&3")


def test_redact_head_redacts_across_the_cut():
    """A preview cut at 100 characters: the key block starting before the cut is masked whole
    (cutting first would leave the start of the block, which no rule matches)."""
    key = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx7Lm2Xw9Zr4Tn8Kb3Hd6\n" * 20
           + "-----END RSA PRIVATE KEY-----")
    text = "x" * 80 + "\n" + key + "\n" + "tail line\n" * 5000
    head = redact_head(text, 100, on=True)
    assert head.startswith("x" * 80 + "\n[REDACTED PRIVATE KEY]") and len(head) > 100
    assert "MIIEow" not in head[:100] and len(head) < len(text)
    assert redact_head(text, 100, on=False) is text
    assert redact_head("short sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", 100, on=True) == "short sk-pro...6b5c"


def test_a_private_key_whose_end_was_cut_is_masked():
    out = redact("cat key\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nQyNTUxOQAAACBz9Lm2", force=True)
    assert out == "cat key\n[REDACTED PRIVATE KEY]"


def test_configure_switch(monkeypatch):
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)
    secret = "key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    try:
        redact_module.configure(False)
        assert redact(secret) == secret and redact(secret, force=True) == "key sk-pro...6b5c"
    finally:
        redact_module.configure(True)
    assert redact(secret) == "key sk-pro...6b5c"


# one real-looking secret of each common kind: the secret body must be gone
SECRETS = [
    "sk-ant-api03-Xk3mP9qLw2Zr7Tn5Vb8Yc1Hd4Jf6Gs0Ka2Lm",            # Anthropic
    "sk-proj-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm12345",             # OpenAI
    "ghp_4Jk9Lm2Np7Qr5St8Vw1Xy3Za6Bc0De2Fg4Hi",                      # GitHub
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",   # GitHub fine-grained
    "AKIAIOSFODNN7EXAMPLE",                                        # AWS access key id
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",    # Slack
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",                     # Google
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",                         # Hugging Face
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",                            # Stripe
]


@pytest.mark.parametrize("secret", SECRETS)
def test_provider_keys_are_masked(secret):
    out = redact(f"use {secret} please", force=True)
    assert secret not in out and out.startswith("use ") and out.endswith(" please")
    assert mask(secret) in out


@pytest.mark.parametrize("text,gone", [
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("GITHUB_TOKEN=abcdef0123456789abcdef", "abcdef0123456789abcdef"),
    ("curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.x", "9f8e7d6c5b4a3928"),
    ("curl -H 'x-api-key: 0123456789abcdef0123' https://api.x.com", "0123456789abcdef0123"),
    ("git clone https://ghpTOKENVALUE123@github.com/o/r.git", "ghpTOKENVALUE123"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("mysql://root:Pa55w0rd!@127.0.0.1/db", "Pa55w0rd!"),
])
def test_secrets_in_context_are_masked(text, gone):
    assert gone not in redact(text, force=True)


@pytest.mark.parametrize("text", [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",                  # sha1
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request id 123e4567-e89b-12d3-a456-426614174000",                  # UUID
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "https://example.com/cb?code=ABC123&state=xyz",
    "I have password=foo in prose",
    "TOKEN=os.getenv('X')",
    "the token count is 12 and the secret is out",
    "ran pytest -q: 42 passed in 0.42s",
])
def test_ordinary_text_untouched(text):
    assert redact(text, force=True) == text


def test_url_passwords_are_masked_unless_hermes_only(monkeypatch):
    text = "see https://bob:hunter2@example.com/x"
    assert redact(text, force=True) == "see https://bob:***@example.com/x"
    assert redact(text, force=True, url_credentials=False) == text
    monkeypatch.setenv("HERMESCTX_REDACT", "hermes")
    assert redact(text, force=True) == text  # Hermes leaves web URLs alone
    assert redact(text, force=True, url_credentials=True) == "see https://bob:***@example.com/x"


def test_switch_and_types(monkeypatch):
    monkeypatch.setenv("HERMESCTX_REDACT", "off")
    secret = "key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    assert redact(secret) == secret
    assert redact(secret, force=True) == "key sk-pro...6b5c"
    assert redact(None) is None and redact(12) == "12"
    assert mask("") == "***" and mask("a" * 17) == "***" and mask("a" * 6 + "b" * 8 + "c" * 4) == "aaaaaa...cccc"


def test_long_word_runs_without_a_key_name_pass_unchanged():
    """Long word runs: every rule's repetitions are bounded (keys to 64 or 128 characters), so
    no rule backtracks across a run (bench/redact_speed.py measures it; this one took about half a
    minute before the bounds)."""
    blob = "x" * 200_000 + " a=b " + "F" * 50_000 + "=="
    assert redact(blob, force=True) == blob
    assert redact("spring.datasource.password=hunter2", force=True) == "spring.datasource.password=***"


@pytest.mark.parametrize("blob", [
    "token " + "a." * 10_000 + "=x",
    "password" * 2_500 + ": x",
    "tokentoken" * 2_000,
    "db_password" + "_" * 20_000 + ":" + "A" * 20_000,
    "mysql " + "-" * 20_000 + "p",
    "aws " + "A1b/" * 5_000,
    "-----BEGIN RSA PRIVATE KEY-----" * 700,
    "a:" * 10_000 + "://",
])
def test_pathological_runs_are_handled(blob):
    out = redact(blob, force=True)
    assert isinstance(out, str) and len(out) <= len(blob) + 10


# texts made of the pieces the literal pre-checks look for (and the letters IGNORECASE folds)
_PIECES = st.sampled_from(["key", "KEY", "\u212aey", "token", "Secret", "passwd", "credential", "api key",
                           "x-api-key", "12345678", "123456789", ":", "=", " ", "\t", "\\", '"', "'", "\n",
                           "a", "_", ".", "-", "bot", "abcdefghijklmnopqrstuvwxyz0123", "\u017fecret"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_literal_prechecks_never_skip_a_match(text):
    """redact's plain substring tests stand before its regexes: each must hold wherever its
    regex would match (else a secret would pass unmasked)."""
    from hermesctx import redact as r

    low = text.lower() if text.isascii() else None
    if r._YAML.search(text) and any(r._YAML_WORD.search(m.group(1)) for m in r._YAML.finditer(text)):
        assert low is None or r._before_colon(low, r._YAML_HINTS)
    if r._KEY_HEADER.search(text):
        assert low is None or r._before_colon(low, ("key", "token"))
    if r._TELEGRAM.search(text):
        assert r._digits_then_colon(text)
    for m in r._SECRET_WORD.finditer(text):
        for start in range(m.start(), -1, -1):
            hit = r._INLINE.match(text, start)
            if hit is not None and hit.end(1) >= m.end():
                assert r._separator_follows(text, m.end())
