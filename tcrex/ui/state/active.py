"""The active analysis: the data, model, parameters and fitted explainer in force, cached.

Page scripts in ``pages/`` stay thin: they call :func:`data_and_model` (data + model + outputs),
:func:`tcrex.ui.widgets.page.require_result` (the fitted explainer and every row's explanation, or a clear message and
``st.stop()``)
and draw.  What lives where:

* choices (which data, which model, parameters) -- plain objects in the session state (keys and accessors:
  :mod:`tcrex.ui.state.session`), so they survive page switches (widget state does not);
* parsed samples and uploads -- ``st.cache_data`` keyed on a SHA-256 of the bytes (samples on their name);
* models and fitted explainers -- per session (``st.cache_resource(scope="session")`` or a session LRU), keyed on
  SHA-256 digests of the data content, the model and ``rho``/``n_trees``; the policy (what is shared by every
  session, sizes, eviction) is :mod:`tcrex.ui.state.caching`.  A change of ``tau`` or of the target calls
  :meth:`TCREx.update` on a copy of the fitted explainer and never regrows the surrogate.

Page helpers (banners, ``require_result``) live in :mod:`tcrex.ui.widgets.page`, the sidebar in
:mod:`tcrex.ui.widgets.sidebar`. The dashboard is the only part of ``tcrex`` that imports streamlit.
"""

from __future__ import annotations

import copy
import functools
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import TCREx, ordered_labels, suggest_favourable
from tcrex.errors import TCRExError
from tcrex.intake import CodebookReport, fit_codebook
from tcrex.vocabulary import CLASSIFICATION
from tcrex.constraints import describe_constraints, pack_constraints, unpack_constraints
from tcrex.dictionary import DataDictionary, value_key
from tcrex.text import class_text, target_spec_text, target_text

from . import caching, session, shared, sources
from .sources import ActiveData, ActiveModel, DataSpec, InputProblem, ModelSpec
from tcrex.vocabulary import REGRESSION

#: Data and model of each bundled sample.
SAMPLE_MODELS = {"loans": ModelSpec("bundled"), "wine": ModelSpec("train", "xgboost"),
                 "diabetes": ModelSpec("train", "xgboost")}
DEFAULT_DATA = DataSpec("sample", "loans")


# ============================================================================================ parameters
@dataclass(frozen=True)
class Params:
    rho: float = 0.02
    tau: float = 0.9
    n_trees: int = 1
    max_cells: int = 100_000
    target: Any = None  # engine spec: None (default), a class label, or a regression threshold
    grower: str = "auto"  # surrogate grower: "auto" (hist where exact, else by size), "exact" (CART) or "hist"
    #: actionability constraints as sorted ``(feature, JSON of its spec)`` pairs (hashable); () = none
    constraints: tuple = ()

    @property
    def constraint_spec(self) -> dict:
        """The constraints as the engine's ``constraints=`` dict (``{}`` when every feature is free)."""
        return unpack_constraints(self.constraints)

    def describe_target(self, task: str | None = None, name=str) -> str:
        """The favourable outcome in words (``name`` turns a class label into its readable name)."""
        return describe_target(self.target, task, name)


def describe_target(target, task: str | None, name=str) -> str:
    """A target spec in words: the favourable outcome, or both directions (the paper's default); worded by
    :func:`tcrex.text.target_spec_text`, the one owner."""
    return target_spec_text(target, task, name)


def params() -> Params:
    """The applied parameters (the defaults until something is applied)."""
    p = session.params()
    if p is None:
        p = Params()
        session.set_params(p)
    return p


def set_params(**changes) -> None:
    if "constraints" in changes and isinstance(changes["constraints"], dict):
        changes["constraints"] = pack_constraints(changes["constraints"])
    session.set_params(replace(params(), **changes))


# ============================================================================================ uploads
def remember_blob(slot: str, filename: str, data: bytes) -> str:
    """Keep uploaded bytes for this session (the uploader widget forgets them on page switch)."""
    digest = sources.sha256(data)
    blobs = session.uploads()
    blobs[slot] = (digest, filename, data)
    kept = blobs.setdefault(f"{slot}@", caching.LRU(caching.KEPT_UPLOADS))
    active = data_spec().digest if slot == "data" else getattr(model_spec(), "digest", "")
    kept.put(digest, (digest, filename, data), keep=(active,))
    return digest


