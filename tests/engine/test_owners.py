"""One owner per rule: the shared helpers the engine, figures, intake and dashboard now import."""
import json
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import tcrex
from tcrex import TCREx, min_rule_rows, vocabulary
from tcrex.constraints import (CATEGORICAL_KINDS, KIND_LABELS, KINDS, Constraints, constraint_parts, constraint_spec,
                               describe_constraint, kinds_for)
from tcrex.text import (NO_ACTIONABLE_RECOURSE, box_conditions, box_text, format_difference, format_number,
                        metacounterfactual_sentence, status_sentence)

from tests.support.data import mixed


@pytest.mark.parametrize("n_rows, rho", [(100, 0.02), (101, 0.02), (1000, 0.1), (7, 1.0), (3, 0.5), (1, 1.0)])
def test_min_rule_rows_is_the_ceiling_the_surrogate_uses(n_rows, rho):
    assert min_rule_rows(n_rows, rho) == math.ceil(rho * n_rows)


def test_fitted_minimum_leaf_and_the_rows_message_use_the_same_count():
    X, y = mixed(n=203, seed=3)
    ex = TCREx(rho=0.05).fit(X, y_pred=y)
    assert ex.surrogate_.min_count_ == min_rule_rows(203, 0.05) == 11
    assert f"at least {min_rule_rows(10, 0.06)} of 10 rows" in tcrex.check_rows_for_rho(10, 0.06)


def test_vocabulary_is_one_object_everywhere():
    from tcrex.intake import _base

    assert _base.CLASSIFICATION is vocabulary.CLASSIFICATION  # intake imports, not redefines
    assert vocabulary.FEATURE_KINDS == (vocabulary.NUMERIC, vocabulary.CATEGORICAL)
    assert not hasattr(tcrex, "STATUSES")  # one import path: tcrex.vocabulary


@pytest.mark.parametrize("spec", [None, "immutable", "increase_only", {"weight": 2.5}, {"kind": "decrease_only",
                                  "weight": 0.5}, {"transitions": {"A": ["B"]}}, {"kind": "free", "weight": 1.0}])
def test_constraint_spec_and_parts_round_trip(spec):
    kind, weight, transitions = constraint_parts(spec)
    packed = constraint_spec(kind, weight, transitions)
    assert constraint_parts(packed) == (kind, weight, transitions)
    assert describe_constraint(packed if packed is not None else "free") == describe_constraint(spec or "free")


def test_constraint_spec_is_simplest_and_at_the_engines_resolution():
    assert constraint_spec() is None
    assert constraint_spec("free", 1.0004) is None  # below the 1/1000 resolution: free, not {"weight": 1.0}
    assert constraint_spec("immutable") == "immutable"
    assert constraint_spec("increase_only", 2) == {"kind": "increase_only", "weight": 2.0}
    assert kinds_for(True) == CATEGORICAL_KINDS and kinds_for(False) == KINDS
    assert KIND_LABELS["increase_only"] == "increase only"


def test_categorical_direction_is_refused_by_the_kinds_rule():
    X, y = mixed(n=120, seed=1)
    cat = tcrex.categorical_columns(X)[0]
    ex = TCREx().fit(X, y_pred=y)
    for kind in set(KINDS) - set(kinds_for(True)):
        with pytest.raises(tcrex.errors.ParameterError, match="categorical"):
            Constraints(ex.schema_, {cat: kind})


def test_format_difference_is_computed_on_the_printed_numbers():
    assert format_difference(0.3, 0.1) == "0.2"  # float subtraction says 0.19999999999999998
    assert format_difference(5, 2) == "3"
    v = float(np.float32(0.585))  # 0.5849999785423279: printed in full, and so is the difference
    assert format_number(v) == "0.5849999785423279"
    assert format_difference(v, 0.5) == "0.0849999785423279"
    assert Decimal(format_difference(v, 0.5)) == Decimal(format_number(v)) - Decimal("0.5")


def test_box_conditions_is_what_the_explainer_and_the_export_print():
    X, y = mixed(n=300, seed=5)
    ex = TCREx(rho=0.05).fit(X, y_pred=y)
    sol = ex.solution(0)
    doc = json.loads(ex.to_json())
    for r in range(sol.n_rules):
        conds = box_conditions(ex.schema_, sol.rules, r)
        assert ex.rules_frame().query(f"target == 0 and rule == {r}").conditions.iloc[0] == box_text(
            ex.schema_, sol.rules, r)
        assert doc["targets"][0]["rules"][r]["conditions"] == {ex.schema_.names[i]: c["bounds"]
                                                               for i, c in conds.items()}
        assert {n: c["text"] for n, c in ex.rule_conditions(0, r).items()} == {
            ex.schema_.names[i]: c["text"] for i, c in conds.items()}


def test_status_sentences():
    keep = [{"feature": "age", "condition": "≥ 30"}]
    change = [{"feature": "income", "condition": "> 20"}]
    assert status_sentence(vocabulary.ALREADY_IN_TARGET) == "The model output is already in the target; no change needed"
    assert status_sentence(vocabulary.OK, changes=change, keeps=keep) == "Change income to > 20, while keeping age ≥ 30"
    assert status_sentence(vocabulary.ALREADY_IN_RULE, keeps=keep).endswith(", keeping age ≥ 30")
    assert "tau=0.9" in status_sentence(vocabulary.NO_RULE, target="class 1", tau=0.9)
    assert "(age: immutable)" in status_sentence(vocabulary.NO_ACTIONABLE_RULE, constraints="age: immutable")
    assert metacounterfactual_sentence(change, [], [], actionable=False) == \
        "If income were > 20: " + NO_ACTIONABLE_RECOURSE[0].lower() + NO_ACTIONABLE_RECOURSE[1:]


def test_explain_texts_come_from_the_status_sentences():
    X, y = mixed(n=300, seed=7)
    ex = TCREx(rho=0.05).fit(X, y_pred=y)
    e = ex.explain(X, y_pred=y)
    for status, text in zip(e.status.astype(str), e.text.astype(str)):
        if status == tcrex.vocabulary.ALREADY_IN_TARGET:
            assert text == status_sentence(status)
    assert pd.Series(e.status.astype(str)).isin(tcrex.vocabulary.STATUSES).all()
