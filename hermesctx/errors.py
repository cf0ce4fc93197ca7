"""Errors that end a command with one line on stderr and a documented exit status."""

from __future__ import annotations

from hermesctx.exit import ExitStatus


class HermesctxError(Exception):
    """Base class: ``str(err)`` is the one-line message; ``hint`` is appended after ``; ``."""

    status = ExitStatus.BAD_INPUT

    def __init__(self, message: str, *, hint: str | None = None, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.where = where

    def located(self, prefix: str) -> HermesctxError:
        """Prefix the location (``line 3``) in front of whatever location the error has."""
        self.where = f"{prefix}: {self.where}" if self.where else prefix
        return self

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text}; {self.hint}" if self.hint else text


class InputError(HermesctxError):
    """The input is not JSON or not a document of an accepted shape."""

    status = ExitStatus.BAD_INPUT


class UsageError(HermesctxError):
    """Options that contradict each other or a config value out of range."""

    status = ExitStatus.USAGE


class UpstreamError(HermesctxError):
    """A provider call failed and nothing could stand in for it."""

    status = ExitStatus.UPSTREAM


class FileIOError(HermesctxError):
    """A file the command must read or write could not be (``path``: the file, which the
    message names)."""

    status = ExitStatus.IO_ERROR

    def __init__(self, message: str, *, hint: str | None = None, where: str | None = None,
                 path: str | None = None):
        super().__init__(message, hint=hint, where=where)
        self.path = path
