"""grower="auto" (the default): the histogram grower where it provably considers CART's splits, else by size."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ParameterError
from tcrex._engine.fitting._surrogate import AUTO_HIST_MIN_ROWS

from tests.support.data import figure1, mixed

_ROOT = Path(__file__).resolve().parents[2]
# ../shared next to the repository (a worktree under wt/ looks one level further up)
ADULT = next((p / "shared" / "datasets" / "adult.csv" for p in (_ROOT.parent, _ROOT.parent.parent)
              if (p / "shared" / "datasets" / "adult.csv").exists()), _ROOT.parent / "shared" / "datasets" / "adult.csv")


def _fit(X, y, **kw):
    return TCREx(**kw).fit(X, y_pred=y)


def _reason(ex):
    return ex.surrogate_.grower_reason_


def test_default_is_auto_and_explicit_growers_resolve_to_themselves():
    X, y = mixed(300)
    assert TCREx().grower == "auto"
    for g in ("exact", "hist"):
        ex = _fit(X, y, grower=g)
        assert (ex.grower_, _reason(ex)) == (g, "set")
    with pytest.raises(ParameterError, match="'auto', 'exact' or 'hist'"):
        _fit(X, y, grower="fast")


def test_auto_takes_hist_where_every_numeric_column_has_few_float32_exact_values():
    X, y = mixed(300)
    X["income"] = np.round(X.income)  # whole numbers: float32-exact, fewer than 255 distinct
    ex = _fit(X, y)
    assert (ex.grower_, _reason(ex)) == ("hist", "hist exact")
    # categorical-only data: code histograms are CART's one-hot splits
    cats = X[["job", "owner"]]
    assert _fit(cats, y).grower_ == "hist"


def test_auto_chooses_by_size_on_columns_that_need_binning():
    rng = np.random.default_rng(0)
    small = pd.DataFrame({"x": rng.normal(size=400)})  # 400 distinct values > 255 bins
    y = (small.x > 0).astype(int).to_numpy()
    ex = _fit(small, y)
    assert (ex.grower_, _reason(ex)) == ("exact", "size")
    big = pd.DataFrame({"x": rng.normal(size=AUTO_HIST_MIN_ROWS)})
    ex = _fit(big, (big.x > 0).astype(int).to_numpy())
    assert (ex.grower_, _reason(ex)) == ("hist", "size")


def test_auto_is_not_exact_where_float32_or_forests_or_params_differ():
    X, y = figure1()  # quarter steps: float32-exact, 40 distinct values per column
    assert _fit(X, y).grower_ == "hist"
    tenths = X / 10 + 0.01  # not float32-exact: scikit-learn compares float32 copies
    assert (_fit(tenths, y).grower_, _reason(_fit(tenths, y))) == ("exact", "size")
    ex = _fit(X, y, n_trees=3)  # forests draw different subsamples: not exact
    assert _reason(ex) == "size"
    assert _fit(X, y, surrogate_params={"criterion": "entropy"}).grower_ == "exact"  # scikit-learn only
    assert _fit(X, y, surrogate_params={"subsample": 0.5}).grower_ == "hist"  # histogram grower only
    ex = _fit(X, y, surrogate_params={"max_bins": 16})  # fewer bins than values: binned, but only hist has bins
    assert (ex.grower_, _reason(ex)) == ("hist", "params")
    assert _reason(_fit(X, y, surrogate_params={"max_depth": 3})) == "hist exact"


def _exact_cases():
    X, y = mixed(800, seed=1)
    X["income"] = np.round(X.income)
    rng = np.random.default_rng(2)
    reg_y = X.age.to_numpy() * 10.0 + (X.job == "manager") * 300 + rng.integers(0, 50, len(X))
    fx, fy = figure1()
    # rows with a == 0 take only b in {1, 2, 9, 10}: CART's threshold in that node is 5.5, the midpoint of the
    # node's values, not a boundary between global values the node leaves empty
    a = np.repeat([0, 1], 200)
    b = np.concatenate([np.tile([1, 2, 9, 10], 50), np.tile(np.arange(1, 11), 20)])
    gaps = pd.DataFrame({"a": a, "b": b})
    gaps_y = ((a == 0) & (b >= 9)).astype(int)
    return [(X, y, {}), (X, X.job.to_numpy(), {}), (X, reg_y, {}), (fx, fy, {"rho": 0.05}),
            (gaps, gaps_y, {"rho": 0.05}), (X, y, {"surrogate_params": {"max_depth": 3}})]


@pytest.mark.parametrize("case", range(6))
def test_auto_gives_the_exact_growers_rules_where_hist_is_exact(case):
    X, y, kw = _exact_cases()[case]
    auto = _fit(X, y, **kw)
    exact = _fit(X, y, grower="exact", **kw)
    assert auto.grower_ == "hist" and _reason(auto) == "hist exact"
    for tau in (0.8, 0.95):
        auto.update(tau=tau)
        exact.update(tau=tau)
        pd.testing.assert_frame_equal(auto.rules_frame(), exact.rules_frame())
        pd.testing.assert_frame_equal(auto.metarules_frame(), exact.metarules_frame())


@pytest.mark.skipif(not ADULT.exists(), reason="shared datasets absent")
def test_auto_gives_the_exact_growers_rules_on_adult():
    df = pd.read_csv(ADULT)
    X, y = df.drop(columns="target"), df.target.to_numpy()
    auto, exact = _fit(X, y), _fit(X, y, grower="exact")
    assert auto.grower_ == "hist"
    pd.testing.assert_frame_equal(auto.rules_frame(), exact.rules_frame())
    pd.testing.assert_frame_equal(auto.explain(X.head(2000), y_pred=y[:2000]),
                                  exact.explain(X.head(2000), y_pred=y[:2000]))


def test_resolved_grower_is_in_the_json_and_old_exports_still_load():
    X, y = mixed(300)
    ex = _fit(X, y)
    doc = json.loads(ex.to_json())
    assert doc["params"]["grower"] == "auto" and doc["params"]["grower_used"] == ex.grower_
    assert TCREx.from_json(ex.to_json()).grower_ == ex.grower_
    del doc["params"]["grower_used"]  # an export written before the field existed
    doc["params"]["grower"] = "exact"
    assert TCREx.from_json(json.dumps(doc)).grower_ == "exact"
    doc["params"]["grower"] = "auto"
    assert TCREx.from_json(json.dumps(doc)).grower_ is None  # unknown: the export does not say
