"""Special codes: values of a numeric column that stand for "unknown" or "not applicable" (credit-bureau −7/−8/−9,
99/999/…) rather than measurements. Found and said, never changed unless the user asks."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._report import Finding

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
