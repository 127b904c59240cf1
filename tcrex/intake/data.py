"""Data intake: read an uploaded CSV or Parquet table and say what is wrong or risky about it.

:func:`read_table` refuses what cannot be used (not a table, too large, too many columns, duplicate column names,
no rows) with a :class:`tcrex.DataError`, and returns everything else as a :class:`TableReport`: the DataFrame
plus findings (missing values per column, constant columns, identifier-like columns, high-cardinality categories,
mixed-type columns, a single column, a truncated last line). Nothing is fixed silently: missing values are handled
only by :func:`handle_missing` with the strategy the user picked, and its message says what it did.
"""
from __future__ import annotations

import csv
import io
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError
from .. import check_rows_for_rho  # noqa: F401 - re-exported: the engine owns this check
from .. import is_categorical_column
from ..text import format_value

__all__ = ["read_table", "TableReport", "Finding", "handle_missing", "check_rows_for_rho", "target_findings",
           "MAX_TABLE_BYTES", "MAX_COLUMNS"]

MB = 1024 * 1024
MAX_TABLE_BYTES = 200 * MB
MAX_COLUMNS = 2000
PARQUET_UNPACK_FACTOR = 10  # a Parquet file may decompress to at most this many times max_bytes
HIGH_CARDINALITY = 50  # categorical columns with more distinct values than this are flagged
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_ID_NAME = re.compile(r"(^|[_\s-])(id|uuid|guid|key|index)$|^unnamed: ?\d+$", re.IGNORECASE)


@dataclass
class Finding:
    kind: str  # missing, constant, id_like, high_cardinality, mixed_types, single_column, truncated, ...
    message: str
    column: str | None = None
    severity: str = "warning"  # "warning" (the user should act) or "info"
    count: int | None = None

    def __str__(self) -> str:
        return self.message


@dataclass
class TableReport:
    frame: pd.DataFrame
    format: str  # "csv" or "parquet"
    encoding: str | None = None
    delimiter: str | None = None
    decimal: str | None = None
    findings: list = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def n_columns(self) -> int:
        return self.frame.shape[1]

    @property
    def missing(self) -> dict:
        """Column -> number of missing values (only columns that have some)."""
        return {f.column: f.count for f in self.findings if f.kind == "missing"}

    def columns_of(self, kind: str) -> list:
        return [f.column for f in self.findings if f.kind == kind]

    @property
    def constant_columns(self) -> list:
        return self.columns_of("constant")

    @property
    def id_like_columns(self) -> list:
        return self.columns_of("id_like")

    @property
    def high_cardinality_columns(self) -> list:
        return self.columns_of("high_cardinality")

    @property
    def mixed_type_columns(self) -> list:
        return self.columns_of("mixed_types")

    @property
    def single_column(self) -> bool:
        return any(f.kind == "single_column" for f in self.findings)

    @property
    def messages(self) -> list[str]:
        return [f.message for f in self.findings]


