"""Recourse across models: who keeps, loses or gains recourse when model A is retrained or replaced by B.

>>> from tcrex.compare import compare_models
>>> cmp = compare_models(explainer_a, X, model_b, target=1, groups="sex")       # doctest: +SKIP
>>> cmp.headline()                                                             # doctest: +SKIP

Every number reads the engine's one definition of "works": a person has verified recourse under a model when
``tcrex.vocabulary.is_verified`` holds on that model's explainer's ``counterfactuals(X, model=model)`` frame; who
needs recourse is ``tcrex.vocabulary.needs_recourse`` of ``explain()``'s status. Model A's advice *holds under B* when
model B's output at A's verified point (the feature columns of A's counterfactuals frame) lies in A's target for that
person (:meth:`tcrex.TCREx.in_target`, the engine's own containment).

Like the subgroup audit, everything comes from mergeable counts (:class:`ComparisonCounts`): :func:`compare_counts`
of partitions, added, give :func:`compare_from_counts` the same summary, groups and rules as :func:`compare_models`
on all rows at once (files, a process pool, Dask: ``tcrex compare``). The per-group bootstrap, the reference group,
the group labels, the favourable outcome and the shared wording are the population layer's (:mod:`tcrex.population`),
as the audit's are; the comparison never imports the audit.

The package by concern: ``_vocabulary`` (the changes, metrics and row labels it speaks of), ``_counts`` (the
mergeable counts), ``_models`` (the inputs: the favourable outcome, the models checked, explainer B), ``_people``
(per person and per rule of A, what each model says), ``_comparison`` (:func:`compare_models` and its counted
forms), ``_result`` (the result summarised from counts, its frames and JSON), ``_findings`` (the findings in
English) and ``_stability`` (:func:`rule_stability`: rules and advice across retrained models). Import every name from
``tcrex.compare``, ``rule_stability`` and ``RuleStability`` included (the package face ``tcrex`` lists only the
engine's names: the comparison is a layer above it).
"""
from ._models import PARAMS_B, fit_explainer_b
from ._comparison import check_models, compare_counts, compare_from_counts, compare_models, favourable_target
from ._counts import ComparisonCounts
from ._result import ComparisonResult
from ._stability import RuleStability, rule_stability
from ._vocabulary import (CHANGE_TEXT, CHANGES, COMPARE_METRICS, COMPARED_ROWS, FIT_ROWS_A, FORMAT, GAINED, GIVEN, KEPT,
                          LOST, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED, PEOPLE_COLUMNS, REFERENCE_ROWS, STILL_NONE,
                          VERSION)

__all__ = ["compare_models", "compare_counts", "compare_from_counts", "favourable_target", "check_models",
           "ComparisonResult", "ComparisonCounts", "CHANGES", "CHANGE_TEXT", "COMPARE_METRICS", "PEOPLE_COLUMNS",
           "FORMAT", "VERSION", "KEPT", "LOST", "GAINED", "STILL_NONE", "NEWLY_NEEDED", "NO_LONGER_NEEDED",
           "NOT_NEEDED", "FIT_ROWS_A", "COMPARED_ROWS", "REFERENCE_ROWS", "GIVEN",
           # the parameters of explainer B a comparison may set apart from A's (params_b=)
           "PARAMS_B",
           # explainer B fitted as a comparison fits it (A's parameters on model B's outputs)
           "fit_explainer_b",
           # how stable each rule and piece of advice is across retrained models
           "rule_stability", "RuleStability"]
