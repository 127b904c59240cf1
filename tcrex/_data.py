"""Feature schema: which columns are numeric or categorical, and how rows are encoded internally.

Everything user-facing speaks in the original column names and category values. Internally a numeric feature is
a float64 column and a categorical feature is an integer code into a fixed category list; the surrogate tree sees
the categorical as a block of one-hot columns (paper, Appendix A).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._errors import DataError, ParameterError

NUMERIC = "numeric"
CATEGORICAL = "categorical"


def _native(value):
    """A JSON-friendly Python scalar for a category value (numpy scalars become Python ones)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass
class Feature:
    name: str
    kind: str
    categories: list = field(default_factory=list)  # categorical only, in code order
    integer: bool = False  # numeric only: every fit value is a whole number (drives display and counterfactuals)

    @property
    def is_categorical(self) -> bool:
        return self.kind == CATEGORICAL

    def to_dict(self) -> dict:
        out = {"name": self.name, "type": self.kind}
        if self.is_categorical:
            out["categories"] = [_native(c) for c in self.categories]
        elif self.integer:
            out["integer"] = True
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Feature":
        kind = d.get("type")
        if kind not in (NUMERIC, CATEGORICAL):
            raise DataError(f"feature {d.get('name')!r} has unknown type {kind!r}; use 'numeric' or 'categorical'")
        return cls(name=str(d["name"]), kind=kind, categories=list(d.get("categories", [])),
                   integer=bool(d.get("integer", False)))


@dataclass
class Encoded:
    """Rows in internal form: ``num`` (n, n_numeric) float64 and ``cat`` (n, n_categorical) int64 codes."""

    num: np.ndarray
    cat: np.ndarray

    def __len__(self) -> int:
        return self.num.shape[0]

    def take(self, idx) -> "Encoded":
        return Encoded(self.num[idx], self.cat[idx])


def as_frame(X) -> pd.DataFrame:
    """Accept a DataFrame, or a 2-D array (columns named x0, x1, ...)."""
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        return X.to_frame().T
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise DataError(f"X must be a table (DataFrame or 2-D array), got an array with {arr.ndim} dimensions")
    return pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])


def _is_categorical_dtype(s: pd.Series) -> bool:
    return (isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(s)
            or pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s))


def _sorted_categories(values) -> list:
    uniq = pd.unique(values)
    try:
        return sorted(uniq)
    except TypeError:  # mixed types: order by their text, deterministically
        return sorted(uniq, key=lambda v: (type(v).__name__, str(v)))


def check_no_missing(X: pd.DataFrame, columns) -> None:
    bad = [c for c in columns if X[c].isna().any()]
    if bad:
        counts = ", ".join(f"{c!r} ({int(X[c].isna().sum())} rows)" for c in bad)
        raise DataError(f"missing values (NaN) in column(s) {counts}; drop or impute those rows first — "
                        "T-CREx needs a value for every feature")


