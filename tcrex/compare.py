"""Recourse across models: who keeps, loses or gains verified recourse when a model is retrained or replaced.

The public names of :mod:`tcrex._compare` (see ``docs/compare.md``); :func:`compare_models` and
:func:`rule_stability` are also importable from ``tcrex``.
"""
from ._compare import (CHANGE_TEXT, CHANGES, COMPARE_METRICS, COMPARED_ROWS, FIT_ROWS_A, FORMAT, GAINED, GIVEN, KEPT,
                       LOST, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED, PEOPLE_COLUMNS, STILL_NONE, VERSION,
                       ComparisonCounts, ComparisonResult, check_models, compare_counts, compare_from_counts,
                       compare_models, favourable_target)
from ._stability import KINDS, RuleStability, rule_stability

__all__ = ["compare_models", "compare_counts", "compare_from_counts", "favourable_target", "check_models",
           "ComparisonResult", "ComparisonCounts", "CHANGES", "CHANGE_TEXT", "COMPARE_METRICS", "PEOPLE_COLUMNS",
           "FORMAT", "VERSION", "KEPT", "LOST", "GAINED", "STILL_NONE", "NEWLY_NEEDED", "NO_LONGER_NEEDED",
           "NOT_NEEDED", "FIT_ROWS_A", "COMPARED_ROWS", "GIVEN", "rule_stability", "RuleStability", "KINDS"]
