"""Recount: per-candidate counts merge across partitions, and recounting on the fit rows changes nothing."""
import numpy as np
import pandas as pd

from tcrex import TCREx
from tcrex.datasets import make_loans


def _data(n, seed):
    X = make_loans(n, random_state=seed)
    y = X.pop("approved").to_numpy()
    return X, y


def test_recount_on_fit_rows_equals_fit():
    X, y = _data(3000, 0)
    ex = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=y)
    want = ex.explain(X, y_pred=y)
    counts = ex.candidate_counts(X.iloc[:1234], y_pred=y[:1234]) + ex.candidate_counts(X.iloc[1234:], y_pred=y[1234:])
    assert counts.n_rows == len(X)
    np.testing.assert_array_equal(counts.n_inside, ex.surrogate_.n_inside_)
    ex.recount(counts)
    assert ex.recount_summary_["rules_changed"] == 0
    pd.testing.assert_frame_equal(ex.explain(X, y_pred=y), want)


def test_recount_on_more_rows_uses_their_counts():
    X, y = _data(6000, 1)
    ex = TCREx(rho=0.05, tau=0.9).fit(X.iloc[:800], y_pred=y[:800])
    counts = ex.candidate_counts(X, y_pred=y)
    ex.recount(counts)
    s = ex.recount_summary_
    assert s["n_rows"] == 6000 and s["rules_after"] >= 0
    TCREx.from_json(ex.to_json())  # the export's counts are consistent with n_fit_rows
    assert sum(sol.n_rules for sol in ex.targets_) > 0
    for sol in ex.targets_:  # every chosen rule is valid (rho, tau) on all rows, by their counts
        assert np.all(sol.rule_n >= np.ceil(0.05 * 6000))
        assert np.all(sol.rule_n_target >= 0.9 * sol.rule_n)
        enc = ex.schema_.encode(X)
        np.testing.assert_array_equal(sol.rules.contains(enc).sum(axis=0), sol.rule_n)
