"""Shared pytest configuration.

Hypothesis profiles: "ci" (the default: reproducible, no deadline, ~40 examples per property) and "thorough"
(many more examples, for a long local run). Pick one with ``pytest --hypothesis-profile=thorough`` or the
``HYPOTHESIS_PROFILE`` environment variable. Tests never depend on time: a test's own ``@settings``
that sets a deadline, or that replaces the suppressed health checks without keeping ``too_slow``, fails before it
runs (:func:`hypothesis_timing_problem`), since a loaded machine would fail it by the clock.
"""
import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=40, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("thorough", deadline=None, derandomize=False, max_examples=500, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Dashboards started by the tests (AppTest and real servers inherit the environment) save their workspaces in a
# folder of this run, never in the user's own state folder (tcrex.workspace.default_state_dir).
os.environ["TCREX_STATE_DIR"] = tempfile.mkdtemp(prefix="tcrex-test-state-")
os.environ.pop("TCREX_STORE", None)


def hypothesis_timing_problem(test_settings) -> str | None:
    """Why these Hypothesis settings could fail a test by the clock on a loaded machine, or None."""
    if test_settings.deadline is not None:
        return f"deadline={test_settings.deadline!r}: pass deadline=None (speed belongs in benchmarks/)"
    if HealthCheck.too_slow not in test_settings.suppress_health_check:
        return ("suppress_health_check does not hold HealthCheck.too_slow: keep the profile's "
                "(tests/conftest.py _SLOW_OK) when adding others")
    return None


def pytest_runtest_setup(item):
    test_settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    problem = test_settings is not None and hypothesis_timing_problem(test_settings)
    if problem:
        pytest.fail(f"{item.nodeid}: Hypothesis settings that depend on time: {problem}", pytrace=False)


@pytest.fixture(scope="module")
def fitted():
    """An explainer fitted on mixed numeric/categorical data whose column name is an HTML payload (for the report
    and tree-outline tests: every name must come out escaped): ``(explainer, X, y)``."""
    from tcrex import TCREx

    from tests.support.data import mixed

    X, y = mixed(n=400)
    X = X.rename(columns={"job": "<script>job</script>"})
    return TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y), X, y
