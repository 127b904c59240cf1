"""scikit-learn estimator conventions of TCREx."""
import inspect
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

import tcrex
from tcrex import TCREx

from tests.support.data import mixed


def test_repr_names_every_parameter():
    text = repr(TCREx(tau=0.8, grower="hist"))
    for p in TCREx._PARAMS:
        assert f"{p}=" in text
    assert "tau=0.8" in text and "grower='hist'" in text


def test_get_set_params_and_clone():
    ex = TCREx(rho=0.05, surrogate_params={"max_depth": 3})
    assert ex.get_params()["rho"] == 0.05 and set(ex.get_params()) == set(TCREx._PARAMS)
    # the parameters are __init__'s, in its order (what scikit-learn's BaseEstimator reads from the signature)
    assert tuple(inspect.signature(TCREx.__init__).parameters)[1:] == TCREx._PARAMS
    assert ex.get_params(deep=False) == ex.get_params()
    assert ex.set_params(tau=0.7) is ex and ex.tau == 0.7
    with pytest.raises(tcrex.errors.ParameterError):
        ex.set_params(nope=1)
    twin = clone(ex)
    assert type(twin) is TCREx and twin is not ex and twin.get_params() == ex.get_params()
    assert twin.surrogate_params is not ex.surrogate_params  # clone copies the parameters, as for any estimator


def test_scikit_learn_reads_it_as_an_estimator_without_the_import():
    """TCREx keeps scikit-learn's contract (get_params, set_params, clone, tags) without deriving from its
    BaseEstimator, whose import costs a CLI command ~1.7 s of CPU before its first row."""
    ex = TCREx()
    assert not isinstance(ex, BaseEstimator)
    tags = get_tags(ex)
    assert tags.estimator_type is None and not is_classifier(ex) and not is_regressor(ex)
    assert tags == BaseEstimator().__sklearn_tags__()
    # a nested estimator's parameters are listed as name__param, as BaseEstimator.get_params(deep=True) does
    ex.target = BaseEstimator()
    assert ex.get_params(deep=True) == ex.get_params(deep=False)  # BaseEstimator() itself has no parameters
    # importing the estimator and restoring one from JSON loads no scikit-learn
    X, y = mixed()
    text = TCREx().fit(X, y_pred=y).to_json()
    code = ("import sys, pandas as pd, tcrex; ex = tcrex.TCREx.from_json(sys.stdin.read()); "
            f"ex.explain(pd.DataFrame({X.head(20).to_dict(orient='list')!r}), y_pred={y[:20].tolist()!r}); "
            "print(sorted(m for m in sys.modules if m == 'sklearn' or m.startswith('sklearn.')))")
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_fitted_check():
    ex = TCREx()
    with pytest.raises(tcrex.errors.NotFittedError):
        tcrex.check_fitted(ex)
    with pytest.raises(Exception):
        check_is_fitted(ex)
    X, y = mixed()
    ex.fit(X, y_pred=y)
    tcrex.check_fitted(ex)
    check_is_fitted(ex)
    tcrex.check_fitted(TCREx.from_json(ex.to_json()))


def test_outputs_is_public():
    X, y = mixed()
    ex = TCREx().fit(X, lambda d: np.asarray(y[: len(d)]))
    np.testing.assert_array_equal(ex.outputs(X), y)
    np.testing.assert_array_equal(ex.outputs(X, y_pred=y), y)


def test_fit_returns_self_and_starts_from_scratch():
    X, y = mixed()
    ex = TCREx()
    assert ex.fit(X, y_pred=y) is ex
    ex._extra_marker = 1
    ex.fit(X, y_pred=y)
    assert not hasattr(ex, "_extra_marker") and ex.n_surrogate_fits_ == 1


def test_check_parameter_is_the_one_owner():
    for name, bad in [("rho", 0), ("rho", 1.5), ("tau", "x"), ("n_trees", 0), ("max_cells", 2.5),
                      ("grower", "fast"), ("task", "ranking")]:
        with pytest.raises(tcrex.errors.ParameterError):
            tcrex.check_parameter(name, bad)
        with pytest.raises(tcrex.errors.ParameterError):
            TCREx(**{name: bad})._check_params()
    tcrex.check_parameter("rho", 0.02)


def test_errors_have_one_public_home():
    from tcrex import errors
    assert errors.ParameterError.__module__ == "tcrex.errors"
    assert not hasattr(tcrex, "ParameterError")  # one import path: tcrex.errors
