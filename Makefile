# hermesctx targets. `make install` installs the command for a user: the runtime only (no dev
# tools) in .venv, `hermesctx` linked into PREFIX/bin, the man pages and shell completions under
# PREFIX. `make venv` adds the dev tools (tests, ruff, dask); every other target uses it.
# Both reinstall only when pyproject.toml changed (stamp files in .venv), so they work offline.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PREFIX ?= $(HOME)/.local
# a .pth path entry, not setuptools' import hook: that hook costs ~10 ms on every start
EDITABLE := --config-settings editable_mode=compat -e .

.PHONY: venv runtime install install-shell test lint bench bench-dask oracle fuzz completions man help-data prices schemas clean reallogs eval eval-archive

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet $(EDITABLE)
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet $(EDITABLE)'[dev]'
	touch $@ $(VENV)/.installed-runtime

runtime: $(VENV)/.installed-runtime

venv: $(VENV)/.installed-dev

install: runtime install-shell
	mkdir -p $(PREFIX)/bin
	ln -sf $(CURDIR)/$(BIN)/hermesctx $(PREFIX)/bin/hermesctx
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) echo "hermesctx is in $(PREFIX)/bin, on your PATH";; \
	  *) echo "hermesctx is in $(PREFIX)/bin, which is not on your PATH: add"; \
	     echo "  export PATH=\"$(PREFIX)/bin:\$$PATH\""; echo "to your shell's rc file (or run $(PREFIX)/bin/hermesctx)";; esac

test: venv
	$(BIN)/python -m pytest -m "not oracle and not slow"

lint: venv
	$(BIN)/ruff check hermesctx tests bench

# `make bench BENCH_ARGS="--size-mb 20"` for a quick run; SUMMARY_BENCH_ARGS="--sizes 1000,10000" for the
# extractive summarizer's time per message (start-up and summary first: the Done-when table of
# bench/run.py reads their results); RECALL_BENCH_ARGS="--messages 10000" for a smaller archive store
bench: venv
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/files.py
	$(BIN)/python bench/summary_scale.py $(SUMMARY_BENCH_ARGS)
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/jobs.py $(BENCH_ARGS)
	$(BIN)/python bench/recall.py $(RECALL_BENCH_ARGS)
	$(BIN)/python bench/replay.py

# `run --dask local:2` against `run --jobs 2` on the 200 MB benchmark batch (same bytes? time?)
bench-dask: venv
	$(BIN)/python bench/jobs.py --jobs 2 --dask local:2 --out bench/results/dask.json $(BENCH_ARGS)

# Differential tests against Hermes Agent 0.19.0 in its own venv (never a dependency, never CI).
oracle: venv
	test -x .oracle-venv/bin/python || ($(PYTHON) -m venv .oracle-venv && .oracle-venv/bin/pip install --quiet hermes-agent==0.19.0)
	HERMESCTX_ORACLE_PYTHON=$(CURDIR)/.oracle-venv/bin/python $(BIN)/python -m pytest -m oracle

# Every command over the genuine logs of ../shared/real-logs (local only, never CI; skipped
# when the folder is absent): detection, exit codes, calls/results/asks kept, false orphans.
REALLOGS ?= ../shared/real-logs
reallogs: venv
	$(BIN)/python tests/reallogs.py $(REALLOGS) $(REALLOGS_ARGS)
	$(BIN)/python tests/replay_reallogs.py $(REALLOGS)

# What a successor keeps (issue 28; never CI; docs/eval.md): the logs of EVAL_DIR, else of $(REALLOGS)
# when present, else the fixtures of eval/fixtures.py; the tune split unless EVAL_ARGS="--split holdout"
# (or all); EVAL_ARGS="--rows --lost 3" for one line per transcript and what compress lost.
eval: venv
	$(BIN)/python eval/run.py $(if $(or $(EVAL_DIR),$(wildcard $(REALLOGS))),--dir $(or $(EVAL_DIR),$(REALLOGS))) $(EVAL_ARGS)

# Nothing lost on real logs (issue 20; never CI): three rounds of compaction of each transcript into
# one archive store, every message recovered byte for byte, recall of the middles' files and errors.
eval-archive: venv
	$(BIN)/python eval/archive.py --dir $(or $(EVAL_DIR),$(REALLOGS)) $(EVAL_ARGS)

fuzz: venv
	$(BIN)/python -m pytest tests/cli/test_fuzz.py --hypothesis-profile fuzz

# generated from the command tree into completions/ and man/ at the top of the repository, the one
# copy: hermesctx/data/completions and hermesctx/data/man are symlinks to them, so the editable
# install reads them there and a wheel (pipx, uv tool) carries them as package data (`hermesctx man`,
# `hermesctx completion`); tests fail when they are stale
completions: venv help-data
	$(BIN)/python -m hermesctx.tools.gen_completions completions

man: venv help-data
	$(BIN)/python -m hermesctx.tools.gen_man man

help-data: venv
	$(BIN)/python -m hermesctx.tools.gen_help hermesctx/data/help.txt

# refresh hermesctx/data/pricing-library.json from the maintained price library (pinned; the
# pin is PIN in hermesctx/tools/import_prices.py): needs the network once, never at run time
PRICES_PIN := $(shell sed -n 's/^PIN = "\(.*\)"/\1/p' hermesctx/tools/import_prices.py)
prices: venv
	$(BIN)/pip install --quiet 'genai-prices==$(PRICES_PIN)'
	$(BIN)/python -m hermesctx.tools.import_prices hermesctx/data/pricing-library.json

# refresh the request schemas validate checks bodies with (hermesctx/data/schema-*.json) from
# the providers' published OpenAPI documents: OPENAI_SPEC / ANTHROPIC_SPEC are a path or an
# address (defaults: shared/wire-rules' trimmed OpenAI document, the pinned Anthropic one)
schemas: venv
	$(BIN)/python -m hermesctx.tools.gen_schemas hermesctx/data \
	  $(if $(OPENAI_SPEC),--openai $(OPENAI_SPEC)) $(if $(ANTHROPIC_SPEC),--anthropic $(ANTHROPIC_SPEC))

install-shell: runtime
	$(BIN)/hermesctx man --install $(PREFIX)/share/man
	$(BIN)/hermesctx completion bash --install $(PREFIX)/share/bash-completion/completions
	$(BIN)/hermesctx completion zsh --install $(PREFIX)/share/zsh/site-functions
	$(BIN)/hermesctx completion fish --install $(PREFIX)/share/fish/vendor_completions.d

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis bench/data bench/results
