"""Special codes: values of a numeric column that stand for "unknown" or "not applicable" (credit-bureau −7/−8/−9,
99/999/…) rather than measurements. Found and said, never changed unless the user asks."""
from __future__ import annotations

import pandas as pd

from tcrex import sentinel_codes

from ._report import Finding


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


def sentinel_finding(s: pd.Series, col: str, findings: list) -> None:
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
