"""Metarule tree and 2-D slices agree with the lookup."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx

from tests.support.data import figure1, mixed


def _leaves(node, path=()):
    if "metarule" in node:
        yield node, path
        return
    yield from _leaves(node["left"], path + ((node, "left"),))
    yield from _leaves(node["right"], path + ((node, "right"),))


@pytest.mark.parametrize("make", [figure1, mixed])
def test_tree_routes_every_row_to_its_metarule(make):
    X, y = make()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    out = ex.explain(X, y_pred=y)
    for t in range(len(ex.targets_)):
        tree = ex.metarule_tree(t)
        leaves = list(_leaves(tree))
        assert sorted(leaf["metarule"] for leaf, _ in leaves) == list(range(len(ex.targets_[t].metarules)))
        rows = out.target == t
        for i in np.flatnonzero(rows.to_numpy())[:200]:
            node = tree
            while "metarule" not in node:
                v = X.iloc[i][node["feature"]]
                if node["kind"] == "numeric":
                    node = node["left"] if v <= node["threshold"] else node["right"]
                else:
                    node = node["left"] if v in node["left_categories"] else node["right"]
            assert node["metarule"] == out.metarule.iloc[i]


def test_slice_matches_lookup_through_an_individual():
    X, y = figure1()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)
    person = X.iloc[5]
    t = int(ex.explain(X.iloc[[5]], y_pred=y[[5]]).target.iloc[0])
    sl = ex.metarule_slice(t, "x1", "x2", person)
    assert len(sl) == ex.targets_[t].grid.dims[0] * ex.targets_[t].grid.dims[1]
    for _, r in sl.iterrows():
        px = r.x_high if np.isfinite(r.x_high) else r.x_low + 1
        py = r.y_high if np.isfinite(r.y_high) else r.y_low + 1
        pt = pd.DataFrame({"x1": [px], "x2": [py]})
        e = ex.explain(pt, y_pred=["red"], target="blue") if ex.targets_[t].target.classes == ("blue",) else \
            ex.explain(pt, y_pred=["blue"], target="red")
        assert e.metarule.iloc[0] == r.metarule and e.rule.iloc[0] == r.rule


def test_views_work_after_json_restore():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    back = TCREx.from_json(ex.to_json())
    assert back.metarule_tree(0) == ex.metarule_tree(0)
    pd.testing.assert_frame_equal(back.metarule_slice(0, "age", "job", X.iloc[0]),
                                  ex.metarule_slice(0, "age", "job", X.iloc[0]))
