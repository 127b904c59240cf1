"""Where the active data and model come from: samples, uploads, in-app training, a column of outputs.

Everything here is plain data and pure functions (no widgets); :mod:`tcrex.ui.state.active` wraps them in Streamlit's
caches and session state.  Uploaded bytes are parsed and loaded only through :mod:`tcrex.intake` (the safe
loaders); nothing here unpickles anything.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from tcrex import datasets

from tcrex import categorical_columns, detect_task, intake, is_categorical_column
from tcrex.errors import TCRExError
from tcrex.vocabulary import CLASSIFICATION, REGRESSION
from tcrex.text import feature_text

from tcrex.intake.data import DECIMALS, ENCODINGS, EXCEL_EXTENSIONS, THOUSANDS
from tcrex import performance
from tcrex.performance import label_mismatch
from tcrex.performance import model_performance as measure

from .training import TrainedModel, TrainingError, train_model

#: Share of rows held out as the "test split" (never used to fit the explainer or an in-app model).
TEST_SHARE = 0.25
#: Rows shown in tables of large data (the engine always uses every row).
DISPLAY_ROWS = 1000
#: The most characters of a problem the sidebar repeats (its first sentence); the page that owns it shows it whole.
SUMMARY_CHARS = 160


def problem_summary(problem: str, limit: int = SUMMARY_CHARS) -> str:
    """A problem's first sentence, at most ``limit`` characters, for the sidebar (never the whole column list a
    message may carry); says where the rest is when something was left out."""
    text = " ".join(str(problem).split())
    cut = text.find(". ")
    first = text if cut < 0 else text[:cut + 1]
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return first if first == text else first + " (the whole message is on the Data & model page)"

SAMPLE_LABELS = {
    "loans": "Loans sample",
    "wine": "Wine sample (multi-class)",
    "diabetes": "Diabetes sample (regression)",
}


class InputProblem(ValueError):
    """Bad input the user can fix; the message says what to change (shown with st.error, never a traceback)."""


class NoModelYet(InputProblem):
    """Nothing is wrong: no model is chosen yet (shown as neutral guidance, not as an error)."""


class ModelFileProblem(InputProblem):
    """The uploaded model file itself cannot be read (empty, damaged, refused): not a mismatch with the data."""


#: The guidance shown while no model is chosen (the sidebar and every page say the same).
NO_MODEL_YET = ("no model is chosen yet; on the Data & model page, train one, upload one or pick the column that "
                "holds the model's outputs")


def sha256(*parts: Any) -> str:
    """SHA-256 over bytes (as is) and anything else (via ``repr``)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, (bytes, bytearray, memoryview)) else repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


def frame_digest(frame: pd.DataFrame) -> str:
    """A content hash of every cell, the column names and dtypes (not a sample)."""
    values = pd.util.hash_pandas_object(frame, index=True).to_numpy()
    return sha256(values.tobytes(), list(frame.columns), [str(t) for t in frame.dtypes])


# --------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class DataSpec:
    """What the user chose as data (kept in session state; resolved by :func:`tcrex.ui.state.active.active_data`)."""

    kind: str  # "sample" | "upload"
    name: str  # sample name or file name
    digest: str = ""  # SHA-256 of the uploaded bytes
    label: str | None = None  # the label (ground-truth) column, if any
    drop: tuple[str, ...] = ()
    categorical: tuple[str, ...] | None = None  # None: detected
    missing: str = "drop"  # how to treat rows with missing values
    extra: tuple[str, ...] = ()  # kept in the data but not model features (e.g. a protected attribute to audit)
    task: str | None = None  # the label's task for in-app training and output columns; None: tcrex.detect_task
    #: columns whose sentinel codes (-7/-8/-9, 999, ...) the user chose to treat as missing values
    sentinels: tuple[str, ...] = ()
    reading: tuple = ()  # ("delimiter", ";"), ... chosen under "How to read this file" (CSV); empty: detected