def blob(slot: str, digest: str | None = None) -> tuple[str, str, bytes] | None:
    """The latest upload in ``slot``, or the kept upload with that ``digest`` (the one a spec points to)."""
    blobs = session.uploads()
    if digest is None:
        return blobs.get(slot)
    return blobs.get(f"{slot}@", {}).get(digest)


# ============================================================================================ data
@st.cache_data(show_spinner="Loading the sample data ...", max_entries=caching.SAMPLE_FRAMES)
def _sample(name: str) -> tuple[pd.DataFrame, str, tuple[str, ...]]:
    return sources.load_sample_frame(name)


@st.cache_data(show_spinner="Reading the uploaded table ...", max_entries=caching.PARSED_UPLOADS)
def parse_upload(digest: str, filename: str, _data: bytes, reading: tuple = ()) -> sources.TableFindings:
    """Parse uploaded bytes once per content digest and reading choices (``_data`` is not hashed; ``digest`` is
    its SHA-256; ``reading``: "How to read this file", see :func:`tcrex.ui.state.sources.read_table`)."""
    return sources.read_table(_data, filename, reading)


@st.cache_data(show_spinner=False, max_entries=caching.PREPARED_DATA)
def _prepared(spec: DataSpec, raw_digest: str, _raw: pd.DataFrame, detected: tuple[str, ...]) -> ActiveData:
    return sources.prepare_frame(_raw, spec, detected)


def data_spec() -> DataSpec:
    """The active data choice (the loans sample until another is chosen)."""
    spec = session.data_spec()
    if spec is None:
        spec = DEFAULT_DATA
        session.set_data_spec(spec)
    return spec


def model_spec() -> ModelSpec | None:
    """The active model choice (the loans sample's bundled model until another is chosen)."""
    if not session.has_model_spec():
        session.set_model_spec(SAMPLE_MODELS["loans"])
    return session.model_spec()


def use_sample(name: str) -> None:
    """Switch to a bundled sample and its default model (resetting what depended on the old data)."""
    session.set_notice("; ".join(use_data(DataSpec("sample", name), SAMPLE_MODELS[name])) or None)


def use_data(spec: DataSpec, model: ModelSpec | None) -> list[str]:
    """Switch to new data: everything that depends on the old data (model, target, constraints, the chosen
    individual, the last result) is reset. Returns notes saying what was reset."""
    notes = []
    old_data, old_model = session.data_spec(), session.model_spec()
    changed = old_data != spec
    if changed and old_model is not None and old_model != model:
        what = {"upload": f"the uploaded model {old_model.name!r}", "train": "the model trained in the app",
                "bundled": "the bundled model", "column": f"the output column {old_model.name!r}"}[old_model.kind]
        notes.append(f"{what} was set aside because the data changed"
                     + ("; upload it again to use it with this data" if old_model.kind == "upload" else ""))
    session.set_data_spec(spec)
    session.set_model_spec(model)
    if changed:
        had_constraints = bool(params().constraints)
        session.clear_data_dependents()
        if had_constraints:
            notes.append("the actionability constraints were cleared (they named the old data's features)")
    _reset_target()
    return notes


def use_model(spec: ModelSpec | None) -> list[str]:
    """Switch to another model: the favourable outcome and the actionability constraints start afresh. Returns
    notes saying what was reset (also kept for the Data & model page's notice)."""
    had_constraints = bool(params().constraints) if session.params() is not None else False
    changed = session.model_spec() != spec
    session.set_model_spec(spec)
    _reset_target()
    notes = []
    if changed and had_constraints:
        notes.append("the actionability constraints were cleared because the model changed; set them again in the "
                     "sidebar's *Actionability constraints* if they still apply")
    if notes:
        note_for_user("; ".join(notes))
    return notes


def note_for_user(text: str) -> None:
    """Keep a note about what the app reset, for the next page to show (joined with any pending note)."""
    old = session.notice()
    session.set_notice(f"{old}. {text[0].upper() + text[1:]}" if old else text[0].upper() + text[1:])


def _reset_target() -> None:
    """New data or model: the target and the constraints (which name features) start afresh."""
    if session.params() is not None:
        set_params(target=None, constraints=())
    session.set_favourable_for(None)  # the new data or model starts from its own favourable outcome
    session.clear_widgets(session.TARGET_WIDGETS)


def user_class_names(data_key: str) -> dict:
    return session.class_names(data_key)


def set_class_names(data_key: str, names: dict) -> None:
    """Name the classes of this data (empty names are dropped: the label itself is shown)."""
    clean = {k: str(v).strip() for k, v in names.items() if str(v or "").strip()}
    session.set_class_names(data_key, clean)


