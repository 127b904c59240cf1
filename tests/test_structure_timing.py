"""Structure of the test suite itself: tests never assert a time and never sleep against a deadline.

Scanned with ``ast`` over every ``.py`` file under ``tests/``:

(a) an ``assert`` (or a unittest ``assertLess``-style call) whose comparison involves a timer reading --
    ``time.perf_counter``, ``time.time``, ``time.monotonic``, ``time.process_time``, ``time.thread_time`` and their
    ``_ns`` forms, however imported -- or a variable assigned from one (``t0 = time.perf_counter()``) or from an
    expression over such variables (``spent = time.process_time() - t0``), within the same function. A speed
    expectation is a ratio printed by a ``benchmarks/`` script instead (``benchmarks/suite_timings.py``);
(b) a fixed wait: ``time.sleep(<literal > 0>)`` (``from time import sleep`` too) or Playwright's
    ``wait_for_timeout(<literal > 0>)``, outside :data:`SLEEP_ALLOWED`. Wait for the event itself instead
    (``tests.support.servers.wait_until``, a file, a log line, an endpoint; ``tests.support.browser.wait_for_layout``
    in a browser).

Polling loops that *bound* a wait (``while time.monotonic() < give_up``) are not asserts and are allowed; the
suite's one polling loop is ``tests.support.servers.wait_until``. The checker runs on source text, so the tests at
the end plant violations in small sources and see them caught (and see the allowed forms pass).
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

TIMERS = {"perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns", "process_time",
          "process_time_ns", "thread_time", "thread_time_ns"}
SLEEPS = {"sleep"}
FIXED_WAITS = {"wait_for_timeout"}  # Playwright: page.wait_for_timeout(ms), frame.wait_for_timeout(ms)
UNITTEST_COMPARISONS = {"assertLess", "assertLessEqual", "assertGreater", "assertGreaterEqual", "assertAlmostEqual",
                        "assertEqual", "assertTrue", "assertFalse"}

#: ``"path/relative/to/tests.py::function"`` -> why a fixed wait is the right thing there. Empty: no test needs one.
SLEEP_ALLOWED: dict[str, str] = {}


class _Scope:
    """What one function (or the module body) knows: local names bound to the ``time`` module or its timers, and
    the names tainted by a timer reading."""

    def __init__(self, time_modules: set, timer_names: set, sleep_names: set):
        self.time_modules, self.timer_names, self.sleep_names = set(time_modules), set(timer_names), set(sleep_names)
        self.tainted: set = set()

    def is_timer_call(self, node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in TIMERS and isinstance(f.value, ast.Name):
            return f.value.id in self.time_modules
        return isinstance(f, ast.Name) and f.id in self.timer_names

    def involves_timer(self, node) -> bool:
        return any(self.is_timer_call(n) or (isinstance(n, ast.Name) and n.id in self.tainted)
                   for n in ast.walk(node))


def _imports(tree) -> tuple[set, set, set]:
    """Names bound anywhere in the file to the time module, to one of its timers, and to ``time.sleep``."""
    modules, timers, sleeps = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "time"}
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            timers |= {a.asname or a.name for a in node.names if a.name in TIMERS}
            sleeps |= {a.asname or a.name for a in node.names if a.name in SLEEPS}
    return modules, timers, sleeps


def _own_nodes(body):
    """The nodes of a function (or module) body, not descending into nested functions or classes (scanned as
    scopes of their own)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack = [n for n in body if not isinstance(n, nested)]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, nested):
                stack.append(child)


def _bindings(node) -> list[tuple[list[str], ast.AST]]:
    """``(names, value)`` pairs bound by an assignment; ``a, b = x, y`` pairs each name with its own value."""
    value = getattr(node, "value", None)
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and value is not None:
        targets = [node.target]
    else:
        return []
    pairs = []
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(t.elts) == len(value.elts):
            pairs += [([n.id for n in ast.walk(e) if isinstance(n, ast.Name)], v) for e, v in zip(t.elts, value.elts)]
        else:
            pairs.append(([n.id for n in ast.walk(t) if isinstance(n, ast.Name)], value))
    return pairs


