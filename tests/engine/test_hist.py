"""The histogram surrogate grower (``TCREx(grower="hist")``, ``tcrex._engine.fitting._hist.grow_hist_trees``)."""
import math

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ParameterError
from tcrex._engine.base._data import Encoded, FeatureSchema
from tcrex._engine.fitting._hist import HistTree, distinct_values, grow_hist_trees, grow_hist_trees_encoded
from tcrex._engine.fitting._surrogate import Surrogate, _column_major, _route_encoded

from tests.support.data import mixed


def _design(X):
    schema = FeatureSchema.detect(X)
    enc = schema.encode(X)
    design, columns = schema.one_hot(enc)
    groups = [[c for c, (i, code) in enumerate(columns) if i == f and code >= 0] for f in schema.categorical]
    return design, groups, enc.cat


def _node_rows(tree, design):
    """Rows reaching every node when routed by the thresholds (float64, left is x <= threshold)."""
    n = tree.node_count
    counts = np.zeros(n, dtype=np.int64)
    stack = [(0, np.arange(design.shape[0]))]
    while stack:
        node, rows = stack.pop()
        counts[node] = len(rows)
        if tree.children_left[node] >= 0:
            go = design[rows, tree.feature[node]] <= tree.threshold[node]
            stack.append((tree.children_left[node], rows[go]))
            stack.append((tree.children_right[node], rows[~go]))
    return counts


def _check_tree(tree, design, min_count, own_rows=True):
    """Pre-order numbering, leaf sizes, and (``own_rows``: the tree grew on every row of ``design``) routing."""
    left, right = tree.children_left, tree.children_right
    n = tree.node_count
    assert len(left) == len(right) == len(tree.feature) == len(tree.threshold) == n
    # pre-order: a left child follows its parent, a right child follows the parent's whole left subtree
    size = np.ones(n, dtype=np.int64)
    for node in range(n - 1, -1, -1):
        if left[node] >= 0:
            assert left[node] == node + 1
            assert right[node] == node + 1 + size[left[node]]
            assert tree.n_node_samples[node] == tree.n_node_samples[left[node]] + tree.n_node_samples[right[node]]
            size[node] += size[left[node]] + size[right[node]]
        else:
            assert right[node] == -1
    assert size[0] == n
    leaves = left < 0
    # every leaf holds at least ceil(rho N) of the grower's rows, hence at least as many fit rows
    assert tree.n_node_samples[leaves].min() >= min_count
    routed = _node_rows(tree, design)
    assert routed[leaves].min() >= min_count
    if own_rows:  # the thresholds route the rows exactly as the grower split them
        assert np.array_equal(routed, tree.n_node_samples)
    # the engine's router agrees with a plain walk
    assert np.array_equal(np.bincount(Surrogate._route(tree, design), minlength=n)[leaves], routed[leaves])


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_single_tree_structure_routing_and_leaf_sizes(task):
    X, y = mixed(n=800, seed=1)
    design, groups, codes = _design(X)
    if task == "multiclass":
        y = np.digitize(X.income.to_numpy(), [30, 45, 60]) + 2 * (X.owner == "yes").to_numpy()
    if task == "regression":
        y = X.income.to_numpy() * (1 + (X.job == "nurse").to_numpy()) + 0.1 * X.age.to_numpy()
        kind = "regression"
    else:
        y = np.unique(y, return_inverse=True)[1]
        kind = "classification"
    for rho in (0.02, 0.1):
        trees = grow_hist_trees(design, y, kind, rho, 1, 0, None, one_hot_groups=groups, one_hot_codes=codes)
        assert len(trees) == 1 and trees[0].node_count > 1
        _check_tree(trees[0], design, math.ceil(rho * len(X)))


def test_forest_trees_use_subsamples_and_feature_subsets():
    X, y = mixed(n=600, seed=2)
    design, groups, codes = _design(X)
    for task, target in (("classification", y), ("regression", X.income.to_numpy())):
        trees = grow_hist_trees(design, target, task, 0.05, 5, 3, None, one_hot_groups=groups)
        assert len(trees) == 5
        assert {tree.n_node_samples[0] for tree in trees} == {round(0.632 * len(X))}  # each on a subsample
        assert len({tuple(tree.threshold) for tree in trees}) > 1  # and they differ
        for tree in trees:
            _check_tree(tree, design, math.ceil(0.05 * len(X)), own_rows=False)
        again = grow_hist_trees(design, target, task, 0.05, 5, 3, None, one_hot_groups=groups)
        assert all(np.array_equal(a.threshold, b.threshold) for a, b in zip(trees, again))  # seeded
    full = grow_hist_trees(design, y, "classification", 0.05, 2, 0, {"subsample": 1.0, "max_features": None})
    assert np.array_equal(full[0].threshold, full[1].threshold)  # no randomness left: identical trees