def user_value_labels(data_key: str) -> dict | None:
    """The codebook the user gave this data (None: the data's own, e.g. the loans sample's file)."""
    return session.value_labels(data_key)


def set_value_labels(data_key: str, book: dict) -> None:
    """The codebook of this data from now on, on every page (``{feature: {value: label}}``; {} for none)."""
    session.set_value_labels(data_key, book)


def clear_value_labels(data_key: str) -> None:
    """Back to the data's own codebook (the sample's file; none for an upload)."""
    session.clear_value_labels(data_key)


def user_dictionary(data_key: str) -> DataDictionary | None:
    """The data dictionary the user gave this data (None: none). A saved one that no longer reads (a workspace
    from elsewhere) is dropped with a note, never half-applied."""
    text = session.dictionary_text(data_key)
    if text is None:
        return None
    try:
        return _read_dictionary(text)
    except TCRExError as exc:
        session.set_dictionary_text(data_key, None)
        note_for_user(f"the saved data dictionary could not be read and was set aside ({exc})")
        return None


@functools.lru_cache(maxsize=32)
def _read_dictionary(text: str) -> DataDictionary:
    return DataDictionary.from_json(text)


def set_dictionary(data_key: str, dictionary: DataDictionary | None) -> None:
    """The data dictionary of this data from now on, on every page (None: none)."""
    session.set_dictionary_text(data_key, None if dictionary is None or not len(dictionary) else dictionary.to_json())


def merged_labels(book: dict, dictionary: DataDictionary | None) -> dict:
    """The codebook ``book`` with the dictionary's value labels (codes' meanings included) over it, value by value
    (``-2`` and ``-2.0`` are one value: :func:`tcrex.dictionary.value_key`)."""
    if dictionary is None:
        return book
    out = {f: dict(v) for f, v in book.items()}
    for feature, labels in dictionary.value_labels.items():
        keys = {value_key(v) for v in labels}
        out[feature] = {**{v: lab for v, lab in out.get(feature, {}).items() if value_key(v) not in keys}, **labels}
    return out


def _with_class_names(data: ActiveData) -> ActiveData:
    """The data with the user's class names over the metadata's, the user's codebook instead of the data's own,
    and the user's data dictionary (its labels over the codebook's) (a copy: cached data is shared)."""
    names = user_class_names(data.key)
    book = user_value_labels(data.key)
    dictionary = user_dictionary(data.key)
    if not names and book is None and dictionary is None:
        return data
    book = data.value_labels if book is None else book
    if dictionary is not None:
        book = merged_labels(book or {}, dictionary)
    return replace(data, class_names={**data.class_names, **names}, value_labels=book, dictionary=dictionary)


def engine_dictionary(ws: "DataAndModel") -> DataDictionary | None:
    """The dictionary the fit takes (``TCREx(dictionary=...)``): the user's entries for the features of ``ws``,
    their kinds left to the column table (the dashboard's one owner of typing: *use as* on Data & model), no
    special codes on a column used as categorical, and their actionability left to the constraints editor (the
    dashboard's one owner of what applies: a dictionary's declared actionability becomes applied constraints
    when the dictionary is applied, and the editor may change them). None without a dictionary."""
    return _dictionary_for_fit(ws, actionability=False)


def export_dictionary(ws: "DataAndModel") -> DataDictionary | None:
    """The dictionary a rules export carries: :func:`engine_dictionary` with the user's actionability and history
    flags kept (words and declarations only: put on the fitted explainer with ``update(dictionary=...)``, which
    changes no rule and no constraint -- what applies stays the constraints editor's), so a file read elsewhere
    says which columns describe the past. None without a dictionary."""
    return _dictionary_for_fit(ws, actionability=True)


def _dictionary_for_fit(ws: "DataAndModel", actionability: bool) -> DataDictionary | None:
    d = ws.data.dictionary
    if d is None:
        return None
    categorical = set(ws.categorical)
    features = set(ws.features)
    kept = {} if actionability else {"actionability": None, "history": False}
    entries = tuple(replace(e, kind=None, order=(), codes=() if e.name in categorical else e.codes, **kept)
                    for e in d.entries if e.name in features)
    entries = tuple(e for e in entries if not e.is_empty())
    return DataDictionary(entries) if entries else None


