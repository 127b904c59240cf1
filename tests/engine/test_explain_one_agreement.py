"""explain_one and explain() agree on every row, whatever form the row is passed in.

explain_one gives a one-row input the fit data's column dtypes (so XGBoost's native categoricals see what they
were trained on); that cast must never change a value. A non-integral value in a column fitted as integers
(PriorsCount 3.9, 33.99999) stays as given, exactly as explain() reads it from a frame.
"""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

from tcrex import TCREx


def _data(n=700, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "priors": rng.integers(0, 12, n),            # int64 at fit time: tree thresholds at k + 0.5
        "age": rng.integers(18, 70, n),
        "income": np.round(rng.gamma(3, 15, n), 1),
        "flag": rng.integers(0, 2, n).astype(bool),
    })
    y = (((X.priors > 3) & (X.age < 45)) | ((X.income > 60) & X.flag)).astype(int).to_numpy()
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    model = RandomForestClassifier(n_estimators=15, max_depth=5, random_state=0).fit(X, y)
    return TCREx(rho=0.02, tau=0.85).fit(X, model), model


# Non-integral values near the integer thresholds (3.9 lies above 3.5, its truncation 3 below) and integral ones.
_near_int = st.builds(lambda k, frac: k + frac, st.integers(0, 12),
                      st.sampled_from([0.0, 0.1, 0.49, 0.5, 0.51, 0.9, 0.99999]))
_rows = st.fixed_dictionaries({
    "priors": _near_int,
    "age": st.builds(lambda k, frac: k + frac, st.integers(18, 70), st.sampled_from([0.0, 0.4, 0.6, 0.99999])),
    "income": st.floats(0, 150, allow_nan=False).map(lambda v: round(v, 2)),
    "flag": st.booleans(),
})


_COLUMNS = ["priors", "age", "income", "flag"]


def _summary(e):
    return (e.status, e.target, e.rule, e.metarule)


@given(rows=st.lists(_rows, min_size=1, max_size=6))
@settings(max_examples=25)
def test_explain_one_agrees_with_explain_on_random_rows(fitted, rows):
    ex, model = fitted
    Q = pd.DataFrame(rows, columns=_COLUMNS)  # priors/age float64: explain() reads them as given
    many = ex.explain(Q, model=model)
    for i in range(len(Q)):
        want = many.iloc[i]
        want = (str(want["status"]),
                *(None if pd.isna(want[k]) else int(want[k]) for k in ("target", "rule", "metarule")))
        forms = {"frame": Q.iloc[[i]], "series": Q.iloc[i], "dict": Q.iloc[i].to_dict(),
                 "array": Q.iloc[i].to_numpy(dtype=object)}
        got = {name: ex.explain_one(x, model=model, verify=False) for name, x in forms.items()}
        for name, e in got.items():
            assert _summary(e) == want, (name, dict(Q.iloc[i]))
            for item in e.changes + e.keeps:  # the current value printed is the value given, never a cast of it
                assert item["current"] == Q.iloc[i][item["feature"]], (name, item)
        alts = {name: [(a["metarule"], a["rule"]) for a in e.alternatives] for name, e in got.items()}
        assert len({tuple(v) for v in alts.values()}) == 1, alts


def test_non_integral_value_in_integer_column_is_not_truncated(fitted):
    """The issue's example: 3.9 priors must be read as 3.9 (above a 3.5 threshold), not as 3."""
    ex, model = fitted
    row = {"priors": 3.9, "age": 30.0, "income": 20.0, "flag": False}
    e = ex.explain_one(row, model=model, verify=False)
    many = ex.explain(pd.DataFrame([row], columns=_COLUMNS), model=model)
    assert e.output == model.predict(pd.DataFrame([row], columns=_COLUMNS))[0]
    assert e.status == str(many["status"].iloc[0])
    for item in e.changes + e.keeps:
        if item["feature"] == "priors":
            assert item["current"] == 3.9
