"""Check a loaded model against a data table before explaining it.

:func:`check_compatibility` never raises for a mismatch: it returns a :class:`CompatibilityReport` whose
``problems`` list every blocking mismatch (each names the column and what to change) and whose ``warnings`` list
what the user should know but can proceed with. ``report.ok`` is True when there are no problems;
``report.raise_if_problems()`` raises one :class:`tcrex.errors.ModelError` listing all of them (for code paths that want
an exception). The checks: feature names and count, duplicate columns, column types against what the model
expects, categorical levels the model has not seen, and a trial prediction on a few rows whose outputs must be
class labels (classifiers) or finite numbers (regressors).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import is_categorical_column
from ..errors import ModelError, TCRExError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC
from ._base import LoadedModel, ModelFaultError, as_frame, short_error

__all__ = ["check_compatibility", "CompatibilityReport"]


@dataclass
class CompatibilityReport:
    problems: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    trial_outputs: list = field(default_factory=list)
    #: columns to pass to ``TCREx(categorical_features=...)``: the model treats them as categorical but their
    #: dtype would make the engine treat them as numbers
    categorical_features: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def message(self) -> str:
        if self.ok:
            return "the model and the data are compatible"
        return "the model does not fit the data:\n" + "\n".join(f"- {p}" for p in self.problems)

    def raise_if_problems(self) -> None:
        if self.problems:
            raise ModelError(self.message)


def _is_numeric(s: pd.Series) -> bool:
    """Of a number dtype (not the column-type rule, ``is_categorical_column``: a datetime column is neither)."""
    return (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            and not isinstance(s.dtype, pd.CategoricalDtype))


def _values_outside(s: pd.Series, levels: list) -> tuple[list, int]:
    known = set()
    for v in levels:
        known.add(v)
        known.add(str(v))
        if isinstance(v, float) and v.is_integer():
            known.add(int(v))
    values = s.dropna()
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    uniq = pd.unique(values)
    unseen = []
    for u in uniq:
        u2 = u.item() if isinstance(u, np.generic) else u
        try:
            hit = u2 in known or (isinstance(u2, float) and u2.is_integer() and int(u2) in known)
        except TypeError:
            hit = False
        if not hit:
            unseen.append(u2)
    n_rows = int(values.isin(unseen).sum()) if unseen else 0
    return unseen, n_rows


#: How a one-hot column's name joins the column and the category (``Purpose_A43``, ``Purpose=A43``, …).
_ONE_HOT_JOINS = ("_", "=", ".", ":", "__")


def _first(names, k: int = 4) -> str:
    """The first ``k`` names and how many more: "a, b, c, d and 41 more"."""
    names = [str(n) for n in names]
    shown = ", ".join(names[:k])
    return shown + (f" and {len(names) - k} more" if len(names) > k else "")


def _encoded_as(base: str, names: list) -> list:
    """The names that read as one-hot columns of ``base`` (``base_A43``, ``base=A43``, …)."""
    return [n for n in names if any(n.startswith(base + j) and len(n) > len(base) + len(j) for j in _ONE_HOT_JOINS)]


def _one_hot_mismatch(names: list, cols: list, missing: list, extra: list, X: pd.DataFrame) -> str | None:
    """The problem sentence when the names differ because one side is one-hot encoded and the other is not: what
    the model expects and what the data has (counts, first names), which looks one-hot, and the one change to
    make. None when the mismatch is of another kind."""
    if not missing or not extra:
        return None
    count = f"the model expects {len(names)} features but the data has {len(cols)}"
    lists = f"Model: {_first(names)}; data: {_first(cols)}."
    hot = {c: _encoded_as(c, missing) for c in extra}
    hot = {c: v for c, v in hot.items() if v}
    if hot and sum(map(len, hot.values())) >= max(2, len(missing) // 2):  # the model was fitted on one-hot columns
        example = next(iter(hot.values()))[0]
        base = next(iter(hot))
        kinds = [c for c in hot if is_categorical_column(X[c])]
        what = (f"{len(kinds)} categorical column(s) ({_first(kinds)})" if kinds
                else f"{len(hot)} column(s) ({_first(list(hot))})")
        rest = [n for n in missing if not any(n in v for v in hot.values())]
        left = f" The model also needs {_first(rest)}, which the data does not have." if rest else ""
        return (f"{count}: the model looks trained on one-hot columns. {lists} Names like {example!r} are one 0/1 "
                f"column per category of {base!r}, while the data keeps {what} as one column each. The one "
                f"change: one-hot encode {'that column' if len(hot) == 1 else 'those columns'} the way the model "
                f"was trained (a 0/1 column per category, named like {example!r}) and upload that table.{left}")
    cold = {m: _encoded_as(m, extra) for m in missing}
    cold = {m: v for m, v in cold.items() if v}
    if cold and sum(map(len, cold.values())) >= max(2, len(extra) // 2):  # the data is one-hot, the model is not
        example = next(iter(cold.values()))[0]
        base = next(iter(cold))
        return (f"{count}: the data looks one-hot encoded. {lists} Names like {example!r} are one 0/1 column per "
                f"category, while the model takes {len(cold)} categorical column(s) ({_first(list(cold))}) as one "
                f"column each. The one change: upload the table with one column per categorical feature, holding "
                f"the category itself (e.g. {base!r} = {example[len(base):].lstrip('_=.:')!r}).")
    return None


def check_compatibility(model: LoadedModel, X, *, n_trial: int = 5) -> CompatibilityReport:
    """Compare ``model`` with the table ``X``; see the module docstring. Never raises for a mismatch."""
    rep = CompatibilityReport()
    try:
        X = as_frame(X)
    except TCRExError as exc:
        rep.problems.append(str(exc))
        return rep
    cols = [str(c) for c in X.columns]
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        rep.problems.append(f"the data has duplicate column name(s) {dup}; every column needs a unique name")
    X = X.set_axis(cols, axis=1)
    rep.warnings.extend(model.warnings)
    names = model.feature_names
    if names is not None:
        missing = [n for n in names if n not in cols]
        extra = [c for c in cols if c not in names]
        encoded = _one_hot_mismatch(names, cols, missing, extra, X)
        if encoded:
            rep.problems.append(encoded)
        elif missing:
            rep.problems.append(f"the model expects {len(names)} features but the data has {len(cols)}: it "
                                f"needs column(s) {missing[:20]}{' …' if len(missing) > 20 else ''} "
                                "that the data does not have (check spelling and case)")
        if extra and not encoded:
            rep.problems.append(f"the data has column(s) {extra[:20]}{' …' if len(extra) > 20 else ''} that the "
                                "model does not use; drop them (a target or ID column among the features would "
                                "give rules about it)")
        if not missing and not extra and cols != names:
            rep.warnings.append("the columns are in a different order than the model's; they are matched by name")
    elif model.n_features is not None and len(cols) != model.n_features:
        rep.problems.append(f"the model takes {model.n_features} input(s), matched by position because the file "
                            f"stores no feature names, but the data has {len(cols)} column(s)")
    elif model.n_features is not None:
        rep.warnings.append("the model file stores no feature names: columns are matched by position, so their "
                            "order must be the training order")
    # ----- types and levels, per feature the model says something about
    for name, kind in model.feature_kinds.items():
        if name not in X.columns or name in dup:
            continue
        s = X[name]
        levels = model.categories.get(name)
        if kind == NUMERIC and not _is_numeric(s) and not pd.api.types.is_bool_dtype(s):
            converted = pd.to_numeric(s.astype(object), errors="coerce")
            bad = converted.isna() & s.notna()
            if bad.any():
                rep.problems.append(f"column {name!r} holds text (e.g. {s[bad].iloc[0]!r}, {int(bad.sum())} rows) "
                                    "but the model expects numbers")
            else:
                rep.warnings.append(f"column {name!r} is stored as {s.dtype} but holds numbers; convert it to a "
                                    "numeric type so the explainer treats it as numeric")
        elif kind == CATEGORICAL:
            if levels:
                unseen, n_rows = _values_outside(s, levels)
                if unseen:
                    shown = sorted(map(str, unseen))[:5]
                    rep.problems.append(f"column {name!r} holds value(s) {shown}{' …' if len(unseen) > 5 else ''} "
                                        f"({n_rows} rows) that the model was not trained with; known values: "
                                        f"{levels[:20]}{' …' if len(levels) > 20 else ''}")
            if not is_categorical_column(s):  # typed numeric, read as categorical by this model: say so
                rep.categorical_features.append(name)
    if rep.categorical_features:
        rep.warnings.append(f"column(s) {rep.categorical_features} are numbers in the data but categorical for the "
                            "model; pass them as categorical_features= so the rules treat them as categories")
    # ----- trial prediction
    n = max(1, min(int(n_trial), len(X)))
    if len(X) == 0:
        rep.problems.append("the data has no rows")
        return rep
    if rep.problems:  # the trial would fail for the reasons already listed
        rep.warnings.append("no trial prediction was made: fix the problems above first")
        return rep
    sample = X.head(n)
    try:
        out = np.asarray(model.predict(sample))
    except ModelFaultError:
        raise  # the model crashed, hung or ran out of memory: a fault of the model, not a mismatch with the data
    except TCRExError as exc:
        rep.problems.append(f"a trial prediction on {n} row(s) failed: {exc}")
        return rep
    except Exception as exc:  # noqa: BLE001 - defensive: LoadedModel wraps, a foreign model might not
        rep.problems.append(f"a trial prediction on {n} row(s) failed: {type(exc).__name__}: {short_error(exc)}")
        return rep
    rep.trial_outputs = [v.item() if isinstance(v, np.generic) else v for v in out.tolist()]
    if model.task == CLASSIFICATION:
        if model.classes is not None:
            known = set(model.classes) | {str(c) for c in model.classes}
            odd = [v for v in rep.trial_outputs if v not in known]
            if odd:
                rep.problems.append(f"the model returned {odd[:3]}, which are not among its classes "
                                    f"{model.classes[:20]}")
        if out.dtype.kind == "f" and not np.all(out == np.round(out)):
            rep.problems.append("the model is a classifier but returned fractional numbers (probabilities?); "
                                "T-CREx needs predicted labels")
    else:
        try:
            values = out.astype(np.float64)
        except (TypeError, ValueError):
            rep.problems.append(f"the model is a regressor but returned non-numbers such as {out[:3].tolist()}")
        else:
            if not np.all(np.isfinite(values)):
                rep.problems.append("the model returned missing or infinite outputs on the trial rows")
    return rep
