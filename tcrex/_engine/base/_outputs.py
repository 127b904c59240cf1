"""Model outputs: calling the black box, checking what comes back, and detecting the task."""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
import pandas as pd

from ...errors import ModelError, ParameterError

from ...vocabulary import CLASSIFICATION, REGRESSION, TASKS
#: Whole-number outputs with more distinct values than this are a regression, not classes (one limit for the
#: engine, intake and the dashboard).
MAX_CLASSES = 20
#: Hard cap on the classes a fit explains (the one owner: TCREx.fit, the default targets, rules exports and the
#: XGBoost intake's ``num_class`` check use it). Untargeted, every class is a target with its own grid and metarule
#: tree, so the work grows with the class count; no tabular use comes near it (docs/engine.md).
MAX_TARGET_CLASSES = 1_000


def model_feature_names(model) -> list[str] | None:
    """The input columns ``model`` declares, in its order: a loaded model file's ``feature_names``
    (:class:`tcrex.intake.LoadedModel`), scikit-learn's and XGBoost's ``feature_names_in_`` (fitted on a
    DataFrame); None when it declares none (it then takes columns by position)."""
    names = getattr(model, "feature_names_in_", None)
    if names is None and not isinstance(model, type):
        from_file = getattr(model, "feature_names", None)  # LoadedModel, or a callable that says so
        names = from_file if isinstance(from_file, (list, tuple)) else None
    if names is None:
        return None
    try:
        return [str(n) for n in names]
    except TypeError:
        return None


def model_frame(model, X, features=None):
    """The columns of X ``model`` takes, in its order: the names it declares (:func:`model_feature_names`) when X
    holds them all, else ``features`` (the explainer's, in fit order) when X holds them all and more or in another
    order; otherwise X as it is (the model then says what is wrong). So extra columns (a label, an id) and another
    column order never reach the model, as they never reach the explainer."""
    if not isinstance(X, pd.DataFrame):
        return X
    cols = [str(c) for c in X.columns]
    if len(set(cols)) != len(cols):
        return X  # duplicate names: the explainer refuses them with a message, the model must not guess
    for want in (model_feature_names(model), features):
        if want is None:
            continue
        want = [str(w) for w in want]
        if cols == want:
            return X
        if set(want) <= set(cols):
            return X.set_axis(cols, axis=1)[want]
    return X


def predict(model, X: pd.DataFrame) -> np.ndarray:
    """Outputs of ``model`` on X: ``model.predict(X)`` or ``model(X)``; one output per row. When the model declares
    its input columns and X holds them, it gets exactly those, in its order (:func:`model_frame`)."""
    X = model_frame(model, X)
    if model is None:
        raise ModelError("no model and no outputs: pass a model with predict(), a callable, or y_pred=")
    fn = getattr(model, "predict", None)
    if fn is None and callable(model):
        fn = model
    if fn is None and isinstance(model, (pd.Series, pd.DataFrame, np.ndarray, list, tuple)):
        # a label array passed where the model goes: the outputs have their own argument
        kind = {pd.Series: "a pandas Series", pd.DataFrame: "a pandas DataFrame", np.ndarray: "a NumPy array",
                list: "a list", tuple: "a tuple"}.get(type(model), f"a {type(model).__name__}")
        raise ModelError(f"the model argument is {kind} of {len(model):,} values, not a model; "
                         "to give the model's outputs instead of the model, pass them as y_pred= (e.g. "
                         "fit(X, y_pred=y))")
    if fn is None:
        raise ModelError(f"{type(model).__name__} has no predict() method and is not callable; pass the model, or "
                         "its outputs on X as y_pred=")
    try:
        out = fn(X)
    except Exception as exc:  # the model is foreign code: report what it said, in our terms
        raise ModelError(f"the model failed to predict on the data ({type(exc).__name__}: {exc}); "
                         "check that its feature names, order and types match the columns of X") from exc
    return check_outputs(out, len(X))


def check_outputs(y, n_rows: int) -> np.ndarray:
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ModelError(f"expected one output per row, got an array of shape {y.shape}; for a classifier pass "
                         "predicted labels (predict), not probabilities")
    if len(y) != n_rows:
        raise ModelError(f"got {len(y)} outputs for {n_rows} rows")
    if y.dtype.kind not in "biu" and pd.isna(y).any():  # (integers and booleans cannot be missing)
        raise ModelError(f"{int(pd.isna(y).sum())} model output(s) are missing (NaN)")
    return y


def _small_int_table(y: np.ndarray):
    """For whole-number outputs in a small range: ``(y - low as int64, which values of low..high occur, low)``;
    None otherwise (counting those beats sorting them, and gives the same distinct values)."""
    if y.ndim != 1 or y.dtype.kind not in "iu" or not len(y):
        return None
    low, high = int(y.min()), int(y.max())
    if high - low > 4 * len(y) + 1024 or high >= 2 ** 63:
        return None
    shifted = y.astype(np.int64) - low
    return shifted, np.bincount(shifted, minlength=high - low + 1) > 0, low