# ---------------------------------------------------------------------------------------------- reading
def read_table(data: bytes, filename: str, *, max_columns: int = MAX_COLUMNS, max_bytes: int = MAX_TABLE_BYTES,
               high_cardinality: int = HIGH_CARDINALITY) -> TableReport:
    """Read CSV (delimiter and encoding detected) or Parquet bytes; see the module docstring."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DataError(f"read_table needs the file's bytes, got {type(data).__name__}")
    if not data:
        raise DataError(f"{filename!r} is empty")
    if len(data) > max_bytes:
        raise DataError(f"{filename!r} is {len(data) / MB:.1f} MB; the limit is {max_bytes / MB:.0f} MB")
    ext = PurePath(filename or "").suffix.lower()
    if data[:4] == b"PAR1" or ext in (".parquet", ".pq"):
        report = _read_parquet(data, filename, max_columns, max_bytes)
    elif ext in (".xlsx", ".xls", ".xlsm", ".ods") or data[:4] == b"PK\x03\x04":
        raise DataError(f"{filename!r} is a spreadsheet or archive, not a CSV; save it as CSV (UTF-8) or Parquet")
    else:
        report = _read_csv(data, filename, max_columns)
    _check_frame(report, high_cardinality)
    return report


def _decode(data: bytes) -> tuple[str, str]:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="strict"), "utf-8-sig"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise DataError("the file starts with a UTF-16 byte-order mark but is not valid UTF-16") from None
    if b"\x00" in data[:65536]:
        raise DataError("the file is not text (it contains NUL bytes): upload a CSV or a Parquet file")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if not any(0x80 <= b <= 0x9F for b in data):
        return data.decode("latin-1"), "latin-1"  # latin-1 and cp1252 agree on these bytes
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _looks_binary(text: str) -> bool:
    sample = text[:20000]
    if not sample:
        return False
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\r\n\t") or 0x7F <= ord(ch) <= 0x9F)
    return controls / len(sample) > 0.05


def _sample_rows(text: str, delimiter: str, n: int = 50) -> list[list[str]]:
    rows = []
    try:
        for row in csv.reader(io.StringIO(text[:200_000]), delimiter=delimiter):
            if row:
                rows.append(row)
            if len(rows) >= n:
                break
    except csv.Error:
        return []
    if len(rows) > 1 and len(text) > 200_000:
        rows = rows[:-1]  # the sample may cut the last row
    return rows


def _sniff_delimiter(text: str) -> str:
    best, best_score = ",", (0.0, 0)
    for d in _DELIMITERS:
        rows = _sample_rows(text, d)
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        consistency = sum(len(r) == width for r in rows) / len(rows)
        score = (round(consistency, 2), width)
        if score > best_score:
            best, best_score = d, score
    return best


def _read_csv(data: bytes, filename: str, max_columns: int) -> TableReport:
    text, encoding = _decode(data)
    if _looks_binary(text):
        raise DataError(f"{filename!r} does not look like a CSV file (binary content); upload a CSV or Parquet file")
    if not text.strip():
        raise DataError(f"{filename!r} holds no data")
    delimiter = _sniff_delimiter(text)
    try:
        header = next(csv.reader(io.StringIO(text[:1_000_000].split("\n", 1)[0] if "\n" in text[:1_000_000]
                                             else text[:1_000_000]), delimiter=delimiter))
    except (csv.Error, StopIteration):
        header = []
    if len(header) > max_columns:
        raise DataError(f"the table has {len(header)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    names = [h.strip() or f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        shown = [d if d else "(empty name)" for d in dup[:10]]
        raise DataError(f"duplicate column name(s) {shown}; every column needs a unique name — rename them")
    findings = []
    if [n for n in names if not n.startswith("Unnamed: ")] != [h for h in header if h.strip()]:
        findings.append(Finding("renamed", "spaces around column names were removed", severity="info"))
    frame, decimal = _parse_csv(text, delimiter, names)
    if len(frame) == 0:
        raise DataError(f"{filename!r} has a header but no data rows")
    report = TableReport(frame=frame, format="csv", encoding=encoding, delimiter=delimiter, decimal=decimal,
                         findings=findings)
    last = text.rstrip("\r\n").rsplit("\n", 1)[-1]
    if not text.endswith(("\n", "\r")) and len(next(csv.reader([last], delimiter=delimiter), [])) < len(header):
        report.findings.append(Finding("truncated", "the last line has fewer fields than the header: the file "
                                       "looks truncated (its last row is incomplete)", count=1))
    return report


def _parse_csv(text: str, delimiter: str, names: list[str]) -> tuple[pd.DataFrame, str]:
    def parse(decimal: str) -> pd.DataFrame:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pd.errors.ParserWarning)
                # index_col=False: never turn surplus leading fields into an index (pandas' default does, silently)
                frame = pd.read_csv(io.StringIO(text), sep=delimiter, decimal=decimal, header=0,
                                    names=names or None, index_col=False, low_memory=False, on_bad_lines="error",
                                    engine="c")
        except pd.errors.EmptyDataError:
            raise DataError("the file holds no table") from None
        except (pd.errors.ParserError, ValueError, csv.Error, UnicodeError) as exc:
            msg = " ".join(str(exc).split())[:300]
            raise DataError(f"the CSV cannot be read ({msg}); check the delimiter and quoting") from None
        if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
            _check_surplus_fields(text, delimiter, len(names))
        return frame

    frame = parse(".")
    decimal = "."
    if delimiter == ";":  # European CSVs: 1,5 for one and a half
        n_obj = sum(pd.api.types.is_object_dtype(frame[c]) or pd.api.types.is_string_dtype(frame[c])
                    for c in frame.columns)
        if n_obj:
            alt = parse(",")
            n_alt = sum(pd.api.types.is_object_dtype(alt[c]) or pd.api.types.is_string_dtype(alt[c])
                        for c in alt.columns)
            if n_alt < n_obj:
                frame, decimal = alt, ","
    return frame, decimal


def _check_surplus_fields(text: str, delimiter: str, width: int) -> None:
    """Rows longer than the header are an error unless the surplus fields are empty (trailing delimiters)."""
    for line_no, row in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), start=1):
        if len(row) > width and any(f.strip() for f in row[width:]):
            raise DataError(f"the CSV cannot be read: line {line_no} has {len(row)} fields but the header has "
                            f"{width}; check the delimiter and quoting")


def _read_parquet(data: bytes, filename: str, max_columns: int, max_bytes: int) -> TableReport:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise DataError("pyarrow is not installed; Parquet files cannot be read") from None
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        schema = pf.schema_arrow
    except Exception as exc:  # noqa: BLE001 - ArrowInvalid, OSError, ... on damaged files
        raise DataError(f"{filename!r} is not a valid Parquet file (truncated or damaged?): "
                        f"{' '.join(str(exc).split())[:200]}") from None
    names = list(schema.names)
    if len(names) > max_columns:
        raise DataError(f"the table has {len(names)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"duplicate column name(s) {dup[:10]}; every column needs a unique name — rename them")
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        raise DataError(f"column(s) {nested[:10]} hold nested values (lists/structs/maps); flatten them first")
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > PARQUET_UNPACK_FACTOR * max_bytes:
        raise DataError(f"{filename!r} unpacks to {unpacked / MB:.0f} MB; the limit is "
                        f"{PARQUET_UNPACK_FACTOR * max_bytes / MB:.0f} MB")
    try:
        frame = pf.read().to_pandas()
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{filename!r} could not be read as Parquet: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(frame.index, pd.RangeIndex) and frame.index.name is not None:
        frame = frame.reset_index()  # an index saved by pandas comes back as a column
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{filename!r} has no rows")
    return TableReport(frame=frame, format="parquet")


# ---------------------------------------------------------------------------------------------- findings
def _is_text(s: pd.Series) -> bool:
    """Holds text values (for the mixed-type and decimal-comma checks). Not the column-type rule: a bool or
    category column is categorical (``is_categorical_column``) without holding text."""
    return pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)


def _check_frame(report: TableReport, high_cardinality: int) -> None:
    df, f = report.frame, report.findings
    n = len(df)
    if df.shape[1] == 1:
        how = (f" with the {_DELIMITER_NAMES.get(report.delimiter, repr(report.delimiter))} delimiter"
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
        if _is_text(s):
            _mixed(s, col, f)
        if pd.api.types.is_float_dtype(s) and np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).any():
            k = int(np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).sum())
            f.append(Finding("infinite", f"{col!r}: {k} infinite value(s); T-CREx needs finite numbers", col, count=k))
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            _sentinels(s, col, f)
        if _id_like(s, col, n, n_unique):
            f.append(Finding("id_like", f"{col!r} looks like an identifier (a different value in every row); rules "
                             "about it would be meaningless — drop it", col))
        elif is_categorical_column(s) and n_unique > high_cardinality:  # one indicator per value in the engine
            f.append(Finding("high_cardinality", f"{col!r} has {n_unique} distinct values; the explainer builds one "
                             "indicator per value — consider dropping it or grouping rare values", col,
                             count=n_unique))


#: Sentinel detection: at most this many distinct codes, each in at least ``SENTINEL_MIN_ROWS`` rows; the other
#: values must be varied (``SENTINEL_MIN_OTHERS`` distinct values) and hold most rows.
SENTINEL_MAX_CODES = 4
SENTINEL_MIN_ROWS = 2
SENTINEL_MIN_OTHERS = 10


def _whole(v: float) -> bool:
    return bool(np.isfinite(v) and float(v) == int(v))


def sentinel_codes(s: pd.Series) -> tuple[list, int, str]:
    """Values of a numeric column that look like codes for "unknown" / "not applicable" rather than measurements:
    ``(codes, rows holding them, kind)`` with kind ``"negative"`` or ``"large"``, or ``([], 0, "")``.

    * **negative codes** (credit-bureau data's −7/−8/−9): a few distinct whole negative values, each repeating,
      in a column whose other values are all ≥ 0 and varied;
    * **all-nines codes** (99, 999, 9999, …): the column's largest value, repeating, more than twice the largest
      other value.

    The data is never changed; :func:`read_table` reports the finding and the user decides."""
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    v = v[np.isfinite(v)]
    if len(v) < 20:
        return [], 0, ""
    neg = v[v < 0]
    rest = v[v >= 0]
    if len(neg):
        codes, counts = np.unique(neg, return_counts=True)
        if (len(codes) <= SENTINEL_MAX_CODES and all(_whole(c) for c in codes) and counts.min() >= SENTINEL_MIN_ROWS
                and len(np.unique(rest)) >= SENTINEL_MIN_OTHERS and len(neg) < len(rest)):
            return [int(c) for c in codes[::-1]], int(len(neg)), "negative"
        return [], 0, ""
    top = float(v.max())
    if top >= 99 and _whole(top) and set(str(int(top))) == {"9"}:
        k = int((v == top).sum())
        others = v[v != top]
        if k >= SENTINEL_MIN_ROWS and len(np.unique(others)) >= SENTINEL_MIN_OTHERS and len(others) > k \
                and top > 2 * float(others.max()):
            return [int(top)], k, "large"
    return [], 0, ""


def sentinels_to_missing(frame: pd.DataFrame, columns) -> tuple[pd.DataFrame, dict]:
    """A copy of ``frame`` whose sentinel codes (:func:`sentinel_codes`) in ``columns`` are missing values, and
    ``{column: cells changed}``. Only on request (the dashboard's "treat sentinel codes as missing"); the caller
    then handles the missing values (:func:`handle_missing`) and reports both counts."""
    out, counts = frame, {}
    for col in columns:
        if col not in frame.columns or not pd.api.types.is_numeric_dtype(frame[col]) \
                or pd.api.types.is_bool_dtype(frame[col]):
            continue
        codes, rows, _ = sentinel_codes(frame[col])
        if not rows:
            continue
        if out is frame:
            out = frame.copy()
        hit = frame[col].isin(codes)
        out[col] = frame[col].astype("float64").mask(hit)
        counts[col] = int(hit.sum())
    return out, counts


def _sentinels(s: pd.Series, col: str, findings: list) -> None:
    codes, rows, kind = sentinel_codes(s)
    if not codes:
        return
    shown = ", ".join(str(c).replace("-", "−") for c in codes)
    where = ("negative code(s) in an otherwise non-negative column" if kind == "negative"
             else "far above every other value")
    findings.append(Finding(
        "sentinel", f"{col!r}: {rows:,} row(s) hold {shown} — {where}, typical markers for \"unknown\" or \"not "
        "applicable\" (sentinel codes). The rules would treat them as real numbers. Nothing was changed: replace "
        "them with empty cells (then drop or fill in those rows) or keep them knowingly", col, count=rows))


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
    if _is_text(s):
        return True
    return bool(_ID_NAME.search(str(col)))


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


# ---------------------------------------------------------------------------------------------- choices
def handle_missing(df: pd.DataFrame, strategy: str = "error", columns=None) -> tuple[pd.DataFrame, str]:
    """Deal with missing values as the user chose, and say what was done (with counts).

    ``"error"`` raises a DataError listing the columns and counts; ``"drop"`` drops the rows with a missing value;
    ``"impute"`` fills numbers with the column median and other values with the most frequent one. ``columns``
    restricts the handling to those columns (default: all).
    """
    if strategy not in ("drop", "impute", "error"):
        raise ParameterError(f"strategy must be 'drop', 'impute' or 'error', got {strategy!r}")
    cols = list(df.columns) if columns is None else list(columns)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise DataError(f"unknown column(s) {unknown}")
    counts = {c: int(df[c].isna().sum()) for c in cols}
    counts = {c: k for c, k in counts.items() if k}
    if not counts:
        return df, "no missing values"
    listing = ", ".join(f"{c!r}: {k}" for c, k in counts.items())
    if strategy == "error":
        raise DataError(f"missing values in {len(counts)} column(s) ({listing}); choose to drop those rows or to "
                        "impute them")
    if strategy == "drop":
        keep = ~df[list(counts)].isna().any(axis=1)
        n_drop = int((~keep).sum())
        if n_drop == len(df):
            raise DataError(f"dropping rows with missing values would drop all {len(df)} rows ({listing}); impute "
                            "instead or drop the mostly-empty columns")
        return df.loc[keep].copy(), f"dropped {n_drop} of {len(df)} rows with missing values ({listing})"
    out = df.copy()
    filled = []
    for c, k in counts.items():
        s = out[c]
        if s.isna().all():
            raise DataError(f"column {c!r} is entirely missing; it cannot be imputed — drop it")
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            value = s.median()
            if pd.api.types.is_integer_dtype(s.dropna()) or (s.dropna() == s.dropna().round()).all():
                value = float(np.round(value))
            how = "median"
        else:
            value = s.mode(dropna=True).iloc[0]
            how = "most frequent value"
        out[c] = s.fillna(value)
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        filled.append(f"{c!r}: {k} filled with the {how} {value!r}")
    return out, f"imputed {sum(counts.values())} missing value(s) — " + "; ".join(filled)