def test_one_hot_groups_change_speed_not_trees():
    X, y = mixed(n=700, seed=4)
    design, groups, codes = _design(X)
    plain = grow_hist_trees(design, y, "classification", 0.03)[0]
    grouped = grow_hist_trees(design, y, "classification", 0.03, one_hot_groups=groups)[0]
    coded = grow_hist_trees(design, y, "classification", 0.03, one_hot_groups=groups, one_hot_codes=codes)[0]
    for t in (grouped, coded):
        assert np.array_equal(plain.feature, t.feature)
        assert np.array_equal(plain.threshold, t.threshold)
        assert np.array_equal(plain.children_left, t.children_left)


def test_encoded_path_grows_and_routes_as_the_design_path():
    X, y = mixed(n=700, seed=7)
    schema = FeatureSchema.detect(X)
    enc = schema.encode(X)
    design, columns = schema.one_hot(enc)
    assert columns == schema.one_hot_columns()
    groups = [[c for c, (i, code) in enumerate(columns) if i == f and code >= 0] for f in schema.categorical]
    num_columns = [c for c, (_, code) in enumerate(columns) if code < 0]
    for task, target in (("classification", y), ("regression", X.income.to_numpy())):
        a = grow_hist_trees(design, target, task, 0.03, 2, 0, None, one_hot_groups=groups)
        b = grow_hist_trees_encoded(enc.num, num_columns, groups, enc.cat, design.shape[1], target, task, 0.03, 2, 0)
        for ta, tb in zip(a, b):
            assert np.array_equal(ta.feature, tb.feature) and np.array_equal(ta.threshold, tb.threshold)
            assert np.array_equal(ta.children_left, tb.children_left)
            assert np.array_equal(Surrogate._route(ta, design), _route_encoded(tb, enc, columns, schema))


def test_encoded_router_matches_the_design_router_for_any_one_hot_threshold():
    """The encoded router reads category codes, not one-hot columns: whatever threshold a tree holds on a one-hot
    column (below 0, in [0, 1), at 1 or above), it routes like ``x <= t`` on the 0/1 column, from row-major and
    column-major codes alike."""
    X, _ = mixed(n=500, seed=8)
    schema = FeatureSchema.detect(X)
    enc = schema.encode(X)
    design, columns = schema.one_hot(enc)
    hot = [c for c, (_, code) in enumerate(columns) if code >= 0]
    num = [c for c, (_, code) in enumerate(columns) if code < 0]
    by_column = Encoded(_column_major(enc.num), _column_major(enc.cat))
    for t in (-0.5, 0.0, 0.5, 1.0, 1.5):
        for split in ((hot[1], num[0]), (num[1], hot[2])):  # a one-hot split above or below a numeric one
            # root 0 -> (1, 4); node 1 -> leaves (2, 3): both routing steps (split the rows; two leaves at once)
            thresholds = {hot[1]: t, hot[2]: t, num[0]: 40.0, num[1]: 30.0}
            tree = HistTree(children_left=np.array([1, 2, -1, -1, -1]), children_right=np.array([4, 3, -1, -1, -1]),
                            feature=np.array([split[0], split[1], -2, -2, -2]),
                            threshold=np.array([thresholds[split[0]], thresholds[split[1]], -2.0, -2.0, -2.0]),
                            n_node_samples=np.zeros(5, dtype=np.int64), value=np.zeros((5, 2)))
            expected = Surrogate._route(tree, design)
            assert np.array_equal(_route_encoded(tree, enc, columns, schema), expected)
            assert np.array_equal(_route_encoded(tree, by_column, columns, schema), expected)


@pytest.mark.parametrize("grower", ["exact", "hist"])
def test_candidate_boxes_hold_exactly_the_rows_routed_to_their_nodes(grower):
    """Every candidate's box (built from the tree's thresholds) holds exactly the fit rows the router sends to its
    node: the counts behind feasibility and accuracy are counts of rows inside the boxes."""
    X, y = mixed(n=700, seed=9)
    for n_trees in (1, 3):
        ex = TCREx(rho=0.03, tau=0.85, n_trees=n_trees, grower=grower).fit(X, y_pred=y)
        inside = ex.surrogate_.candidates_.contains(ex.schema_.encode(X))
        assert np.array_equal(inside.sum(axis=0), ex.surrogate_.n_inside_)
        in_target = (y == 1).astype(float)
        assert np.array_equal(inside.T.astype(float) @ in_target, ex.surrogate_.count(in_target))


