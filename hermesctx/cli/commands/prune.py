from __future__ import annotations

import click

from hermesctx.cli.options import (
    budget_options,
    config_options,
    format_kwargs,
    input_options,
    model_options,
    settings_from,
    tail_budget,
    transcript_options,
)
from hermesctx.cli.runner import get_env, transform_stream
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages import prune as stage

_VERBS = {"stubbed": "stub", "deduplicated": "deduplicate", "args_truncated": "truncate arguments"}


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--protect-last-n", type=click.IntRange(min=0), default=None,
              help="Always protect at least the last N messages; 0: no floor "
                   "(default 20, config compression.protect_last_n).")
@click.option("--tail-tokens", type=click.IntRange(min=0), default=None,
              help="Token budget of the protected tail (0: count only; default: from the model's budgets).")
@click.option("--dry-run", is_flag=True, help="List what would change on stderr; output the input unchanged.")
@transcript_options
@model_options
@budget_options
@config_options
def command(input, jsonl, pretty, in_place, backup, report, **params):
    """Replace old tool results by one-line stubs, drop duplicates, shrink old arguments.

    Outside the protected tail (a token budget walked back from the end, at least
    --protect-last-n messages) every tool result over 200 characters becomes a stub such as
    `[terminal] ran `npm test` -> exit 0, 47 lines output`; identical results keep only the
    newest copy; tool-call arguments over 500 characters keep the first 200 characters of
    each string, still valid JSON. No model is called.

    \b
    Examples:
        hermesctx prune examples/coding-session.json --protect-last-n 6 --tail-tokens 0
        hermesctx prune --model claude-sonnet-4-5 < examples/coding-session.json > pruned.json
        hermesctx prune --dry-run --tail-tokens 2000 examples/coding-session.json > /dev/null
        hermesctx prune --report report.jsonl examples/batch.jsonl > pruned.jsonl
    """
    env = get_env()
    fmt = format_kwargs(params)
    # measuring the whole transcript costs more than pruning it: only --report gets the totals;
    # the line on stderr says the tokens saved, measured on the changed messages
    run = make(params, env, measure=stage.FULL if report else not env.quiet and stage.CHANGED)
    transform_stream(env, input, run, jsonl=jsonl, pretty=pretty, report=report,
                     describe=stage.describe, in_place=in_place, backup=backup, formats=fmt)


def make(params: dict, env, *, measure: bool | str = True):
    """The stage as a function of one document (shared by the command and `hermesctx run`)."""
    # --protect-last-n is Hermes's protect_tail_count and may be 0 (no floor: the token budget
    # alone, or with --tail-tokens 0 everything); the config key keeps its own range (>= 1, D4)
    flag_n = params.get("protect_last_n")
    settings = settings_from({k: v for k, v in params.items() if k != "protect_last_n"}, env.environ)
    last_n = settings["compression.protect_last_n"] if flag_n is None else flag_n
    tail_tokens, dry_run = params.get("tail_tokens"), params.get("dry_run")

    def run(doc):
        budget = tail_tokens if tail_tokens is not None else tail_budget(settings, doc)
        new, rep = stage.prune(doc, protect_last_n=last_n, tail_tokens=budget, measure=measure)
        if dry_run:
            for change in rep["changes"]:
                block = f" block {change['block']}" if "block" in change else ""
                env.info(f"would {_VERBS[change['change']]}: messages[{change['index']}]{block}")
            rep["dry_run"] = True
            return doc, rep
        return new, rep

    return run
