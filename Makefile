# hermesctx developer targets. `make install` sets up .venv; every other target uses it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PREFIX ?= $(HOME)/.local

.PHONY: install dev test lint bench oracle fuzz completions man install-user clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'

test: install
	$(BIN)/python -m pytest -m "not oracle and not slow"

lint: install
	$(BIN)/ruff check hermesctx tests bench

# `make bench BENCH_ARGS="--size-mb 20"` for a quick run
bench: install
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/jobs.py $(BENCH_ARGS)

# Differential tests against Hermes Agent 0.19.0 in its own venv (never a dependency, never CI).
oracle: install
	test -x .oracle-venv/bin/python || ($(PYTHON) -m venv .oracle-venv && .oracle-venv/bin/pip install --quiet hermes-agent==0.19.0)
	HERMESCTX_ORACLE_PYTHON=$(CURDIR)/.oracle-venv/bin/python $(BIN)/python -m pytest -m oracle

fuzz: install
	$(BIN)/python -m pytest tests/test_fuzz.py --hypothesis-profile fuzz

completions: install
	$(BIN)/python -m hermesctx.tools.gen_completions completions

man: install
	$(BIN)/python -m hermesctx.tools.gen_man man

install-user: install
	mkdir -p $(PREFIX)/share/man/man1 $(PREFIX)/share/bash-completion/completions $(PREFIX)/share/zsh/site-functions $(PREFIX)/share/fish/vendor_completions.d
	cp man/*.1 $(PREFIX)/share/man/man1/
	cp completions/hermesctx.bash $(PREFIX)/share/bash-completion/completions/hermesctx
	cp completions/_hermesctx $(PREFIX)/share/zsh/site-functions/_hermesctx
	cp completions/hermesctx.fish $(PREFIX)/share/fish/vendor_completions.d/hermesctx.fish

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis bench/data bench/results
