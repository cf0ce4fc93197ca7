"""``hermesctx run --dask ADDRESS``: the pipeline of ``run`` over many FILEs on a Dask cluster
(``pip install '.[dask]'``).

The stages are pure functions on plain dicts, so a JSON Lines batch maps onto Dask directly: each
file is cut into blocks on line boundaries (``dask.bytes.read_bytes``, the reader under
``dask.bag.read_text``; a gzip file is one block), each block is a task that runs
:func:`hermesctx.pipeline.worker` on its lines, and the results come back to this process in the
input's order, written as ``run --jobs`` writes them (byte for byte the same output, warnings,
reports and errors). A file that is one document (pretty-printed JSON) or an agent's session log
is run here, when its turn comes. FILEs may be ``s3://`` / ``gs://`` globs (through fsspec, with
its s3fs / gcsfs installed); a config file must be readable by the workers at the same path.

``ADDRESS`` is a scheduler's (``tcp://host:8786``) or ``local[:N]``: a LocalCluster of N worker
processes on this machine (default: one per CPU). The Python function :func:`run_files` writes one
output file per input file instead.
"""

from __future__ import annotations

import os

from hermesctx.errors import HermesctxError, UpstreamError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

BLOCK_SIZE = 16 << 20  # a block per 16 MiB of a file (a block is one task: small enough to keep every worker busy)
_RUNNERS: dict = {}  # in a worker process: the pipeline of each run, built once (by its token)


def require() -> None:
    """A one-line error naming the extra when dask.distributed is not installed."""
    from hermesctx import extras

    extras.require("distributed", "--dask")


