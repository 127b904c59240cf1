"""scikit-learn estimator conventions of TCREx."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

import tcrex
from tcrex import TCREx

from .helpers import mixed


def test_repr_names_every_parameter():
    text = repr(TCREx(tau=0.8, grower="hist"))
    for p in TCREx._PARAMS:
        assert f"{p}=" in text
    assert "tau=0.8" in text and "grower='hist'" in text


def test_get_set_params_and_clone():
    ex = TCREx(rho=0.05)
    assert isinstance(ex, BaseEstimator)
    assert ex.get_params()["rho"] == 0.05 and set(ex.get_params()) == set(TCREx._PARAMS)
    assert ex.set_params(tau=0.7) is ex and ex.tau == 0.7
    with pytest.raises(tcrex.errors.ParameterError):
        ex.set_params(nope=1)
    assert clone(ex).get_params() == ex.get_params()


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