def codebook_report(ws: "DataAndModel", ex: TCREx) -> CodebookReport:
    """The data's codebook matched to the explainer's features: the labels in force and what was left out (the
    label column's entry names its classes: in the data, not a feature)."""
    return fit_codebook(ws.data.value_labels or {}, ex.schema_, ws.data.label_column)


def _with_labels(ex: TCREx, ws: "DataAndModel", base: TCREx | None = None) -> TCREx:
    """``ex`` with the data's codebook in force (a copy when ``ex`` is ``base``, a cached explainer other fits
    start from); labels change words only, so nothing is re-derived."""
    wanted = codebook_report(ws, ex).labels
    if (ex.value_labels or {}) == wanted:
        return ex
    if ex is base:
        ex = copy.deepcopy(ex)
    return ex.update(value_labels=wanted)


def active_data() -> ActiveData:
    """The active data set (raises :class:`InputProblem` when an upload cannot be used), with the class names the
    user gave."""
    return _with_class_names(_active_data())


def _active_data() -> ActiveData:
    spec = data_spec()
    if spec.kind == "sample":
        if spec == DataSpec("sample", spec.name):  # the plain sample: one read-only copy per server
            return shared.sample_data(spec.name)
        frame, label, categorical = _sample(spec.name)
        data = _prepared(replace(spec, label=label, categorical=categorical), f"sample:{spec.name}", frame,
                         categorical)
        return sources.describe_sample(data, spec.name)
    stored = blob("data", spec.digest)
    if stored is None:
        # the active upload is gone (a new session, or evicted): switch back to the bundled sample properly -- its
        # own model, no old constraints or selections -- and say so, instead of keeping a model for other data
        notes = use_data(DEFAULT_DATA, SAMPLE_MODELS[DEFAULT_DATA.name])
        note_for_user(f"the uploaded file {spec.name!r} is no longer in this session, so the app switched back to "
                      "the loans sample and its bundled model" + "".join(f"; {n}" for n in notes)
                      + "; upload the file again to use it")
        raise InputProblem(f"the uploaded file {spec.name!r} is no longer in this session; the loans sample is "
                           "active again — upload the file again to use it")
    digest, filename, raw = stored
    table = parse_upload(digest, filename, raw, spec.reading)
    data = _prepared(spec, digest, table.frame, tuple(table.categorical))
    return replace(data, label=f"Upload: {filename}",
                   description=(f"{filename}: {data.n_rows:,} rows, {len(data.features)} features"
                                + (f", label column {data.label_column!r}" if data.label_column
                                   else ", no label column")))


# ============================================================================================ model
@st.cache_resource(scope="session", show_spinner="Training the model ...", max_entries=caching.TRAINED_MODELS)
def _trained(data_key: str, algorithm: str, task: str | None, _data: ActiveData) -> ActiveModel:
    return sources.trained_model(_data, algorithm)


@st.cache_resource(scope="session", show_spinner="Loading the model ...", max_entries=caching.UPLOADED_MODELS)
def _uploaded(data_key: str, digest: str, filename: str, allow_pickle: bool, _data: ActiveData,
              _blob: bytes) -> ActiveModel:
    return sources.uploaded_model(_data, _blob, filename, allow_pickle)


@st.cache_resource(scope="session", show_spinner=False, max_entries=caching.BUNDLED_MODELS)
def _bundled(data_key: str, _data: ActiveData) -> ActiveModel:
    return sources.bundled_model(_data)


def allow_pickle() -> bool:
    """Whether the operator enabled pickle loading (env TCREX_ALLOW_PICKLE=1 or secrets allow_pickle=true)."""
    try:
        secrets = st.secrets
        secrets.to_dict()  # raises when there is no secrets file
    except Exception:  # noqa: BLE001 - no secrets file: pickle stays off
        secrets = None
    return sources.allow_pickle_setting(secrets)


def active_model(data: ActiveData | None = None, spec: ModelSpec | None = None) -> ActiveModel:
    """The active model, or the model ``spec`` on the active data (raises :class:`InputProblem` when none is chosen
    or it does not fit the data)."""
    data = data if data is not None else active_data()
    spec = spec if spec is not None else model_spec()
    if spec is None:
        raise sources.NoModelYet(sources.NO_MODEL_YET)
    if shared.is_shared_data(data.spec) and shared.is_shared_model(spec):  # bundled or trained in the app
        return shared.model(data, spec)
    if spec.kind == "bundled":
        return _bundled(data.key, data)
    if spec.kind == "train":
        return _trained(data.key, spec.name, data.spec.task, data)
    if spec.kind == "column":
        return sources.column_model(data, spec.name)
    stored = blob("model", spec.digest)
    if stored is None:
        raise InputProblem("the uploaded model is no longer in this session; upload it again")
    return _uploaded(data.key, stored[0], stored[1], allow_pickle(), data, stored[2])