def test_column_major_copy_keeps_every_value():
    a = np.arange(3 * 10_000).reshape(10_000, 3)  # more rows than one copying block
    b = _column_major(a)
    assert b.flags.f_contiguous and b.dtype == a.dtype and np.array_equal(a, b)
    assert _column_major(b) is b  # already column-major: no copy
    assert _column_major(np.zeros((4, 0))).shape == (4, 0)


def test_bad_one_hot_groups_and_params_are_refused():
    X, y = mixed(n=200, seed=0)
    design, groups, _ = _design(X)
    with pytest.raises(ParameterError, match="one-hot"):
        grow_hist_trees(design, y, "classification", 0.05, one_hot_groups=[[0, 1]])  # numeric columns
    with pytest.raises(ParameterError, match="unknown surrogate_params"):
        grow_hist_trees(design, y, "classification", 0.05, params={"criterion": "entropy"})
    with pytest.raises(ParameterError, match="max_bins"):
        grow_hist_trees(design, y, "classification", 0.05, params={"max_bins": 1})


def test_many_distinct_values_are_binned_and_thresholds_lie_between_data_values():
    rng = np.random.default_rng(0)
    x = rng.normal(size=3000)
    design = np.column_stack([x, rng.normal(size=3000)])
    y = (x + 0.3 * design[:, 1] > 0.2).astype(int)
    tree = grow_hist_trees(design, y, "classification", 0.01, params={"max_bins": 16})[0]
    _check_tree(tree, design, 30)
    for node in np.flatnonzero(tree.children_left >= 0):
        col = design[:, tree.feature[node]]
        assert not np.isin(tree.threshold[node], col[col > tree.threshold[node]])
        below, above = col[col <= tree.threshold[node]], col[col > tree.threshold[node]]
        assert len(below) and len(above)
    counts = [len(np.unique(tree.threshold[tree.feature == f])) for f in (0, 1)]
    assert max(counts) <= 15  # at most max_bins - 1 boundaries per column


def test_adjacent_floats_and_float32_collisions_are_separated_exactly():
    a = 0.1
    b = np.nextafter(a, 1.0)  # the midpoint of a and b rounds to one of them
    assert np.float32(a) == np.float32(b)
    design = np.array([[a]] * 50 + [[b]] * 50 + [[1.0]] * 20)
    y = np.array([0] * 50 + [1] * 70)
    tree = grow_hist_trees(design, y, "classification", 0.1)[0]
    assert tree.threshold[0] == a  # x <= a goes left, b goes right
    _check_tree(tree, design, 12)
    ex = TCREx(rho=0.1, tau=0.95, grower="hist").fit(pd.DataFrame({"x": design[:, 0]}), y_pred=y)
    rules = ex.rules_frame()
    assert set(rules.accuracy) == {1.0}  # the exact grower (float32) cannot separate a from b


def test_hist_equals_exact_when_every_split_is_unique():
    X = pd.DataFrame({"x": np.arange(1, 21)})
    x = X.x.to_numpy()
    y = np.where(x == 1, 1, np.where(x == 20, 0, (x > 10).astype(int)))
    for tau in (0.8, 0.95):
        exact = TCREx(rho=0.25, tau=tau).fit(X, y_pred=y).rules_frame()
        hist = TCREx(rho=0.25, tau=tau, grower="hist").fit(X, y_pred=y).rules_frame()
        pd.testing.assert_frame_equal(exact, hist)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_explainer_with_hist_grower_gives_valid_rules(kind):
    X, y = mixed(n=900, seed=5)
    if kind == "multiclass":
        y = np.where(X.income > 50, "high", np.where(X.job == "nurse", "care", "other"))
    if kind == "regression":
        y = X.income.to_numpy() + 20 * (X.owner == "yes").to_numpy()
    for n_trees in (1, 3):
        ex = TCREx(rho=0.03, tau=0.85, n_trees=n_trees, grower="hist").fit(X, y_pred=y)
        enc = ex.schema_.encode(X)
        assert ex.surrogate_.n_nodes_ > n_trees
        for sol in ex.targets_:
            if not sol.n_rules:
                continue
            inside = sol.rules.contains(enc)
            n_in = inside.sum(axis=0)
            n_hit = (inside & sol.target.contains(y)[:, None]).sum(axis=0)
            assert np.array_equal(n_in, sol.rule_n) and np.array_equal(n_hit, sol.rule_n_target)
            assert (n_in >= math.ceil(0.03 * len(X))).all()
            assert (n_hit >= 0.85 * n_in).all()
        out = ex.explain(X.iloc[:50], y_pred=y[:50])
        assert out.status.isin(["ok", "already_in_rule", "already_in_target", "no_rule"]).all()


