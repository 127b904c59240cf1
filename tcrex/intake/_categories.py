"""Categorical inputs re-coded to a model file's own category codes, by value (one rule for every tree format).

XGBoost (>= 3.1), LightGBM (``pandas_categorical``) and CatBoost JSON store the categories a model was trained with;
their native predictors take a category as its code in that list. Inputs are coded here by value, so a pandas
``category`` column in another order, a Parquet dictionary of the whole file or a plain text column give the same
predictions, and a value the model never saw is reported by name instead of being silently treated as missing.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ModelError
from ._base import numeric_column


def code_map(names: list) -> dict:
    """value -> code for a model's category list (None entries, names that could not be read, are skipped); a
    number also matches its text (10 matches "10")."""
    m = {}
    for code, v in enumerate(names):
        if v is None:
            continue
        m.setdefault(v, code)
        if not isinstance(v, str):
            m.setdefault(str(v), code)
    return m


def lookup(cmap: dict, value):
    """The code of ``value`` in ``cmap`` or None (a whole float also matches its integer: 2.0 matches 2)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        value = str(value)
    try:
        code = cmap.get(value)
    except TypeError:  # unhashable
        return None
    if code is None and isinstance(value, float) and value.is_integer():
        code = cmap.get(int(value))
    return code


def codes(s: pd.Series, cmap: dict, name: str, known: list, extra: str = "") -> np.ndarray:
    """The model's codes of column ``s`` as float64 (NaN: missing). A value a row holds that ``cmap`` does not know
    is a ModelError naming it and the known values (``extra`` is appended to that message)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        # the column's own codes (-1: missing) and its few categories (a Parquet dictionary, a pandas category):
        # no per-row hashing of values; categories no row holds are not checked
        local, uniques = s.cat.codes.to_numpy(), s.cat.categories
        held = np.bincount(local[local >= 0], minlength=len(uniques)) > 0
    else:
        local, uniques = pd.factorize(s, use_na_sentinel=True)
        held = np.ones(len(uniques), dtype=bool)
    mapped = np.empty(len(uniques) + 1, dtype=np.float64)
    mapped[-1] = np.nan
    unknown = []
    for u, value in enumerate(np.asarray(uniques, dtype=object)):
        code = lookup(cmap, value)
        if code is None and held[u]:
            unknown.append(value)
        mapped[u] = np.nan if code is None else code
    if unknown:
        raise ModelError(f"column {name!r} holds value(s) {sorted(map(str, unknown))[:5]} that the model was not "
                         f"trained with (known: {known[:20]}{' …' if len(known) > 20 else ''}).{extra}")
    return mapped[local]


def integer_codes(s: pd.Series, name: str) -> np.ndarray:
    """Codes of a categorical input whose model stores no category names: a pandas ``category`` column's own codes,
    else the values themselves, which must be whole numbers >= 0."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        out = s.cat.codes.to_numpy().astype(np.float64)
        out[out < 0] = np.nan
        return out
    values = numeric_column(s, name)
    ok = np.isnan(values) | ((values >= 0) & (values == np.round(values)))
    if not ok.all():
        raise ModelError(f"categorical column {name!r}: the model stores no category names, so values must "
                         f"be integer codes >= 0; got {values[~ok][0]!r}")
    return values