class FeatureSchema:
    """The ordered list of features, with detection from a DataFrame and row encoding."""

    def __init__(self, features: list[Feature]):
        self.features = list(features)
        self.names = [f.name for f in self.features]
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise DataError(f"duplicate column name(s) {dup}; every feature needs a unique name")
        self.numeric = [i for i, f in enumerate(self.features) if not f.is_categorical]
        self.categorical = [i for i, f in enumerate(self.features) if f.is_categorical]
        # position of feature i inside the num or cat matrix
        self.slot = {}
        for j, i in enumerate(self.numeric):
            self.slot[i] = j
        for j, i in enumerate(self.categorical):
            self.slot[i] = j
        self._index = {n: i for i, n in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.features)

    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise DataError(f"unknown feature {name!r}; known features: {self.names}") from None

    # ------------------------------------------------------------------ detection
    @classmethod
    def detect(cls, X: pd.DataFrame, categorical=None, numeric=None) -> "FeatureSchema":
        """Object, string, category and bool columns are categorical; everything else numeric.

        ``categorical`` / ``numeric`` name columns whose detected type should be overridden.
        """
        X = as_frame(X)
        if X.shape[1] == 0:
            raise DataError("X has no columns; T-CREx needs at least one feature")
        if X.shape[0] == 0:
            raise DataError("X has no rows")
        cols = [str(c) for c in X.columns]
        if len(set(cols)) != len(cols):
            dup = sorted({c for c in cols if cols.count(c) > 1})
            raise DataError(f"duplicate column name(s) {dup}; rename them so every feature is unique")
        force_cat = set(map(str, categorical or []))
        force_num = set(map(str, numeric or []))
        for name in sorted((force_cat | force_num) - set(cols)):
            raise ParameterError(f"type override names column {name!r}, which is not in X (columns: {cols})")
        both = force_cat & force_num
        if both:
            raise ParameterError(f"column(s) {sorted(both)} listed as both categorical and numeric")
        check_no_missing(X, X.columns)
        features = []
        for col, name in zip(X.columns, cols):
            s = X[col]
            is_cat = name in force_cat or (name not in force_num and _is_categorical_dtype(s))
            if is_cat:
                if isinstance(s.dtype, pd.CategoricalDtype):
                    cats = [c for c in s.cat.categories if (s == c).any()] or list(s.cat.categories)
                else:
                    cats = _sorted_categories(s.to_numpy())
                features.append(Feature(name, CATEGORICAL, categories=[_native(c) for c in cats]))
            else:
                values = _to_float(s, name)
                if not np.all(np.isfinite(values)):
                    raise DataError(f"column {name!r} holds infinite values; T-CREx needs finite numbers")
                integer = bool(np.all(values == np.round(values)))
                features.append(Feature(name, NUMERIC, integer=integer))
        return cls(features)

    # ------------------------------------------------------------------ encoding
    def encode(self, X) -> Encoded:
        """Rows of X (by column name) in internal form; every problem is reported with the column names."""
        X = as_frame(X)
        cols = [str(c) for c in X.columns]
        missing = [n for n in self.names if n not in cols]
        if missing:
            raise DataError(f"X lacks feature column(s) {missing} that the explainer was fitted with")
        X = X.set_axis(cols, axis=1)
        n = len(X)
        num = np.empty((n, len(self.numeric)), dtype=np.float64)
        cat = np.empty((n, len(self.categorical)), dtype=np.int64)
        for j, i in enumerate(self.numeric):
            name = self.names[i]
            num[:, j] = _to_float(X[name], name)
        for j, i in enumerate(self.categorical):
            f = self.features[i]
            cat[:, j] = _codes(X[f.name], f)
        # missing values show up after conversion as NaN numbers or -1 codes: one check, no extra pass
        if np.isnan(num).any() or (cat < 0).any():
            check_no_missing(X, self.names)
        return Encoded(num, cat)

    def one_hot(self, enc: Encoded) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Surrogate design matrix: numeric columns, then one one-hot column per category.

        Returns the matrix and, per column, ``(feature index, category code or -1)``.
        """
        blocks = [enc.num]
        columns = [(i, -1) for i in self.numeric]
        for j, i in enumerate(self.categorical):
            k = len(self.features[i].categories)
            hot = np.zeros((len(enc), k), dtype=np.float64)
            hot[np.arange(len(enc)), enc.cat[:, j]] = 1.0
            blocks.append(hot)
            columns.extend((i, c) for c in range(k))
        return np.hstack(blocks) if blocks else np.empty((len(enc), 0)), columns

    def to_list(self) -> list[dict]:
        return [f.to_dict() for f in self.features]

    @classmethod
    def from_list(cls, items: list[dict]) -> "FeatureSchema":
        return cls([Feature.from_dict(d) for d in items])


def _to_float(s: pd.Series, name: str) -> np.ndarray:
    if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
        converted = pd.to_numeric(s, errors="coerce")
        bad = converted.isna() & s.notna()
        if bad.any():
            example = s[bad].iloc[0]
            raise DataError(f"column {name!r} is numeric but holds non-numeric value(s) such as {example!r} "
                            f"({int(bad.sum())} rows); fix the values or declare the column categorical")
        s = converted
    try:
        return s.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"column {name!r} cannot be read as numbers: {exc}") from None


def _codes(s: pd.Series, f: Feature) -> np.ndarray:
    # factorize first (hash-based, fast on Arrow strings), then map the few distinct values to category codes
    local, uniques = pd.factorize(s, use_na_sentinel=True)
    uniq = np.asarray(uniques, dtype=object)
    mapping = np.append(pd.Index(f.categories, dtype=object).get_indexer(uniq).astype(np.int64), -1)
    if (mapping[:-1] < 0).any():
        unseen = _sorted_categories(uniq[mapping[:-1] < 0])[:5]
        raise DataError(f"column {f.name!r} holds categor(ies) {unseen} not seen when the explainer was fitted "
                        f"(known: {f.categories[:20]}); refit on data that includes them")
    return mapping[local]
