"""CSV that is safe to open in a spreadsheet: formula-leading cells are neutralised (CSV/formula injection).

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a formula by Excel,
LibreOffice and Google Sheets (``=HYPERLINK(...)``, ``=cmd|'/C calc'!A0``, ``@SUM(...)``). Following the OWASP
guidance, such text cells are prefixed with a single quote, which spreadsheets show as text and never evaluate.
Every text-like cell is checked — feature values, labels, model outputs, rule texts — and so are the column
names. Numbers stay numbers: a float or integer column cannot hold a formula, so ``-3.5`` is written as it is.

The one owner of this rule: the dashboard's exports and the command line write CSV through :func:`to_csv`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: First characters that make a spreadsheet treat a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """``value`` with a leading ``'`` when it is text that a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names cannot run as spreadsheet formulas."""
    out = frame.copy()
    out.columns = [neutralise(str(c)) for c in out.columns]
    for i, col in enumerate(out.columns):
        s = out.iloc[:, i]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_object_dtype(s):
            continue  # numbers (and booleans) cannot hold a formula
        values = s.to_numpy(dtype=object)
        risky = np.fromiter((isinstance(v, str) and v.startswith(FORMULA_STARTS) for v in values), dtype=bool,
                            count=len(values))
        if risky.any():
            values = values.copy()
            values[risky] = ["'" + v for v in values[risky]]
            out.isetitem(i, pd.Series(values, index=s.index, name=col))
    return out


def to_csv(frame: pd.DataFrame, path=None, **kwargs):
    """``frame.to_csv`` (without the index unless asked) after :func:`neutralise_frame`.

    Lines end in CRLF (RFC 4180), so a field holding a bare carriage return is quoted: with pandas' default
    ``\n`` it is written unquoted, and a spreadsheet splits the row there and reads the rest as a new cell
    that may start a formula."""
    kwargs.setdefault("index", False)
    kwargs.setdefault("lineterminator", "\r\n")
    return neutralise_frame(frame).to_csv(path, **kwargs)
