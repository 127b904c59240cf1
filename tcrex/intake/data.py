"""Data intake: read an uploaded CSV, Excel (``.xlsx``) or Parquet table and say what is wrong or risky about it.

:func:`read_table` refuses what cannot be used (not a table, too large, too many columns, duplicate column names,
no rows, a header and rows split by different delimiters) with a :class:`tcrex.errors.DataError`, and returns everything
else as a :class:`TableReport`: the DataFrame plus findings (missing values per column, constant columns,
identifier-like columns, high-cardinality categories, mixed-type columns, a single column, a truncated last line).
Tables keep their data or say why: every guess (encoding, delimiter, decimal comma, thousands separator) and
every value not read as written (bytes that are not UTF-8, codes with leading zeros and integers beyond 2**53
kept as text) is a finding; the guesses can be overridden (``delimiter=``, ``decimal=``, ``thousands=``,
``encoding=``). Missing values are handled only by :func:`handle_missing` with the strategy the user picked,
and its message says what it did. See docs/security.md, "Tables".

This module is the reader's face and its top level (which reader, the CSV steps in order, the last line of
defence); each concern has its own module: ``_encodings`` (decoding the text), ``_dialects`` (delimiter, header,
parsing), ``_numbers`` (decimal commas, thousands separators, values that must stay exact), ``_parquet``,
``_excel`` (a workbook's first sheet, read then as CSV),
``_sentinels`` (special codes), ``_findings`` (what is risky about the table) and ``_report`` (what is returned).
"""
from __future__ import annotations

import codecs
import csv
import io
from pathlib import PurePath

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError, TCRExError
from ._base import short_error
from ._dialects import SEP_LINE, choose_delimiter, delimiter_name, parse_csv, read_header
from ._encodings import ENCODINGS, decode_text, looks_binary
from ._excel import EXCEL_EXTENSIONS, MAX_EXCEL_CELLS, excel_to_csv, is_excel
from ._findings import HIGH_CARDINALITY, LABEL_NAMES, check_frame, label_column, non_feature_columns, target_findings
from ._numbers import DECIMALS, THOUSANDS, keep_exact_values, read_numbers
from ._parquet import PARQUET_UNPACK_FACTOR, read_parquet
from ._report import MB, Finding, TableReport, size_text
from ._sentinels import sentinels_to_missing, special_codes_note

__all__ = ["read_table", "TableReport", "Finding", "handle_missing", "target_findings",
           "sentinels_to_missing", "special_codes_note", "MAX_TABLE_BYTES", "MAX_COLUMNS", "HIGH_CARDINALITY", "PARQUET_UNPACK_FACTOR",
           "ENCODINGS", "DECIMALS", "THOUSANDS", "LABEL_NAMES", "label_column", "non_feature_columns",
           "EXCEL_EXTENSIONS", "MAX_EXCEL_CELLS"]

MAX_TABLE_BYTES = 200 * MB
MAX_COLUMNS = 2000


