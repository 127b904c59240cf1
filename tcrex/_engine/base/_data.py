"""Feature schema: which columns are numeric or categorical, and how rows are encoded internally.

Everything user-facing speaks in the original column names and category values. Internally a numeric feature is
a float64 column and a categorical feature is an integer code into a fixed category list; the surrogate tree sees
the categorical as a block of one-hot columns (paper, Appendix A).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ...codebook import as_pairs, check_label, from_pairs, match_feature, resolve_value_labels
from ...errors import DataError, ParameterError, SchemaError
from ...text import feature_text
from ...vocabulary import CATEGORICAL, NUMERIC

_FLOAT32_MAX = float(np.finfo(np.float32).max)
_ROWS_PER_BLOCK = 8192  # rows written per pass when building a row-major matrix from columns (_stack_columns)


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
    #: numeric only: values that are codes ("no such record": credit-bureau -7/-8/-9), not positions on the number
    #: line; a verified point never moves the feature into or out of one unless a transition allows it
    special_codes: list = field(default_factory=list)
    #: categorical only: the categories are in a declared order (an ordered pandas Categorical), so a direction
    #: ("increase only") has a meaning for it
    ordered: bool = False
    #: the codebook's labels of this feature's values, keyed as the engine reads them (categories; floats for a
    #: numeric feature's codes), matched by :func:`tcrex.codebook.resolve_value_labels`; read by
    #: :func:`tcrex.text.value_text`
    labels: dict = field(default_factory=dict)
    #: what the column means, from the data dictionary ("repayment status last month"; ``tcrex.dictionary``), or
    #: None; every text names the feature through :func:`tcrex.text.feature_text` with it
    title: str | None = None

    @property
    def display(self) -> str:
        """The feature as texts name it: "repayment status last month (status_1)", or the name alone."""
        return feature_text(self.name, self.title)

    @property
    def is_categorical(self) -> bool:
        return self.kind == CATEGORICAL

    def to_dict(self) -> dict:
        out = {"name": self.name, "type": self.kind}
        if self.is_categorical:
            out["categories"] = [_native(c) for c in self.categories]
            if self.ordered:
                out["ordered"] = True
        else:
            if self.integer:
                out["integer"] = True
            if self.special_codes:
                out["special_codes"] = [_native(c) for c in self.special_codes]
        if self.labels:
            out["labels"] = as_pairs(self.labels)
        if self.title:
            out["title"] = self.title
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Feature":
        kind = d.get("type")
        if kind not in (NUMERIC, CATEGORICAL):
            raise DataError(f"feature {d.get('name')!r} has unknown type {kind!r}; use 'numeric' or 'categorical'")
        categories = d.get("categories", [])
        if kind == CATEGORICAL:
            if not isinstance(categories, list) or not categories or \
                    not all(isinstance(c, (str, int, float, bool)) and c == c for c in categories):
                raise SchemaError(f"feature {d.get('name')!r}: categories must be a non-empty list of text, numbers "
                                  "or booleans")
            if len({(type(c).__name__, c) for c in categories}) != len(categories) or \
                    len(set(categories)) != len(categories):
                raise SchemaError(f"feature {d.get('name')!r}: categories must be unique")
        codes = d.get("special_codes") or []
        if kind == NUMERIC and codes:
            codes = check_special_codes(str(d.get("name")), codes, SchemaError)
        labels = {}
        if d.get("labels") is not None:  # version 5: the codebook's labels, matched as fit matched them
            pairs = from_pairs(d["labels"], f"feature {d.get('name')!r}: labels")
            labels, unknown = match_feature(str(d["name"]), kind == CATEGORICAL, list(categories), pairs)
            if unknown:
                raise SchemaError(f"feature {d.get('name')!r}: labels name values it does not have: "
                                  f"{unknown[:5]}")
        title = None
        if d.get("title") is not None:  # optional: the data dictionary's title
            try:
                title = check_label(d["title"], f"feature {d.get('name')!r}: title")
            except ParameterError as exc:
                raise SchemaError(str(exc)) from None
        return cls(name=str(d["name"]), kind=kind, categories=list(categories),
                   integer=bool(d.get("integer", False)), special_codes=list(codes) if kind == NUMERIC else [],
                   ordered=kind == CATEGORICAL and d.get("ordered") is True, labels=labels, title=title)


#: Sentinel detection: at most this many distinct codes, each in at least ``SENTINEL_MIN_ROWS`` rows; the other
#: values must be varied (``SENTINEL_MIN_OTHERS`` distinct values) and hold most rows.
SENTINEL_MAX_CODES = 4
SENTINEL_MIN_ROWS = 2
SENTINEL_MIN_OTHERS = 10
#: Most special codes a feature may declare (they are categories beside the number line, not a second axis).
MAX_SPECIAL_CODES = 16


def _whole(v: float) -> bool:
    return bool(np.isfinite(v) and float(v) == int(v))


def sentinel_codes(s) -> tuple[list, int, str]:
    """Values of a numeric column that look like codes for "unknown" / "not applicable" rather than measurements:
    ``(codes, rows holding them, kind)`` with kind ``"negative"`` or ``"large"``, or ``([], 0, "")``. The one
    owner of this rule: the intake reports these codes, the explainer treats them as special codes.

    * **negative codes** (credit-bureau data's −7/−8/−9): a few distinct whole negative values, each repeating,
      in a column whose other values are all ≥ 0 and varied;
    * **all-nines codes** (99, 999, 9999, …): the column's largest value, repeating, more than twice the largest
      other value.

    ``s``: a Series or an array of numbers. The data is never changed."""
    v = s.to_numpy(dtype=np.float64, na_value=np.nan) if isinstance(s, pd.Series) else np.asarray(s, np.float64)
    # finite extremes mean every value is finite (min and max propagate NaN): the column is used as it is
    low, top = (float(v.min()), float(v.max())) if len(v) else (np.nan, np.nan)
    if not (np.isfinite(low) and np.isfinite(top)):
        v = v[np.isfinite(v)]
        low, top = (float(v.min()), float(v.max())) if len(v) else (np.nan, np.nan)
    if len(v) < 20:
        return [], 0, ""
    if low >= 0 and not (top >= 99 and _whole(top) and set(str(int(top))) == {"9"}):
        return [], 0, ""  # the common case, in two passes over the column and no sort
    neg = v[v < 0]
    if len(neg):
        rest = v[v >= 0]
        codes, counts = np.unique(neg, return_counts=True)
        if (len(codes) <= SENTINEL_MAX_CODES and all(_whole(c) for c in codes) and counts.min() >= SENTINEL_MIN_ROWS
                and len(np.unique(rest)) >= SENTINEL_MIN_OTHERS and len(neg) < len(rest)):
            return [int(c) for c in codes[::-1]], int(len(neg)), "negative"
        return [], 0, ""
    k = int((v == top).sum())
    others = v[v != top]
    if k >= SENTINEL_MIN_ROWS and len(np.unique(others)) >= SENTINEL_MIN_OTHERS and len(others) > k \
            and top > 2 * float(others.max()):
        return [int(top)], k, "large"
    return [], 0, ""


def check_special_codes(name: str, codes, error=ParameterError) -> list:
    """The special codes declared for numeric feature ``name``: a list of distinct finite numbers (whole numbers
    come back as ``int``), else ``error`` with a message naming the feature."""
    if isinstance(codes, (str, bytes)) or not hasattr(codes, "__iter__"):
        raise error(f"special codes of {name!r} must be a list of numbers, got {codes!r}"[:200])
    codes = list(codes)
    if len(codes) > MAX_SPECIAL_CODES:
        raise error(f"{name!r} declares {len(codes)} special codes; at most {MAX_SPECIAL_CODES} are supported")
    out = []
    for c in codes:
        c = _native(c)
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not np.isfinite(c):
            raise error(f"special codes of {name!r} must be finite numbers, got {c!r}"[:200])
        c = int(c) if float(c) == int(c) and abs(c) < 2 ** 53 else float(c)
        if c not in out:
            out.append(c)
    return sorted(out)


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


def frame_columns(X: pd.DataFrame) -> list:
    """The columns of X as Series, by position (fetching a column from a frame costs pandas' per-call work: a fit
    fetches them once for detecting the types and encoding)."""
    return [s for _, s in X.items()]


def _is_plain_number(dtype) -> bool:
    """A numpy integer or float dtype: never categorical, never missing-as-text, always castable to float64."""
    return isinstance(dtype, np.dtype) and dtype.kind in "iuf"


def is_categorical_column(s: pd.Series) -> bool:
    """The one rule for column types: object, string, category and bool columns are categorical; every other
    column is numeric. Used by the engine, intake and the dashboard alike."""
    if _is_plain_number(s.dtype):  # the common case, without pandas' slower dtype inspection
        return False
    return (isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(s)
            or pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s))


def categorical_columns(frame: pd.DataFrame, columns=None) -> list[str]:
    """Names of the columns of ``frame`` (or of ``columns`` only) that the engine treats as categorical."""
    names = list(frame.columns) if columns is None else list(columns)
    return [c for c in names if is_categorical_column(frame[c])]


def _sorted_categories(values) -> list:
    uniq = pd.unique(values)
    try:
        return sorted(uniq)
    except TypeError:  # mixed types: order by their text, deterministically
        return sorted(uniq, key=lambda v: (type(v).__name__, str(v)))


def _has_missing(s: pd.Series) -> bool:
    """``s.isna().any()``, without pandas' per-call overhead for the common column types."""
    dtype = s.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iub":  # integers and booleans cannot hold NaN
            return False
        if dtype.kind in "fc":
            return bool(np.isnan(s.to_numpy()).any())
    elif isinstance(dtype, pd.CategoricalDtype):
        return bool((s.array.codes < 0).any())
    return bool(s.isna().any())


def check_no_missing(X: pd.DataFrame, columns) -> None:
    bad = [c for c in columns if _has_missing(X[c])]
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
        self._category_index: dict = {}  # per categorical feature: (categories, _CategoryLookup)

    def __len__(self) -> int:
        return len(self.features)

    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise DataError(f"unknown feature {name!r}; known features: {self.names}") from None

    # ------------------------------------------------------------------ detection
    @classmethod
    def detect(cls, X: pd.DataFrame, categorical=None, numeric=None, columns: list | None = None) -> "FeatureSchema":
        """Object, string, category and bool columns are categorical; everything else numeric.

        ``categorical`` / ``numeric`` name columns whose detected type should be overridden. ``columns``: X's
        columns as :func:`frame_columns` gives them, when the caller has them (a fit encodes the same columns).
        """
        X = as_frame(X)
        if X.shape[1] == 0:
            raise DataError("X has no columns; T-CREx needs at least one feature")
        if X.shape[0] == 0:
            raise DataError("X has no rows")
        cols = [str(c) for c in X.columns.tolist()]
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
        # by position, so labels like 1 and True cannot select each other's column; each column is fetched once
        columns = frame_columns(X) if columns is None else columns
        if any(_has_missing(s) for s in columns):
            check_no_missing(X.set_axis(cols, axis=1), cols)  # raises, naming every column with its count
        features = []
        for name, s in zip(cols, columns):
            is_cat = name in force_cat or (name not in force_num and is_categorical_column(s))
            if is_cat:
                if isinstance(s.dtype, pd.CategoricalDtype):
                    # the categories that occur, in category order (no missing values here: checked above)
                    every = s.dtype.categories.tolist()
                    occurs = np.bincount(s.array.codes.astype(np.intp), minlength=len(every))
                    cats = [every[k] for k in np.flatnonzero(occurs)] or every
                    ordered = bool(s.dtype.ordered)
                else:
                    cats = _sorted_categories(s.to_numpy())
                    ordered = False
                features.append(Feature(name, CATEGORICAL, categories=[_native(c) for c in cats], ordered=ordered))
            elif isinstance(s.dtype, np.dtype) and s.dtype.kind in "iu":
                # numpy integers as float64 are finite, within ±1.9e19 and whole (exact below 2**53, and every
                # float64 from there on is whole): the checks below cannot fail, so skip the conversion
                features.append(Feature(name, NUMERIC, integer=True))
            else:
                values = _to_float(s, name)
                # no NaN here (checked above), so the extremes tell whether any value is infinite or too large
                low, high = values.min(), values.max()
                if not (np.isfinite(low) and np.isfinite(high)):
                    raise DataError(f"column {name!r} holds infinite values; T-CREx needs finite numbers")
                if max(-low, high) > _FLOAT32_MAX:
                    raise DataError(f"column {name!r} holds values beyond ±3.4e38, which the surrogate trees (float32, "
                                    "as in scikit-learn) cannot split; rescale the column")
                integer = bool(np.all(values == np.round(values)))
                features.append(Feature(name, NUMERIC, integer=integer))
        return cls(features)

    # ------------------------------------------------------------------ encoding
    def encode(self, X, columns: list | None = None, by_column: bool = False) -> Encoded:
        """Rows of X (by column name) in internal form; every problem is reported with the column names.
        ``columns``: X's columns as :func:`frame_columns` gives them, when the caller has them already;
        ``by_column``: the matrices column-major (each column contiguous: for a caller that reads only columns,
        such as a lookup of grid cells) rather than row-major (each row contiguous: gathers of rows)."""
        numbers, codes, n = self._encoded_columns(X, columns)
        stack = _column_matrix if by_column else _stack_columns
        return Encoded(stack(numbers, n, np.float64), stack(codes, n, np.int64))

    def encode_both(self, X, columns: list | None = None) -> tuple[Encoded, Encoded]:
        """:meth:`encode`'s rows (row-major) and a column-major copy of them (each column contiguous, what the
        histogram grower reads), both built from the converted columns: copying each column into place is several
        times cheaper than transposing the row-major matrices afterwards."""
        numbers, codes, n = self._encoded_columns(X, columns)
        return (Encoded(_stack_columns(numbers, n, np.float64), _stack_columns(codes, n, np.int64)),
                Encoded(_column_matrix(numbers, n, np.float64), _column_matrix(codes, n, np.int64)))

    def _encoded_columns(self, X, columns: list | None = None) -> tuple[list, list, int]:
        """The numeric columns (as numbers castable to float64) and category codes of X's features, checked, and
        the number of rows."""
        X = as_frame(X)
        labels = X.columns.tolist()
        cols = [str(c) for c in labels]
        if len(set(cols)) != len(cols):
            dup = sorted({c for c in cols if cols.count(c) > 1})
            raise DataError(f"duplicate column name(s) {dup} in X; every column must be unique")
        known = set(cols)
        missing = [n for n in self.names if n not in known]
        if missing:
            raise DataError(f"X lacks feature column(s) {missing} that the explainer was fitted with")
        if not all(isinstance(c, str) for c in labels):  # renaming str columns to themselves is a no-op
            X = X.set_axis(cols, axis=1)
        if len(cols) == len(self.names):  # X holds just the features: one pass over its columns, no name lookups
            column = dict(X.items()) if columns is None else dict(zip(cols, columns))
        else:
            column = {name: X[name] for name in self.names}
        # missing values show up after conversion as NaN numbers or -1 codes; each column is checked as it is
        # converted (integers cannot be NaN), which is cheaper than scanning the strided matrices afterwards
        has_missing = False
        numbers = []
        for i in self.numeric:
            name = self.names[i]
            s = column[name]
            # plain numbers go in as they are: writing them into the float64 matrix casts them exactly as
            # _to_float would, without a temporary copy
            values = s.to_numpy() if _is_plain_number(s.dtype) else _to_float(s, name)
            has_missing = has_missing or (values.dtype.kind == "f" and bool(np.isnan(values).any()))
            numbers.append(values)
        codes = []
        for i in self.categorical:
            f = self.features[i]
            codes.append(_codes(column[f.name], f, self._categories_index(i)))
            has_missing = has_missing or bool((codes[-1] < 0).any())
        if has_missing:
            check_no_missing(X, self.names)
        return numbers, codes, len(X)

    def decode(self, enc: Encoded, index, as_categorical: dict | None = None) -> pd.DataFrame:
        """Encoded rows back to feature values (whole-number columns of integer features as int64).
        ``as_categorical``: feature name -> (codes of the schema's categories in a pandas CategoricalDtype, or -1
        where absent; that dtype): those columns come out as that dtype directly, the same column as decoding to
        values and casting (model calls on data held as pandas categories)."""
        cols = {}
        for i, f in enumerate(self.features):
            slot = self.slot[i]
            if f.is_categorical and as_categorical and f.name in as_categorical:
                codes, dtype = as_categorical[f.name]
                cols[f.name] = pd.Categorical.from_codes(codes[enc.cat[:, slot]], dtype=dtype)
            elif f.is_categorical:
                cols[f.name] = np.asarray(f.categories, dtype=object)[enc.cat[:, slot]]
            else:
                col = enc.num[:, slot]
                cols[f.name] = col.astype(np.int64) if f.integer and np.all(col == np.round(col)) else col
        return pd.DataFrame(cols, index=index)

    def _categories_index(self, i: int):
        """Feature i's category -> code lookup, cached (built once per schema, not per encode)."""
        cats = self.features[i].categories
        cached = self._category_index.get(i)
        if cached is None or cached[0] != cats:
            cached = (list(cats), _CategoryLookup(cats))
            self._category_index[i] = cached
        return cached[1]

    def one_hot(self, enc: Encoded) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Surrogate design matrix: numeric columns, then one one-hot column per category.

        Returns the matrix (column-major: each column is contiguous) and, per column, ``(feature index,
        category code or -1)``.
        """
        n, n_num = len(enc), len(self.numeric)
        sizes = [len(self.features[i].categories) for i in self.categorical]
        columns = self.one_hot_columns()
        design = np.zeros((n, n_num + sum(sizes)), dtype=np.float64, order="F")
        design[:, :n_num] = enc.num
        flat = design.reshape(-1, order="F")  # a view: column c, row r is flat[c * n + r]
        rows = np.arange(n)
        start = n_num
        for j in range(len(self.categorical)):
            flat[(start + enc.cat[:, j]) * n + rows] = 1.0
            start += sizes[j]
        return design, columns

    def one_hot_columns(self) -> list[tuple[int, int]]:
        """The columns of :meth:`one_hot`'s matrix, ``(feature index, category code or -1)``, without building it."""
        columns = [(i, -1) for i in self.numeric]
        for i in self.categorical:
            columns.extend((i, c) for c in range(len(self.features[i].categories)))
        return columns

    def with_labels(self, value_labels) -> "FeatureSchema":
        """The same features with the codebook ``value_labels`` (``{feature: {value: label}}``, checked and matched
        by :func:`tcrex.codebook.resolve_value_labels`; None or {} removes every label)."""
        matched = resolve_value_labels(self, value_labels)
        if not matched and not any(f.labels for f in self.features):
            return self  # no label before or after (a fit without a codebook): the same features
        return FeatureSchema([replace(f, labels=matched.get(i, {})) for i, f in enumerate(self.features)])

    @property
    def value_labels(self) -> dict:
        """The codebook in force, ``{feature: {value: label}}`` (only the labelled features)."""
        return {f.name: dict(f.labels) for f in self.features if f.labels}

    def to_list(self) -> list[dict]:
        return [f.to_dict() for f in self.features]

    @classmethod
    def from_list(cls, items: list[dict]) -> "FeatureSchema":
        return cls([Feature.from_dict(d) for d in items])


AUTO = "auto"


def check_special_codes_param(spec) -> None:
    """The ``special_codes`` parameter: ``"auto"``, None, or a dict ``{feature: [codes]}`` (checked further
    against the features by :func:`resolve_special_codes`)."""
    if spec is None or (isinstance(spec, str) and spec == AUTO):
        return
    if not isinstance(spec, dict):
        raise ParameterError(f"special_codes must be 'auto', None or a dict {{feature: [codes]}}, got {spec!r}"[:200])
    for name, codes in spec.items():
        check_special_codes(str(name), codes)


def resolve_special_codes(schema: "FeatureSchema", enc: "Encoded", spec) -> None:
    """Set each numeric feature's ``special_codes`` (a freshly detected schema) from the ``special_codes``
    parameter: ``"auto"`` detects them in the fit rows (:func:`sentinel_codes`); a dict declares them for the
    features it names (an empty list: none) and detects them for the others; None: no feature has any."""
    check_special_codes_param(spec)
    declared = {}
    if isinstance(spec, dict):
        for name, codes in spec.items():
            i = schema.index(str(name)) if str(name) in schema.names else None
            if i is None:
                raise ParameterError(f"special_codes names unknown feature {name!r}; features are {schema.names}")
            if schema.features[i].is_categorical:
                raise ParameterError(f"special_codes: {name!r} is categorical, and its values are categories "
                                     "already; special codes are for numeric features")
            declared[i] = check_special_codes(str(name), codes)
    for j, i in enumerate(schema.numeric):
        f = schema.features[i]
        if i in declared:
            f.special_codes = declared[i]
        elif spec is not None:
            f.special_codes = sorted(sentinel_codes(enc.num[:, j])[0])
        else:
            f.special_codes = []


def _stack_columns(columns: list, n: int, dtype) -> np.ndarray:
    """An (n, len(columns)) row-major matrix of ``dtype`` with the given columns (cast on the way in).

    Filling a row-major matrix column by column touches a new cache line for nearly every value; going through it a
    block of rows at a time, so every line is completed while it is still cached, is up to twice as fast on wide
    tables.
    """
    out = np.empty((n, len(columns)), dtype=dtype)
    for start in range(0, n, _ROWS_PER_BLOCK):
        stop = start + _ROWS_PER_BLOCK
        for j, values in enumerate(columns):
            out[start:stop, j] = values[start:stop]
    return out


def _column_matrix(columns: list, n: int, dtype) -> np.ndarray:
    """An (n, len(columns)) column-major matrix of ``dtype`` with the given columns (cast on the way in, as
    :func:`_stack_columns` casts them)."""
    out = np.empty((n, len(columns)), dtype=dtype, order="F")
    for j, values in enumerate(columns):
        out[:, j] = values
    return out


def _to_float(s: pd.Series, name: str) -> np.ndarray:
    if _is_plain_number(s.dtype):  # numpy's cast, which cannot fail: no text to parse, no pandas dtype checks
        return s.to_numpy(dtype=np.float64)
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


class _CategoryLookup:
    """Category -> code, as ``pd.Index(categories, dtype=object).get_indexer`` does it (-1 when unknown).

    For plain str / int / float / bool categories a dict gives the same answer (same hashing and equality, and no
    category is missing), without building a hash table on every call.
    """

    _PLAIN = (str, int, float, bool, np.str_, np.integer, np.floating, np.bool_)

    def __init__(self, categories):
        self.categories = list(categories)
        plain = all(isinstance(c, self._PLAIN) and c == c for c in self.categories)
        self.table = {c: k for k, c in enumerate(self.categories)} if plain else None
        if self.table is not None and len(self.table) != len(self.categories):
            self.table = None  # categories equal as dict keys (1 and 1.0): leave it to pandas
        self._index = None
        self._dtype = None  # the last pandas CategoricalDtype seen, with its categories and their codes here

    def dtype_mapping(self, dtype):
        """``(categories as objects, codes here + [-1], whether the dtype's codes already are the codes here)``
        for a pandas CategoricalDtype (cached per dtype: folds of one frame share it)."""
        if self._dtype is None or self._dtype[0] is not dtype:
            uniq = np.asarray(dtype.categories, dtype=object)
            codes = self.get_indexer(uniq).astype(np.int64)
            same = bool(np.array_equal(codes, np.arange(len(codes))))
            self._dtype = (dtype, uniq, np.append(codes, -1), same)
        return self._dtype[1:]

    def arrow_value_set(self, arrow_type):
        """The categories as an Arrow array of ``arrow_type`` when every one is a str (else None), cached per type."""
        cached = getattr(self, "_arrow", None)
        if cached is None or cached[0] != arrow_type:
            import pyarrow as pa  # noqa: PLC0415 - only for Arrow-backed columns; `import tcrex` stays light
            ok = all(isinstance(c, str) for c in self.categories)
            cached = (arrow_type, pa.array(self.categories, type=arrow_type) if ok else None)
            self._arrow = cached
        return cached[1]

    def get_indexer(self, values: np.ndarray) -> np.ndarray:
        if self.table is not None and all(isinstance(v, self._PLAIN) for v in values):
            get = self.table.get
            return np.fromiter((get(v, -1) for v in values), dtype=np.int64, count=len(values))
        if self._index is None:
            self._index = pd.Index(self.categories, dtype=object)
        return self._index.get_indexer(values)


def _arrow_codes(s: pd.Series, index) -> np.ndarray | None:
    """Category codes of an Arrow-backed string column in one hash lookup against the feature's (string)
    categories (-1 for a missing value), or None when this path does not apply or some value is unseen (the
    caller's general path then reports it)."""
    if not isinstance(index, _CategoryLookup) or index.table is None:
        return None
    chunked = getattr(s.array, "_pa_array", None)
    if chunked is None:
        return None
    try:
        import pyarrow as pa  # noqa: PLC0415 - only for Arrow-backed columns; `import tcrex` stays light
        import pyarrow.compute as pc  # noqa: PLC0415
    except ImportError:  # pragma: no cover - pandas' Arrow strings imply pyarrow
        return None
    if not (pa.types.is_string(chunked.type) or pa.types.is_large_string(chunked.type)):
        return None
    value_set = index.arrow_value_set(chunked.type)
    if value_set is None:
        return None
    found = pc.index_in(chunked, value_set=value_set)
    if found.null_count != chunked.null_count:  # a value that is no category: unseen (let the caller say which)
        return None
    return pc.fill_null(found, -1).to_numpy().astype(np.int64, copy=False)


def _codes(s: pd.Series, f: Feature, index=None) -> np.ndarray:
    """Category code of every value (-1 for a missing one), as an integer array (maybe narrower than int64, and
    maybe the column's own codes: copy before writing to it); unseen categories are an error."""
    if index is None:
        index = pd.Index(f.categories, dtype=object)
    if isinstance(s.dtype, pd.CategoricalDtype):
        # a pandas categorical already holds codes: map its (few) categories, then look the codes up
        local = s.array.codes
        if isinstance(index, _CategoryLookup):
            uniq, mapping, same = index.dtype_mapping(s.dtype)
        else:
            uniq = np.asarray(s.cat.categories, dtype=object)
            mapping, same = np.append(index.get_indexer(uniq).astype(np.int64), -1), False
        if same:  # the typical fit and test folds: the dtype's categories are the feature's, in order
            return local
        if not (mapping[:-1] < 0).any():  # every category of the dtype is known: nothing can be unseen
            return mapping[local]
        occurs = np.bincount(local.astype(np.intp) + 1, minlength=len(uniq) + 1)[1:] > 0
    else:
        fast = _arrow_codes(s, index)
        if fast is not None:
            return fast
        # factorize first (hash-based, fast on Arrow strings), then map the few distinct values to category codes
        local, uniques = pd.factorize(s, use_na_sentinel=True)
        uniq = np.asarray(uniques, dtype=object)
        occurs = np.ones(len(uniq), dtype=bool)
        mapping = np.append(index.get_indexer(uniq).astype(np.int64), -1)
    unseen = occurs & (mapping[:-1] < 0)
    if unseen.any():
        unseen = _sorted_categories(uniq[unseen])[:5]
        raise DataError(f"column {f.name!r} holds categor(ies) {unseen} not seen when the explainer was fitted "
                        f"(known: {f.categories[:20]}); refit on data that includes them")
    return mapping[local]


def one_row(x, names, dtypes=None) -> pd.DataFrame:
    """One input (a one-row frame, a Series, a dict or a sequence of values in feature order) as a one-row frame
    with the fit data's dtypes where they keep every value (:func:`conform_dtypes`)."""
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise ParameterError(f"explain_one takes one row, got {len(x)}; use explain() for many")
        return conform_dtypes(x, dtypes)
    if isinstance(x, pd.Series):
        return conform_dtypes(x.to_frame().T.infer_objects(), dtypes)
    if isinstance(x, dict):
        return conform_dtypes(pd.DataFrame([x]), dtypes)
    arr = np.asarray(x, dtype=object).reshape(1, -1)
    if arr.shape[1] != len(names):
        raise ParameterError(f"expected {len(names)} values ({names}), got {arr.shape[1]}")
    return conform_dtypes(pd.DataFrame(arr, columns=names).infer_objects(), dtypes)


def conform_dtypes(X: pd.DataFrame, like) -> pd.DataFrame:
    """X with the column dtypes of ``like`` (a frame, or ``{name: dtype}`` such as the fit data's) wherever the cast
    keeps every value: the one rule every frame follows before a model sees it (``explain_one``'s row, the verified
    points, the comparison's and the stability check's rows and points, ``fit_rows()``). A model that reads dtypes
    (XGBoost's native categoricals, integer columns) then sees what it was trained on.

    The cast never changes a value: a column whose values the wanted dtype cannot hold exactly (3.9 in a column
    fitted as integers, "3" for a number, a category the wanted categorical does not list) keeps its own dtype, so
    the model is asked about the value given, never a truncated one or a missing one, and encoding reports what it
    cannot read by name. Columns ``like`` does not name are left alone; X itself is returned when nothing changes.
    """
    dtypes = {str(c): d for c, d in like.dtypes.items()} if isinstance(like, pd.DataFrame) else like
    if not dtypes or len({str(c) for c in X.columns}) != X.shape[1]:  # duplicate names: encoding reports them
        return X
    out = None
    for j, c in enumerate(X.columns):
        want = dtypes.get(str(c))
        col = X.iloc[:, j]
        if want is None or col.dtype == want:
            continue
        try:
            if isinstance(want, pd.CategoricalDtype):
                if not col.isna().all() and not col.dropna().isin(want.categories).all():
                    continue  # a category the dtype does not list would become missing
            cast = col.astype(want)
        except Exception:  # noqa: BLE001 - a value the dtype cannot hold (too large, text): encoding reports it
            continue
        if not isinstance(want, pd.CategoricalDtype) and not same_values(col, cast):
            continue  # a lossy cast (3.9 -> 3, "3" -> 3, 2**53 + 1 -> float): keep the value as given
        if out is None:
            out = X.copy()
        out.isetitem(j, cast)
    return X if out is None else out


def conform_frame(points: pd.DataFrame, X: pd.DataFrame, fresh: bool = False) -> pd.DataFrame:
    """Points (counterfactuals, examples, edited rows) as a model reads X: X's columns, in its order and with its
    labels, and X's dtypes where they keep every value (:func:`conform_dtypes`). ``fresh``: ``points`` was just
    built for this call and nobody else holds it, so it is relabelled in place rather than copied (the search's
    model calls: a copy of every candidate point per call)."""
    if list(points.columns) != list(X.columns):
        points = points[[str(c) for c in X.columns]]
    elif not fresh:
        points = points.copy()
    points.columns = X.columns
    return conform_dtypes(points, X)


def categorical_codes(categories, dtype) -> np.ndarray | None:
    """The codes ``categories`` take in the pandas CategoricalDtype ``dtype`` -- the cast :func:`conform_dtypes`
    makes, computed once per category rather than once per point -- or None when ``dtype`` lacks one of them (a
    point holding it then keeps its value, as :func:`conform_dtypes` keeps it, never a missing one)."""
    try:
        codes = pd.Series(np.asarray(categories, dtype=object)).astype(dtype).cat.codes
    except (TypeError, ValueError):
        return None
    codes = np.asarray(codes, dtype=np.int64)
    return None if (codes < 0).any() else codes


def same_values(before: pd.Series, after: pd.Series) -> bool:
    """Whether a cast kept every value (missing stays missing; 3.0 -> 3 is kept, 3.9 -> 3 and "3" -> 3 are not)."""
    if len(before) > 8 and isinstance(before.dtype, np.dtype) and isinstance(after.dtype, np.dtype) \
            and before.dtype.kind in "biuf" and after.dtype.kind in "biuf":
        # plain numbers: the cast is exact when casting back gives every value again (int64 <-> float64 compared
        # in numpy, which would call 2**53 + 1 equal to 2.0**53, is avoided: the round trip lands on the original
        # dtype). One vectorised pass instead of a Python loop over the points of a model call.
        try:
            back = after.to_numpy().astype(before.dtype)
        except (TypeError, ValueError, OverflowError):
            return False
        a = before.to_numpy()
        return bool(np.array_equal(a, back, equal_nan=a.dtype.kind == "f"))
    a, b = before.to_numpy(dtype=object), after.to_numpy(dtype=object)
    for u, v in zip(a, b):
        if pd.isna(u) or pd.isna(v):
            if not (pd.isna(u) and pd.isna(v)):
                return False
        elif not (u == v and v == u):  # Python compares int and float exactly (2**53 + 1 != 2.0**53)
            return False
    return True
