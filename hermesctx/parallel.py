"""Ordered, bounded parallel map for JSONL batches (``--jobs N``).

Documents go to N worker processes; results come back in input order; at most ``window``
documents are in flight or waiting for their turn, so memory is bounded by the window, not by
the file. Workers build their own pipeline once (from picklable arguments) and exchange raw
JSON bytes.

Each worker has its own pipe and holds one item at a time, so the parent always knows which
item each worker holds. It waits on the pipes and on the processes themselves: a worker that
dies (SIGKILL from the out-of-memory killer, a crash) ends the map with :class:`WorkerDied`
naming the items it held, instead of waiting forever for a result that will never come.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
from multiprocessing.connection import wait

from hermesctx.errors import HermesctxError
from hermesctx.exit import ExitStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any


class WorkerDied(HermesctxError):
    """A worker process ended without answering (killed, out of memory)."""

    status = ExitStatus.WORKER_DIED

    def __init__(self, message: str, held: list, index: int):
        super().__init__(message)
        self.held = held
        self.index = index  # the position of the item it held


def _serve(conn, factory: Callable[..., Any], args: tuple) -> None:
    """A worker: build the function once, then answer one item at a time until ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, _stop)  # the parent stopping us: unwind (temp files removed)
    try:
        fn = factory(*args)
    except Exception as exc:  # noqa: BLE001 - carried back with the first item
        fn, failed = None, exc
    while True:
        try:
            item = conn.recv()
        except EOFError:  # the parent is gone
            return
        if item is None:
            return
        if fn is None:
            conn.send((False, failed))
            continue
        try:
            conn.send((True, fn(item)))
        except Exception as exc:  # noqa: BLE001 - raised in the parent when the item's turn comes
            conn.send((False, exc))


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


_EMPTY, _END = object(), object()


class _Feeder:
    """The items, read in a thread: a slow input (a pipe that stays open) never holds back the
    results already computed. A byte on ``signal`` says an item is waiting; one item waits in the
    queue and one more may be in the reader's hand, so memory stays bounded by the window."""

    def __init__(self, items: Iterable[Any]):
        self._queue: queue.Queue = queue.Queue(maxsize=1)
        self.signal, self._wake = multiprocessing.Pipe(duplex=False)
        self._stopped = threading.Event()
        threading.Thread(target=self._read, args=(items,), daemon=True).start()

    def _read(self, items: Iterable[Any]) -> None:
        try:
            for item in items:
                self._put((True, item))
            self._put((True, _END))
        except BaseException as exc:  # noqa: BLE001 - raised in the map when its turn comes
            self._put((False, exc))

    def _put(self, entry: tuple) -> None:
        while not self._stopped.is_set():
            try:
                self._queue.put(entry, timeout=0.1)
            except queue.Full:
                continue
            try:
                self._wake.send_bytes(b"")
            except OSError:
                pass
            return

    def take(self, block: bool) -> Any:
        """The next item, ``_EMPTY`` when none is ready (``block=False``), ``_END`` at the end;
        the input's own error is raised here."""
        while self.signal.poll():
            self.signal.recv_bytes()
        try:
            ok, item = self._queue.get(block=block)
        except queue.Empty:
            return _EMPTY
        if not ok:
            raise item
        return item

    def close(self) -> None:
        self._stopped.set()


class _Worker:
    def __init__(self, context, factory, args):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, factory, args), daemon=True)
        self.process.start()
        child.close()
        self.job: int | None = None  # the index of the item it holds
        self.alive = True


def ordered_map(factory: Callable[..., Callable[[Any], Any]], args: tuple, items: Iterable[Any], *,
                jobs: int, window: int | None = None,
                label: Callable[[Any], str] = lambda item: repr(item)[:40]) -> Iterator[Any]:
    """``factory(*args)(item)`` for every item, computed in ``jobs`` processes, yielded in order.

    An exception raised for an item is re-raised here when that item's turn comes (the items
    before it have been yielded; nothing after it is). A worker that dies raises
    :class:`WorkerDied` at once, naming (``label``) the item it held; nothing after the items
    already yielded is."""
    window = max(window or jobs * 4, jobs)
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    workers = [_Worker(context, factory, args) for _ in range(jobs)]
    feeder = _Feeder(items)  # (a thread: started after the workers are forked)
    pending: dict = {}  # index -> the item, while a worker holds it
    done: dict = {}  # index -> (ok, value), until its turn
    next_in = next_out = 0
    exhausted = False
    dead: WorkerDied | None = None  # raised when its item's turn comes (the items before it first)
    try:
        while True:
            while next_out in done:
                ok, value = done.pop(next_out)
                next_out += 1
                if not ok:
                    raise value
                yield value
            if dead is not None and next_out >= dead.index:
                raise dead
            for worker in workers:
                if dead is not None or exhausted or next_in - next_out >= window:
                    break
                if worker.job is not None:
                    continue
                item = feeder.take(block=not pending)  # nothing in flight: wait for input
                if item is _EMPTY:
                    break
                if item is _END:
                    exhausted = True
                    break
                worker.job, pending[next_in] = next_in, item
                next_in += 1
                try:
                    worker.conn.send(item)
                except OSError:
                    dead = _died(worker, pending, label, next_out, dead)
            busy = [w for w in workers if w.job is not None and w.alive]
            if dead is not None:
                busy = [w for w in busy if w.job < dead.index]
            if not busy:
                if dead is not None:
                    raise dead
                if exhausted:
                    return
                continue
            reading = not exhausted and dead is None and next_in - next_out < window \
                and any(w.job is None and w.alive for w in workers)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy]
                         + ([feeder.signal] if reading else []))
            for worker in busy:
                if worker.conn in ready or worker.conn.poll():
                    try:
                        done[worker.job] = worker.conn.recv()
                    except (EOFError, OSError):
                        dead = _died(worker, pending, label, next_out, dead)
                        continue
                    del pending[worker.job]
                    worker.job = None
                elif worker.process.sentinel in ready:
                    dead = _died(worker, pending, label, next_out, dead)
    finally:
        feeder.close()
        for worker in workers:
            if worker.process.is_alive():
                worker.process.terminate()
        for worker in workers:
            worker.process.join(5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()


def _died(worker: _Worker, pending: dict, label: Callable[[Any], str], next_out: int,
          earlier: WorkerDied | None) -> WorkerDied:
    """The error for a worker found dead (the earliest item, when two died)."""
    worker.alive = False
    worker.process.join(1)
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
        if -code == signal.SIGKILL:
            how += " (the out-of-memory killer sends it)"
    else:
        how = f"exited with status {code}"
    index = worker.job
    if earlier is not None and earlier.index <= index:
        return earlier
    held = label(pending[index])
    return WorkerDied(f"a --jobs worker (pid {worker.process.pid}) {how} while it held {held}; "
                      f"nothing from {held} on was written", [held], index)