@dataclass(frozen=True, eq=False)
class ActiveData:
    """The data set the dashboard works on: a frozen record (a view with other names or labels is a
    ``dataclasses.replace`` of it; cached and shared ones are never patched)."""

    key: str  # content hash of the frame the engine sees
    label: str  # short human name (sidebar)
    description: str
    frame: pd.DataFrame  # features (+ label column, + any other kept column)
    label_column: str | None
    categorical: tuple[str, ...]
    numeric: tuple[str, ...]
    fit_index: pd.Index
    test_index: pd.Index
    spec: DataSpec
    notes: list[str] = field(default_factory=list)
    extra_columns: tuple[str, ...] = ()  # kept for grouping (audit), never model features
    #: the label value the data's metadata names as favourable (bundled samples); None: unknown, ask the user
    favourable: Any = None
    #: readable names of label values (bundled samples), e.g. {1: "approved", 0: "rejected"}
    class_names: dict = field(default_factory=dict)
    #: the codebook, ``{feature: {value: label}}`` (the bundled sample's file, or the one the user gave)
    value_labels: dict = field(default_factory=dict)
    #: the data dictionary the user gave (:class:`tcrex.dictionary.DataDictionary`: titles, special codes,
    #: actionability); None: none given
    dictionary: Any = None

    @property
    def titles(self) -> dict:
        """``{column: title}`` of the dictionary (empty without one)."""
        return dict(self.dictionary.titles) if self.dictionary is not None else {}

    def feature_name(self, column) -> str:
        """A column as every page names it: "repayment status last month (status_1)" when the dictionary titles
        it, else the name (:func:`tcrex.text.feature_text`, the one owner)."""
        return feature_text(column, self.titles.get(column))

    @property
    def features(self) -> list[str]:
        return [c for c in self.frame.columns if c != self.label_column and c not in self.extra_columns]

    @property
    def n_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.frame.shape[1])

    # backwards-compatible name used by older pages
    @property
    def target(self) -> str | None:
        return self.label_column


def split_index(index: pd.Index, share: float = TEST_SHARE, seed: int = 0) -> tuple[pd.Index, pd.Index]:
    """A fixed random split into fit rows and test rows (no test split below 40 rows)."""
    n = len(index)
    if n < 40:
        return index, index[:0]
    order = np.random.default_rng(seed).permutation(n)
    n_test = int(round(n * share))
    test = np.sort(order[:n_test])
    fit = np.sort(order[n_test:])
    return index[fit], index[test]


def describe_sample(data: ActiveData, name: str) -> ActiveData:
    """Name a bundled sample and carry its metadata (favourable outcome, class names) while its label column is
    the sample's own target."""
    info = datasets.SAMPLES[name]
    changes: dict[str, Any] = {"label": SAMPLE_LABELS.get(name, name), "description": info.description}
    if data.label_column == info.target:
        changes.update(favourable=info.favourable, class_names=dict(info.class_names))
    if info.codebook:  # the sample's codebook, read as any codebook file is
        changes["value_labels"] = intake.read_codebook((datasets.SAMPLE_DATA_DIR / info.codebook).read_bytes(),
                                                       info.codebook)
    return replace(data, **changes)


def load_sample_frame(name: str) -> tuple[pd.DataFrame, str, tuple[str, ...]]:
    """``(frame with the label column last, label column, categorical columns)`` of a bundled sample."""
    if name == "loans":
        frame = datasets.load_bundled_loans()
        return frame, datasets.LOANS_TARGET, tuple(datasets.LOANS_CATEGORICAL)
    X, y = datasets.load_sample(name)
    frame = X.copy()
    frame[y.name] = y
    return frame, str(y.name), ()