def _is_positive_literal(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
        and not isinstance(node.value, bool) and node.value > 0


def timing_violations(source: str, path: str = "<planted>") -> list[str]:
    """Every timed assert and fixed wait in ``source``, as ``"path:line: what"``."""
    tree = ast.parse(source)
    modules, timers, sleeps = _imports(tree)
    scopes = [("<module>", tree.body)] + [(n.name, n.body) for n in ast.walk(tree)
                                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = []
    for name, body in scopes:
        scope = _Scope(modules, timers, sleeps)
        nodes = list(_own_nodes(body))
        changed = True
        while changed:  # taint to a fixed point: t0 = timer(); spent = timer() - t0; ratio = spent / n ...
            changed = False
            for node in nodes:
                for names, value in _bindings(node):
                    new = set(names) - scope.tainted
                    if new and scope.involves_timer(value):
                        scope.tainted |= new
                        changed = True
        for node in nodes:
            where = f"{path}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Assert) and any(isinstance(c, ast.Compare) and scope.involves_timer(c)
                                                    for c in ast.walk(node.test)):
                found.append(f"{where}: assert compares a timer reading ({ast.unparse(node.test)[:80]})")
            elif isinstance(node, ast.Call):
                f = node.func
                attr = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if attr in UNITTEST_COMPARISONS and isinstance(f, ast.Attribute) \
                        and any(scope.involves_timer(a) for a in node.args):
                    found.append(f"{where}: {attr} compares a timer reading")
                is_sleep = (isinstance(f, ast.Attribute) and f.attr in SLEEPS and isinstance(f.value, ast.Name)
                            and f.value.id in modules) or (isinstance(f, ast.Name) and f.id in sleeps)
                is_fixed_wait = isinstance(f, ast.Attribute) and f.attr in FIXED_WAITS
                if (is_sleep or is_fixed_wait) and node.args and _is_positive_literal(node.args[0]) \
                        and f"{path}::{name}" not in SLEEP_ALLOWED:
                    found.append(f"{where}: fixed wait {ast.unparse(node)} in {name}; wait for the event instead")
    return sorted(set(found))


def _test_sources():
    for path in sorted(TESTS.rglob("*.py")):
        yield path.relative_to(TESTS).as_posix(), path.read_text(encoding="utf-8")


def test_no_test_asserts_a_time_or_sleeps_against_a_deadline():
    found = [v for rel, text in _test_sources() for v in timing_violations(text, rel)]
    assert not found, "\n".join(found)


def test_every_allowed_sleep_still_exists_and_says_why():
    for key, why in SLEEP_ALLOWED.items():
        rel, _, name = key.partition("::")
        assert (TESTS / rel).is_file() and f"def {name}(" in (TESTS / rel).read_text(), f"stale entry {key}"
        assert len(why.split()) >= 4, f"{key}: say why a fixed wait is right there"


# ------------------------------------------------------------------------------------ the checker can fail
PLANTED_TIMED_ASSERTS = {
    "perf_counter difference": """
import time
def test_x():
    t0 = time.perf_counter()
    work()
    assert time.perf_counter() - t0 < 5
""",
    "process_time through variables (the old test_speed_on_30k_rows)": """
import time
def test_x():
    start = time.process_time()
    res = audit()
    spent = time.process_time() - start
    assert res.n > 10
    assert spent < 2.0, spent
""",
    "aliased import, <=, ratio of an elapsed time": """
from time import monotonic as clock
def test_x():
    begin = clock()
    run()
    per_row = (clock() - begin) / 1000
    assert per_row <= 0.001
""",
    "time.time against a deadline variable": """
import time as t
def test_x():
    deadline = t.time() + 3
    run()
    assert t.time() < deadline
""",
    "unittest style": """
import time
class T:
    def test_x(self):
        t0 = time.monotonic_ns()
        self.assertLess(time.monotonic_ns() - t0, 10**9)
""",
    "in a nested helper": """
import time
def test_x():
    def check():
        s = time.perf_counter()
        assert time.perf_counter() - s < 0.5
    check()
""",
}
PLANTED_FIXED_WAITS = {
    "time.sleep against a TTL": "import time\ndef test_x():\n    time.sleep(4.5)\n",
    "sleep imported from time": "from time import sleep\ndef test_x():\n    sleep(1)\n",
    "playwright fixed wait": "def test_x(page):\n    page.wait_for_timeout(500)\n",
    "at module level": "import time\ntime.sleep(0.25)\n",
}
ALLOWED_FORMS = """
import time
from tests.support.servers import wait_until

def test_ok(tmp_path, page):
    t0 = time.perf_counter()  # measured and printed, never asserted
    give_up = time.monotonic() + 120
    while not (tmp_path / "done").exists() and time.monotonic() < give_up:  # a bounded poll for an event
        time.sleep(every_s)
    time.sleep(0)  # a yield, not a wait
    wait_until(lambda: (tmp_path / "done").exists(), "the file")
    print(time.perf_counter() - t0)
    assert len([1, 2]) == 2
    assert (tmp_path / "done").exists()
    page.wait_for_timeout(0)

def test_other_scope():
    t0 = 3  # a name tainted in another function is not tainted here
    assert t0 < 5
    health, give_up = None, time.monotonic() + 90  # only give_up holds a timer reading
    assert health is None
"""


def test_checker_catches_planted_timed_asserts():
    for case, source in PLANTED_TIMED_ASSERTS.items():
        found = timing_violations(source)
        assert len(found) == 1 and "compares a timer reading" in found[0], (case, found)


def test_checker_catches_planted_fixed_waits():
    for case, source in PLANTED_FIXED_WAITS.items():
        found = timing_violations(source)
        assert len(found) == 1 and "fixed wait" in found[0], (case, found)


def test_checker_passes_waiting_for_events_and_printed_timings():
    assert timing_violations(ALLOWED_FORMS) == []


def test_the_allow_list_lets_a_named_fixed_wait_through(monkeypatch):
    source = "import time\ndef test_x():\n    time.sleep(1)\n"
    assert timing_violations(source, "planted.py")
    monkeypatch.setitem(SLEEP_ALLOWED, "planted.py::test_x", "a reason of four words or more")
    assert timing_violations(source, "planted.py") == []


def test_hypothesis_settings_that_depend_on_time_are_refused():
    """tests/conftest.py fails a Hypothesis test whose own settings bring back a deadline or the too_slow check
    (a loaded machine fails those by the clock); the profiles themselves pass."""
    import importlib.util

    from hypothesis import HealthCheck, settings

    # by path: several conftest.py files of this suite are importable as "conftest"
    spec = importlib.util.spec_from_file_location("tests_root_conftest", TESTS / "conftest.py")
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    hypothesis_timing_problem = root_conftest.hypothesis_timing_problem

    assert hypothesis_timing_problem(settings()) is None  # the loaded profile
    for name in ("ci", "thorough"):
        assert hypothesis_timing_problem(settings.get_profile(name)) is None, name
    assert "deadline" in hypothesis_timing_problem(settings(deadline=200))
    assert "too_slow" in hypothesis_timing_problem(settings(suppress_health_check=[HealthCheck.filter_too_much]))
    assert hypothesis_timing_problem(settings(max_examples=5, suppress_health_check=[HealthCheck.too_slow])) is None