def class_codes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)`` of the outputs: the sorted classes and each row's index into them
    (integer labels in a small range are counted rather than sorted: the same arrays, several times faster)."""
    table = _small_int_table(y)
    if table is None:
        return np.unique(y, return_inverse=True)
    shifted, present, low = table
    return (np.flatnonzero(present) + low).astype(y.dtype), (np.cumsum(present) - 1)[shifted]


def detect_task(y, model=None) -> str:
    """The one task rule: classification for labels (text, bool, or at most ``MAX_CLASSES`` distinct whole
    numbers) or a model with ``classes_``/``predict_proba``; regression otherwise. Missing values are ignored."""
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.Index)) else y)
    if y.dtype == object:
        present = y[~pd.isna(y)]
        try:
            y = present.astype(np.float64) if all(isinstance(v, (int, float, np.number)) and not isinstance(
                v, (bool, np.bool_)) for v in present) else present
        except (TypeError, ValueError):
            y = present
    elif np.issubdtype(y.dtype, np.floating):
        y = y[~np.isnan(y)]
    if model is not None and (hasattr(model, "classes_") or hasattr(model, "predict_proba")):
        return CLASSIFICATION
    if not np.issubdtype(y.dtype, np.number) or y.dtype == bool:
        return CLASSIFICATION
    if y.dtype.kind in "iu" or np.all(np.asarray(y, dtype=float) == np.round(np.asarray(y, dtype=float))):
        table = _small_int_table(y)
        if (len(np.unique(y)) if table is None else int(table[1].sum())) <= MAX_CLASSES:
            return CLASSIFICATION
    return REGRESSION


def min_rule_rows(n_rows: int, rho: float) -> int:
    """The fewest rows a rule may hold: ``ceil(rho * n_rows)`` (scikit-learn's own ceil of a fractional
    ``min_samples_leaf``). The one owner of this formula: the surrogate's minimum leaf, the histogram grower, the
    recount and the messages below all use it."""
    try:
        return int(math.ceil(rho * n_rows))
    except OverflowError:  # a count beyond floats (n_rows = 10**400): the same ceil, exactly
        return math.ceil(_exact(rho) * n_rows)


def _exact(x) -> Fraction:
    """``x`` as an exact fraction (floats of any size, numpy scalars, fractions)."""
    return Fraction(x) if isinstance(x, (numbers.Rational, float)) else Fraction(float(x))


def _rows(n: int) -> str:
    """A row count for a message: exact up to 15 digits, then its order of magnitude (10**300 has 301 digits)."""
    digits = str(n)
    return f"{n:,}" if len(digits) <= 15 else f"about 10^{len(digits) - 1}"


def check_n_classes(classes) -> None:
    """Raise :class:`tcrex.errors.ModelError` when the outputs hold more classes than T-CREx explains."""
    if len(classes) > MAX_TARGET_CLASSES:
        raise ModelError(f"the model's outputs hold {len(classes):,} classes; T-CREx explains at most "
                         f"{MAX_TARGET_CLASSES:,} (each class is a target with its own rules and grid). Group the "
                         "classes into fewer labels, or pass task='regression' if the outputs are numbers.")


def check_rows_for_rho(n_rows: int, rho) -> str | None:
    """None when ``n_rows`` rows are enough for ``rho``; else the message saying what to change.

    T-CREx needs at least ``1 / rho`` rows: a rule must hold ``min_rule_rows(n_rows, rho)`` of them. The one
    owner of this check (the engine's fit, intake and the dashboard all call it).
    """
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.integer, np.floating)) or not (0 < rho <= 1):
        return f"rho must be a fraction in (0, 1], got {rho!r} (the paper uses 0.02)"
    if n_rows <= 0:
        return "the data has no rows"
    with np.errstate(over="ignore", divide="ignore"):
        inv = 1 / rho
    try:
        needed = math.ceil(inv)
    except (OverflowError, ValueError):  # 1 / 5e-324 is inf in floats (math.ceil raised): count it exactly
        needed = math.ceil(1 / _exact(rho))
    if needed > n_rows:
        return (f"rho={rho} asks for rules holding at least {min_rule_rows(n_rows, rho)} of {_rows(n_rows)} rows, which "
                f"needs {_rows(needed)} rows; use more rows or raise rho to at least {float(Fraction(1, n_rows)):.3g}")
    return None


def check_task(task) -> str | None:
    if task is None or task == "auto":
        return None
    if task not in TASKS:
        raise ParameterError(f"task must be 'classification', 'regression' or None (auto), got {task!r}")
    return task


def as_regression(y: np.ndarray) -> np.ndarray:
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError("task is regression but the outputs are not numbers") from None
    if not np.all(np.isfinite(y)):
        raise ModelError(f"{int((~np.isfinite(y)).sum())} regression output(s) are infinite")
    return y
