"""FeatureSchema's fast paths for plain numpy columns and pandas categoricals must match the general ones.

``detect`` skips the conversion and checks for numpy integer columns and reads infinities and the float32 range off a
float column's extremes; ``encode`` writes plain numbers and categorical codes straight into the matrices, a block of
rows at a time, and checks for missing values column by column. Every test here compares such a column with the same
values taken through the general path (object, nullable or forced dtypes), or pins the error message.
"""
import re

import numpy as np
import pandas as pd
import pytest

from tcrex.errors import DataError
from tcrex._engine.base._data import _ROWS_PER_BLOCK, FeatureSchema, _to_float


def _described(schema):
    return [(f.name, f.kind, f.categories, f.integer) for f in schema.features]


def _general(X):
    """The same frame with every numeric column as object (parsed with pd.to_numeric) and every categorical as str."""
    return pd.DataFrame({c: X[c].astype(object) if X[c].dtype.kind in "iuf" else X[c].astype(str) for c in X.columns})


def _assert_same_encoding(a, b):
    assert a.num.dtype == b.num.dtype == np.float64 and a.cat.dtype == b.cat.dtype == np.int64
    assert a.num.flags.c_contiguous and a.cat.flags.c_contiguous
    np.testing.assert_array_equal(a.num, b.num)
    np.testing.assert_array_equal(a.cat, b.cat)


