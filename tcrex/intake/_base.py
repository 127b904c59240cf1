"""What every loaded model looks like to the rest of tcrex, and the helpers the format loaders share."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import as_frame as _engine_as_frame
from .. import is_categorical_column
from ..errors import DataError, ModelError, TCRExError
from ..vocabulary import CATEGORICAL, CLASSIFICATION
from ._spawn import THREADS_ENV  # the model's share of the cores, set in its sandbox worker's environment


#: The memory budget of an untrusted model file (docs/security.md, "Memory budget"): what the sizes a file declares
#: (array shapes, element counts) may add up to before anything is allocated, and what the sandbox lets loading it
#: take. In proportion to the file, with a floor for small ones: real scikit-learn, XGBoost and ONNX files unpack to
#: 1-6 x their size, while a 1.6 KB .skops file could declare a 2 GB array.
MEMORY_FLOOR = 128 * 2**20
MEMORY_PER_FILE_BYTE = 50


def memory_budget(n_bytes: int, ceiling: int | None = None) -> int:
    """Bytes a model file of ``n_bytes`` may make the loader allocate: the larger of :data:`MEMORY_FLOOR` and
    :data:`MEMORY_PER_FILE_BYTE` x its size, at most ``ceiling``."""
    budget = max(MEMORY_FLOOR, MEMORY_PER_FILE_BYTE * int(n_bytes))
    return budget if ceiling is None else min(budget, int(ceiling))


def budget_words(n_bytes: int, budget: int) -> str:
    """How a refusal names the budget: '128 MB (the memory budget of a 1.6 KB file: the larger of 128 MB and 50 x
    its size)'."""
    return (f"{_size(budget)} (the memory budget of a {_size(n_bytes)} file: the larger of {_size(MEMORY_FLOOR)} and "
            f"{MEMORY_PER_FILE_BYTE} x its size)")


def _size(n: float) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f} {unit}" if value < 10 and value != int(value) else f"{value:.0f} {unit}"
    return f"{int(n)} bytes"



