"""Shared pytest configuration.

Hypothesis profiles: "ci" (the default: reproducible, no deadline, ~40 examples per property) and "thorough"
(many more examples, for a long local run). Pick one with ``pytest --hypothesis-profile=thorough`` or the
``HYPOTHESIS_PROFILE`` environment variable.
"""
import os

from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=40, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("thorough", deadline=None, derandomize=False, max_examples=500, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
