"""explain's fast encoding and lookup paths (Arrow string codes in one hash lookup, cells without a state matrix,
per-target rows without copying the encoded frame) give exactly the general paths' results and errors."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import DataError
from tcrex._engine.base._data import _codes

from tests.support.data import mixed

pa = pytest.importorskip("pyarrow")


def _frames(X):
    """The same rows as Arrow strings, Python objects and pandas categoricals."""
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    return {"arrow": X.astype({c: pd.StringDtype("pyarrow") for c in cats}),
            "object": X.astype({c: object for c in cats}),
            "category": X.astype({c: "category" for c in cats})}


@pytest.mark.parametrize("outputs", ["binary", "multiclass"])
def test_explain_is_identical_for_arrow_object_and_categorical_columns(outputs):
    X, y = mixed(1500, seed=3)
    y = y if outputs == "binary" else X.job.to_numpy()
    ex = TCREx(tau=0.8).fit(X, y_pred=y)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(X), 4000)
    frames = _frames(X.iloc[rows].reset_index(drop=True))
    assert frames["arrow"].job.array.__class__.__name__ == "ArrowStringArray"
    out = {k: ex.explain(f, y_pred=y[rows]) for k, f in frames.items()}
    pd.testing.assert_frame_equal(out["arrow"], out["object"])
    pd.testing.assert_frame_equal(out["arrow"], out["category"])
    # one row at a time gives the same as the whole frame (the single-target and per-target lookup paths)
    for r in range(0, 4000, 997):
        one = ex.explain(frames["arrow"].iloc[[r]], y_pred=y[rows][[r]])
        pd.testing.assert_frame_equal(one.astype({"text": str}), out["arrow"].iloc[[r]].astype({"text": str}))


def test_grid_cells_equal_flat_states():
    X, y = mixed(1500, seed=4)
    ex = TCREx(tau=0.8).fit(X, y_pred=y)
    enc = ex.schema_.encode(X)
    rows = np.array([5, 0, 1499, 5, 700])
    for sol in ex.targets_:
        if sol.grid is None:
            continue
        assert np.array_equal(sol.grid.cells(enc), sol.grid.flat(sol.grid.states(enc)))
        assert np.array_equal(sol.grid.cells(enc, rows), sol.grid.flat(sol.grid.states(enc.take(rows))))


def test_arrow_codes_equal_the_general_path_with_missing_values_and_refuse_unseen_alike():
    X, y = mixed(300)
    ex = TCREx(tau=0.8).fit(X, y_pred=y)
    schema = ex.schema_
    i = schema.names.index("job")
    f, lookup = schema.features[i], schema._categories_index(i)
    values = ["nurse", None, "clerk", "teacher", None]
    arrow = pd.Series(values, dtype=pd.StringDtype("pyarrow"))
    obj = pd.Series(values, dtype=object)
    assert np.array_equal(_codes(arrow, f, lookup), _codes(obj, f, lookup))
    assert list(_codes(arrow, f, lookup)) == [f.categories.index("nurse"), -1, f.categories.index("clerk"),
                                              f.categories.index("teacher"), -1]
    assert len(_codes(pd.Series([], dtype=pd.StringDtype("pyarrow")), f, lookup)) == 0
    messages = []
    for dtype in (pd.StringDtype("pyarrow"), object):
        bad = X.astype({"job": dtype}).copy()
        bad.loc[3, "job"] = "astronaut"
        with pytest.raises(DataError) as err:
            ex.explain(bad, y_pred=y)
        messages.append(str(err.value))
        gap = X.astype({"job": dtype}).copy()
        gap.loc[3, "job"] = None
        with pytest.raises(DataError, match="missing"):
            ex.explain(gap, y_pred=y)
    assert messages[0] == messages[1] and "astronaut" in messages[0]


@pytest.mark.parametrize("outputs", ["binary", "multiclass", "one target"])
def test_explain_arrow_holds_explain_values(outputs):
    """explain_arrow (the engine's arrays straight to Arrow) has explain's values: ids null where missing, the
    same statuses and sentences row by row, every status in the dictionary."""
    X, y = mixed(1500, seed=4)
    y = X.job.to_numpy() if outputs == "multiclass" else y
    ex = TCREx(tau=0.8, target=1 if outputs == "one target" else None).fit(X, y_pred=y)
    rows = np.random.default_rng(1).integers(0, len(X), 3000)
    Z, yz = X.iloc[rows].reset_index(drop=True), y[rows]
    want = ex.explain(Z, y_pred=yz)
    got = ex.explain_arrow(Z, y_pred=yz)
    assert got.column_names == list(want.columns)
    assert got.schema.field("status").type == pa.dictionary(pa.int32(), pa.string())
    assert got.column("status").chunk(0).dictionary.to_pylist() == list(want["status"].cat.categories)
    back = got.to_pandas()
    for c in ("target", "rule", "metarule"):
        assert got.column(c).null_count == want[c].isna().sum()
        pd.testing.assert_series_equal(back[c].astype("Int64"), want[c].reset_index(drop=True))
    pd.testing.assert_series_equal(back["changes"], want["changes"].reset_index(drop=True))
    for c in ("status", "text"):
        assert back[c].astype(str).tolist() == want[c].astype(str).tolist()
    empty = ex.explain_arrow(Z.iloc[:0], y_pred=yz[:0])
    assert empty.num_rows == 0 and empty.schema == got.schema


def test_numeric_state_equals_searchsorted_with_ties_and_infinities():
    """The comparison count used for grids with few bounds is numpy's left searchsorted, values on a bound
    included (a bound belongs to the state below it: boxes are (low, high])."""
    from tcrex._engine.fitting._grid import _COMPARE_BOUNDS, numeric_state
    rng = np.random.default_rng(2)
    for k in [1, 2, 3, _COMPARE_BOUNDS - 1, _COMPARE_BOUNDS, _COMPARE_BOUNDS + 1, 40]:
        bounds = np.unique(np.round(rng.normal(size=k) * 5, 1))
        values = np.concatenate([rng.normal(size=2000) * 8, bounds, np.nextafter(bounds, np.inf),
                                 np.nextafter(bounds, -np.inf), [np.inf, -np.inf, 0.0, -0.0]])
        got = numeric_state(bounds, values)
        np.testing.assert_array_equal(got, np.searchsorted(bounds, values, side="left"))
        assert got.dtype.kind == "i"


@pytest.mark.parametrize("y", [np.array([1, 0, 1, 1, 0]), np.array([-5, 4, -5, 3], dtype=np.int8),
                               np.array([7, 7, 7], dtype=np.uint8), np.array([3, 2**62, 3], dtype=np.int64),
                               np.array([2**63 + 5, 2**63 + 1], dtype=np.uint64), np.array([2.0, 1.0, 2.0]),
                               np.array(["b", "a", "b"], dtype=object), np.array([True, False, True])])
def test_class_codes_are_numpy_unique(y):
    """Integer labels in a small range are counted instead of sorted: the same classes (values and dtype) and the
    same row codes as ``np.unique(y, return_inverse=True)``; anything else goes through np.unique."""
    from tcrex._engine.base._outputs import class_codes
    classes, codes = class_codes(y)
    want_classes, want_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == want_classes.dtype and codes.dtype == want_codes.dtype
    np.testing.assert_array_equal(classes, want_classes)
    np.testing.assert_array_equal(codes, want_codes)
