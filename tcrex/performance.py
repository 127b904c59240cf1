"""How well a model does on labelled rows: the numbers behind the dashboard's Model panel and the report's model
table (no Streamlit here).

:func:`model_performance` compares true labels with the model's outputs (and, for classifiers that give them,
class scores) with :mod:`sklearn.metrics`:

* **classification** -- accuracy, balanced accuracy, per-class precision / recall / F1 / support and the
  confusion matrix, by class name; for two classes with scores, the ROC curve (with its AUC) and the
  precision-recall curve (with average precision, the PR curve's area) for the positive class;
* **regression** -- MAE, RMSE and R², and the residuals (true − predicted) against the predictions.

Which rows are scored is the caller's choice, and the result says it in words (``rows``) with whether they were
held out from training (``holdout``: True, False or None for unknown): numbers measured on training rows are
optimistic.

>>> from tcrex.performance import model_performance                    # doctest: +SKIP
>>> perf = model_performance(y_test, model.predict(X_test), task="classification",
...                          scores=model.predict_proba(X_test), classes=[0, 1], positive=1,
...                          class_names={1: "approved", 0: "rejected"}, rows="2,500 test rows", holdout=True)
>>> perf.summary()                                                      # doctest: +SKIP

:func:`score` is the one headline number (accuracy for a classifier, R² for a regressor) and :func:`score_name`
its name: every place that shows a model's score in one figure (the dashboard's model line, a trained model's
hold-out score) calls them, so the figure equals ``model_performance(...).metrics[score_name(task)]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import ParameterError
from ._engine.base._outputs import CLASSIFICATION, REGRESSION
from .text import class_label

__all__ = ["ModelPerformance", "model_performance", "score", "score_name", "label_mismatch"]

#: the headline metric of each task (a key of :attr:`ModelPerformance.metrics`)
_SCORE_NAMES = {CLASSIFICATION: "accuracy", REGRESSION: "R²"}


def score_name(task: str) -> str:
    """The name of :func:`score`'s figure for ``task``: "accuracy" or "R²"."""
    _check_task(task)
    return _SCORE_NAMES[task]


def score(y_true, y_pred, task: str) -> float | None:
    """The model's headline figure on these rows: accuracy (labels compared as :func:`model_performance` compares
    them: 1, 1.0 and "1" are one class) for classification, R² for regression; None when it is undefined (R² of
    labels that do not vary, or no rows). The same number as ``model_performance(...).metrics[score_name(task)]``."""
    _check_task(task)
    t, p = _labels(y_true), _labels(y_pred)
    if len(t) != len(p):
        raise ParameterError(f"y_true has {len(t)} rows but y_pred has {len(p)}; they must be the same rows")
    if not len(t):
        return None
    if task == CLASSIFICATION:
        return _accuracy(*_common_keys(t, p))
    return _r2(*_numeric(t, p))


def _check_task(task: str) -> None:
    if task not in (CLASSIFICATION, REGRESSION):
        raise ParameterError(f"task must be {CLASSIFICATION!r} or {REGRESSION!r}, got {task!r}")


def _accuracy(kt, kp) -> float:
    from sklearn.metrics import accuracy_score  # noqa: PLC0415

    return float(accuracy_score(kt, kp))


def _r2(yt, yp) -> float | None:
    from sklearn.metrics import r2_score  # noqa: PLC0415

    return float(r2_score(yt, yp)) if len(yt) >= 2 and np.ptp(yt) > 0 else None


def _numeric(t, p) -> tuple[np.ndarray, np.ndarray]:
    try:
        return np.asarray(t, dtype=np.float64), np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("regression needs numeric labels and outputs; these hold text") from None


@dataclass
class ModelPerformance:
    """A model's performance on some labelled rows (see :func:`model_performance`)."""

    task: str
    n_rows: int
    rows: str  # which rows were scored, in words ("2,500 hold-out rows (test split)")
    holdout: bool | None  # held out from training; False: training rows (optimistic); None: not known
    metrics: dict  # name -> value, in reading order
    classes: list = field(default_factory=list)  # classification: the labels, in the order of the tables
    class_names: list = field(default_factory=list)  # the same, as people read them
    per_class: pd.DataFrame | None = None  # class, precision, recall, f1, support
    confusion: pd.DataFrame | None = None  # index: true class name, columns: predicted class name; counts
    positive: Any = None  # binary with scores: the class whose score the curves use
    positive_name: str | None = None
    roc: dict | None = None  # {"fpr", "tpr", "auc"}
    pr: dict | None = None  # {"precision", "recall", "average_precision", "base_rate"}
    predicted: np.ndarray | None = None  # regression: the model's outputs
    residual: np.ndarray | None = None  # regression: true - predicted
    notes: list = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """The headline numbers as a two-column table (metric, value), e.g. for a report."""
        items = list(self.metrics.items())
        if self.roc is not None:
            items.append((f"ROC AUC ({self.positive_name})", self.roc["auc"]))
        if self.pr is not None:
            items.append((f"average precision ({self.positive_name})", self.pr["average_precision"]))
        return pd.DataFrame({"metric": [k for k, _ in items], "value": [float(v) for _, v in items]})

    def summary(self) -> str:
        """One line: the headline numbers and where they were measured."""
        parts = [f"{k} {v:.3f}" for k, v in self.table().itertuples(index=False)]
        where = f" — on {self.rows}" if self.rows else ""
        caveat = {True: "", False: " (training rows: optimistic)",
                  None: " (the model may have been trained on these rows)"}[self.holdout]
        return ", ".join(parts) + where + caveat


