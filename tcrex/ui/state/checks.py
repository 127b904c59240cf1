"""The dashboard's background checks: one record per check, one registry for the server (no Streamlit here).

A check (:class:`Check`) is work a page shows the result of but never waits for -- checking every row's
recommended point on the model (:mod:`tcrex.ui.state.verification`). It is one record: its key (the fit result's
key and the model's), its status, its value or the error that stopped it, the future of the thread running it and
what is computed once from its value. Every check lives in :data:`REGISTRY` (a bounded :class:`~tcrex.ui.state.
caching.LRU`, least recently used out first), whether its fit is shared by every session or a session's own: a
fit result's key is a digest of its content (data, model, parameters, labels), so two sessions asking about equal
fits ask about one check. ``REGISTRY.reset()`` gives a test a server that has checked nothing.

The statuses, in order: :data:`WAITING` (asked for at the end of a page run, it starts on the browser's next
request, which says the page is drawn: a fresh server's first view is not slowed by it), :data:`RUNNING`, then
:data:`DONE` (``value`` holds the result) or :data:`FAILED` (``error`` says why, in words for the page).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from . import caching

WAITING, RUNNING, DONE, FAILED = "waiting", "running", "done", "failed"
#: Every status a check can have, in the order it passes through them.
STATUSES = (WAITING, RUNNING, DONE, FAILED)

#: Checks run here, off the pages' script runs: two at a time for the whole server (a check is model calls; more at
#: once would share the same cores and slow every page).
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tcrex-check")


@dataclass(eq=False)
class Check:
    """One background check: ``build()`` gives its value, or a string saying why there is none."""

    key: tuple[Hashable, ...]
    build: Callable[[], Any] = field(repr=False)
    status: str = WAITING
    value: Any = None
    error: str | None = None
    future: Future | None = field(default=None, repr=False)
    #: the page run that asked for it (a session's token): a waiting check starts on a later request
    asked_in: object = field(default=None, repr=False)
    #: the sessions (ids) that were shown why it failed, each once
    told: set[str] = field(default_factory=set, repr=False)
    #: what is computed once from ``value`` (every row's effectiveness), by name
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in (DONE, FAILED)

    def start(self) -> Check:
        """Run the check in the background, once (a check under way or finished is left alone)."""
        with self._lock:
            if self.future is None:
                self.status = RUNNING
                self.future = _POOL.submit(self._run)
        return self

    def wait(self, timeout: float | None = None) -> Check:
        """The finished check (started if it was waiting); a bug in ``build`` is raised here."""
        self.start()
        self.future.result(timeout)
        return self

    def once(self, name: str, build: Callable[[Any], Any]) -> Any:
        """``build(value)`` computed once for this finished check and kept with it under ``name``."""
        with self._lock:
            if name not in self.derived:
                self.derived[name] = build(self.value)
            return self.derived[name]

    def _run(self) -> None:
        try:
            out = self.build()
        except BaseException as exc:  # a bug, not bad input: the page says the check failed; wait() raises it
            self.error, self.status = f"the check stopped on an unexpected {type(exc).__name__}", FAILED
            raise
        if isinstance(out, str):
            self.error, self.status = out, FAILED
        else:
            self.value, self.status = out, DONE


class Registry:
    """Every check of the server, by key, at most ``max_entries`` (least recently used out first)."""

    def __init__(self, max_entries: int):
        self._lock = threading.Lock()
        self._checks = caching.LRU(max_entries)

    def get(self, key: tuple) -> Check | None:
        return self._checks.lookup(key)

    def ask(self, key: tuple, build: Callable[[], Any], *, start: bool, asked_in: object = None) -> Check:
        """The check of ``key`` (made with ``build`` when there is none, ``asked_in`` the page run asking);
        ``start``: run it now, else a new one waits (:data:`WAITING`) until someone starts it."""
        with self._lock:
            check = self._checks.lookup(key)
            if check is None:
                check = self._checks.put(key, Check(key=key, build=build, asked_in=asked_in))
        return check.start() if start else check

    def checks(self) -> list[Check]:
        """The checks held, oldest first."""
        return [check for _, check in self._checks.items_oldest_first()]

    def reset(self) -> None:
        """Forget every check (for tests: a server that has checked nothing; running ones finish unseen)."""
        with self._lock:
            self._checks.clear()


#: The server's checks.
REGISTRY = Registry(caching.CHECKS)
