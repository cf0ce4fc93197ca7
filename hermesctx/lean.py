"""Stand-ins for standard-library helpers whose imports cost a share of every start:
:func:`contextmanager` (contextlib, with collections and functools, ~2 ms of a ~11 ms bare
interpreter start), :func:`cache` (functools) and :func:`import_module` (importlib). Same behaviour for what hermesctx uses them
for (the tests run them beside the originals); :mod:`hermesctx.record` and
:mod:`hermesctx.lazyre` do the same for dataclasses and re. :class:`deferring` keeps a
dependency's import from loading a module it only uses later (orjson's of inspect)."""

from __future__ import annotations

import sys


class _GeneratorContext:
    """The context manager of one call of a :func:`contextmanager` function."""

    __slots__ = ("gen",)

    def __init__(self, gen):
        self.gen = gen

    def __enter__(self):
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, kind, value, traceback):
        if kind is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        if value is None:
            value = kind()
        try:
            self.gen.throw(value)
        except StopIteration as exc:
            return exc is not value  # the generator caught the exception: it is suppressed
        except RuntimeError as exc:  # a StopIteration raised inside becomes a RuntimeError (PEP 479)
            if exc is value or (isinstance(value, StopIteration) and exc.__cause__ is value):
                value.__traceback__ = traceback
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            exc.__traceback__ = traceback
            return False
        raise RuntimeError("generator didn't stop after throw()")


def contextmanager(func):
    """``@contextmanager`` as :func:`contextlib.contextmanager` (as a ``with`` target; not as a
    decorator of other functions)."""

    def context(*args, **kwargs):
        return _GeneratorContext(func(*args, **kwargs))

    context.__name__, context.__qualname__, context.__doc__ = func.__name__, func.__qualname__, func.__doc__
    context.__module__, context.__wrapped__ = func.__module__, func
    return context


def cache(func):
    """``@cache`` as :func:`functools.cache`, for functions of hashable positional arguments."""
    results: dict = {}

    def cached(*args):
        try:
            return results[args]
        except KeyError:
            value = results[args] = func(*args)
            return value

    cached.__name__, cached.__qualname__, cached.__doc__ = func.__name__, func.__qualname__, func.__doc__
    cached.__module__, cached.__wrapped__ = func.__module__, func
    cached.cache_clear = results.clear
    return cached


def import_module(name: str):
    """The module ``name`` (absolute), imported if it is not yet, as
    :func:`importlib.import_module` gives it: a module another thread is still importing (in
    ``sys.modules`` already, half run) is waited for, as the import statement waits for it."""
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        __import__(name)
        module = sys.modules[name]
    return module


class _Deferred(type(sys)):
    """A module that is not imported yet: the first attribute read on it imports the real one
    (see :func:`deferring`)."""

    def __getattr__(self, name: str):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(import_module(self.__name__), name)


class deferring:
    """``with deferring("inspect"): import orjson`` -- modules imported inside the block that
    ``import inspect`` get a stand-in, which imports the real module when they first read an
    attribute of it. For an import that brings in a module only to use it later, if at all:
    orjson imports dataclasses, and dataclasses imports inspect (with ast, dis and tokenize,
    ~40 % of orjson's import) only to word the docstring of a dataclass defined without one.
    Once the block ends, ``import inspect`` anywhere gives the real module, as always; a module
    already imported is left as it is."""

    def __init__(self, *names: str):
        self.names = [name for name in names if name not in sys.modules]

    def __enter__(self) -> None:
        for name in self.names:
            sys.modules[name] = _Deferred(name)

    def __exit__(self, *exc) -> None:
        for name in self.names:
            if isinstance(sys.modules.get(name), _Deferred):
                del sys.modules[name]