def _labels(values) -> np.ndarray:
    """Labels as a 1-d object array of plain Python values (numpy scalars unwrapped)."""
    arr = np.asarray(values, dtype=object).reshape(-1)
    return np.asarray([v.item() if isinstance(v, np.generic) else v for v in arr], dtype=object)


def _common_keys(*arrays: np.ndarray) -> list[np.ndarray]:
    """Comparable keys for labels that may come in different types (1 vs 1.0 vs "1"): numbers when every array
    holds numbers, else text."""
    def numeric(a):
        if any(isinstance(v, (bool, np.bool_)) for v in a):
            return None
        try:
            out = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        return None if np.isnan(out).any() else out
    nums = [numeric(a) for a in arrays]
    if all(n is not None for n in nums):
        return nums
    return [np.asarray([str(v) for v in a], dtype=object) for a in arrays]


def model_performance(y_true, y_pred, *, task: str, scores=None, classes=None, positive=None, class_names=None,
                      rows: str = "", holdout: bool | None = True) -> ModelPerformance:
    """Performance of a model's outputs ``y_pred`` against the labels ``y_true`` on the same rows.

    Parameters
    ----------
    task : "classification" or "regression".
    scores : classification only, optional: class scores (probabilities), shape ``(n, len(classes))``, in the
        order of ``classes``. With two classes they give the ROC and precision-recall curves.
    classes : the model's class labels (the order of the score columns); default: the labels seen, sorted.
    positive : the class the curves are drawn for (e.g. the favourable outcome); default: the last class.
    class_names : ``{label: name}`` (or a callable) naming classes in the tables ("approved" for 1).
    rows, holdout : which rows these are, in words, and whether they were held out from training (True), are
        training rows (False: the figures are optimistic) or nobody knows (None).
    """
    _check_task(task)
    t, p = _labels(y_true), _labels(y_pred)
    if len(t) != len(p):
        raise ParameterError(f"y_true has {len(t)} rows but y_pred has {len(p)}; they must be the same rows")
    if not len(t):
        raise ParameterError("there are no labelled rows to measure the model on")
    if task == REGRESSION:
        return _regression(t, p, rows, holdout)
    mismatch = label_mismatch(t, p, classes)
    if mismatch:  # before any metric: figures of labels the model cannot output would be false
        raise ParameterError(mismatch)
    return _classification(t, p, scores, classes, positive, class_names, rows, holdout)


def label_mismatch(y_true, y_pred, classes=None) -> str | None:
    """Why a classifier's outputs cannot be compared with these labels, or None when they can.

    The labels must be values the model outputs (compared as :func:`model_performance` compares them: 1, 1.0 and
    "1" are one class): every label one of the model's ``classes`` when they are known, else at least one label
    among the outputs seen. Otherwise accuracy and the confusion matrix compare different things ("good"/"bad"
    labels against outputs 0/1 gave "accuracy 0.000" and a 4x4 matrix). The sentence names both sets."""
    t = _labels(y_true)
    t = t[pd.notna(t)]
    known = classes is not None and len(classes) > 0
    produced = _labels(classes if known else y_pred)
    produced = produced[pd.notna(produced)]
    if not len(t) or not len(produced):
        return None
    kt, kp = _common_keys(t, produced)
    labels, outputs = set(kt.tolist()), set(kp.tolist())
    if labels <= outputs or (not known and labels & outputs):
        return None
    shown = {k: v for k, v in zip(kt.tolist(), t.tolist())}
    made = {k: v for k, v in zip(kp.tolist(), produced.tolist())}
    strays = labels - outputs
    how = ("none of them is a value the model outputs" if not labels & outputs else
           f"{_values_text([shown[k] for k in strays])} {'is not one' if len(strays) == 1 else 'are not any'} of them")
    return (f"the labels hold {_values_text(shown.values())} but the model outputs "
            f"{_values_text(made.values())}: {how}, so accuracy and the other figures would compare different "
            "things")


def _values_text(values, most: int = 8) -> str:
    items = sorted({str(v) for v in values}, key=lambda v: (len(v), v))
    text = ", ".join(repr(v) if not v.lstrip("-").replace(".", "", 1).isdigit() else v for v in items[:most])
    return text + (f" and {len(items) - most} more" if len(items) > most else "")


