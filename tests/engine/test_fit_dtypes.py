"""Frames reach the model with the fit data's dtypes (``tcrex._engine.explaining._lookup.fit_dtypes_of``, the one
conformer ``conform_dtypes``): ``effectiveness()`` on the kept fit rows (decoded from the explainer's encoding, so
without their pandas categories) and ``effectiveness``/``audit``/``compare_models`` on frames read back from
Parquet with text columns, for an XGBoost model reading native pandas categoricals."""
import pandas as pd
import pytest
from xgboost import XGBClassifier

from tcrex import TCREx
from tcrex.audit import audit
from tcrex.compare import compare_models
from tcrex.datasets import make_credit_bureau, make_loans


def _bureau():
    df = make_credit_bureau(900, random_state=1)
    return df.drop(columns="RiskPerformance"), (df["RiskPerformance"] == "Good").astype(int).to_numpy()


def _loans():
    df = make_loans(900, random_state=2)
    return df.drop(columns="approved"), df["approved"].to_numpy()


def _categorical(X):
    return X.astype({c: "category" for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})


def _model(X, y, seed=0, depth=3):
    return XGBClassifier(n_estimators=15, max_depth=depth, enable_categorical=True, n_jobs=1,
                         random_state=seed).fit(X, y)


def _from_parquet(X, tmp_path):
    path = tmp_path / "rows.parquet"
    X.astype({c: str for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)}).to_parquet(path)
    back = pd.read_parquet(path)
    assert not any(isinstance(d, pd.CategoricalDtype) for d in back.dtypes)  # text, as the CLI's files hold
    return back


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("table", [_bureau, _loans])
def test_effectiveness_audit_and_comparison_read_frames_as_fitted(table, tmp_path):
    X, y = table()
    X = _categorical(X)
    model = _model(X, y)
    ex = TCREx(target=1).fit(X, model)
    fitted = ex.effectiveness()  # the kept fit rows, decoded: their categories given back
    assert fitted.n_needing > 0 and fitted.verified_share > 0.5
    back = _from_parquet(X, tmp_path)
    again = ex.effectiveness(back, model=model)
    assert again.to_dict() == ex.effectiveness(X, model=model).to_dict()
    group = back.columns[next(i for i, d in enumerate(X.dtypes) if isinstance(d, pd.CategoricalDtype))]
    got = audit(ex, back, groups=back[group], model=model, target=1, n_boot=10)
    want = audit(ex, X, groups=X[group].astype(str), model=model, target=1, n_boot=10)
    assert got.to_dict() == want.to_dict()
    other = _model(X, y, seed=1, depth=2)
    got_c = compare_models(ex, back, other, target=1)
    want_c = compare_models(ex, X, other, target=1)
    assert got_c.to_dict() == want_c.to_dict()
    # the verified frame of the text rows is the frame of the categorical rows
    pd.testing.assert_frame_equal(ex.counterfactuals(back, model=model).drop(columns=list(X.columns)),
                                  ex.counterfactuals(X, model=model).drop(columns=list(X.columns)))