def prepare_frame(raw: pd.DataFrame, spec: DataSpec, detected_categorical: Sequence[str] = ()) -> ActiveData:
    """Apply the user's choices (label, dropped columns, types, missing values) to a parsed table."""
    notes: list[str] = []
    frame = raw.drop(columns=[c for c in spec.drop if c in raw.columns])
    if frame.shape[1] == 0:
        raise InputProblem("every column was dropped; keep at least one feature column")
    label = spec.label if spec.label in frame.columns else None
    extra = tuple(c for c in spec.extra if c in frame.columns and c != label)
    features = [c for c in frame.columns if c != label and c not in extra]
    if not features:
        raise InputProblem(f"the only column left is the label column {label!r}; the data needs feature columns")
    categorical = tuple(c for c in (spec.categorical if spec.categorical is not None
                                    else (detected_categorical or tuple(categorical_columns(frame, features))))
                        if c in features)
    numeric = tuple(c for c in features if c not in categorical)
    frame = frame.copy()
    for c in numeric:
        # not the column-type rule: a column set to numeric is converted unless it already holds numbers, which
        # includes datetimes (neither categorical nor numbers) as well as the columns is_categorical_column names
        if not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]):
            converted = pd.to_numeric(frame[c], errors="coerce")
            bad = int((converted.isna() & frame[c].notna()).sum())
            if bad:
                example = frame.loc[converted.isna() & frame[c].notna(), c].iloc[0]
                raise InputProblem(f"column {c!r} is set to numeric but {bad} value(s) are not numbers "
                                   f"(for example {example!r}); mark it categorical or drop it")
            frame[c] = converted
    for c in categorical:
        if not is_categorical_column(frame[c]):  # set to categorical, typed numeric: read its values as categories
            frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    if spec.sentinels:  # only on request, reported with counts (then handled as the missing values are)
        frame, counts = intake.sentinels_to_missing(frame, [c for c in spec.sentinels if c in numeric])
        if counts:
            notes.append(f"{sum(counts.values()):,} sentinel code(s) treated as missing values: "
                         + ", ".join(f"{c!r} ({k:,})" for c, k in counts.items()))
    frame, note = apply_missing(frame, spec.missing)
    if note:
        notes.append(note)
    if len(frame) < 10:
        raise InputProblem(f"only {len(frame)} row(s) remain; T-CREx needs at least 10 rows (ideally hundreds)")
    frame = frame.reset_index(drop=True)
    fit_index, test_index = split_index(frame.index)
    return ActiveData(key=frame_digest(frame), label="", description="", frame=frame, label_column=label,
                      categorical=categorical, numeric=numeric, fit_index=fit_index, test_index=test_index,
                      spec=spec, notes=notes, extra_columns=extra)


MISSING_STRATEGIES = {
    "drop": "Drop rows with a missing value",
    "impute": "Fill in: median (numbers) / most common value (categories)",
}


def apply_missing(frame: pd.DataFrame, strategy: str) -> tuple[pd.DataFrame, str]:
    """Handle missing values with :func:`tcrex.intake.handle_missing` (the one owner of that rule)."""
    if not frame.isna().any().any():
        return frame, ""
    try:
        return intake.handle_missing(frame, strategy)
    except TCRExError as exc:
        raise InputProblem(str(exc)) from None


# --------------------------------------------------------------------------------------------- table intake
#: Findings of :func:`tcrex.intake.read_table` for which dropping the column is offered, with the reason shown.
DROP_KINDS = {"id_like": "ID-like (a different value in almost every row; rules about it would not generalise)",
              "constant": "constant (one value in every row; it cannot explain anything)",
              "high_cardinality": "high cardinality (very many categories; rules about them are fragile)"}
#: Of those, the kinds whose drop box starts ticked (high-cardinality columns may still be useful).
PRETICKED_DROP_KINDS = ("id_like", "constant")
#: Column names taken as the label column (case-insensitive, first match wins): one owner, the intake's.
LABEL_NAMES = intake.LABEL_NAMES


def label_candidate(frame: pd.DataFrame, drop: Sequence = ()) -> str | None:
    """A column that looks like the label when none is named like one: the last column, when it holds 2-20
    distinct values (an outcome, a class) and is not offered for dropping. Only suggested, never chosen: the
    column form warns that otherwise it becomes a feature."""
    if frame.shape[1] < 2:
        return None
    last = frame.columns[-1]
    n = frame[last].nunique(dropna=True)
    return last if 2 <= n <= 20 and last not in set(drop) else None


@dataclass
class TableFindings:
    """A parsed upload (:class:`tcrex.intake.TableReport`) and what the column form needs from it."""

    report: intake.TableReport
    column_notes: dict[str, str]  # column -> short note (missing, ID-like, constant, ...)
    suggested_drop: list[str]  # ID-like and constant columns: pre-ticked to drop
    suggested_label: str | None
    categorical: list[str]
    drop_reasons: dict[str, str] = field(default_factory=dict)  # column -> why dropping it is offered

    @property
    def frame(self) -> pd.DataFrame:
        return self.report.frame

    @property
    def findings(self) -> list[str]:
        """The reading's findings, and the label column when it was taken by its name (a guess too)."""
        label = ([f"`{self.suggested_label}` was taken as the label column (its name says so); if it is not the "
                  "outcome, choose another (or none) as the label column below"] if self.suggested_label else [])
        return [*self.report.messages, *label]

    @property
    def missing(self) -> dict[str, int]:
        return self.report.missing

    @property
    def sentinels(self) -> dict[str, int]:
        """Columns with sentinel codes (:func:`tcrex.sentinel_codes`) -> rows holding them."""
        return {f.column: f.count for f in self.report.findings if f.kind == "sentinel"}


