"""TCREx.grid_sizes counts the metarule grid a fit would build, before anything per cell exists: the same cells,
axes and rules as the fit, and the same refusal over max_cells."""
import numpy as np
import pytest

import tcrex._engine.fitting._grid as grid_module
from tcrex import TCREx
from tcrex.errors import CellLimitError

from tests.support.data import mixed


@pytest.mark.parametrize("params", [dict(rho=0.02, tau=0.8, n_trees=3), dict(rho=0.03, tau=0.9, n_trees=1),
                                    dict(rho=0.02, tau=0.8, n_trees=2, constraints={"age": "increase",
                                                                                    "owner": "immutable"})])
def test_grid_sizes_are_the_fitted_grids(params):
    X, y = mixed()
    sizes = TCREx(**params).grid_sizes(X, y_pred=y)
    fitted = TCREx(**params).fit(X, y_pred=y)
    assert [s.n_cells for s in sizes] == [t.n_cells for t in fitted.targets_]
    assert [s.n_rules for s in sizes] == [t.n_rules for t in fitted.targets_]
    assert any(s.n_cells > 1 for s in sizes)
    assert all(s.seconds() == s.n_cells * grid_module.SECONDS_PER_CELL for s in sizes)


def test_grid_sizes_build_nothing_per_cell_and_predict_the_refusal(monkeypatch):
    X, y = mixed()
    params = dict(rho=0.02, tau=0.8, n_trees=3)
    sizes = TCREx(**params).grid_sizes(X, y_pred=y)
    limit = max(s.n_cells for s in sizes) - 1
    with pytest.raises(CellLimitError) as err:
        TCREx(**params, max_cells=limit).fit(X, y_pred=y)

    def boom(*args, **kwargs):
        raise AssertionError("grid_sizes built something per cell")

    monkeypatch.setattr(grid_module.Grid, "all_states", boom)
    monkeypatch.setattr(grid_module, "optimal_rules", boom)
    again = TCREx(**params, max_cells=limit).grid_sizes(X, y_pred=y)  # never refused: it only counts
    messages = [s.limit_message(limit) for s in again]
    assert str(err.value) in messages
    assert all(s.limit_message(s.n_cells) is None for s in again)
    assert np.prod(again[0].dims) == again[0].n_cells or again[0].n_rules == 0