def read_table(data: bytes, filename: str, *, delimiter: str | None = None, decimal: str | None = None,
               thousands: str | None = None, encoding: str | None = None, max_columns: int = MAX_COLUMNS,
               max_bytes: int = MAX_TABLE_BYTES, high_cardinality: int = HIGH_CARDINALITY) -> TableReport:
    """Read CSV, Excel (``.xlsx``/``.xlsm``: the first sheet, values only, then checked as a CSV) or Parquet
    bytes; see the module docstring.

    ``delimiter``, ``decimal``, ``thousands`` (``""``: none) and ``encoding`` override what is detected in a CSV
    (``None``: detect). Every problem is a :class:`tcrex.errors.DataError` (or a ``ParameterError`` for a bad override);
    any other exception from the parsing libraries is turned into a ``DataError`` too (defence in depth: the causes
    known are handled where they arise, with their own messages)."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DataError(f"read_table needs the file's bytes, got {type(data).__name__}")
    _check_overrides(delimiter, decimal, thousands, encoding)
    try:
        return _read_table(data, filename, delimiter, decimal, thousands, encoding, max_columns, max_bytes,
                           high_cardinality)
    except TCRExError:
        raise
    except MemoryError:
        raise DataError(f"{filename!r} needs more memory to read than this server allows; upload a smaller "
                        "table") from None
    except RecursionError:
        raise DataError(f"{filename!r} is nested too deeply to be read as a table") from None
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a library error is never shown raw
        raise DataError(f"{filename!r} could not be read: an unexpected {type(exc).__name__} in the table reader "
                        f"({short_error(exc, 200)}); check that it is a CSV, Excel or Parquet table (and please report "
                        "the file: this case should have its own message)") from None


def _check_overrides(delimiter, decimal, thousands, encoding) -> None:
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n"
                                  or delimiter.isalnum()):
        raise ParameterError(f"delimiter must be one character that is not a letter, digit, quote or line break, "
                             f"got {delimiter!r}")
    if decimal is not None and decimal not in DECIMALS:
        raise ParameterError(f"decimal must be one of {list(DECIMALS)}, got {decimal!r}")
    if thousands is not None and thousands not in THOUSANDS:
        raise ParameterError(f"thousands must be one of {list(THOUSANDS)}, got {thousands!r}")
    if decimal is not None and thousands and decimal == thousands:
        raise ParameterError(f"the decimal mark and the thousands separator cannot both be {decimal!r}")
    if delimiter is not None and delimiter in (decimal, thousands):
        raise ParameterError(f"the delimiter {delimiter!r} cannot also be the decimal mark or thousands separator")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise ParameterError(f"unknown encoding {encoding!r}; use one of {list(ENCODINGS)}") from None


def _read_table(data, filename, delimiter, decimal, thousands, encoding, max_columns, max_bytes,
                high_cardinality) -> TableReport:
    if not data:
        raise DataError(f"{filename!r} is empty")
    if len(data) > max_bytes:
        raise DataError(f"{filename!r} is {size_text(len(data))}; the limit is {size_text(max_bytes)}")
    ext = PurePath(filename or "").suffix.lower()
    if data[:4] == b"PAR1" or ext in (".parquet", ".pq"):
        report = read_parquet(data, filename, max_columns, max_bytes)
    elif is_excel(filename):
        text, note = excel_to_csv(data, filename)
        report = _read_csv(text, filename, max_columns, delimiter, decimal, thousands, encoding)
        report.format = "xlsx"
        if note:
            report.findings.insert(0, Finding("sheet", note, severity="info"))
    elif ext in (".xls", ".ods") or data[:4] == b"PK\x03\x04":
        raise DataError(f"{filename!r} is a spreadsheet or archive, not a CSV; save it as CSV (UTF-8) or Parquet")
    else:
        report = _read_csv(data, filename, max_columns, delimiter, decimal, thousands, encoding)
    check_frame(report, high_cardinality)
    return report


def _read_csv(data: bytes, filename: str, max_columns: int, delimiter=None, decimal=None, thousands=None,
              encoding=None) -> TableReport:
    chosen_encoding = encoding is not None
    text, encoding, findings = decode_text(data, encoding)
    if looks_binary(text):
        raise DataError(f"{filename!r} does not look like a CSV file (binary content); upload a CSV or Parquet file")
    if not text.strip():
        raise DataError(f"{filename!r} holds no data")
    sep_line = SEP_LINE.match(text)
    if sep_line:  # Excel's "sep=;" first line names the delimiter
        text = text[sep_line.end():]
        named = sep_line.group(1)
        used = delimiter or named
        findings.append(Finding("sep_line", f"the first line 'sep={named}' (written by Excel) names the delimiter "
                                f"({delimiter_name(named)}); " + (
                                    "it was used and skipped" if used == named else
                                    f"it was skipped, and the {delimiter_name(used)} you chose was used"),
                                severity="info"))
        delimiter = used
    guessed = delimiter is None  # neither chosen nor named by a "sep=" line: detected
    delimiter = choose_delimiter(text, delimiter, findings)
    header = read_header(text, delimiter)
    if len(header) > max_columns:
        raise DataError(f"the table has {len(header)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    names = [" ".join(h.split()) or f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        shown = [d if d else "(empty name)" for d in dup[:10]]
        raise DataError(f"duplicate column name(s) {shown}; every column needs a unique name — rename them")
    if [n for n in names if not n.startswith("Unnamed: ")] != [h for h in header if h.strip()]:
        how = "line breaks inside column names were replaced by spaces" if any(
            "\n" in h or "\r" in h for h in header) else "spaces around column names were removed"
        findings.append(Finding("renamed", how, severity="info"))
    frame = parse_csv(text, delimiter, names, decimal, thousands)
    if len(frame) == 0:
        raise DataError(f"{filename!r} has a header but no data rows")
    report = TableReport(frame=frame, format="csv", encoding=encoding, delimiter=delimiter, findings=findings)
    read_numbers(report, text, names, decimal, thousands)
    if guessed and delimiter != ",":
        _name_the_reading(report, len(header), chosen_encoding, decimal is None)
    keep_exact_values(report, text, names)
    stripped = text.rstrip("\r\n")
    last = stripped[max(stripped.rfind("\n"), stripped.rfind("\r")) + 1:]
    if not text.endswith(("\n", "\r")):
        try:
            fields = next(csv.reader(io.StringIO(last, newline=""), delimiter=delimiter), [])
        except csv.Error:  # the last line starts inside a quoted field: its count says nothing
            fields = header
        if len(fields) < len(header):
            report.findings.append(Finding("truncated", "the last line has fewer fields than the header: the file "
                                           "looks truncated (its last row is incomplete)", count=1))
    return report


#: What every finding about a guessed reading ends with.
_CHOOSE = "; if that is wrong, choose it under 'How to read this file'"


def _name_the_reading(report: TableReport, n_columns: int, encoding_chosen: bool, decimal_guessed: bool) -> None:
    """A file that is not a plain comma-separated one was read on guesses: a finding names each of them (the
    delimiter, the encoding and, when numbers with a fraction were read, the decimal mark) unless another finding
    already said it, and where to choose otherwise."""
    kinds = {f.kind for f in report.findings}
    if "delimiter" not in kinds:
        report.findings.append(Finding("delimiter", f"columns are separated by {delimiter_name(report.delimiter)}s "
                                       f"(detected: {n_columns} columns){_CHOOSE}", severity="info"))
    if "encoding" not in kinds and not encoding_chosen:
        name = "UTF-8 with a byte-order mark" if report.encoding == "utf-8-sig" else \
            ENCODINGS.get(report.encoding, report.encoding)
        report.findings.append(Finding("encoding", f"the text was read as {name} (it decodes without errors)"
                                       f"{_CHOOSE}", severity="info"))
    fractions = [c for c in report.frame.columns if pd.api.types.is_float_dtype(report.frame[c])
                 and (report.frame[c].dropna() % 1 != 0).any()]
    if decimal_guessed and fractions and "separators" not in kinds:
        shown = ", ".join(map(repr, fractions[:3])) + (" …" if len(fractions) > 3 else "")
        report.findings.append(Finding("separators", f"numbers read with the decimal mark {report.decimal!r} (in "
                                       f"{shown}){_CHOOSE}", severity="info"))


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