def _regression(t, p, rows, holdout) -> ModelPerformance:
    from sklearn.metrics import mean_absolute_error, mean_squared_error  # noqa: PLC0415

    yt, yp = _numeric(t, p)
    metrics = {"MAE": float(mean_absolute_error(yt, yp)), "RMSE": float(np.sqrt(mean_squared_error(yt, yp)))}
    notes = []
    r2 = _r2(yt, yp)
    if r2 is not None:
        metrics[_SCORE_NAMES[REGRESSION]] = r2
    else:
        notes.append("R² is undefined: the labels do not vary on these rows")
    return ModelPerformance(task=REGRESSION, n_rows=len(yt), rows=rows, holdout=holdout, metrics=metrics,
                            predicted=yp, residual=yt - yp, notes=notes)


def _classification(t, p, scores, classes, positive, class_names, rows, holdout) -> ModelPerformance:
    from sklearn import metrics as skm  # noqa: PLC0415

    if classes is None:
        seen = pd.unique(np.concatenate([t, p]))
        classes = sorted(seen.tolist(), key=lambda v: (str(type(v)), v))
    classes = list(_labels(classes))
    extra_labels = [] if positive is None else [positive]
    kt, kp, kc, kpos = _common_keys(t, p, np.asarray(classes, dtype=object),
                                    np.asarray(extra_labels, dtype=object))
    keys, kept = [], []
    for k, c in zip(kc, classes):  # 1 and "1" are one class once compared as text
        if k not in keys:
            keys.append(k)
            kept.append(c)
    classes = kept
    extra = [k for k in pd.unique(np.concatenate([kt, kp])) if k not in keys]
    if extra:  # labels the model never outputs, or outputs that are not labels: they still count
        orig = {k: v for k, v in zip(np.concatenate([kt, kp]), np.concatenate([t, p]))}
        classes += [orig[k] for k in extra]
        keys += extra
    names = [class_label(c, class_names) or str(c) for c in classes]
    metrics = {_SCORE_NAMES[CLASSIFICATION]: _accuracy(kt, kp)}
    present = [k for k in keys if k in set(kt.tolist())]
    with np.errstate(all="ignore"):
        import warnings  # noqa: PLC0415
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a class never predicted: its precision is 0 (said in notes)
            metrics["balanced accuracy"] = float(skm.balanced_accuracy_score(kt, kp))
            prec, rec, f1, sup = skm.precision_recall_fscore_support(kt, kp, labels=keys, zero_division=0)
    per_class = pd.DataFrame({"class": names, "precision": prec, "recall": rec, "F1": f1,
                              "rows": sup.astype(int)})
    cm = skm.confusion_matrix(kt, kp, labels=keys)
    confusion = pd.DataFrame(cm, index=pd.Index(names, name="true class"),
                             columns=pd.Index(names, name="predicted class"))
    notes = []
    never = [n for n, k in zip(names, keys) if k not in set(kp.tolist())]
    if never:
        notes.append(f"the model never predicts {', '.join(never)} on these rows (precision shown as 0)")
    if len(present) < 2:
        notes.append("only one class occurs among these labels: balanced accuracy and the curves say little")
    perf = ModelPerformance(task=CLASSIFICATION, n_rows=len(t), rows=rows, holdout=holdout, metrics=metrics,
                            classes=classes, class_names=names, per_class=per_class, confusion=confusion,
                            notes=notes)
    if scores is not None and len(classes) == 2:
        _curves(perf, kt, np.asarray(scores, dtype=np.float64), keys, None if positive is None else kpos[0],
                len(present))
    elif scores is None and len(classes) == 2:
        perf.notes.append("the model gives no class scores, so there are no ROC or precision-recall curves")
    return perf


def _curves(perf, kt, scores, keys, positive_key, n_present) -> None:
    from sklearn import metrics as skm  # noqa: PLC0415

    if scores.ndim == 1:
        scores = np.column_stack([1 - scores, scores])
    if scores.shape != (len(kt), 2):
        perf.notes.append(f"the class scores have shape {scores.shape}, not ({len(kt)}, 2): no curves")
        return
    pos_i = len(keys) - 1
    if positive_key is not None:
        if positive_key not in keys[:2]:
            perf.notes.append(f"the positive class {positive_key!r} is not one of the model's classes: no curves")
            return
        pos_i = keys.index(positive_key)
    pos_key = keys[pos_i]
    perf.positive, perf.positive_name = perf.classes[pos_i], perf.class_names[pos_i]
    if n_present < 2:
        return
    truth = (kt == pos_key).astype(int)
    s = scores[:, pos_i]
    fpr, tpr, _ = skm.roc_curve(truth, s)
    perf.roc = {"fpr": fpr, "tpr": tpr, "auc": float(skm.roc_auc_score(truth, s))}
    precision, recall, _ = skm.precision_recall_curve(truth, s)
    perf.pr = {"precision": precision, "recall": recall,
               "average_precision": float(skm.average_precision_score(truth, s)), "base_rate": float(truth.mean())}
