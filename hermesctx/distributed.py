"""Run a hermesctx pipeline over JSONL files on a Dask cluster (``pip install hermesctx[dask]``).

The stages are pure functions on plain dicts, so a dataset of transcripts maps onto
``dask.bag`` directly: one partition per file, one transcript per line, the same pipeline as
``hermesctx run``, output files in the input's order::

    from dask.distributed import Client
    from hermesctx.distributed import run_files

    with Client():                       # or Client("tcp://scheduler:8786")
        run_files(["s3://bucket/day1.jsonl", "s3://bucket/day2.jsonl"],
                  ["prune", {"compress": {"if_needed": True}}, "sanitize"], "out/")

A transcript that is not valid input fails its partition with the same one-line error the
command line gives.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _runner(entries: list, config_path: str | None):
    import sys

    from hermesctx import jsonio, pipeline
    from hermesctx.context import Context, Env

    env = Env(sys.stdin.buffer, sys.stdout.buffer, sys.stderr, environ=dict(os.environ), quiet=True)
    stages = pipeline.build(entries, Context(env, config_path))

    def run(line: str) -> str:
        out, _ = pipeline.run_document(stages, jsonio.loads(line))
        return jsonio.dumps(out).decode("utf-8").rstrip("\n")

    return run


def _map_partition(lines, entries, config_path):
    run = _runner(entries, config_path)
    out = []
    for line in lines:
        line = line.rstrip("\n")
        if line.strip():
            out.append(run(line))
    return out


def run_files(paths: list[str], pipeline: list[Any], output_dir: str, *, config_path: str | None = None) -> list[str]:
    """Run ``pipeline`` on every line of ``paths`` with ``dask.bag``; write one output file per
    input partition into ``output_dir``; return their paths, in order."""
    import dask.bag as db

    from hermesctx import pipeline as registry

    registry.parse(pipeline)  # fail fast, before any task is scheduled
    bag = db.read_text(paths, blocksize=None)  # one partition per file: order is kept
    mapped = bag.map_partitions(_map_partition, pipeline, config_path)
    os.makedirs(output_dir, exist_ok=True)
    names = [os.path.join(output_dir, f"part-{i:05d}.jsonl") for i in range(bag.npartitions)]
    mapped.to_textfiles(names, last_endline=True)
    return names