def model_problem(spec: ModelSpec) -> Exception | None:
    """Why the model ``spec`` cannot be used with the active data (the exception; None: it can), found without
    switching to it:
    a file that fails to load or does not match the data must change nothing else (a wrong upload
    wiped every constraint, as switching models does)."""
    try:
        active_model(spec=spec)
    except (InputProblem, TCRExError) as exc:
        return exc
    return None


# ============================================================================================ data and model
@dataclass
class DataAndModel:
    """Data, model and the model's output on every row (what every page starts from; pages call it ``ws``). Not
    to be confused with a saved workspace (:mod:`tcrex.ui.state.workspace`), which only records the choices."""

    data: ActiveData
    model: ActiveModel
    X: pd.DataFrame  # feature columns only, every row
    y_pred: np.ndarray  # model output on every row of X

    @property
    def task(self) -> str:
        return self.model.task

    @property
    def features(self) -> list[str]:
        return list(self.X.columns)

    @property
    def categorical(self) -> list[str]:
        """Categorical features: the data's, plus those an uploaded model treats as categorical."""
        extra = [c for c in getattr(self.model, "categorical_features", []) if c in self.X.columns]
        return [c for c in self.X.columns if c in self.data.categorical or c in extra]

    def key(self) -> str:
        return sources.sha256(self.data.key, self.model.key)

    def feature_name(self, column) -> str:
        """A column as pages name it: its dictionary title with the name ("repayment status last month
        (status_1)"), else the name (:meth:`tcrex.ui.state.sources.ActiveData.feature_name`)."""
        return self.data.feature_name(column)

    def outcome_name(self, value) -> str:
        return f"{value:.4g}" if self.task == REGRESSION else self.class_name(value)

    @property
    def classes(self) -> list:
        """The classes the model outputs on the data (empty for regression), sorted as text."""
        if self.task == REGRESSION:
            return []
        return sorted((v.item() if isinstance(v, np.generic) else v for v in pd.unique(self.y_pred)), key=str)

    def class_name(self, value) -> str:
        """A class label as people read it: the name the user gave it or the data's metadata's ("approved"),
        else the label."""
        return class_text(value, self.data.class_names or None)

    @property
    def class_names(self) -> dict | None:
        """The classes' readable names for the engine's renderers (``class_names=`` of the figures, the text
        summary and the report), or None when the data names none (they then say "output = 1")."""
        return dict(self.data.class_names) or None if self.task != REGRESSION else None

    def target_name(self, target) -> str:
        """An engine :class:`~tcrex.Target` in words, with class names ("approved", not "output = 1"); the top
        (bottom) run of ordered labels as "7 or better" ("2 or lower"): :func:`tcrex.text.target_text`."""
        order = sorted(self.classes, key=float) if target.classes is not None and ordered_labels(self.classes) \
            else None
        return target_text(target.classes, target.interval, self.class_name, ordered_classes=order)

    def favourable_suggestion(self):
        """The favourable outcome to start from and why (:func:`tcrex.suggest_favourable`): the data's metadata,
        class labels that read as favourable or adverse, the label column's name ("RiskPerformance": 0), "this
        class or better" for ordinal labels, higher or lower across the mean for regression."""
        label = self.data.label_column or self.model.output_column
        column = self.data.label_column
        labels = self.data.frame[column].loc[self.X.index] if column in self.data.frame.columns else None
        return suggest_favourable(self.task, self.classes, label=label, named=self.data.favourable,
                                  y=self.y_pred, labels=labels)

    def favourable_default(self) -> Any:
        """The target the dashboard starts from (:meth:`favourable_suggestion`); None: any other class."""
        return self.favourable_suggestion().target


