"""Ordered, bounded parallel map for JSONL batches (``--jobs N``).

Documents go to N worker processes; results come back in input order; at most ``window``
documents are in flight, so memory is bounded by the window, not by the file. Workers build
their own pipeline once (from picklable arguments) and exchange raw JSON bytes.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

_WORKER: dict = {}


def _init(factory: Callable[..., Any], args: tuple) -> None:
    _WORKER["fn"] = factory(*args)


def _call(item: Any) -> tuple[bool, Any]:
    try:
        return True, _WORKER["fn"](item)
    except Exception as exc:  # noqa: BLE001 - carried back to the parent, raised there in order
        return False, exc


def ordered_map(factory: Callable[..., Callable[[Any], Any]], args: tuple, items: Iterable[Any], *,
                jobs: int, window: int | None = None) -> Iterator[Any]:
    """``factory(*args)(item)`` for every item, computed in ``jobs`` processes, yielded in order.

    An exception raised for an item is re-raised here when that item's turn comes (the items
    before it have been yielded; nothing after it is)."""
    window = window or jobs * 4
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    pool = context.Pool(jobs, initializer=_init, initargs=(factory, args))
    pending: deque = deque()
    try:
        for item in items:
            pending.append(pool.apply_async(_call, (item,)))
            if len(pending) >= window:
                yield _unwrap(pending.popleft().get())
        while pending:
            yield _unwrap(pending.popleft().get())
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _unwrap(result: tuple[bool, Any]) -> Any:
    ok, value = result
    if not ok:
        raise value
    return value
