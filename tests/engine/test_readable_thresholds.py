"""Surrogate thresholds that are arithmetic artefacts are moved to short numbers between the fit values on either
side of each split; short thresholds are the tree's own and stay.

CART splits at the midpoint of two adjacent values (20.1 and 20.3 give 20.200000000000003), and a printed bound
must be true of the values it mentions, so such a midpoint was printed in full. Any threshold between the two
values sends every fit row the same way, so the engine picks the shortest one (20.2): the same rows, counts,
rules and metarules on the fit data, and conditions that read as people write them.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from tcrex import TCREx

from tests.support.oracle import Oracle


@pytest.mark.parametrize("a, b, cut", [(20.1, 20.3, 20.2), (1.0, 1.25, 1.1), (12, 13, 12.5), (20, 25, 22),
                                       (0.5849999785423279, 0.5899999737739563, 0.587), (0, 1000, 500),
                                       (-3.2, -3.1, -3.15)])
def test_readable_cut_examples(a, b, cut):
    from tcrex._engine.fitting._surrogate import readable_cut

    assert readable_cut(a, b) == cut


@pytest.mark.parametrize("t, short", [(127.0, True), (22.5, True), (0.6735, True), (-3.15, True), (1e-5, True),
                                      (20.200000000000003, False), (28.849999427795410, False),
                                      (0.4165000021457672, False)])
def test_short_thresholds_are_kept(t, short):
    from tcrex._engine.fitting._surrogate import is_short

    assert is_short(t) is short


def test_a_forest_trees_threshold_is_rounded_around_its_own_split():
    """A tree that saw 126 and 128 split at 127.0; the fit values either side are 127 and 128. Rounding around the
    tree's split keeps 127 (shortest, and the tree's own), not the middle of [127, 128)."""
    from tcrex._engine.fitting._surrogate import readable_cut

    assert readable_cut(127.0, 128.0, 127.0) == 127.0
    assert readable_cut(28.8, 28.9, 28.849999427795410) == 28.85


@given(st.floats(-1e12, 1e12, allow_nan=False), st.floats(1e-300, 1e6, allow_nan=False))
def test_readable_cut_lies_between_the_two_values(a, gap):
    from tcrex._engine.fitting._surrogate import readable_cut

    b = a + gap
    if not a < b:
        return
    cut = readable_cut(a, b)
    assert a <= cut < b  # a goes left (x <= cut), b goes right


def _tenths(seed: int, n: int = 600) -> tuple[pd.DataFrame, np.ndarray]:
    """Values on a 0.1 grid (float32-exact is not needed: rows are routed in float64), whose midpoints are long."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"income": np.round(rng.uniform(10, 60, n), 1), "debt": np.round(rng.uniform(0, 1, n), 3),
                      "years": rng.integers(0, 30, n)})
    y = ((X.income > 32.35) & (X.debt < 0.4155) | (X.years > 20)).astype(int).to_numpy()
    return X, y


@pytest.mark.parametrize("grower", ["exact", "hist"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_printed_bounds_are_short_and_counts_are_true(grower, seed):
    X, y = _tenths(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = TCREx(rho=0.02, tau=0.9, grower=grower).fit(X, y_pred=y)
    doc = json.loads(ex.to_json())
    orc = Oracle(doc)
    for name, bounds in orc.bounds().items():
        for bound in bounds:
            assert len(f"{bound!r}") <= 8, (name, bound)  # 32.4, 0.4155, 20.5 - never 32.349999999999994
            values = np.sort(X[name].to_numpy(dtype=float))
            i = np.searchsorted(values, bound, side="right")
            assert 0 < i < len(values)  # a real split, between two fit values
    for t in range(len(doc["targets"])):
        for rule, counted in zip(doc["targets"][t]["rules"], orc.recount(t, X, y)):
            assert (rule["n"], rule["n_target"]) == counted
    assert "000000" not in ex.summary_text() and "99999" not in ex.summary_text()


def test_fit_rows_fall_in_the_same_leaves_as_scikit_learns_tree():
    """The moved thresholds route every fit row as scikit-learn's own tree does (the same partition)."""
    X, y = _tenths(3)
    X = X.astype(np.float32).astype(np.float64)  # float32-exact values: scikit-learn compares float32 copies
    ex = TCREx(rho=0.02, tau=0.9, grower="exact").fit(X, y_pred=y)
    ours = ex.surrogate_._trees[0].leaf_of_row
    clf = DecisionTreeClassifier(min_samples_leaf=int(np.ceil(0.02 * len(X))), random_state=0).fit(X.to_numpy(), y)
    theirs = clf.apply(X.to_numpy().astype(np.float32))
    pairs = set(zip(ours.tolist(), theirs.tolist()))
    assert len(pairs) == len(set(ours.tolist())) == len(set(theirs.tolist()))  # a one-to-one map of leaves
