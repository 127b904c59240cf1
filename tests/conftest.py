"""Shared pytest configuration.

Hypothesis profiles: "ci" (the default: reproducible, no deadline, ~40 examples per property) and "thorough"
(many more examples, for a long local run). Pick one with ``pytest --hypothesis-profile=thorough`` or the
``HYPOTHESIS_PROFILE`` environment variable.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=40, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("thorough", deadline=None, derandomize=False, max_examples=500, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def fitted():
    """An explainer fitted on mixed numeric/categorical data whose column name is an HTML payload (for the report
    and tree-outline tests: every name must come out escaped): ``(explainer, X, y)``."""
    from tcrex import TCREx

    from engine.helpers import mixed  # tests/ is on sys.path (rootdir-relative imports)

    X, y = mixed(n=400)
    X = X.rename(columns={"job": "<script>job</script>"})
    return TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y), X, y