def data_and_model() -> DataAndModel:
    """Data, model and outputs (raises :class:`InputProblem` with what to change)."""
    data = active_data()
    model = active_model(data)
    features = [c for c in data.features if c != model.output_column]
    if not features:
        raise InputProblem("no feature columns are left besides the output column")
    X = data.frame[features]

    def outputs() -> np.ndarray:
        if model.output_column is not None:
            return data.frame[model.output_column].to_numpy()
        known = model.known_outputs
        if known is not None and known[:2] == (data.key, tuple(features)):
            y = known[2]  # loading the model predicted exactly this frame already (to measure it)
        else:
            try:
                y = np.asarray(model.predict(X))
            except Exception as exc:  # noqa: BLE001 - foreign model code: explain the mismatch
                raise InputProblem(f"the model failed to predict on this data ({type(exc).__name__}: {exc}); check "
                                   "that its feature names, order and types match the data's columns") from None
        if y.ndim != 1 or len(y) != len(X):
            raise InputProblem(f"the model returned outputs of shape {y.shape} for {len(X)} rows; it must return "
                               "one label or value per row")
        if pd.isna(y).any():
            raise InputProblem(f"the model returned {int(pd.isna(y).sum())} missing output(s)")
        return y

    y = caching.cached("outputs", sources.sha256(data.key, model.key),
                       lambda: shared.model_outputs(data, model, outputs))
    return DataAndModel(data=data, model=model, X=X, y_pred=y)


def model_performance(ws: DataAndModel):
    """The active model's performance on labelled rows (:func:`tcrex.ui.state.sources.model_performance`: a
    :class:`tcrex.performance.ModelPerformance`, or the sentence saying why there is none), computed once per data,
    model and favourable outcome. Binary curves are drawn for the favourable class (the sidebar's choice, else the
    data's, else the last class)."""
    target = params().target
    key = sources.sha256("performance", ws.key(), repr(_performance_positive(ws, target)))
    return caching.cached("performance", key, lambda: shared.model_view(ws.data, ws.model, "performance", key,
                                                                        lambda: measure_model(ws, target)))


def _performance_positive(ws: DataAndModel, target) -> Any:
    """The class the binary curves are drawn for: the favourable class chosen (``target``), else the data's."""
    if ws.task != CLASSIFICATION:
        return None
    if target is not None and not isinstance(target, (tuple, list, dict)):
        return target
    default = ws.favourable_default()
    return None if isinstance(default, (tuple, list, dict)) else default


def measure_model(ws: DataAndModel, target=None):
    """:func:`model_performance` without the session cache (``target``: the favourable outcome in force)."""
    return sources.model_performance(ws.data, ws.model, ws.y_pred, positive=_performance_positive(ws, target),
                                     class_names=ws.class_names)


def try_data_and_model() -> tuple[DataAndModel | None, str | None]:
    try:
        return data_and_model(), None
    except (InputProblem, TCRExError) as exc:
        return None, str(exc)


# ============================================================================================ explainer
#: Seconds the dashboard lets :meth:`TCREx.fit_findings` search for a better setting after a degenerate fit.
FINDINGS_BUDGET = 4.0


@dataclass
class FitResult:
    """A fitted explainer for the current parameters, and every row's explanation."""

    explainer: TCREx
    explanations: pd.DataFrame  # ex.explain(X) for every row of the data
    params: Params
    fit_key: str
    key: str
    fit_seconds: float
    update_seconds: float | None
    feature_actions: pd.DataFrame | None = field(default=None, repr=False)  # every row's (:meth:`actions`)
    metarule_trees: dict = field(default_factory=dict, repr=False)  # drawn by Global rules (zooming reuses them)
    fit_findings: list | None = field(default=None, repr=False)  # what the fit says too little about (:meth:`findings`)
    findings_names: dict = field(default_factory=dict, repr=False)  # the class names ``fit_findings`` is worded in

    @property
    def n_rules(self) -> int:
        return sum(t.n_rules for t in self.explainer.targets_)

    @property
    def n_metarules(self) -> int:
        return sum(len(t.metarules) for t in self.explainer.targets_)

    @property
    def n_cells(self) -> int:
        return sum(t.n_cells for t in self.explainer.targets_)

    def findings(self, class_names: dict | None = None) -> list:
        """:meth:`TCREx.fit_findings` of this fit (every row's explanations; the suggestion searched within
        :data:`FINDINGS_BUDGET` seconds), outcomes named by ``class_names``; computed once per set of names."""
        names = dict(class_names or {})
        if self.fit_findings is None or self.findings_names != names:
            self.fit_findings = self.explainer.fit_findings(explanations=self.explanations, budget=FINDINGS_BUDGET,
                                                            class_names=names or None)
            self.findings_names = names
        return self.fit_findings

    def actions(self, ws: DataAndModel) -> pd.DataFrame:
        """``feature_actions`` for every row (computed once)."""
        if self.feature_actions is None:
            self.feature_actions = self.explainer.feature_actions(ws.X, y_pred=ws.y_pred)
        return self.feature_actions


