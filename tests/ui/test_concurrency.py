"""Server-wide and per-session structures under threads: the memory accounting walks caches that other
threads are writing, the LRUs are reached by several threads, and a download build never hangs the browser.
The real-server stress test is tests/e2e/test_concurrent_sessions.py."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from tcrex.ui.state import caching, memory, session
from tcrex.ui.widgets import downloads

WRITES = 20_000  # bounded by count


class _Fit:  # a tcrex-like object: size_of walks its attributes
    __module__ = "tcrex.ui.state.active"

    def __init__(self):
        self.cache = {}


def _writer(target: dict, stop: threading.Event) -> threading.Thread:
    def run():
        for i in range(WRITES):
            if stop.is_set():
                return
            target[f"k{i % 500}"] = np.zeros(4)
            if i % 3 == 0:
                target.pop(f"k{(i * 7) % 500}", None)

    return threading.Thread(target=run, daemon=True)


def test_the_accounting_walks_a_cache_another_thread_is_writing():
    fit = _Fit()
    state = {session.CACHES: {"results": caching.LRU(6, {"a": fit})}}
    stop = threading.Event()
    writer = _writer(fit.cache, stop)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often, as on a busy server
    writer.start()
    try:
        for _ in range(300):  # before the fix: "dictionary changed size during iteration" within a few passes
            memory.session_usage(state)
            memory.enforce_budget(state, budget=10**12)
    finally:
        stop.set()
        writer.join()
        sys.setswitchinterval(interval)


def test_snapshot_copies_a_container_that_keeps_changing():
    class Flaky:
        calls = 0

        def __iter__(self):
            Flaky.calls += 1
            if Flaky.calls < 3:
                raise RuntimeError("dictionary changed size during iteration")
            return iter([1, 2])

    assert memory.snapshot(Flaky()) == (1, 2) and Flaky.calls == 3


def test_an_lru_shared_by_threads_stays_within_its_size():
    lru = caching.LRU(8)

    def work(offset):
        for i in range(3_000):
            lru.put((offset, i % 20), i)
            lru.lookup((offset, (i * 3) % 20))
            lru.get_or_build((offset, i % 11), lambda: 0)
            lru.keys_oldest_first()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) == 8 and len(lru.keys_oldest_first()) == 8


def test_a_download_that_takes_too_long_fails_with_a_message_instead_of_hanging(monkeypatch):
    monkeypatch.setenv(downloads.BUILD_ENV, "0.2")
    release = threading.Event()
    owner = ("session-x", "dl_report")
    data = downloads.expiring(lambda: release.wait() and "never", "text/html", "tcrex-report.html", owner)
    try:
        with pytest.raises(downloads.DownloadFailed, match="tcrex-report.html could not be built within 0 s"):
            data()
    finally:
        release.set()
    record = downloads._builds.pop(owner)
    assert not record.running and "Try again" in record.problem


def test_a_download_whose_builder_raises_says_why_and_a_good_one_is_served(monkeypatch):
    owner = ("session-y", "dl_json")

    def broken():
        raise ValueError("no rules to export")

    with pytest.raises(downloads.DownloadFailed, match="tcrex-rules.json could not be built: no rules to export"):
        downloads.expiring(broken, "application/json", "tcrex-rules.json", owner)()
    assert downloads._builds[owner].problem.endswith("no rules to export")
    assert downloads.expiring(lambda: "{}", "application/json", "tcrex-rules.json", owner)() == b"{}"
    assert downloads._builds.pop(owner).problem is None


def test_build_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv(downloads.BUILD_ENV, "12")
    assert downloads.build_seconds() == 12
    monkeypatch.setenv(downloads.BUILD_ENV, "nonsense")
    assert downloads.build_seconds() == 90