def test_plain_numbers_detect_and_encode_like_the_general_path():
    n = 50
    X = pd.DataFrame({
        "i64": np.arange(n) - 20,
        "u8": np.arange(n, dtype=np.uint8),
        "big": np.array([2**62 + 1, -(2**63)] * (n // 2), dtype=np.int64),  # not exact as float64, still whole
        "u64": np.full(n, 2**64 - 1, dtype=np.uint64),
        "f64": np.linspace(-1, 1, n),
        "whole": np.arange(n) * 2.0**40,
        "zeros": np.array([-0.0, 0.0] * (n // 2)),
        "f32": np.linspace(0, 3, n, dtype=np.float32),
        "f16": (np.arange(n) / 4).astype(np.float16),
        "near": np.full(n, float(np.finfo(np.float32).max)),  # at the float32 limit: accepted
    })
    fast = FeatureSchema.detect(X)
    numeric = list(X.columns)
    assert [f.integer for f in fast.features] == [True, True, True, True, False, True, True, False, False, True]
    for other in (_general(X), X.astype({"i64": "Int64", "f64": "Float64", "whole": "Float64", "big": "Int64"})):
        slow = FeatureSchema.detect(other, numeric=numeric)
        assert _described(slow) == _described(fast)
        _assert_same_encoding(fast.encode(other), fast.encode(X))
    # the encoded numbers are exactly _to_float's, column by column
    np.testing.assert_array_equal(fast.encode(X).num, np.column_stack([_to_float(X[c], c) for c in X.columns]))


@pytest.mark.parametrize("values, message", [
    ([1.0, np.inf, 2.0], "column 'x' holds infinite values"),
    ([1.0, -np.inf, 2.0], "column 'x' holds infinite values"),
    ([1.0, 1e39, 2.0], "column 'x' holds values beyond ±3.4e38"),
    ([1.0, -1e39, 2.0], "column 'x' holds values beyond ±3.4e38"),
])
def test_bad_floats_are_refused_on_every_path(values, message):
    columns = [pd.Series(values), pd.Series(values, dtype=object), pd.Series(values, dtype="Float64")]
    if np.isinf(values[1]):
        columns.append(pd.Series(values, dtype=np.float32))
    for column in columns:
        with pytest.raises(DataError, match=re.escape(message)):
            FeatureSchema.detect(pd.DataFrame({"k": ["a", "b", "a"], "x": column}), numeric=["x"])


def test_the_first_bad_column_in_order_is_reported():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["1", "2", "x"], "c": [np.inf, 1.0, 2.0]})
    with pytest.raises(DataError, match="column 'b' is numeric but holds non-numeric value"):
        FeatureSchema.detect(X, numeric=["b"])
    with pytest.raises(DataError, match="column 'c' holds infinite values"):
        FeatureSchema.detect(X)


def test_missing_values_name_every_column_with_its_count():
    X = pd.DataFrame({"f": [1.0, np.nan, np.nan, 4.0], "i": [1, 2, 3, 4], "k": pd.Categorical(["a", None, "b", "a"]),
                      "o": ["x", "y", None, "x"], "n": pd.array([1, 2, None, 4], dtype="Int64"),
                      "c": [np.inf, 1.0, 2.0, 3.0]})  # an infinity comes after: missing values are reported first
    expected = "missing values (NaN) in column(s) 'f' (2 rows), 'k' (1 rows), 'o' (1 rows), 'n' (1 rows); drop"
    with pytest.raises(DataError, match=re.escape(expected)):
        FeatureSchema.detect(X)
    X.columns = [0, 1, True, 3.5, "n", None]  # labels are reported by their text
    with pytest.raises(DataError, match=re.escape("in column(s) '0' (2 rows), 'True' (1 rows), '3.5' (1 rows)")):
        FeatureSchema.detect(X)


def test_long_wide_frames_encode_across_row_blocks():
    rng = np.random.default_rng(1)
    n = 2 * _ROWS_PER_BLOCK + 123
    X = pd.DataFrame({f"v{j}": rng.integers(-5, 50, n) if j % 2 else rng.normal(size=n) for j in range(11)})
    X["k"] = pd.Categorical(rng.choice(list("pqrs"), n), categories=list("srqp"))
    X["o"] = rng.choice(["x", "y", "z"], n)
    X = X.iloc[rng.permutation(n)[: n - 5]]  # non-contiguous row labels, as after a train/test split
    schema = FeatureSchema.detect(X)
    enc = schema.encode(X)
    general = schema.encode(_general(X))
    _assert_same_encoding(enc, general)
    assert [schema.features[11].categories[c] for c in enc.cat[:, 0]] == X["k"].tolist()
    # a missing value deep in a later block of rows is still found, with the same message as at detect
    for column, row in (("v3", n - 50), ("k", _ROWS_PER_BLOCK + 7), ("o", n - 6)):
        holed = X.copy()
        holed.iloc[row, holed.columns.get_loc(column)] = None
        with pytest.raises(DataError, match=re.escape(f"missing values (NaN) in column(s) '{column}' (1 rows)")):
            schema.encode(holed)


def test_encode_by_name_whatever_the_frame_around_the_features():
    X = pd.DataFrame({"x": [1.5, 2.0, 3.0, 4.0], "k": pd.Categorical(["a", "b", "a", "c"]), "i": [1, 2, 3, 4]})
    schema = FeatureSchema.detect(X)
    reference = schema.encode(X)
    for other in (X[["i", "k", "x"]], X.assign(extra="zzz"), X.assign(extra=np.nan)[["extra", "k", "i", "x"]]):
        _assert_same_encoding(schema.encode(other), reference)
    labelled = X.set_axis([0, True, 2.5], axis=1)  # labels 0 and True would select together: matched as text
    s_lab = FeatureSchema.detect(labelled)
    assert s_lab.names == ["0", "True", "2.5"]
    _assert_same_encoding(s_lab.encode(labelled), reference)
    _assert_same_encoding(s_lab.encode(labelled.assign(more=1)), reference)


def test_categorical_codes_are_copied_and_remapped_when_the_dtype_differs():
    X = pd.DataFrame({"k": pd.Categorical(["a", "b", "c", "b"]), "x": [1.0, 2.0, 3.0, 4.0]})
    schema = FeatureSchema.detect(X)
    enc = schema.encode(X)
    assert enc.cat[:, 0].tolist() == [0, 1, 2, 1]
    enc.cat[:, 0] = 9  # the matrix is the encoder's own: the frame's codes are untouched
    assert X["k"].tolist() == ["a", "b", "c", "b"]
    for dtype in (pd.CategoricalDtype(["c", "b", "a"]), pd.CategoricalDtype(["a", "b", "c", "d"]),
                  pd.CategoricalDtype(["b", "c", "a"]), pd.CategoricalDtype(["a", "b", "c"], ordered=True)):
        assert schema.encode(X.astype({"k": dtype})).cat[:, 0].tolist() == [0, 1, 2, 1]
    fewer = pd.DataFrame({"k": pd.Categorical(["b", "a"], categories=["a", "b"]), "x": [1.0, 2.0]})
    assert schema.encode(fewer).cat[:, 0].tolist() == [1, 0]
    unseen = pd.DataFrame({"k": pd.Categorical(["a", "q"], categories=["a", "b", "c", "q"]), "x": [1.0, 2.0]})
    with pytest.raises(DataError, match=re.escape("column 'k' holds categor(ies) ['q'] not seen")):
        schema.encode(unseen)
