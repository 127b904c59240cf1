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


def special_codes_note(codes, labels=None) -> str:
    """What happens to a column's special codes, in one wording (the intake's finding says it): they are kept as
    codes, and advice never moves a value into or out of one (``TCREx(special_codes="auto")``; a transition
    constraint can allow a move). ``labels``: the column's codebook ``{code: label}``, if any, named with the codes."""
    labels = labels or {}

    def named(code):
        label = labels.get(code, labels.get(float(code), labels.get(str(code))))
        shown = str(code).replace("-", "−")
        return f"{shown} ({label})" if label not in (None, "") else shown

    return (f"they are kept as special codes ({', '.join(named(c) for c in codes)}), not numbers: advice never "
            "moves a value into or out of them, unless a transition constraint allows it")


def sentinel_finding(s: pd.Series, col: str, findings: list, labels=None) -> None:
    """Add the "sentinel" finding of column ``col`` (``labels``: its codebook ``{code: label}``, optional)."""
    codes, rows, kind = sentinel_codes(s)
    if not codes:
        _candidate_finding(s, col, findings)
        return
    shown = ", ".join(str(c).replace("-", "−") for c in codes)
    where = ("negative code(s) in an otherwise non-negative column" if kind == "negative"
             else "far above every other value")
    findings.append(Finding(
        "sentinel", f"{col!r}: {rows:,} row(s) hold {shown} — {where}, typical markers for \"unknown\" or \"not "
        f"applicable\" (sentinel codes). Nothing was changed: {special_codes_note(codes, labels)}. To use them as "
        "missing values instead, treat them as missing (then drop or fill in those rows)", col, count=rows))


def _candidate_finding(s: pd.Series, col: str, findings: list) -> None:
    """The "special_codes" finding of a column whose codes the engine does not detect on its own (a small-integer
    status column: -2/-1/0 beside 1…8; 97/98/99 beside hours up to 60): named with its candidate codes, to declare
    in the data dictionary (:func:`tcrex.dictionary.candidate_codes`); kept as numbers until they are."""
    from tcrex.dictionary import candidate_codes  # noqa: PLC0415 - on first use

    codes, why = candidate_codes(s)
    if not codes:
        return
    shown = ", ".join(str(c).replace("-", "−") for c in codes)
    rows = int(s.isin(codes).sum())
    findings.append(Finding(
        "special_codes", f"{col!r}: {why}. They may be codes rather than numbers; as numbers a rule may span them "
        f"and advice may move a value into one. Declare {shown} as special codes of {col!r} in the data dictionary "
        "(TCREx(special_codes=...) or dictionary=...) to keep them apart", col, count=rows))
