"""hermesctx: composable Unix commands that keep LLM agent conversations inside their token budgets.

Every stage is a pure function on plain dicts in :mod:`hermesctx.stages`; the click layer in
:mod:`hermesctx.cli` only parses options and moves bytes.
"""

__version__ = "0.1.0"
