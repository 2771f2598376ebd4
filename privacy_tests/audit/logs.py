"""Capture every log record of this process, including loggers that do not propagate to root.

uvicorn configures ``uvicorn`` and ``uvicorn.access`` with ``propagate=False``: a handler on the
root logger alone would miss them. ``capture_logs()`` attaches one handler to the root logger
AND to every logger that stops propagation, lowers their levels to DEBUG for the duration, and
restores everything afterwards. Each record is kept fully rendered: message, arguments,
exception text and traceback, and stack info -- whatever a real handler could write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["LogCapture", "attach_everywhere", "capture_logs"]

_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class LogCapture(logging.Handler):
    """A handler that keeps every record as the text a file handler would write."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.records = 0
        self._guard = threading.Lock()
        self._muted: dict[int, tuple[str, ...]] = {}
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    @contextmanager
    def muting_this_thread(self, *loggers: str) -> Iterator[None]:
        """Drop records of ``loggers`` emitted by THIS thread: the test's own HTTP client logs
        the hostile URLs it sends; the collector, on its own threads, is still captured."""
        ident = threading.get_ident()
        self._muted[ident] = loggers
        try:
            yield
        finally:
            self._muted.pop(ident, None)

    def emit(self, record: logging.LogRecord) -> None:
        muted = self._muted.get(record.thread or 0)
        if muted and record.name.startswith(muted):
            return
        try:
            text = self.format(record)  # includes exc_info and stack_info
        except Exception as exc:  # a record that cannot be formatted: keep its raw parts
            text = f"UNFORMATTABLE {type(exc).__name__} {record.msg!r} {record.args!r}"
        with self._guard:
            self.records += 1
            self.lines.append(text)
            self.lines.append(repr(record.args))
            extras = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
            if extras:  # ``extra=`` fields: a JSON formatter would write them
                self.lines.append(repr(extras))

    def data(self) -> bytes:
        with self._guard:
            return "\n".join(self.lines).encode("utf-8", "surrogatepass")


def _non_propagating() -> list[logging.Logger]:
    """Loggers that stop propagation AND write somewhere (they have handlers of their own).

    A non-propagating logger without handlers writes nothing -- and some code decides whether to
    log at all by ``logger.hasHandlers()`` (uvicorn's access log does): attaching to it would
    switch on output the product never produces.
    """
    found = []
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and not logger.propagate and logger.handlers:
            found.append(logger)
    return found


def attach_everywhere(handler: logging.Handler) -> Callable[[], None]:
    """Attach ``handler`` to root and every non-propagating logger that exists now, at DEBUG.

    Returns the function that undoes it. Calling it again later (after a server configured its
    loggers) attaches to the new ones too; each call's undo restores only what it changed.
    """
    targets = [
        logger
        for logger in (logging.getLogger(), *_non_propagating())
        if handler not in logger.handlers
    ]
    saved = [(logger, logger.level) for logger in targets]
    for logger in targets:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)

    def undo() -> None:
        for logger, level in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)

    return undo


@contextmanager
def capture_logs(capture: LogCapture | None = None) -> Iterator[LogCapture]:
    """Attach ``capture`` (or a new one) everywhere records can go; yield it."""
    handler = capture or LogCapture()
    undo = attach_everywhere(handler)
    try:
        yield handler
    finally:
        undo()