def labels_key(ws: DataAndModel) -> str:
    """The codebook's part of a fit result's key: a new label is a new result (words change, not rules)."""
    book = ws.data.value_labels or {}
    return sources.sha256("labels", sorted((f, sorted((repr(k), v) for k, v in labels.items()))
                                           for f, labels in book.items()))


def fit_key(ws: DataAndModel, p: Params) -> str:
    return sources.sha256("fit", ws.data.key, ws.model.key, p.rho, p.n_trees, p.max_cells, p.grower,
                          sorted(ws.categorical), list(ws.X.columns), _dictionary_json(ws))


def _dictionary_json(ws: DataAndModel) -> str:
    """The fit's dictionary as text (a new title or code is a new fit: the engine takes the dictionary in ``fit``)."""
    d = engine_dictionary(ws)
    return "" if d is None else d.to_json()


def _target_spec(ws: DataAndModel, p: Params):
    return p.target


def resolve_favourable(ws: DataAndModel) -> None:
    """Once per data and model: start from the suggested favourable outcome
    (:meth:`DataAndModel.favourable_suggestion`; the loans sample: approved), so nobody who already has it is told how to lose it. Unless the data's metadata
    names it, the outcome is *suggested*, not confirmed: the Data & model page asks (:func:`outcome_confirmed`).
    A choice made afterwards (including "both directions") stands until the data or model changes."""
    if session.favourable_for() == ws.key():
        return
    session.set_favourable_for(ws.key())
    answers = session.confirmed_outcomes()
    suggestion = ws.favourable_suggestion()
    if ws.data.favourable is not None and suggestion.confident:  # the data's own metadata: nothing to ask
        answers.setdefault(ws.key(), suggestion.target)
    start = answers.get(ws.key(), suggestion.target)
    if start is not None and params().target is None:
        set_params(target=start)
        session.clear_widgets(session.TARGET_WIDGETS)


def outcome_confirmed(ws: DataAndModel) -> bool:
    """Whether the favourable outcome of this data and model was confirmed (or named by the data)."""
    return ws.key() in session.confirmed_outcomes()


def confirm_outcome(ws: DataAndModel, target, names: dict | None = None) -> None:
    """The user's answer to "which outcome is favourable?" (and the classes' names): applied to every page."""
    if names is not None:
        set_class_names(ws.data.key, names)
    set_params(target=target)
    session.confirmed_outcomes()[ws.key()] = target
    session.clear_widgets(session.TARGET_WIDGETS)  # the sidebar's outcome widgets restart from the answer


def _unfitted(ws: DataAndModel, p: Params) -> TCREx:
    """The explainer the app fits for ``p`` (one construction for the fit and its grid preview)."""
    categorical = ws.categorical
    numeric = [c for c in ws.X.columns if c not in categorical]
    return TCREx(rho=p.rho, tau=p.tau, n_trees=p.n_trees, max_cells=p.max_cells, target=_target_spec(ws, p),
                 task=ws.task, categorical_features=categorical, numeric_features=numeric,
                 constraints=p.constraint_spec, grower=p.grower, random_state=0,  # {}: every feature free
                 dictionary=engine_dictionary(ws))


def grid_preview(ws: DataAndModel, p: Params) -> list:
    """Per target, the metarule grid a fit with ``p`` would build (:meth:`TCREx.grid_sizes`: the surrogate is
    grown, nothing per cell), once per session and parameters; raises TCRExError as the fit would."""
    fit_pos = ws.X.index.get_indexer(ws.data.fit_index)
    key = sources.sha256("grid", fit_key(ws, p), p.tau, repr(p.target), p.constraints)
    return caching.cached("grid_previews", key, lambda: _unfitted(ws, p).grid_sizes(
        ws.X.loc[ws.data.fit_index], y_pred=ws.y_pred[fit_pos]))


def _fit_base(ws: DataAndModel, p: Params, progress: Callable[[str, float], None]) -> tuple[TCREx, float]:
    ex = _unfitted(ws, p)
    fit_pos = ws.X.index.get_indexer(ws.data.fit_index)
    t0 = time.perf_counter()
    ex.fit(ws.X.loc[ws.data.fit_index], y_pred=ws.y_pred[fit_pos], progress=progress)
    return _with_labels(ex, ws), time.perf_counter() - t0


