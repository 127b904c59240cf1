"""Plain JSON values of the audit's and the comparison's exports: numbers as Python numbers, NaN and missing as
null."""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd


def json_value(v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        return float(v) if math.isfinite(float(v)) else None
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def json_records(frame: pd.DataFrame) -> list[dict]:
    return [{str(k): json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