def connect(address: str):
    """``(client, cluster)`` for ``--dask ADDRESS``: ``local`` / ``local:N`` starts a LocalCluster
    of N worker processes (one thread each); anything else is a scheduler's address."""
    require()
    import logging

    from dask.distributed import Client, LocalCluster

    if address == "local" or address.startswith("local:"):
        count = address.partition(":")[2]
        if count and not (count.isdigit() and int(count) > 0):
            raise UsageError(f"--dask {address}: expected local or local:N with N a number of workers")
        workers = int(count) if count else os.cpu_count() or 1
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, scheduler_kwargs={"dashboard": False},
                               silence_logs=logging.ERROR)
        return Client(cluster), cluster
    try:
        return Client(address, timeout="10s"), None
    except (OSError, TimeoutError, ValueError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UpstreamError(f"cannot reach the Dask scheduler at {address}: {text}",
                            hint="give tcp://host:8786, or local[:N] for a cluster on this machine") from None


def expand(paths: list[str]) -> list[str]:
    """The FILE arguments, each URL (``s3://bucket/day-*.jsonl``) expanded to the files it
    names (in their sorted order); local paths as they are (the shell globbed them)."""
    out: list[str] = []
    for path in paths:
        if "://" not in path:
            out.append(path)
            continue
        import fsspec

        try:
            files = fsspec.open_files(path, "rb")
        except (ImportError, ValueError, OSError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
        if not files:
            raise HermesctxError(f"{path}: no such file")
        out.extend(f.full_name for f in files)
    return out


class Runner:
    """The files of one ``run --dask``, their blocks computed on the cluster ahead of their turn
    (a window of tasks across files: memory is bounded by the window, not by the batch), read
    back in order by :meth:`results`."""

    def __init__(self, ctx, client, cluster, paths: list[str], entries: Any, stages: list, pretty: bool,
                 fmt: dict, jsonl: bool | None, block_size: int | None = None):
        import uuid

        self.ctx, self.client, self.cluster, self.paths = ctx, client, cluster, paths
        self.stages, self.fmt, self.jsonl = stages, fmt, jsonl
        env = ctx.env
        self.args = (uuid.uuid4().hex, (entries, ctx.settings.path, dict(env.environ), pretty, fmt["source"],
                                        fmt["target"], True))
        self.block_size = block_size or BLOCK_SIZE
        self.plans = [self._plan(path) for path in paths]  # (path, error, whole, tasks)
        self.turn = 0  # the file whose results are read next
        self.window = max(4, 2 * sum(client.nthreads().values()))
        self.pending = iter([(i, task) for i, plan in enumerate(self.plans) for task in plan[3]])
        self.futures: list = []  # (the file's index, future), in input order
        self.blocks = sum(len(plan[3]) for plan in self.plans)
        self.progress = _Progress(env, self.blocks, len(client.nthreads()))

    def _plan(self, path: str) -> tuple:
        """``(path, error, whole, tasks)``: a batch's block tasks, or ``whole`` (one document or a
        session log: run here), or the error reading it gave (raised when its turn comes)."""
        from dask import delayed
        from dask.bytes import read_bytes

        try:
            gz = self._kind(path)
        except HermesctxError as err:
            return path, err, False, []
        if gz is None:
            return path, None, True, []
        _, blocks = read_bytes(path, delimiter=b"\n", blocksize=None if gz else self.block_size, sample=False,
                               compression="gzip" if gz else None)
        return path, None, False, [delayed(_block, pure=False)(b, i == 0, self.args) for i, b in enumerate(blocks[0])]

    def _kind(self, path: str) -> bool | None:
        """None when ``path`` is not a JSON Lines batch (what ``run --jobs`` runs in one process,
        detected as it detects it); else whether it is gzip-compressed."""
        from hermesctx import jsonio
        from hermesctx.transcripts import raw_lines

        if self.jsonl is False or self.fmt["source"] != "auto" and _is_log(self.fmt["source"]):
            return None
        if "://" in path:
            return self._remote_kind(path)
        lines = raw_lines(self.ctx.env, path, self.jsonl, self.fmt["source"] == "auto")
        try:
            first = next(lines)
        finally:
            lines.close()
        if first is None or first == "log":
            return None
        with open(path, "rb") as handle:
            return handle.read(2) == jsonio.GZIP_MAGIC

    def _remote_kind(self, path: str) -> bool | None:
        import fsspec

        from hermesctx import formats, jsonio

        try:
            with fsspec.open(path, "rb") as raw:
                gz = raw.read(2) == jsonio.GZIP_MAGIC
            with fsspec.open(path, "rb", compression="gzip" if gz else None) as stream:
                head, first = jsonio.first_line(stream)
        except OSError as exc:
            raise HermesctxError(f"cannot read {path}: {exc}") from None
        value = jsonio.try_loads(first)
        if self.jsonl is None and value is jsonio.INVALID or self.fmt["source"] == "auto" and \
                value is not jsonio.INVALID and formats.detect_line(value) is not None:
            return None
        return gz

    def _fill(self) -> None:
        while len(self.futures) < self.window:
            nxt = next(self.pending, None)
            if nxt is None:
                return
            self.futures.append((nxt[0], self.client.compute(nxt[1])))

    def results(self, path: str, file: str | None, keep_going) -> Iterator:
        """``(doc, output, reports)`` for every document of the file ``path``, the next of the run's
        files, in order."""
        from hermesctx import pipeline
        from hermesctx.transcripts import in_file

        index, self.turn = self.turn, self.turn + 1
        planned, error, whole, tasks = self.plans[index]
        assert planned == path
        try:
            if error is not None:
                raise error
            if whole:
                yield from self._whole(path, file, keep_going)
                return
            yield from pipeline.from_workers(self.ctx.env, self._lines(index, len(tasks)), file, keep_going)
        except HermesctxError as err:
            raise in_file(err, file) from None
        finally:  # (a file that failed: its blocks still running are dropped)
            while self.futures and self.futures[0][0] <= index:
                self.futures.pop(0)[1].cancel()

    def _lines(self, index: int, count: int) -> Iterator:
        """What the workers gave for each line of the file's ``count`` blocks, numbered in the file."""
        base = 0
        for _ in range(count):
            self._fill()
            owner, future = self.futures.pop(0)
            assert owner == index
            lines, results = _result(future)
            self.progress.block(len(results))
            for line_no, *rest in results:
                yield (base + line_no, *rest)
            base += lines

    def _whole(self, path: str, file: str | None, keep_going) -> Iterator:
        import io

        from hermesctx import pipeline

        env, stages = self.ctx.env, self.stages
        if "://" not in path:
            yield from pipeline._sequential(env, path, self.jsonl, stages, self.fmt, file=file, keep_going=keep_going)
            return
        import fsspec

        with fsspec.open(path, "rb") as handle:
            data = handle.read()
        yield from pipeline._sequential(env, path, self.jsonl, stages, self.fmt, stream=io.BytesIO(data), file=file)

    def done(self) -> None:
        """The end of the run: the progress line ended, the tasks not needed cancelled, the
        client closed (and the LocalCluster it started)."""
        self.progress.done()
        for _, future in self.futures:
            future.cancel()
        disconnect(self.client, self.cluster)


def disconnect(client, cluster) -> None:
    client.close()
    if cluster is not None:
        cluster.close()


def _is_log(source: str) -> bool:
    from hermesctx import formats

    return source in formats.LOG_FORMATS


def _result(future) -> tuple[int, list]:
    """A block's result; a task that failed for a reason of its own (a worker lost, the file gone)
    is one line naming it, not a traceback."""
    try:
        return future.result()
    except HermesctxError:
        raise
    except Exception as exc:  # noqa: BLE001 - dask's own failures: the cluster, the file system
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UpstreamError(f"a Dask task failed: {type(exc).__name__}: {text}") from None


def _block(data: bytes, first: bool, args: tuple) -> tuple[int, list]:
    """In a worker: ``(lines, results)`` for one block of a JSON Lines file: how many lines it
    has, and :func:`hermesctx.pipeline.worker`'s result for each non-blank one, numbered from 1
    in the block (the first block's BOM removed, as a file's reader removes it)."""
    import io

    token, worker_args = args
    one = _RUNNERS.get(token)
    if one is None:
        from hermesctx import pipeline

        _RUNNERS.clear()  # (one run at a time in a worker: the last one's pipeline is not kept)
        one = _RUNNERS[token] = pipeline.worker(*worker_args)
    results = []
    line_no = 0
    for raw in io.BytesIO(data):
        line_no += 1
        if first and line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.strip():
            results.append(one((line_no, raw)))
    return line_no, results


class _Progress:
    """The progress line of ``run --dask`` (a terminal, not ``--quiet``): blocks done of all, on
    how many workers, transcripts written; refreshed at most 5 times a second."""

    def __init__(self, env, blocks: int, workers: int):
        self.env, self.blocks, self.workers = env, blocks, workers
        self.on = env.stderr_isatty and not env.quiet
        self.done_blocks = self.count = 0
        self.last = 0.0

    def block(self, transcripts: int) -> None:
        import time

        self.done_blocks += 1
        self.count += transcripts
        now = time.monotonic()
        if self.on and (now - self.last > 0.2 or self.done_blocks == self.blocks):
            self.last = now
            self.env.stderr.write("\r" + self.line())
            self.env.stderr.flush()

    def line(self) -> str:
        from hermesctx.context import plural

        return (f"dask: {self.done_blocks:,} of {plural(self.blocks, 'block')} on {plural(self.workers, 'worker')}, "
                f"{plural(self.count, 'transcript')}   ")

    def done(self) -> None:
        if self.on and self.done_blocks:
            self.env.stderr.write("\n")
            self.env.stderr.flush()


def run_files(paths: list[str], pipeline: list[Any], output_dir: str, *, config_path: str | None = None) -> list[str]:
    """Run ``pipeline`` on every line of the JSON Lines files ``paths`` on the current Dask
    client's cluster (one partition per file, so each output matches its input); write one
    output file per input into ``output_dir``; return their paths, in order."""
    import dask.bag as db

    from hermesctx import pipeline as registry

    registry.parse(pipeline)  # fail fast, before any task is scheduled
    bag = db.read_text(paths, blocksize=None)  # one partition per file: order is kept
    import uuid

    args = (uuid.uuid4().hex, (pipeline, config_path, dict(os.environ), False))
    mapped = bag.map_partitions(_partition, args)
    os.makedirs(output_dir, exist_ok=True)
    names = [os.path.join(output_dir, f"part-{i:05d}.jsonl") for i in range(bag.npartitions)]
    mapped.to_textfiles(names, last_endline=True)
    return names


def _partition(lines, args) -> list[str]:
    """A file's lines through the pipeline (an error raised, located by its line)."""
    _, results = _block("".join(lines).encode("utf-8"), True, args)
    return [out.decode("utf-8").rstrip("\n") for _, out, _, _ in results]