#: "How to read this file" (CSV uploads): option of :func:`tcrex.intake.read_table` -> {value: label}; ``None``
#: (listed first) leaves the option to the detection.
READ_CHOICES = {
    "delimiter": {None: "Automatic", ",": "Comma  ,", ";": "Semicolon  ;", "\t": "Tab", "|": "Pipe  |"},
    "decimal": {None: "Automatic", **{k: v.capitalize() for k, v in DECIMALS.items()}},
    "thousands": {None: "Automatic", **{k: v.capitalize() for k, v in THOUSANDS.items()}},
    "encoding": {None: "Automatic", **ENCODINGS},
}
READ_LABELS = {"delimiter": "Delimiter", "decimal": "Decimal mark", "thousands": "Thousands separator",
               "encoding": "Encoding"}


def reads_as_text(filename: str) -> bool:
    """Whether "How to read this file" applies (a CSV or other text upload; not Parquet or Excel)."""
    name = str(filename).lower()
    return not name.endswith((".parquet", ".pq", *EXCEL_EXTENSIONS))


def read_table(data: bytes, filename: str, reading: tuple = ()) -> TableFindings:
    """Parse an uploaded CSV, Excel or Parquet file with :func:`tcrex.intake.read_table` (which owns every format,
    a workbook's budget and messages included) and summarise its findings. ``reading``: the user's "How to read
    this file" choices as ``(option, value)`` pairs (CSV only)."""
    options = dict(reading) if reads_as_text(filename) else {}
    try:
        report = intake.read_table(data, filename, **options)
    except TCRExError as exc:
        raise InputProblem(str(exc)) from None
    return summarise_table(report)


def summarise_table(report: intake.TableReport) -> TableFindings:
    frame = report.frame
    notes: dict[str, list[str]] = {c: [] for c in frame.columns}
    drop: list[str] = []
    reasons: dict[str, str] = {}
    for f in report.findings:
        if f.column not in notes:
            continue
        notes[f.column].append(f"{f.count:,} missing" if f.kind == "missing" and f.count
                               else f.kind.replace("_", " "))
        if f.kind in DROP_KINDS:
            reasons.setdefault(f.column, f"{DROP_KINDS[f.kind]}: {f.message}")
            if f.kind in PRETICKED_DROP_KINDS:
                drop.append(f.column)
    label = intake.label_column(frame.columns)
    return TableFindings(report=report, column_notes={c: "; ".join(dict.fromkeys(v)) for c, v in notes.items()},
                         suggested_drop=list(dict.fromkeys(drop)), suggested_label=label,
                         categorical=categorical_columns(frame), drop_reasons=reasons)


# --------------------------------------------------------------------------------------------- models
@dataclass(frozen=True)
class ModelSpec:
    kind: str  # "bundled" | "upload" | "train" | "column"
    name: str = ""  # file name, algorithm or column
    digest: str = ""  # SHA-256 of uploaded bytes


@dataclass
class ActiveModel:
    key: str
    label: str
    description: str
    kind: str
    task: str
    predict: Callable[[pd.DataFrame], np.ndarray] | None
    spec: ModelSpec
    score: float | None = None
    score_name: str = ""
    output_column: str | None = None  # kind == "column"
    classes: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    model: Any = None  # the underlying object (read-only)
    warnings: list[str] = field(default_factory=list)  # what the loader and the compatibility check warn about
    #: columns the model treats as categorical although their dtype is numeric (from check_compatibility)
    categorical_features: list[str] = field(default_factory=list)
    #: ``(data key, feature columns, outputs)``: the model's outputs on those columns of that data when loading it
    #: measured them already (the bundled model's accuracy), so the data's outputs are not predicted twice
    known_outputs: tuple | None = None
    #: why the label column cannot be compared with this model's outputs (:func:`label_problem`), or None
    label_problem: str | None = None


