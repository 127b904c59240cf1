"""The dashboard's background checks (tcrex.ui.state.checks): one record per check, in one registry, through its
statuses; real threads, the build held by an event (never a sleep)."""

from __future__ import annotations

import threading

import pytest

from tcrex.ui.state import checks


def _held(value):
    """A build that returns ``value`` once released, and the event that releases it."""
    go = threading.Event()

    def build():
        assert go.wait(timeout=120)
        return value

    return build, go


def test_a_check_waits_then_runs_once_and_keeps_its_value():
    registry = checks.Registry(4)
    build, go = _held({"rows": 3})
    check = registry.ask(("fit", "model"), build, start=False, asked_in="run 1")
    assert check.status == checks.WAITING and check.future is None and check.asked_in == "run 1"
    assert registry.ask(("fit", "model"), lambda: pytest.fail("built twice"), start=True) is check  # one record
    assert check.status == checks.RUNNING and not check.finished
    future = check.future
    check.start()
    assert check.future is future  # started once
    go.set()
    assert check.wait(timeout=120).status == checks.DONE and check.value == {"rows": 3} and check.error is None
    calls = []
    assert check.once("n", lambda v: calls.append(1) or len(v)) == 1 == check.once("n", lambda v: calls.append(1))
    assert calls == [1] and check.derived == {"n": 1}


def test_a_failed_check_says_why_and_a_bug_is_raised_where_it_is_waited_for():
    registry = checks.Registry(4)
    said = registry.ask(("a",), lambda: "the model refused these rows", start=True).wait(timeout=120)
    assert said.status == checks.FAILED and said.value is None and said.error == "the model refused these rows"

    def bug():
        raise KeyError("x")

    broken = registry.ask(("b",), bug, start=True)
    with pytest.raises(KeyError):
        broken.wait(timeout=120)
    assert broken.status == checks.FAILED and "KeyError" in broken.error


def test_the_registry_is_bounded_and_reset_forgets_every_check():
    registry = checks.Registry(2)
    made = [registry.ask((i,), lambda i=i: i, start=True) for i in range(3)]
    assert registry.get((0,)) is None and registry.checks() == made[1:]  # least recently used out first
    registry.reset()
    assert registry.checks() == [] and registry.get((2,)) is None
    assert checks.STATUSES == (checks.WAITING, checks.RUNNING, checks.DONE, checks.FAILED)