def threads_given() -> int | None:
    """Threads the model may use when the sandbox said so (:data:`THREADS_ENV`), else None (the library's default):
    each loader gives its library this number (XGBoost and OpenMP code read ``OMP_NUM_THREADS``; ONNX Runtime's
    session options, scikit-learn's ``n_jobs`` are set by the loaders)."""
    import os

    value = os.environ.get(THREADS_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


class UnsafeModelError(ModelError):
    """The file was refused because loading it could run code or read files (see docs/security.md)."""


class ModelFaultError(ModelError):
    """The model's sandbox worker crashed, did not answer in time or ran out of memory: a fault of the model
    itself (not a mismatch with the data), reported as such wherever it happens."""


#: A source file with its line number, as native libraries put them in messages: ``/workspace/src/learner.cc:760:``,
#: ``/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:359``, ``c_api.cc(123):``.
_SOURCE_PATH = re.compile(r"(?:[A-Za-z]:)?[\w.\\/+~-]*\.(?:cc|cpp|cxx|c|h|hpp|hxx|cu|cuh|pyx|pxi)"
                          r"(?::\d+(?::\d+)?|\(\d+\)):?\s*")
#: A qualified C++ function name followed by its parameter list: ``void* onnxruntime::BFCArena::Alloc(size_t, ...)``.
_CPP_NAME = re.compile(r"(?:(?:const\s+)?[A-Za-z_][\w<>]*(?:::[A-Za-z_][\w<>]*)*[\s*&]+)?"
                       r"(?:[A-Za-z_]\w*(?:<[^<>()]*>)?::)+~?[A-Za-z_]\w*(?:<[^<>()]*>)?\(")
#: Absolute paths into the server's installation (site-packages, shared libraries): only the file name is kept.
_SERVER_PATH = re.compile(r"(?:/[^\s/:'\"()\[\]]+)+/([^\s/:'\"()\[\]]+\.(?:so(?:\.\d+)*|py|dylib|dll))")


def _drop_cpp_signatures(text: str) -> str:
    """Remove ``ns::Class::method(args...) [const]`` (balanced parentheses) wherever a C++ signature appears."""
    out, pos = [], 0
    while True:
        m = _CPP_NAME.search(text, pos)
        if m is None:
            out.append(text[pos:])
            return "".join(out)
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if depth:  # unbalanced: not a signature, keep the text as it is
            out.append(text[pos:])
            return "".join(out)
        rest = re.match(r"\s*(?:const\b)?\s*", text[i:])
        out.append(text[pos:m.start()])
        pos = i + rest.end()


def short_error(exc: BaseException, limit: int = 300) -> str:
    """A library's error as one readable line for people: no stack traces, no source paths with line numbers, no
    C++ function signatures, no ONNX Runtime prefixes, no server installation paths; bounded length."""
    text = str(exc).strip() or type(exc).__name__
    text = text.split("Stack trace:")[0]
    text = re.sub(r"\[\d\d:\d\d:\d\d\] ", "", text)
    text = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    text = _SOURCE_PATH.sub("", text)
    text = _drop_cpp_signatures(text)
    text = _SERVER_PATH.sub(r"\1", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def as_frame(X) -> pd.DataFrame:
    """The engine's :func:`tcrex.as_frame`, with a shape problem reported as a model-input error."""
    try:
        return _engine_as_frame(X)
    except DataError as exc:
        raise ModelError(f"the model needs a table of rows: {exc}") from None


def numeric_column(s: pd.Series, name: str) -> np.ndarray:
    """A column as float64 for a model's numeric input; text that is not a number is an error naming the column."""
    if pd.api.types.is_bool_dtype(s):
        return s.astype(float).to_numpy(dtype=np.float64)
    if is_categorical_column(s):  # text or categories (bool is handled above): their values must be numbers
        converted = pd.to_numeric(s.astype(object), errors="coerce")
        bad = converted.isna() & s.notna()
        if bad.any():
            raise ModelError(f"column {name!r} must be numeric for this model but holds text such as "
                             f"{s[bad].iloc[0]!r} ({int(bad.sum())} rows)")
        s = converted
    try:
        return np.asarray(s.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"column {name!r} cannot be read as numbers: {short_error(exc)}") from None


class LoadedModel:
    """A model read from an uploaded file, with what is known about the inputs it expects.

    Attributes
    ----------
    kind : "xgboost", "lightgbm", "catboost", "sklearn", "onnx" or "pickle"
    task : "classification" or "regression"
    feature_names : list of str, or None when the file stores no names (columns are then matched by position)
    n_features : int or None (None when the file does not say)
    classes : list of class labels (classification, when known), else None
    categories : dict feature name -> list of known levels, for the categorical inputs whose levels are known
    feature_kinds : dict feature name -> "numeric" / "categorical" for the inputs whose kind is known
    description : one line for people ("XGBoost binary classifier, 100 trees, 12 features ...")
    warnings : things the user should know that do not stop the model from being used
    trees : LightGBM and CatBoost models loaded in this process also keep their checked trees as a
        :class:`tcrex.trees.TreeEnsemble` (node arrays; ``raw_scores`` evaluates them in numpy)

    ``predict(X)`` returns one output per row (class labels for classifiers, numbers for regressors); every
    failure is a :class:`tcrex.errors.ModelError` naming the problem. A loaded model is also callable, so it can be
    passed to ``TCREx.fit`` directly.
    """

    kind = "model"

    def __init__(self, *, task, feature_names=None, n_features=None, classes=None, categories=None,
                 feature_kinds=None, description="", warnings=None):
        self.task = task
        self.feature_names = None if feature_names is None else [str(n) for n in feature_names]
        self.n_features = n_features if n_features is not None else (
            len(self.feature_names) if self.feature_names is not None else None)
        self.classes = None if classes is None else list(classes)
        self.categories = dict(categories or {})
        self.feature_kinds = dict(feature_kinds or {})
        self.description = description
        self.warnings = list(warnings or [])
        if task == CLASSIFICATION and self.classes is not None:
            # the engine detects a classifier by this attribute, whatever its labels look like
            self.classes_ = np.asarray(self.classes, dtype=object if any(
                isinstance(c, str) for c in self.classes) else None)

    # ------------------------------------------------------------------ public
    @property
    def categorical_features(self) -> list[str]:
        """Inputs the model treats as categorical (pass them as ``categorical_features=`` to TCREx)."""
        return [n for n, k in self.feature_kinds.items() if k == CATEGORICAL]

    def predict(self, X) -> np.ndarray:
        return self.predict_later(X)()

    def predict_later(self, X):
        """Start predicting X and return a function that gives what ``predict(X)`` gives. A sandboxed model sends
        the rows to its worker now and reads the answer when the function is called, so the caller can do other
        work meanwhile (``tcrex explain`` explains one batch while the model predicts the next); call the function
        exactly once, also when you stop early (it then reports the answer's error, if any)."""
        X = as_frame(X)
        n = len(X)
        if n == 0:
            return lambda: np.empty(0)
        pending = self._guard(n, lambda: self._predict_later(self.select(X)))

        def finish():
            out = np.asarray(self._guard(n, pending))
            if out.ndim == 2 and out.shape[1] == 1:
                out = out[:, 0]
            if out.ndim != 1 or len(out) != n:
                raise ModelError(f"the {self.kind} model returned outputs of shape {out.shape} for {n} rows; "
                                 "expected one output per row")
            return out
        return finish

    def _guard(self, n: int, fn):
        try:
            return fn()
        except TCRExError:
            raise
        except MemoryError:
            raise ModelError(f"the {self.kind} model ran out of memory predicting {n} rows; use fewer rows") \
                from None
        except Exception as exc:  # noqa: BLE001 - foreign library code: its message, in our terms
            raise ModelError(f"the {self.kind} model failed to predict ({type(exc).__name__}: {short_error(exc)})") \
                from None

    def _predict_later(self, X: pd.DataFrame):
        """A function giving the outputs for X (already the model's columns); here computed at once."""
        out = self._predict(X)
        return lambda: out

    __call__ = predict

    def select(self, X: pd.DataFrame) -> pd.DataFrame:
        """The model's input columns of X, in the model's order (by name when it has names, else by position)."""
        cols = [str(c) for c in X.columns]
        if self.feature_names is not None:
            missing = [n for n in self.feature_names if n not in cols]
            if missing:
                raise ModelError(f"the data lacks column(s) {missing[:10]}{' …' if len(missing) > 10 else ''} "
                                 f"that the model needs (it was trained on {self.feature_names[:20]})")
            dup = sorted({c for c in cols if cols.count(c) > 1 and c in self.feature_names})
            if dup:
                raise ModelError(f"the data has duplicate column name(s) {dup}; rename them")
            return X.set_axis(cols, axis=1)[self.feature_names]
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ModelError(f"the model takes {self.n_features} input(s) by position (the file stores no feature "
                             f"names) but the data has {X.shape[1]} column(s)")
        return X

    def __repr__(self) -> str:
        return f"<LoadedModel {self.kind}: {self.description}>"

    # ------------------------------------------------------------------ per format
    def _predict(self, X: pd.DataFrame):  # pragma: no cover - abstract
        raise NotImplementedError
