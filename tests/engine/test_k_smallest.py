"""The k nearest reference rows of the search beyond the rules (``tcrex._recourse._k_smallest``): the same
positions as the first k columns of a stable argsort (ties in pool order), -1 where a row has fewer finite
distances; NaN and infinite distances are never neighbours."""
import numpy as np
import pytest

from tcrex._engine.recourse._search import _k_smallest


def stable_argsort_k(dist: np.ndarray, k: int) -> np.ndarray:
    """What the search used before: a stable argsort of every row, its first k columns, -1 where not finite."""
    near = np.argsort(dist, axis=1, kind="stable")[:, :k]
    found = np.isfinite(np.take_along_axis(dist, near, axis=1))
    out = np.full((len(dist), k), -1, dtype=np.int64)
    out[:, :near.shape[1]] = np.where(found, near, -1)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_same_positions_as_a_stable_argsort_with_ties_infinities_and_nan(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        n, m, k = int(rng.integers(0, 12)), int(rng.integers(0, 15)), int(rng.integers(1, 10))
        dist = (rng.integers(0, 4, size=(n, m)) / rng.integers(1, 3)).astype(np.float32)  # many ties
        dist[rng.random((n, m)) < 0.2] = np.inf
        dist[rng.random((n, m)) < 0.05] = np.nan
        np.testing.assert_array_equal(_k_smallest(dist, k), stable_argsort_k(dist, k))


def test_continuous_distances_and_a_row_with_no_neighbour():
    rng = np.random.default_rng(7)
    dist = rng.random((50, 300)).astype(np.float32)
    dist[3] = np.inf
    got = _k_smallest(dist, 8)
    np.testing.assert_array_equal(got, stable_argsort_k(dist, 8))
    assert (got[3] == -1).all() and (got[4] >= 0).all()


def test_barred_blocks_and_nearest_rows_at_the_end():
    """Infinite distances side by side (a block of barred reference rows) and the nearest rows last."""
    rng = np.random.default_rng(11)
    dist = rng.random((40, 120)).astype(np.float32)
    dist[:20, :60] = np.inf
    dist[20:, 100:] = dist[20:, 100:] / 100  # the nearest at the end of the pool
    dist[25, :] = np.round(dist[25, :], 1)  # ties
    for k in (1, 3, 8, 120, 130):
        np.testing.assert_array_equal(_k_smallest(dist, k), stable_argsort_k(dist, k))
