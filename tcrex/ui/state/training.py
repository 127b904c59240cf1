"""Models trained inside the dashboard (pure Python: no streamlit here).

:func:`train_model` fits an XGBoost or scikit-learn model on the fit split of
the active data and scores it on the hold-out split.  The result is a
:class:`TrainedModel` whose ``predict`` takes a plain DataFrame with the
original column values (strings for categorical columns) and returns labels in
the original label space, so the engine, the figures and the individual page
can call it on any row, including edited ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcrex import detect_task, performance
from tcrex.vocabulary import CLASSIFICATION, REGRESSION
from tcrex.datasets import model_frame


#: Algorithms offered by the "train in the app" form: key -> label.
ALGORITHMS: dict[str, str] = {
    "xgboost": "XGBoost (gradient-boosted trees)",
    "random_forest": "Random forest (scikit-learn)",
    "linear": "Logistic / linear regression (scikit-learn)",
}


class TrainingError(ValueError):
    """The label column cannot be used to train a model; the message says what to change."""


@dataclass
class TrainedModel:
    """A model trained in the app, callable on frames with the original column values."""

    algorithm: str
    task: str
    estimator: Any
    feature_names: list[str]
    categories: dict[str, list]
    classes_: np.ndarray | None = None  # original labels (classification)
    holdout_score: float | None = None
    score_name: str = ""
    params: dict = field(default_factory=dict)
    #: the model library's input name -> the input it stands for (a column, or ``column=category`` of a one-hot
    #: encoding). Libraries get positional names (XGBoost refuses ``[``, ``]``, ``<`` and duplicates in names);
    #: this maps them back for display.
    library_names: dict = field(default_factory=dict)

    # -- preprocessing ----------------------------------------------------------------------------
    def prepare(self, X: pd.DataFrame) -> pd.DataFrame:
        """The frame the model library sees: categories coded, one-hot blocks for scikit-learn, and positional
        column names (``f0``, ``f1``, ...; see :attr:`library_names`)."""
        out = model_frame(X, self.feature_names, self.categories)
        if self.algorithm != "xgboost" and self.categories:
            out = self._one_hot(out)
        names = [f"f{i}" for i in range(out.shape[1])]
        if not self.library_names:
            self.library_names = dict(zip(names, map(str, out.columns)))
        return out.set_axis(names, axis=1)

    def _one_hot(self, X: pd.DataFrame) -> pd.DataFrame:
        parts = []
        for col in self.feature_names:
            if col in self.categories:
                codes = X[col].cat.codes.to_numpy()
                k = len(self.categories[col])
                block = np.zeros((len(X), k), dtype=np.float64)
                ok = codes >= 0
                block[np.flatnonzero(ok), codes[ok]] = 1.0
                parts.append(pd.DataFrame(block, columns=[f"{col}={c}" for c in self.categories[col]],
                                          index=X.index))
            else:
                parts.append(X[[col]])
        return pd.concat(parts, axis=1)

    # -- prediction -------------------------------------------------------------------------------
    def predict(self, X: pd.DataFrame) -> np.ndarray:
        raw = np.asarray(self.estimator.predict(self.prepare(X)))
        if self.task == REGRESSION:
            return raw.astype(np.float64)
        return np.asarray(self.classes_, dtype=object)[raw.astype(np.int64)] if self._object_labels() \
            else np.asarray(self.classes_)[raw.astype(np.int64)]

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities, one column per class of :attr:`classes_` in that order (a class the estimator
        never saw in training gets 0)."""
        if self.task == REGRESSION:
            raise TrainingError("a regression model gives no class probabilities")
        raw = np.asarray(self.estimator.predict_proba(self.prepare(X)), dtype=np.float64)
        seen = getattr(self.estimator, "classes_", None)
        if seen is None or len(seen) == len(self.classes_):
            return raw
        out = np.zeros((raw.shape[0], len(self.classes_)))
        out[:, np.asarray(seen, dtype=np.int64)] = raw
        return out

    def _object_labels(self) -> bool:
        return self.classes_ is not None and np.asarray(self.classes_).dtype == object

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{ALGORITHMS.get(self.algorithm, self.algorithm)} ({shown})" if shown else \
            ALGORITHMS.get(self.algorithm, self.algorithm)