def _shared_build(ws: DataAndModel, p: Params, key: str) -> FitResult:
    """The first fit of a server-wide result (no progress bar: it may serve many sessions)."""
    ex, fit_seconds = _fit_base(ws, p, lambda step, fraction: None)
    return FitResult(explainer=ex, explanations=ex.explain(ws.X, y_pred=ws.y_pred), params=p,
                     fit_key=fit_key(ws, p), key=key, fit_seconds=fit_seconds, update_seconds=None)


def explainer_result(ws: DataAndModel, p: Params | None = None, show_progress: bool = True) -> FitResult:
    """The fitted explainer for ``p`` (default: the active parameters); raises TCRExError on failure.

    The surrogate is grown once per (data, model, rho, n_trees, max_cells, grower); tau, target and constraint
    changes derive a copy with :meth:`TCREx.update` (never regrowing the surrogate).
    """
    p = p or params()
    fkey = fit_key(ws, p)
    unlabelled = sources.sha256(fkey, p.tau, repr(p.target), p.constraints)  # the shared fits' key
    key = sources.sha256(unlabelled, labels_key(ws))
    results = caching.session_lru("results")
    if key in results:
        session.set_current_fit(results.lookup(key))
        return results[key]
    bases = caching.session_lru("bases")
    update_seconds = None
    # a bundled sample with a shared model and default surrogate parameters: one fit per server (tcrex/ui/state/shared.py)
    hit = shared.lookup(ws, p, fkey, default=Params(target=ws.favourable_default()), build=_shared_build)
    if hit is not None and hit.key == unlabelled and (hit.explainer.value_labels or {}) == codebook_report(
            ws, hit.explainer).labels:  # the shared fit carries the sample's own codebook
        session.set_current_fit(hit)
        return hit
    if hit is not None and fkey not in bases:
        bases.put(fkey, (hit.explainer, hit.fit_seconds))
    if fkey in bases:
        base, fit_seconds = bases.lookup(fkey)
        spec = p.constraint_spec
        if base.tau == p.tau and base.target == p.target and (base.constraints or {}) == spec:
            ex = base
        else:
            ex = copy.deepcopy(base)
            t0 = time.perf_counter()
            ex.update(tau=p.tau, target="default" if p.target is None else p.target, constraints=spec)
            update_seconds = time.perf_counter() - t0
    else:
        bar = st.progress(0.0, text="Fitting the T-CREx explainer ...") if show_progress else None

        def progress(step: str, fraction: float) -> None:
            if bar is not None:
                bar.progress(min(max(float(fraction), 0.0), 1.0), text=f"Fitting the T-CREx explainer: {step}")

        try:
            ex, fit_seconds = _fit_base(ws, p, progress)
        finally:
            if bar is not None:
                bar.empty()
        bases.put(fkey, (ex, fit_seconds))
    ex = _with_labels(ex, ws, base=bases.lookup(fkey)[0] if fkey in bases else None)
    explanations = ex.explain(ws.X, y_pred=ws.y_pred)
    result = FitResult(explainer=ex, explanations=explanations, params=p, fit_key=fkey, key=key,
                       fit_seconds=fit_seconds, update_seconds=update_seconds)
    results.put(key, result)
    session.set_current_fit(result)
    return result


def current() -> tuple[DataAndModel | None, FitResult | None, str | None]:
    """The data and model (with outputs) and the fit result for the active choices, or the message that says what
    to change."""
    ws, problem = try_data_and_model()
    if ws is None:
        return None, None, problem
    resolve_favourable(ws)
    try:
        result = explainer_result(ws)
    except TCRExError as exc:
        session.set_fit_error(exc)
        return ws, None, str(exc)
    session.set_fit_error(None)
    session.set_last_good_fit(ws.key(), result)
    return ws, result, None


def last_good_result(ws: DataAndModel) -> FitResult | None:
    """The last successful fit on this data and model (kept while new parameters fail)."""
    stored = session.last_good_fit()
    return stored[1] if stored is not None and stored[0] == ws.key() else None


def fit_error() -> TCRExError | None:
    """The error of the last fit attempt, when it failed."""
    return session.fit_error()


def constraints_summary(result: FitResult | None) -> str:
    """One line: the explainer's active constraints ("none" when every feature is free)."""
    if result is None:
        spec = params().constraint_spec
        return describe_constraints(spec)
    c = getattr(result.explainer, "constraints_", None)
    return "none" if c is None else c.describe()
