from __future__ import annotations

from hermesctx.cli.params import CONFIG, Param, stage_params
from hermesctx.cli.runner import click_command, get_context, options_from
from hermesctx.stages import trajectory as stage
from hermesctx.transcripts import entries

PARAMS = (Param((), "input", kind="argument", metavar="[FILE]...", dir_okay=False, allow_dash=True),
          *stage_params(stage.Options), *CONFIG)


def body(input, config_path, **params):
    """What `hermesctx trajectory` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    ctx = get_context(config_path)
    options = options_from(stage.Options, params)
    stage.run(options, ctx, entries(ctx.env, input))


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Compress ShareGPT training trajectories (JSONL of {"conversations": [{"from", "value"}]})
        to a token budget, the way Hermes's TrajectoryCompressor does.

        A pretty-printed JSON file is read as one document: an array of entries, or one entry.
        Several FILEs are read one after the other, their aggregate metrics taken together.

        Each trajectory over --target-max-tokens has its middle turns (after the first system,
        human, gpt and tool turns, before the last --protect-last-turns) replaced by one human turn
        "[CONTEXT SUMMARY]: ...", taking just enough turns to get under the target and never
        splitting a tool call from its response. Entries come out in input order, compressed ones
        with compression_metrics; a trajectory that fails is written unchanged and counted. The
        aggregate metrics go to stderr, or to --metrics FILE.

        \b
        Examples:
            hermesctx trajectory examples/trajectories.jsonl --target-max-tokens 300 > small.jsonl
            hermesctx trajectory examples/trajectories.jsonl --summarizer openai --base-url http://localhost:8000/v1 \\
                --summary-model qwen2.5-7b -j 16 --metrics metrics.json > out.jsonl
            hermesctx trajectory examples/trajectories.jsonl --summarizer anthropic --summary-model claude-haiku-4-5 > out.jsonl
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
