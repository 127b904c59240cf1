"""Declared shapes and one owner per job: the fitted :class:`tcrex.Solution` and the per-row lookup
are records whose every field is declared and set once; one function conforms a frame's dtypes before a model
sees it; one owner words a target."""
import dataclasses

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

from tcrex import Solution, Target, TCREx, conform_dtypes, conform_frame
from tcrex.datasets import make_loans
from tcrex.text import ordered_text, target_spec_text, target_text


@pytest.fixture(scope="module")
def loans():
    df = make_loans(600, random_state=4)
    y = df.pop("approved").to_numpy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category")
    model = xgb.XGBClassifier(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist",
                              random_state=0, n_jobs=1).fit(df, y)
    return df, model


# ------------------------------------------------------------------------------------------------ Solution
def _fields(obj) -> set:
    return {f.name for f in dataclasses.fields(obj)}


def test_a_solution_is_built_complete_and_never_changed(loans):
    X, model = loans
    ex = TCREx(target=1, rho=0.05, constraints={"age": "increase_only"}).fit(X, model)
    restored = TCREx.from_json(ex.to_json())
    for sol in (*ex.targets_, *restored.targets_):
        assert isinstance(sol, Solution) and isinstance(sol.target, Target)
        assert set(vars(sol)) == _fields(sol)  # no attribute beyond the declared fields
        with pytest.raises(dataclasses.FrozenInstanceError):
            sol.rules = None
    a, b = ex.targets_[0], restored.targets_[0]
    for name in ("rule_n", "rule_n_target", "metarule_rule", "cell_rule", "cell_metarule", "metarule_sparsity",
                 "metarule_cells", "cell_changes"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_metarules == len(a.metarules) and a.n_rules == len(a.rules)


def test_every_solution_field_is_documented():
    import inspect

    from tcrex._engine.fitting import _solution
    source = inspect.getsource(_solution.Solution)
    for name in _fields(Solution):
        line = next(x for x in source.splitlines() if x.strip().startswith(f"{name}:"))
        assert "#:" in line, f"Solution.{name} has no documentation comment"


def test_the_row_lookup_is_a_declared_record(loans):
    from tcrex._engine.explaining._lookup import RowLookup, lookup_rows
    X, model = loans
    ex = TCREx(target=1, rho=0.05).fit(X, model)
    _, res = lookup_rows(ex.state_, X, None, None, None)
    assert isinstance(res, RowLookup) and len(res) == len(X)
    frame = ex.explain(X)
    np.testing.assert_array_equal(frame["target"].fillna(-1).to_numpy(dtype=np.int64), res.target_id)
    np.testing.assert_array_equal(frame["rule"].fillna(-1).to_numpy(dtype=np.int64), res.rule)


# ------------------------------------------------------------------------------------------------ dtypes
def _old_with_dtypes_of(points, X):
    """The comparison's and the stability check's former rule (tcrex.compare.with_dtypes_of), kept here to show
    what it got wrong: categorical and bool casts were unconditional."""
    out = points.copy()
    for c in X.columns:
        dtype = X[c].dtype
        if out[c].dtype == dtype:
            continue
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
            out[c] = out[c].astype(dtype)
        elif pd.api.types.is_integer_dtype(dtype) and np.all(np.mod(out[c].to_numpy(dtype=np.float64), 1) == 0):
            out[c] = out[c].astype(dtype)
    return out


@pytest.mark.filterwarnings("ignore:Constructing a Categorical")  # pandas deprecates what the former rule did
@pytest.mark.parametrize("n", [1, 20])  # one row (explain_one) and many (a model call of the verified search)
def test_conform_dtypes_casts_only_what_keeps_every_value(n):
    X = pd.DataFrame({"k": pd.Categorical(["a", "b"] * 10), "i": np.arange(20, dtype=np.int64),
                      "b": [True, False] * 10, "f": np.linspace(0, 1, 20)})
    whole = pd.DataFrame({"k": ["b"] * n, "i": [3.0] * n, "b": [True] * n, "f": [0.5] * n})
    out = conform_dtypes(whole, X)
    assert list(out.dtypes) == list(X.dtypes)  # every cast keeps the values: all taken
    lossy = pd.DataFrame({"k": ["c"] * n, "i": [3.9] * n, "b": [0.5] * n, "f": [0.5] * n})
    out = conform_dtypes(lossy, X)
    assert out["k"].tolist() == ["c"] * n and out["i"].tolist() == [3.9] * n and out["b"].tolist() == [0.5] * n
    # the former rule asked the model about other values: a category the dtype lacks became missing, 0.5 became True
    old = _old_with_dtypes_of(lossy, X)
    assert old["k"].isna().all() and old["b"].tolist() == [True] * n
    big = pd.DataFrame({"i": [2 ** 53 + 1] * n})
    assert conform_dtypes(big, {"i": np.dtype("float64")})["i"].dtype == np.int64  # 2**53 + 1 is no float


def test_conform_frame_orders_columns_like_the_model_frame():
    X = pd.DataFrame({"b": pd.Categorical(["x", "y"]), "a": np.array([1, 2], dtype=np.int64)})
    points = pd.DataFrame({"a": [2.0, 1.0], "b": ["y", "x"], "extra": [0, 0]})
    out = conform_frame(points, X)
    assert list(out.columns) == ["b", "a"] and list(out.dtypes) == list(X.dtypes)


def test_verified_points_conformed_by_the_owner_are_what_the_model_confirmed(loans):
    """The comparison asks model B about A's verified points conformed by the owner: the search confirmed them on
    model A through the same rule, so asking A again gives the target for every one."""
    X, model = loans
    ex = TCREx(target=1, rho=0.05).fit(X, model)
    cf = ex.counterfactuals(X.iloc[:80])
    names = list(ex.schema_.names)
    ok = cf["valid"].fillna(False).astype(bool)
    pts = conform_frame(cf.loc[ok, names], X)
    assert list(pts.dtypes) == list(X[names].dtypes)
    assert (model.predict(pts) == 1).all()  # every verified point is confirmed by the model as the search asked it


# ------------------------------------------------------------------------------------------------ wording
def test_one_owner_words_a_target():
    assert target_text(interval=(5.5, None)) == "output > 5.5" == Target(interval=(5.5, None)).describe()
    assert target_text(interval=(None, 150)) == "output ≤ 150" == target_spec_text((None, 150), "regression")
    assert target_text(interval=(50, 120)) == "output in (50, 120]"
    assert target_text(classes=(1,), names={1: "approved"}) == "approved"
    assert target_text(classes=(1,)) == "output = 1" == Target(classes=(1,)).describe()
    order = [3, 4, 5, 6, 7, 8, 9]
    assert target_text(classes=(7, 8, 9), ordered_classes=order) == "7 or better" == ordered_text("at_least", 7)
    assert target_text(classes=(3, 4), ordered_classes=order) == "4 or lower" == ordered_text("at_most", 4)
    # a spec reads as the Target it becomes: at_most is "or lower" everywhere, never "or better"
    assert target_spec_text({"at_most": 4}, "classification") == "4 or lower"
    assert target_spec_text({"at_least": 7}, "classification", {7: "good"}) == "good or better"
    assert target_spec_text([0, 2], "classification") == "0 or 2"
    assert target_spec_text(None, "regression").startswith("both directions")