def test_max_depth_is_respected():
    X, y = mixed(n=500, seed=6)
    design, groups, codes = _design(X)
    tree = grow_hist_trees(design, y, "classification", 0.01, params={"max_depth": 2})[0]
    assert tree.max_depth <= 2
    _check_tree(tree, design, 5)


def test_pure_and_constant_data_give_a_single_leaf():
    design = np.column_stack([np.arange(40.0), np.zeros(40)])
    one = grow_hist_trees(design, np.zeros(40, dtype=int), "classification", 0.1)[0]
    assert one.node_count == 1 and one.n_node_samples[0] == 40
    flat = grow_hist_trees(np.zeros((40, 2)), np.arange(40) % 2, "classification", 0.1)[0]
    assert flat.node_count == 1
    reg = grow_hist_trees(design, np.full(40, 3.5), "regression", 0.1)[0]
    assert reg.node_count == 1


# ---------------------------------------------------------------- the encoding fast paths the hist surrogate relies on
def test_category_dtype_and_object_columns_encode_alike():
    """FeatureSchema's fast path for pandas categoricals (codes, cached lookups) must agree with the generic one."""
    from tcrex.errors import DataError
    values = ["b", "a", "c", "a", "b"] * 20
    as_object = pd.DataFrame({"k": values, "x": np.arange(100.0)})
    dtype = pd.CategoricalDtype(["z", "c", "b", "a"])  # "z" never occurs: it must not become a category
    as_cat = as_object.astype({"k": dtype})
    s_obj, s_cat = FeatureSchema.detect(as_object), FeatureSchema.detect(as_cat)
    assert s_obj.features[0].categories == ["a", "b", "c"]
    assert s_cat.features[0].categories == ["c", "b", "a"]  # category order, unobserved ones dropped
    e_obj, e_cat = s_obj.encode(as_cat), s_cat.encode(as_object)
    assert [s_obj.features[0].categories[c] for c in e_obj.cat[:, 0]] == values
    assert [s_cat.features[0].categories[c] for c in e_cat.cat[:, 0]] == values
    again = s_cat.encode(as_cat.iloc[::-1])  # same dtype object: the cached mapping is reused
    assert [s_cat.features[0].categories[c] for c in again.cat[:, 0]] == values[::-1]
    with pytest.raises(DataError, match="not seen"):
        s_cat.encode(pd.DataFrame({"k": pd.Categorical(["a", "q"]), "x": [1.0, 2.0]}))
    # unobserved categories of the dtype do not matter when no row holds them
    wide = pd.CategoricalDtype(["a", "b", "c", "never"])
    assert s_obj.encode(as_object.astype({"k": wide})).cat.tolist() == e_obj.cat.tolist()
    with pytest.raises(DataError, match="missing"):
        s_obj.encode(pd.DataFrame({"k": ["a", None], "x": [1.0, 2.0]}))
    ints = pd.DataFrame({0: [1.0, 2.0], 1: ["a", "b"]})  # non-string column names are matched as str
    s_int = FeatureSchema.detect(ints)
    assert s_int.encode(ints).num[:, 0].tolist() == [1.0, 2.0]


def test_categorical_only_data_fits_with_both_growers():
    X = pd.DataFrame({"c": ["a", "b", "c"] * 20, "d": ["x", "y"] * 30})
    y = ((X.c == "a") | (X.d == "y")).astype(int).to_numpy()
    for grower in ("exact", "hist"):
        ex = TCREx(rho=0.1, tau=0.9, grower=grower).fit(X, y_pred=y)
        assert ex.surrogate_.candidates_.low.shape[1] == 0
        assert sorted(ex.rules_frame().conditions) == sorted(
            TCREx(rho=0.1, tau=0.9).fit(X, y_pred=y).rules_frame().conditions)


@pytest.mark.parametrize("kind", ["small whole", "negative whole", "wide whole", "fractions", "constant"])
def test_distinct_values_counted_equal_sorted(kind):
    """Whole numbers are counted instead of sorted: the same distinct values and counts as np.unique, whatever the
    hint says (a column that is not whole is sorted)."""
    rng = np.random.default_rng(3)
    col = {"small whole": rng.integers(0, 40, 5000), "negative whole": rng.integers(-900, 7, 3000),
           "wide whole": rng.integers(0, 10**9, 2000), "fractions": rng.integers(0, 50, 4000) / 4,
           "constant": np.full(100, 7)}[kind].astype(np.float64)
    uniq, counts = np.unique(col, return_counts=True)
    for whole in (True, False):
        got, n_le = distinct_values(col, whole)
        assert got.dtype == np.float64 and np.array_equal(got, uniq)
        assert np.array_equal(n_le, np.cumsum(counts))