def bundled_model_digest() -> str:
    path = datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL
    return sha256(path.read_bytes())


def bundled_model(data: ActiveData) -> ActiveModel:
    m = datasets.load_bundled_model()
    missing = [f for f in m.feature_names if f not in data.frame.columns]
    if missing:
        raise InputProblem(f"the bundled loans model needs the column(s) {missing}, which this data does not have; "
                           "train a model in the app or upload one that matches")
    # the threads an uploaded model gets in its sandbox (default 1): the server runs sessions (and the model check)
    # side by side on few cores, and XGBoost's threads spin between its many small calls (on 2 cores the shared
    # fit's model check took 0.5-0.7 s of CPU with one thread, 1.5-1.8 s with XGBoost's default of every core);
    # the outputs are the same
    m.booster_model.set_params(n_jobs=intake.model_threads())
    params = m.meta.get("params", {})
    acc = known = None
    if data.label_column and data.label_column == m.target:
        features = data.features
        if set(m.feature_names) <= set(features):  # the frame data_and_model() predicts on: predicted once
            pred = m.predict(data.frame[features])
            known = (data.key, tuple(features), pred)
        else:
            pred = m.predict(data.frame)
        acc = performance.score(data.frame[data.label_column].to_numpy(), pred, CLASSIFICATION)
    return ActiveModel(key=bundled_model_digest(), label="Bundled XGBoost classifier",
                       description=(f"{params.get('n_estimators', '?')} trees, at most "
                                    f"{params.get('max_leaves', '?')} leaves each, trained on all rows of the "
                                    "loans sample"),
                       kind="bundled", task=CLASSIFICATION, predict=m.predict, spec=ModelSpec("bundled"),
                       score=acc, score_name="accuracy on this data (training data: no hold-out)",
                       classes=[int(c) for c in m.classes_], model=m, known_outputs=known)


def trained_model(data: ActiveData, algorithm: str) -> ActiveModel:
    if not data.label_column:
        raise InputProblem("training needs a label column; choose it in the data settings above")
    try:
        m: TrainedModel = train_model(data.frame, data.features, data.label_column, data.categorical,
                                      data.fit_index, data.test_index, algorithm, task=data.spec.task)
    except TrainingError as exc:
        raise InputProblem(str(exc)) from None
    return ActiveModel(key=sha256("train", data.key, algorithm, m.task, m.params), label=f"{m.describe()} trained in the app",
                       description=(f"trained on {len(data.fit_index):,} fit rows to predict "
                                    f"{data.label_column!r}; scored on {len(data.test_index):,} hold-out rows"),
                       kind="train", task=m.task, predict=m.predict, spec=ModelSpec("train", algorithm),
                       score=m.holdout_score, score_name=m.score_name,
                       classes=[] if m.classes_ is None else list(m.classes_), model=m)


def column_model(data: ActiveData, column: str) -> ActiveModel:
    if column not in data.frame.columns:
        raise InputProblem(f"column {column!r} is not in the data")
    y = data.frame[column]
    if y.isna().any():
        raise InputProblem(f"the output column {column!r} has {int(y.isna().sum())} missing value(s); "
                           "every row needs a model output")
    task = data.spec.task or detect_task(y)
    if task == REGRESSION and not pd.api.types.is_numeric_dtype(y):
        raise InputProblem(f"the output column {column!r} holds text; it cannot be treated as regression outputs")
    if task == CLASSIFICATION and y.nunique() < 2:
        raise InputProblem(f"the output column {column!r} holds a single value ({y.iloc[0]!r}); there is no other "
                           "outcome to explain — choose the column of model outputs")
    values = y.to_numpy()
    classes = sorted(pd.unique(values).tolist(), key=str) if task == CLASSIFICATION else []
    mismatch = (label_problem(data.label_column, data.frame[data.label_column], classes, None)
                if task == CLASSIFICATION and data.label_column and data.label_column != column else None)
    return ActiveModel(key=sha256("column", column, pd.util.hash_pandas_object(y, index=False).to_numpy().tobytes()),
                       label=f"Model outputs from column {column!r}",
                       description=("no model: rules are fitted from this column of outputs, so their validity is "
                                    "estimated only on these rows; edited individuals cannot be scored"),
                       kind="column", task=task, predict=None, spec=ModelSpec("column", column),
                       output_column=column, classes=classes, label_problem=mismatch,
                       notes=["Validity is estimated only on the rows of this data (no model to query)."])


