"""Recount: per-candidate counts merge across partitions, and recounting on the fit rows changes nothing."""
import numpy as np
import pandas as pd
import pytest

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


def _check_on_all_rows(ex, X, y):
    """Brute force: recount every chosen rule on all rows; each must hold rho and tau there."""
    enc = ex.schema_.encode(X)
    need = int(np.ceil(ex.rho * len(X)))
    assert ex.n_fit_rows_ == len(X)
    n_rules = 0
    for sol in ex.targets_:
        if sol.n_rules == 0:
            continue
        inside = sol.rules.contains(enc)
        n = inside.sum(axis=0)
        hit = (inside & sol.target.contains(y)[:, None]).sum(axis=0)
        np.testing.assert_array_equal(n, sol.rule_n)
        np.testing.assert_array_equal(hit, sol.rule_n_target)
        assert np.all(n >= need), (n.min(), need)
        assert np.all(hit >= ex.tau * n)
        np.testing.assert_allclose(sol.feasibility, n / len(X))
        n_rules += sol.n_rules
    assert n_rules > 0


@pytest.mark.filterwarnings("ignore:target .* has no valid rule")  # tau=0.95 leaves one target without rules
def test_update_after_recount_keeps_the_recounted_counts():
    """Audit finding: update(tau=...) after a recount went back to the sample's counts but divided by all rows."""
    X, y = _data(20_000, 4)
    ex = TCREx(rho=0.02, tau=0.9, grower="exact").fit(X.iloc[:1000], y_pred=y[:1000])
    ex.recount(ex.candidate_counts(X.iloc[:7000], y_pred=y[:7000])
               + ex.candidate_counts(X.iloc[7000:], y_pred=y[7000:]))
    _check_on_all_rows(ex, X, y)
    for tau in (0.8, 0.95, 0.9):
        ex.update(tau=tau)
        _check_on_all_rows(ex, X, y)
    ex.update(target=1)
    _check_on_all_rows(ex, X, y)
    ex.update(target="default", constraints={"age": "immutable"})
    _check_on_all_rows(ex, X, y)
    # a target derived on demand by explain(target=...) also reads the recounted counts
    ex.explain(X.iloc[:50], y_pred=y[:50], target=0)
    for sol in ex.state_.all_solutions():
        inside = sol.rules.contains(ex.schema_.encode(X)) if sol.n_rules else np.zeros((len(X), 0), bool)
        np.testing.assert_array_equal(inside.sum(axis=0), sol.rule_n)


def test_recount_multiclass_targets_come_from_per_class_counts():
    X, _ = _data(9000, 5)
    y = np.digitize(X["income"].to_numpy(), np.quantile(X["income"], [0.4, 0.7]))  # classes 0, 1, 2
    ex = TCREx(rho=0.03, tau=0.8, grower="exact").fit(X.iloc[:1500], y_pred=y[:1500])
    ex.recount(ex.candidate_counts(X, y_pred=y))
    _check_on_all_rows(ex, X, y)
    ex.update(target=[1, 2], tau=0.85)
    _check_on_all_rows(ex, X, y)


def test_recount_regression_refuses_an_uncounted_target():
    from tcrex.errors import ParameterError
    Xf, _ = _data(6000, 6)
    y = Xf["income"].to_numpy() * 1.0
    ex = TCREx(rho=0.05, tau=0.8, grower="exact").fit(Xf.iloc[:1000], y_pred=y[:1000])
    ex.recount(ex.candidate_counts(Xf, y_pred=y))
    ex.update(tau=0.7)  # the fitted targets were counted
    _check_on_all_rows(ex, Xf, y)
    with pytest.raises(ParameterError, match="recounted"):
        ex.update(target=(10.0, None))
    _check_on_all_rows(ex, Xf, y)  # a refused update leaves the explainer as it was


def test_counts_of_another_explainer_are_refused():
    from tcrex.errors import ParameterError
    X, y = _data(3000, 7)
    a = TCREx(rho=0.05, tau=0.9).fit(X.iloc[:1000], y_pred=y[:1000])
    b = TCREx(rho=0.1, tau=0.9).fit(X.iloc[:1000], y_pred=y[:1000])
    assert len(a.surrogate_.candidates_) != len(b.surrogate_.candidates_)
    with pytest.raises(ParameterError, match="another explainer"):
        a.recount(b.candidate_counts(X, y_pred=y))
