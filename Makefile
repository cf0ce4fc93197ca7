# hermesctx developer targets. `make venv` sets up .venv (every other target uses it);
# `make install` also puts the man pages and shell completions under PREFIX for the user.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PREFIX ?= $(HOME)/.local

.PHONY: venv install install-shell test lint bench oracle fuzz completions man clean reallogs eval

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'

install: venv install-shell

test: venv
	$(BIN)/python -m pytest -m "not oracle and not slow"

lint: venv
	$(BIN)/ruff check hermesctx tests bench

# `make bench BENCH_ARGS="--size-mb 20"` for a quick run; SUMMARY_BENCH_ARGS="--sizes 1000,10000" for the
# extractive summarizer's time per message
bench: venv
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/jobs.py $(BENCH_ARGS)
	$(BIN)/python bench/summary_scale.py $(SUMMARY_BENCH_ARGS)

# Differential tests against Hermes Agent 0.19.0 in its own venv (never a dependency, never CI).
oracle: venv
	test -x .oracle-venv/bin/python || ($(PYTHON) -m venv .oracle-venv && .oracle-venv/bin/pip install --quiet hermes-agent==0.19.0)
	HERMESCTX_ORACLE_PYTHON=$(CURDIR)/.oracle-venv/bin/python $(BIN)/python -m pytest -m oracle

# Every command over the genuine logs of ../shared/real-logs (local only, never CI; skipped
# when the folder is absent): detection, exit codes, calls/results/asks kept, false orphans.
REALLOGS ?= ../shared/real-logs
reallogs: venv
	$(BIN)/python tests/reallogs.py $(REALLOGS) $(REALLOGS_ARGS)

# Probe evaluation of the offline summarizer (issue 18; never CI): the fixtures of eval/fixtures.py,
# or `make eval EVAL_DIR=../shared/real-logs` for a directory of agent logs; EVAL_ARGS="--rows ...".
eval: venv
	$(BIN)/python eval/run.py $(if $(EVAL_DIR),--dir $(EVAL_DIR)) $(EVAL_ARGS)

fuzz: venv
	$(BIN)/python -m pytest tests/test_fuzz.py --hypothesis-profile fuzz

completions: venv
	$(BIN)/python -m hermesctx.tools.gen_completions completions

man: venv
	$(BIN)/python -m hermesctx.tools.gen_man man

install-shell:
	mkdir -p $(PREFIX)/share/man/man1 $(PREFIX)/share/bash-completion/completions $(PREFIX)/share/zsh/site-functions $(PREFIX)/share/fish/vendor_completions.d
	cp man/*.1 $(PREFIX)/share/man/man1/
	cp completions/hermesctx.bash $(PREFIX)/share/bash-completion/completions/hermesctx
	cp completions/_hermesctx $(PREFIX)/share/zsh/site-functions/_hermesctx
	cp completions/hermesctx.fish $(PREFIX)/share/fish/vendor_completions.d/hermesctx.fish

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis bench/data bench/results
