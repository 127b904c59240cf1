"""What is risky about a table once read: missing, empty, constant, infinite, identifier-like, high-cardinality and
mixed-type columns, special codes, a single column; and problems with a chosen target column."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import is_categorical_column
from ..errors import DataError
from ..text import format_value
from ._dialects import delimiter_name
from ._report import Finding, TableReport
from ._sentinels import sentinel_finding

HIGH_CARDINALITY = 50  # categorical columns with more distinct values than this are flagged
_ID_NAME = re.compile(r"(^|[_\s-])(id|uuid|guid|key|index)$|^unnamed: ?\d+$", re.IGNORECASE)
#: Names that only ever mean a label (a feature is never called that).
GENERIC_LABEL_NAMES = ("target", "label", "y", "class", "outcome")
#: Column names taken as the label column when one of them is present (case-insensitive, first match wins): the
#: generic ones, then the labels of well-known data sets, which may be features elsewhere (income in a loans table).
LABEL_NAMES = GENERIC_LABEL_NAMES + ("approved", "income", "default")


def is_text(s: pd.Series) -> bool:
    """Holds text values (for the mixed-type and decimal-comma checks). Not the column-type rule: a bool or
    category column is categorical (``is_categorical_column``) without holding text."""
    return pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)


def check_frame(report: TableReport, high_cardinality: int) -> None:
    df, f = report.frame, report.findings
    n = len(df)
    if df.shape[1] == 1:
        how = (f" with the {delimiter_name(report.delimiter)} delimiter"
               if report.format == "csv" else "")
        f.append(Finding("single_column", f"the table has a single column ({df.columns[0]!r}) when read{how}: is "
                         "the delimiter wrong? T-CREx needs features besides the model's target", df.columns[0]))
    for col in df.columns:
        s = df[col]
        n_missing = int(s.isna().sum())
        if n_missing:
            f.append(Finding("missing", f"{col!r}: {n_missing} missing value(s) of {n} rows", col, count=n_missing))
        if n_missing == n:
            f.append(Finding("empty", f"{col!r} is empty (every value is missing); drop it", col))
            continue
        n_unique = int(s.nunique(dropna=False))
        if n_unique == 1 and n > 1:
            f.append(Finding("constant", f"{col!r} has the same value ({format_value(s.dropna().iloc[0])}) in every row; it "
                             "carries no information — drop it", col))
            continue
        if is_text(s):
            _mixed(s, col, f)
        if pd.api.types.is_float_dtype(s) and np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).any():
            k = int(np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).sum())
            f.append(Finding("infinite", f"{col!r}: {k} infinite value(s); T-CREx needs finite numbers", col, count=k))
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            sentinel_finding(s, col, f)
        if _id_like(s, col, n, n_unique):
            f.append(Finding("id_like", f"{col!r} looks like an identifier (a different value in every row); rules "
                             "about it would be meaningless — drop it", col))
        elif is_categorical_column(s) and n_unique > high_cardinality:  # one indicator per value in the engine
            f.append(Finding("high_cardinality", f"{col!r} has {n_unique} distinct values; the explainer builds one "
                             "indicator per value — consider dropping it or grouping rare values", col,
                             count=n_unique))


def _mixed(s: pd.Series, col: str, findings: list) -> None:
    values = s.dropna()
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):  # all text: no per-value type scan
        py_types = set()
    else:
        py_types = {type(v).__name__ for v in values.head(100_000)} - {"str"}
    # parse each distinct text once (a column has far fewer distinct values than rows), then count rows
    codes, distinct = pd.factorize(values.astype(str))  # distinct texts in order of appearance
    is_number = pd.to_numeric(pd.Series(distinct, dtype=object).str.strip(), errors="coerce").notna().to_numpy()
    rows = np.bincount(codes, minlength=len(distinct))
    n_num, n_text = int(rows[is_number].sum()), int(rows[~is_number].sum())
    if n_num and n_text:
        examples = [str(v) for v in np.asarray(distinct, dtype=object)[~is_number][:3]]
        findings.append(Finding("mixed_types", f"{col!r} mixes numbers ({n_num} rows) and text ({n_text} rows, e.g. "
                                f"{examples}); it is treated as categorical — fix the text values (missing-value "
                                "markers?) if it is numeric", col, count=n_text))
    elif py_types and (py_types - {"int", "float", "bool"} or len(py_types) > 1):
        findings.append(Finding("mixed_types", f"{col!r} mixes value types {sorted(py_types | {'str'})}", col))


def _id_like(s: pd.Series, col: str, n: int, n_unique: int) -> bool:
    if n < 20 or n_unique != n:
        return bool(_ID_NAME.search(str(col))) and n_unique >= 0.95 * n and n >= 20
    if pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s):
        v = np.sort(s.to_numpy(dtype=np.int64))
        return bool(np.all(np.diff(v) == 1)) or bool(_ID_NAME.search(str(col)))
    if is_text(s):
        return True
    return bool(_ID_NAME.search(str(col)))


def label_column(columns, names=LABEL_NAMES) -> str | None:
    """The column named like a label (``names``, case-insensitive, first name in that list wins), or None."""
    lowered = {str(c).lower(): c for c in reversed(list(columns))}
    return next((lowered[n] for n in names if n in lowered), None)


def non_feature_columns(frame: pd.DataFrame) -> dict:
    """Columns of ``frame`` that look like something other than a feature, with why: identifier-like ones (the
    ``id_like`` finding of :func:`tcrex.intake.read_table`) and one named like nothing but a label
    (:data:`GENERIC_LABEL_NAMES`).
    The CLI names them when they would become features (rules about an id or the label itself are meaningless)."""
    out = {}
    n = len(frame)
    for col in frame.columns:
        s = frame[col]
        if s.isna().all():
            continue
        if _id_like(s, col, n, int(s.nunique(dropna=False))):
            out[col] = "looks like an identifier (a different value in every row)"
    label = label_column(frame.columns, GENERIC_LABEL_NAMES)
    if label is not None and label not in out:
        out[label] = "is named like a label (the true outcome)"
    return out


def target_findings(frame: pd.DataFrame, target: str) -> list[Finding]:
    """Problems with the chosen target column (for training in the app or a predictions column)."""
    if target not in frame.columns:
        raise DataError(f"target column {target!r} is not in the table (columns: {list(frame.columns)[:20]})")
    s = frame[target]
    out = []
    n_missing = int(s.isna().sum())
    if n_missing:
        out.append(Finding("missing", f"target {target!r}: {n_missing} missing value(s)", target, count=n_missing))
    n_unique = int(s.nunique(dropna=True))
    if n_unique <= 1:
        value = format_value(s.dropna().iloc[0]) if n_unique else "every value is missing"
        out.append(Finding("one_class", f"target {target!r} has a single value ({value}) in every row: there is no "
                           "other outcome to explain a change towards", target))
    return out
