"""The population layer: the people the audit (:mod:`tcrex.audit`) and the comparison of models
(:mod:`tcrex.compare`) count, shared by both so that neither reads the engine's internals or the other's.

>>> from tcrex.population import labelled_groups, named_groups
>>> groups = named_groups(explainer, X, "sex")      # doctest: +SKIP

By concern: ``_groups`` (who is compared with whom: the group of every row, one column or several intersected,
named "label (code)" by the codebook -- the one rule of the dashboard, the audit, the comparison and the CLI --, the
groups' order and the reference group), ``_favourable`` (the one favourable outcome people are counted against:
who needs recourse), ``_bootstrap`` (percentile intervals from count cells), ``_gaps`` (the frame of gaps between a
group and its reference), ``_json`` and ``_wording`` (plain JSON values and shared words of both exports).

It imports only the engine's public names (``tcrex``, ``tcrex.errors``, ``tcrex.text``, ``tcrex.codebook``); the
audit and the comparison import it, never each other's private modules (``tests/test_structure.py``).
"""
from ._bootstrap import bootstrap_rng, check_bootstrap_params, gap_row, percentile_interval, ratio, resample_sums
from ._favourable import favourable_outcome
from ._gaps import (GAP_COLUMNS, GAP_TYPES, PRACTICAL_DEFAULT, below_threshold_gaps, clear_gaps, practical_gaps,
                    significant_gaps, threshold_text)
from ._groups import (COLUMN_JOIN, MISSING_GROUP, REST, REST_LABEL, VALUE_JOIN, group_display, group_labels,
                      group_order, group_series, is_rest, labelled_groups, named_groups, resolve_groups,
                      resolve_reference)
from ._json import json_records, json_value
from ._wording import confidence_text, join_words

__all__ = [
    # who is compared with whom
    "labelled_groups", "named_groups", "group_series", "group_labels", "group_order", "group_display", "resolve_groups",
    "resolve_reference", "is_rest", "REST", "REST_LABEL", "MISSING_GROUP", "COLUMN_JOIN", "VALUE_JOIN",
    # who needs recourse
    "favourable_outcome",
    # intervals from counts and the gaps frame
    "check_bootstrap_params", "bootstrap_rng", "resample_sums", "percentile_interval", "ratio", "gap_row",
    "GAP_COLUMNS", "GAP_TYPES",
    # when a gap is clear (the practical threshold): the audit's and the comparison's one rule
    "PRACTICAL_DEFAULT", "practical_gaps", "significant_gaps", "clear_gaps", "below_threshold_gaps", "threshold_text",
    # the exports' values and words
    "json_value", "json_records", "confidence_text", "join_words"]