def _estimator(algorithm: str, task: str, n_classes: int, random_state: int):
    if algorithm == "xgboost":
        import xgboost as xgb  # noqa: PLC0415 - each model library is imported when that kind is trained

        common = dict(n_estimators=50, max_leaves=8, tree_method="hist", enable_categorical=True,
                      random_state=random_state, n_jobs=1)
        if task == REGRESSION:
            return xgb.XGBRegressor(**common), {"n_estimators": 50, "max_leaves": 8}
        return xgb.XGBClassifier(**common), {"n_estimators": 50, "max_leaves": 8}
    if algorithm == "random_forest":
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: PLC0415

        cls = RandomForestRegressor if task == REGRESSION else RandomForestClassifier
        return cls(n_estimators=100, min_samples_leaf=5, random_state=random_state, n_jobs=1), \
            {"n_estimators": 100, "min_samples_leaf": 5}
    if algorithm == "linear":
        from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: PLC0415
        from sklearn.pipeline import make_pipeline  # noqa: PLC0415
        from sklearn.preprocessing import StandardScaler  # noqa: PLC0415

        if task == REGRESSION:
            return make_pipeline(StandardScaler(), LinearRegression()), {}
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)), {"max_iter": 2000}
    raise TrainingError(f"unknown algorithm {algorithm!r}; choose one of {list(ALGORITHMS)}")


def _library_call(algorithm: str, call, *args):
    """``call(*args)`` with the model library's own errors (ValueError, TypeError; XGBoostError is a ValueError)
    as a :class:`TrainingError` in one line, never a traceback."""
    try:
        return call(*args)
    except (ValueError, TypeError) as exc:
        text = " ".join(str(exc).split("Stack trace:")[0].split()) or type(exc).__name__
        raise TrainingError(f"{ALGORITHMS.get(algorithm, algorithm)} could not be trained on this data: "
                            f"{text[:300]}") from None


def train_model(frame: pd.DataFrame, features: Sequence[str], label: str, categorical: Sequence[str],
                fit_index: Sequence, test_index: Sequence, algorithm: str = "xgboost",
                random_state: int = 0, task: str | None = None) -> TrainedModel:
    """Train ``algorithm`` on ``frame.loc[fit_index]`` and score it on ``frame.loc[test_index]``; ``task``
    overrides :func:`tcrex.detect_task` on the label (e.g. regression for whole-number scores)."""
    features = list(features)
    y_all = frame[label]
    if y_all.isna().any():
        raise TrainingError(f"the label column {label!r} has {int(y_all.isna().sum())} missing value(s); "
                            "drop those rows or choose another label column")
    if task == REGRESSION and not pd.api.types.is_numeric_dtype(y_all):
        raise TrainingError(f"the label column {label!r} holds text; regression needs numbers — choose "
                            "classification or detection")
    task = task or detect_task(y_all)
    categories = {c: sorted({str(v) for v in frame[c].dropna().unique()}) for c in categorical if c in features}
    classes = None
    if task == CLASSIFICATION:
        classes = np.asarray(sorted(pd.unique(y_all), key=lambda v: (str(type(v)), v)), dtype=object)
        if len(classes) < 2:
            raise TrainingError(f"the label column {label!r} has a single value ({classes[0]!r}) in every row; "
                                "a model needs at least two classes to learn from — choose another label column "
                                "or add rows of the other class")
        if all(isinstance(c, (int, np.integer)) for c in classes):
            classes = np.asarray([int(c) for c in classes])
        elif all(isinstance(c, (bool, np.bool_)) for c in classes):
            classes = np.asarray([bool(c) for c in classes])
    estimator, params = _estimator(algorithm, task, 0 if classes is None else len(classes), random_state)
    model = TrainedModel(algorithm=algorithm, task=task, estimator=estimator, feature_names=features,
                         categories=categories, classes_=classes, params=params)
    X_fit = model.prepare(frame.loc[fit_index])
    y_fit = frame.loc[fit_index, label]
    if task == CLASSIFICATION:
        lookup = {c: i for i, c in enumerate(classes.tolist())}
        y_codes = y_fit.map(lambda v: lookup[v]).to_numpy(dtype=np.int64)
        if len(np.unique(y_codes)) < 2:
            raise TrainingError(f"the training split of {label!r} holds a single class; use more rows")
        if algorithm == "xgboost" and len(np.unique(y_codes)) < len(classes):
            raise TrainingError(f"some classes of {label!r} do not occur in the training split; "
                                "use more rows or merge rare classes")
        _library_call(algorithm, estimator.fit, X_fit, y_codes)
    else:
        _library_call(algorithm, estimator.fit, X_fit, pd.to_numeric(y_fit).to_numpy(dtype=np.float64))
    if len(test_index):
        X_test = frame.loc[test_index]
        y_test = frame.loc[test_index, label].to_numpy()
        pred = _library_call(algorithm, model.predict, X_test)
        model.holdout_score = performance.score(y_test, pred, task)
        model.score_name = f"hold-out {performance.score_name(task)}"
    return model
