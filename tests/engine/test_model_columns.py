"""The explainer hands a model exactly the columns it takes: extra columns (a label, an id) and another column
order in X never reach a kept or passed model, for explain, counterfactuals and effectiveness."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.datasets import make_loans

xgboost = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def fitted():
    X = make_loans(1500, random_state=0)
    y = X.pop("approved")
    X = X.select_dtypes("number")
    named = xgboost.XGBClassifier(n_estimators=10, max_depth=3).fit(X, y)
    unnamed = xgboost.XGBClassifier(n_estimators=10, max_depth=3).fit(X.to_numpy(), y)
    messy = X[X.columns[::-1]].assign(label=y.to_numpy(), id=np.arange(len(X)))  # reordered, plus two extra
    return X, messy, named, unnamed


@pytest.mark.parametrize("which", ["named", "unnamed"])
def test_explain_with_a_kept_or_passed_model_selects_its_columns(fitted, which):
    X, messy, named, unnamed = fitted
    model = named if which == "named" else (lambda A: unnamed.predict(np.asarray(A)))
    ex = TCREx(rho=0.05).fit(X, model)
    want = ex.explain(X)
    pd.testing.assert_frame_equal(ex.explain(messy), want)                 # the fit's model
    pd.testing.assert_frame_equal(ex.explain(messy, model=model), want)    # model=
    got = ex.counterfactuals(messy.head(200), model=model, verify=True)
    pd.testing.assert_frame_equal(got, ex.counterfactuals(X.head(200), model=model, verify=True))
    assert repr(ex.effectiveness(messy.head(200), model=model)) == repr(ex.effectiveness(X.head(200), model=model))


def test_xgboost_would_refuse_the_messy_frame_itself(fitted):
    """What the test above guards against: the bare model fails on extra or reordered columns."""
    X, messy, named, _ = fitted
    with pytest.raises(ValueError, match="feature_names mismatch"):
        named.predict(messy)