def allow_pickle_setting(secrets: Any = None) -> bool:
    """The operator's pickle switch: env ``TCREX_ALLOW_PICKLE=1`` or ``allow_pickle = true`` in secrets."""
    if os.environ.get("TCREX_ALLOW_PICKLE", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    try:
        value = secrets.get("allow_pickle", False) if secrets is not None else False
    except Exception:  # noqa: BLE001 - no secrets file: the default (off)
        return False
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


_sandbox_warmed = False


def warm_model_sandbox() -> None:
    """Start the model sandbox's fork server in a background thread, once per server (the Data & model page calls
    it): it imports the model libraries (seconds on a busy machine) while the user picks a file, so an upload only
    pays for reading the model (a 0.6 MB skops forest: about 0.5 s instead of 12 s)."""
    global _sandbox_warmed
    if _sandbox_warmed:
        return
    _sandbox_warmed = True
    threading.Thread(target=intake.warm_sandbox, name="tcrex-sandbox-warm-up", daemon=True).start()


def uploaded_model(data: ActiveData, blob: bytes, filename: str, allow_pickle: bool) -> ActiveModel:
    """Load an uploaded model with :func:`tcrex.intake.load_model` and check it with ``check_compatibility``."""
    if not blob:
        raise ModelFileProblem(f"the model file {filename!r} is empty (0 bytes), so there is no model in it; save "
                               "the model again (e.g. booster.save_model('model.json')) and upload that file")
    try:
        loaded = intake.load_model(blob, filename, allow_pickle=allow_pickle)
    except TCRExError as exc:
        raise ModelFileProblem(str(exc)) from None
    try:
        X = data.frame[data.features]
        report = intake.check_compatibility(loaded, X)
    except TCRExError as exc:
        raise InputProblem(str(exc)) from None
    if not report.ok:
        raise InputProblem("the model does not match the data: " + "; ".join(map(str, report.problems)))
    warnings = [str(w) for w in [*loaded.warnings, *report.warnings]]
    categorical_features = [str(c) for c in report.categorical_features if c in X.columns]
    task = loaded.task
    classes = list(loaded.classes or [])
    score, score_name, mismatch = None, "", None
    if data.label_column:
        rows = data.test_index if len(data.test_index) else data.fit_index
        try:
            pred = np.asarray(loaded.predict(data.frame.loc[rows, data.features]))
        except TCRExError:  # the score is informative only; the trial prediction above already passed
            pred = None
        truth = data.frame.loc[rows, data.label_column].to_numpy()
        where = "the test split" if len(data.test_index) else "this data (no test split)"
        if task == CLASSIFICATION:
            mismatch = label_problem(data.label_column, data.frame[data.label_column], classes, pred)
        if mismatch:
            pass  # no score: it would compare labels with outputs of another kind
        elif pred is not None and (task == CLASSIFICATION or pd.api.types.is_numeric_dtype(truth)):
            score = performance.score(truth, pred, task)
            score_name = f"{performance.score_name(task)} on {where}"
    notes = (["Loaded with pickle because the operator enabled it; only load files you trust."]
             if loaded.kind == "pickle" else [])
    return ActiveModel(key=sha256("upload", sha256(blob)), label=f"Uploaded model {filename!r}",
                       description=loaded.description or f"{loaded.kind} model, {task}", kind="upload", task=task,
                       predict=loaded.predict, spec=ModelSpec("upload", filename, sha256(blob)), score=score,
                       score_name=score_name, classes=classes, notes=notes, model=loaded,
                       warnings=list(dict.fromkeys(warnings)), categorical_features=categorical_features,
                       label_problem=mismatch)


# --------------------------------------------------------------------------------------------- model performance
def label_problem(label_column: str, labels, classes, outputs) -> str | None:
    """Why the label column cannot be compared with a classifier's outputs (its ``classes`` when known, else the
    ``outputs`` seen), as a sentence naming both sets of values; None when it can
    (:func:`tcrex.performance.label_mismatch` decides)."""
    found = label_mismatch(labels, [] if outputs is None else outputs, classes or None)
    if found is None:
        return None
    return (f"The label column {label_column!r} holds {found.removeprefix('the labels hold ')}. No accuracy or other performance figure is shown; choose "
            "the label column that holds what the model predicts (Label column, above), or a model trained on "
            "these labels.")


@dataclass
class PerformanceRows:
    """Which labelled rows the Model panel measures the model on, and how honest that is."""

    index: pd.Index
    description: str  # in words, for the panel and the report
    holdout: bool | None  # True: held out from training; False: training rows (optimistic); None: unknown


def performance_rows(data: ActiveData, model: ActiveModel) -> PerformanceRows | str:
    """The rows to measure ``model`` on, or why there is no performance to show (a sentence).

    A model trained in the app is measured on the test split it never saw; the bundled model was trained on every
    row of the loans sample, so its figures are training figures (optimistic); an uploaded model (or a column of
    outputs) is measured on the data's test split, which it may have seen in its own training."""
    if not data.label_column:
        return ("No labels: no performance. The data has no label column, so the model's outputs cannot be "
                "compared with the truth — choose the label column in the data settings to see it.")
    if model.output_column is not None and model.output_column == data.label_column:
        return ("No performance: the model's outputs are taken from the label column itself, so there is nothing "
                "to compare them with.")
    split = len(data.test_index) > 0
    rows = data.test_index if split else data.fit_index
    n = len(rows)
    if model.kind == "train":
        if split:
            return PerformanceRows(rows, f"the {n:,} hold-out rows (test split; the model was trained on the other "
                                         f"{len(data.fit_index):,} rows)", True)
        return PerformanceRows(rows, f"the {n:,} rows it was trained on (too few rows for a test split) — "
                                     "measured on the training rows, optimistic", False)
    if model.kind == "bundled":
        return PerformanceRows(rows, f"the {n:,} rows of the test split — but the bundled model was trained on "
                                     "every row of the loans sample, so these are training rows: optimistic", False)
    what = "the column's outputs" if model.kind == "column" else "the uploaded model"
    where = f"the {n:,} rows of this data's test split" if split else f"all {n:,} rows of this data (no test split)"
    return PerformanceRows(rows, f"{where}; whether {what} came from training on them is not known", None)


def class_scores(model: ActiveModel, X: pd.DataFrame) -> np.ndarray | None:
    """Class probabilities of ``model`` on ``X`` (columns in the order of ``model.classes``), or None when the
    model gives none (a column of outputs, a model file without probabilities) or they fail."""
    get = getattr(model.model, "predict_proba", None)
    if model.task != CLASSIFICATION or get is None or not model.classes:
        return None
    try:
        scores = np.asarray(get(X), dtype=np.float64)
    except Exception:  # noqa: BLE001 - scores are optional: the panel says there are no curves
        return None
    if scores.ndim == 1 and len(model.classes) == 2:
        scores = np.column_stack([1 - scores, scores])
    return scores if scores.shape == (len(X), len(model.classes)) else None


def model_performance(data: ActiveData, model: ActiveModel, y_pred: np.ndarray, positive: Any = None,
                      class_names: dict | None = None):
    """The model's performance (:func:`tcrex.performance.model_performance`) on the rows of
    :func:`performance_rows` (``y_pred``: its outputs on every row of ``data.frame``), or the sentence saying why
    there is none."""
    rows = performance_rows(data, model)
    if isinstance(rows, str):
        return rows
    pos = data.frame.index.get_indexer(rows.index)
    truth = data.frame.loc[rows.index, data.label_column].to_numpy()
    if model.task == REGRESSION and not pd.api.types.is_numeric_dtype(data.frame[data.label_column]):
        return (f"No performance: the label column {data.label_column!r} holds text, but the model is a regressor "
                "— check that the label column is the model's target.")
    scores = None
    if model.task == CLASSIFICATION:
        mismatch = label_problem(data.label_column, truth, list(model.classes), np.asarray(y_pred)[pos])
        if mismatch:  # checked before any metric
            return mismatch
        scores = class_scores(model, data.frame.loc[rows.index, data.features])
    try:
        return measure(truth, np.asarray(y_pred)[pos], task=model.task, scores=scores,
                       classes=list(model.classes) or None, positive=positive, class_names=class_names,
                       rows=rows.description, holdout=rows.holdout)
    except TCRExError as exc:
        return f"No performance: {exc}"
