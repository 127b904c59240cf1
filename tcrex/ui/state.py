"""Dashboard state: the active data, model, parameters and fitted explainer, cached.

Page scripts in ``pages/`` stay thin: they call :func:`workspace` (data + model + outputs),
:func:`require_result` (the fitted explainer and every row's explanation, or a clear message and ``st.stop()``)
and draw.  What lives where:

* choices (which data, which model, parameters) -- plain objects in ``st.session_state`` under ``tcrex.*`` keys,
  so they survive page switches (widget state does not);
* parsed samples and uploads -- ``st.cache_data`` keyed on a SHA-256 of the bytes (samples on their name);
* models and fitted explainers -- per session (``st.cache_resource(scope="session")`` or a small LRU in session
  state), keyed on SHA-256 digests of the data content, the model and ``rho``/``n_trees``.  A change of ``tau``
  or of the target calls :meth:`TCREx.update` on a copy of the fitted explainer and never regrows the surrogate.

This package is the only part of ``tcrex`` that imports streamlit.
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import TCREx, TCRExError
from tcrex.constraints import describe_constraints, pack_constraints, unpack_constraints

from . import shared  # [h16 hook]
from . import sources
from .sources import ActiveData, ActiveModel, DataSpec, InputProblem, ModelSpec
from tcrex import CLASSIFICATION, REGRESSION

DATA_KEY = "tcrex.data_spec"
MODEL_KEY = "tcrex.model_spec"
PARAMS_KEY = "tcrex.params"
BLOBS_KEY = "tcrex.blobs"
CACHE_KEY = "tcrex.cache"
LAST_FIT_KEY = "tcrex.last_fit"

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
    grower: str = "exact"  # surrogate grower: "exact" (CART, the paper's) or "hist" (binned, faster on big data)
    #: actionability constraints as sorted ``(feature, JSON of its spec)`` pairs (hashable); () = none
    constraints: tuple = ()

    @property
    def constraint_spec(self) -> dict:
        """The constraints as the engine's ``constraints=`` dict (``{}`` when every feature is free)."""
        return unpack_constraints(self.constraints)

    def describe_target(self, task: str | None = None) -> str:
        if self.target is None:
            return "default (every other outcome)" if task != REGRESSION else "default (split at the mean output)"
        if task == REGRESSION:
            return f"split at {self.target:.4g}"
        return f"class {self.target}"


def params() -> Params:
    return st.session_state.setdefault(PARAMS_KEY, Params())


def set_params(**changes) -> None:
    if "constraints" in changes and isinstance(changes["constraints"], dict):
        changes["constraints"] = pack_constraints(changes["constraints"])
    st.session_state[PARAMS_KEY] = replace(params(), **changes)


# ============================================================================================ uploads
def remember_blob(slot: str, filename: str, data: bytes) -> str:
    """Keep uploaded bytes for this session (the uploader widget forgets them on page switch)."""
    digest = sources.sha256(data)
    blobs = st.session_state.setdefault(BLOBS_KEY, {})
    blobs[slot] = (digest, filename, data)
    return digest


def blob(slot: str) -> tuple[str, str, bytes] | None:
    return st.session_state.get(BLOBS_KEY, {}).get(slot)


# ============================================================================================ data
@st.cache_data(show_spinner="Loading the sample data ...", max_entries=8)
def _sample(name: str) -> tuple[pd.DataFrame, str, tuple[str, ...]]:
    return sources.load_sample_frame(name)


@st.cache_data(show_spinner="Reading the uploaded table ...", max_entries=4)
def parse_upload(digest: str, filename: str, _data: bytes) -> sources.TableFindings:
    """Parse uploaded bytes once per content digest (``_data`` is not hashed; ``digest`` is its SHA-256)."""
    return sources.read_table(_data, filename)


@st.cache_data(show_spinner=False, max_entries=8)
def _prepared(spec: DataSpec, raw_digest: str, _raw: pd.DataFrame, detected: tuple[str, ...]) -> ActiveData:
    return sources.prepare_frame(_raw, spec, detected)


def data_spec() -> DataSpec:
    return st.session_state.setdefault(DATA_KEY, DEFAULT_DATA)


def model_spec() -> ModelSpec | None:
    return st.session_state.setdefault(MODEL_KEY, SAMPLE_MODELS["loans"])


def use_sample(name: str) -> None:
    """Switch to a bundled sample and its default model."""
    st.session_state[DATA_KEY] = DataSpec("sample", name)
    st.session_state[MODEL_KEY] = SAMPLE_MODELS[name]
    _reset_target()


def use_data(spec: DataSpec, model: ModelSpec | None) -> None:
    st.session_state[DATA_KEY] = spec
    st.session_state[MODEL_KEY] = model
    _reset_target()


def use_model(spec: ModelSpec | None) -> None:
    st.session_state[MODEL_KEY] = spec
    _reset_target()


def _reset_target() -> None:
    """New data or model: the target and the constraints (which name features) start afresh."""
    if PARAMS_KEY in st.session_state:
        set_params(target=None, constraints=())
    for k in list(st.session_state):
        if str(k).startswith("param_target"):
            del st.session_state[k]


def active_data() -> ActiveData:
    """The active data set (raises :class:`InputProblem` when an upload cannot be used)."""
    spec = data_spec()
    if spec.kind == "sample":
        if spec == DataSpec("sample", spec.name):  # [h16 hook] the plain sample: one read-only copy per server
            return shared.sample_data(spec.name)  # [h16 hook] (tcrex/ui/shared.py)
        frame, label, categorical = _sample(spec.name)
        data = _prepared(replace(spec, label=label, categorical=categorical), f"sample:{spec.name}", frame,
                         categorical)
        data = copy.copy(data)
        data.label = sources.SAMPLE_LABELS.get(spec.name, spec.name)
        data.description = sources.datasets.SAMPLES[spec.name].description
        return data
    stored = blob("data")
    if stored is None or stored[0] != spec.digest:
        st.session_state[DATA_KEY] = DEFAULT_DATA
        raise InputProblem("the uploaded file is no longer in this session; upload it again")
    digest, filename, raw = stored
    table = parse_upload(digest, filename, raw)
    data = copy.copy(_prepared(spec, digest, table.frame, tuple(table.categorical)))
    data.label = f"Upload: {filename}"
    data.description = (f"{filename}: {data.n_rows:,} rows, {len(data.features)} features"
                        + (f", label column {data.label_column!r}" if data.label_column else ", no label column"))
    return data


# ============================================================================================ model
@st.cache_resource(scope="session", show_spinner="Training the model ...", max_entries=6)
def _trained(data_key: str, algorithm: str, _data: ActiveData) -> ActiveModel:
    return sources.trained_model(_data, algorithm)


@st.cache_resource(scope="session", show_spinner="Loading the model ...", max_entries=4)
def _uploaded(data_key: str, digest: str, filename: str, allow_pickle: bool, _data: ActiveData,
              _blob: bytes) -> ActiveModel:
    return sources.uploaded_model(_data, _blob, filename, allow_pickle)


@st.cache_resource(scope="session", show_spinner=False, max_entries=4)
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


def active_model(data: ActiveData | None = None) -> ActiveModel:
    """The active model (raises :class:`InputProblem` when none is chosen or it does not fit the data)."""
    data = data if data is not None else active_data()
    spec = model_spec()
    if spec is None:
        raise InputProblem("no model is chosen yet; on the Data & model page, train one, upload one or pick the "
                           "column that holds the model's outputs")
    if shared.is_shared_data(data.spec) and shared.is_shared_model(spec):  # [h16 hook] server-wide model
        return shared.model(data, spec)  # [h16 hook]
    if spec.kind == "bundled":
        return _bundled(data.key, data)
    if spec.kind == "train":
        return _trained(data.key, spec.name, data)
    if spec.kind == "column":
        return sources.column_model(data, spec.name)
    stored = blob("model")
    if stored is None or stored[0] != spec.digest:
        raise InputProblem("the uploaded model is no longer in this session; upload it again")
    return _uploaded(data.key, stored[0], stored[1], allow_pickle(), data, stored[2])


# ============================================================================================ workspace
@dataclass
class Workspace:
    """Data, model and the model's output on every row (what every page starts from)."""

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

    def outcome_name(self, value) -> str:
        return f"{value:.4g}" if self.task == REGRESSION else str(value)


def _session_lru(name: str, key: str, build: Callable[[], Any], max_entries: int = 4) -> Any:
    cache: OrderedDict = st.session_state.setdefault(CACHE_KEY, {}).setdefault(name, OrderedDict())
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = build()
    cache[key] = value
    while len(cache) > max_entries:
        cache.popitem(last=False)
    return value


def workspace() -> Workspace:
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
        try:
            y = np.asarray(model.predict(X))
        except Exception as exc:  # noqa: BLE001 - foreign model code: explain the mismatch
            raise InputProblem(f"the model failed to predict on this data ({type(exc).__name__}: {exc}); check that "
                               "its feature names, order and types match the data's columns") from None
        if y.ndim != 1 or len(y) != len(X):
            raise InputProblem(f"the model returned outputs of shape {y.shape} for {len(X)} rows; it must return "
                               "one label or value per row")
        if pd.isna(y).any():
            raise InputProblem(f"the model returned {int(pd.isna(y).sum())} missing output(s)")
        return y

    y = _session_lru("outputs", sources.sha256(data.key, model.key), outputs, 3)
    return Workspace(data=data, model=model, X=X, y_pred=y)


def try_workspace() -> tuple[Workspace | None, str | None]:
    try:
        return workspace(), None
    except (InputProblem, TCRExError) as exc:
        return None, str(exc)


# ============================================================================================ explainer
@dataclass
class FitResult:
    """A fitted explainer for the current parameters, and every row's explanation."""

    explainer: TCREx
    explanations: pd.DataFrame  # ex.explain(X) for every row of the workspace
    params: Params
    fit_key: str
    key: str
    fit_seconds: float
    update_seconds: float | None
    cache: dict = field(default_factory=dict)

    @property
    def n_rules(self) -> int:
        return sum(t.n_rules for t in self.explainer.targets_)

    @property
    def n_metarules(self) -> int:
        return sum(len(t.metarules) for t in self.explainer.targets_)

    @property
    def n_cells(self) -> int:
        return sum(t.n_cells for t in self.explainer.targets_)

    def actions(self, ws: Workspace) -> pd.DataFrame:
        """``feature_actions`` for every row (computed once)."""
        if "actions" not in self.cache:
            self.cache["actions"] = self.explainer.feature_actions(ws.X, y_pred=ws.y_pred)
        return self.cache["actions"]


def fit_key(ws: Workspace, p: Params) -> str:
    return sources.sha256("fit", ws.data.key, ws.model.key, p.rho, p.n_trees, p.max_cells, p.grower,
                          sorted(ws.categorical), list(ws.X.columns))


def _target_spec(ws: Workspace, p: Params):
    return p.target


def _fit_base(ws: Workspace, p: Params, progress: Callable[[str, float], None]) -> tuple[TCREx, float]:
    categorical = ws.categorical
    numeric = [c for c in ws.X.columns if c not in categorical]
    ex = TCREx(rho=p.rho, tau=p.tau, n_trees=p.n_trees, max_cells=p.max_cells, target=_target_spec(ws, p),
               task=ws.task, categorical_features=categorical, numeric_features=numeric,
               constraints=p.constraint_spec or None, grower=p.grower, random_state=0)
    fit_pos = ws.X.index.get_indexer(ws.data.fit_index)
    t0 = time.perf_counter()
    ex.fit(ws.X.loc[ws.data.fit_index], y_pred=ws.y_pred[fit_pos], progress=progress)
    return ex, time.perf_counter() - t0


def explainer_result(ws: Workspace, p: Params | None = None, show_progress: bool = True) -> FitResult:
    """The fitted explainer for ``p`` (default: the active parameters); raises TCRExError on failure.

    The surrogate is grown once per (data, model, rho, n_trees, max_cells, grower); tau, target and constraint
    changes derive a copy with :meth:`TCREx.update` (never regrowing the surrogate).
    """
    p = p or params()
    fkey = fit_key(ws, p)
    key = sources.sha256(fkey, p.tau, repr(p.target), p.constraints)
    cache = st.session_state.setdefault(CACHE_KEY, {})
    results: OrderedDict = cache.setdefault("results", OrderedDict())
    if key in results:
        results.move_to_end(key)
        st.session_state[LAST_FIT_KEY] = results[key]
        return results[key]
    bases: OrderedDict = cache.setdefault("bases", OrderedDict())
    update_seconds = None
    hit = shared.lookup(ws, p, fkey)  # [h16 hook] server-wide fit on bundled samples (tcrex/ui/shared.py)
    if hit is not None and hit.key == key:  # [h16 hook]
        st.session_state[LAST_FIT_KEY] = hit  # [h16 hook]
        return hit  # [h16 hook]
    if hit is not None and fkey not in bases:  # [h16 hook] derive tau/target/constraints from the shared base
        bases[fkey] = (hit.explainer, hit.fit_seconds)  # [h16 hook] (deep-copied before update below)
    if fkey in bases:
        base, fit_seconds = bases[fkey]
        bases.move_to_end(fkey)
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
        bases[fkey] = (ex, fit_seconds)
        while len(bases) > 3:
            bases.popitem(last=False)
    explanations = ex.explain(ws.X, y_pred=ws.y_pred)
    result = FitResult(explainer=ex, explanations=explanations, params=p, fit_key=fkey, key=key,
                       fit_seconds=fit_seconds, update_seconds=update_seconds)
    results[key] = result
    while len(results) > 6:
        results.popitem(last=False)
    st.session_state[LAST_FIT_KEY] = result
    return result


def current() -> tuple[Workspace | None, FitResult | None, str | None]:
    """Workspace and fit result for the active choices, or the message that says what to change."""
    ws, problem = try_workspace()
    if ws is None:
        return None, None, problem
    try:
        return ws, explainer_result(ws), None
    except TCRExError as exc:
        return ws, None, str(exc)


def require_result() -> tuple[Workspace, FitResult]:
    """Workspace and fit result, or an explanation of what to change followed by ``st.stop()``."""
    ws, result, problem = current()
    if result is None:
        show_problem(problem)
        st.stop()
    constraints_banner(result)
    return ws, result


def constraints_summary(result: FitResult | None) -> str:
    """One line: the explainer's active constraints ("none" when every feature is free)."""
    if result is None:
        spec = params().constraint_spec
        return describe_constraints(spec)
    c = getattr(result.explainer, "constraints_", None)
    return "none" if c is None else c.describe()


def constraints_banner(result: FitResult) -> None:
    """A small banner on the explaining pages while actionability constraints are applied."""
    text = constraints_summary(result)
    if text != "none":
        st.info(f"**Constraints active:** {text}. Individuals for whom every rule needs a forbidden change have "
                "*no actionable rule*.", icon=":material/lock:")


def pickle_banner() -> None:
    """A persistent banner on every page while the operator has enabled pickle loading."""
    if allow_pickle():
        st.warning("**Pickle loading is enabled on this server** (operator setting `TCREX_ALLOW_PICKLE` or "
                   "`allow_pickle` in secrets). An uploaded pickle / joblib file can run any code when loaded; "
                   "only upload files you trust.", icon=":material/gpp_maybe:")


def show_problem(problem: str | None) -> None:
    text = problem or "something is missing"
    text = text[0].upper() + text[1:]
    st.error(f"**The explainer cannot run yet.** {text}", icon=":material/error:")
    st.page_link("pages/views/data_model.py", label="Fix it on the Data & model page", icon=":material/dataset:")


# ============================================================================================ sidebar
def _apply_params_from_form() -> None:
    """Form submit callback: runs before the script, so the fit uses the new values."""
    ss = st.session_state
    target = ss.get("param_target")
    if target == "__default__":
        target = None
    elif isinstance(target, str) and target.startswith("class:"):
        target = ss.get("tcrex.class_lookup", {}).get(target, None)
    elif "param_target_threshold" in ss and ss.get("param_target_mode") == "threshold":
        target = float(ss["param_target_threshold"])
    new = dict(rho=float(ss.get("param_rho", 0.02)), tau=float(ss.get("param_tau", 0.9)),
               n_trees=int(ss.get("param_trees", 1)), max_cells=int(ss.get("param_max_cells", 100_000)),
               target=target, grower=str(ss.get("param_grower", "exact")))
    errors = param_checks(new["rho"], new["tau"], new["n_trees"], new["max_cells"], ss.get(N_FIT_KEY))[0]
    if errors:
        ss[PARAM_ERRORS_KEY] = errors  # not applied: the form says why
        return
    ss.pop(PARAM_ERRORS_KEY, None)
    set_params(**new)


N_FIT_KEY = "tcrex.n_fit_rows"
PARAM_ERRORS_KEY = "tcrex.param_errors"


def param_checks(rho, tau, n_trees, max_cells, n_rows) -> tuple[list[str], list[str]]:
    """Errors and warnings about the parameters for ``n_rows`` fit rows (through :mod:`tcrex.intake`)."""
    intake = sources._intake()
    if intake is None:
        return [], []
    rep = intake.validate_params(rho, tau, n_trees, max_cells, n_rows=n_rows)
    errors, warnings = list(rep.errors), list(rep.warnings)
    return list(dict.fromkeys(errors)), list(dict.fromkeys(warnings))


def _sync_param_widgets(p: Params) -> None:
    ss = st.session_state
    ss.setdefault("param_rho", p.rho)
    ss.setdefault("param_tau", p.tau)
    ss.setdefault("param_trees", p.n_trees)
    ss.setdefault("param_max_cells", p.max_cells)
    ss.setdefault("param_grower", p.grower)


def render_params_form(ws: Workspace | None) -> None:
    """rho, tau, tree count and target, applied together."""
    p = params()
    _sync_param_widgets(p)
    with st.form("params_form", border=False):
        st.slider("τ — minimum rule accuracy", 0.5, 1.0, step=0.01, key="param_tau",
                  help="Share of a rule's rows whose model output must be in the target (paper: 0.9). "
                       "Changing it re-derives rules from the grown surrogate (fast).")
        st.slider("ρ — minimum rule feasibility", 0.005, 0.2, step=0.005, key="param_rho", format="%.3f",
                  help="Share of fit rows a rule must cover (paper: 0.02). Changing it regrows the surrogate.")
        st.number_input("Surrogate trees", 1, 50, step=1, key="param_trees",
                        help="1 = one decision tree (the paper's default); more = a random forest with more "
                             "candidate rules.")
        if ws is not None:
            _target_widget(ws, p)
        st.number_input("Grid cell limit", 1_000, 5_000_000, step=10_000, key="param_max_cells",
                        help="Largest metarule grid allowed. Raise it (or raise ρ / lower the tree count) when the "
                             "limit is hit.")
        st.radio("Advanced · surrogate grower", ["exact", "hist"], key="param_grower", horizontal=True,
                 format_func={"exact": "exact (CART)", "hist": "hist (binned)"}.get,
                 help="exact: scikit-learn's CART, the paper's choice. hist: a histogram-based tree, faster on "
                      "large data (thresholds fall between binned values). Changing it regrows the surrogate.")
        st.form_submit_button("Apply parameters", type="primary", on_click=_apply_params_from_form,
                              width="stretch")
    _param_messages(ws, p)


def _param_messages(ws: Workspace | None, p: Params) -> None:
    """What the intake checks say about the parameters, next to the form."""
    ss = st.session_state
    rejected = ss.get(PARAM_ERRORS_KEY)
    if rejected:
        st.error("**Not applied:** " + " ".join(_sentence(e) for e in rejected), icon=":material/error:")
    if ws is None:
        return
    n_fit = len(ws.data.fit_index)
    ss[N_FIT_KEY] = n_fit
    errors, warnings = param_checks(p.rho, p.tau, p.n_trees, p.max_cells, n_fit)
    for e in errors:
        st.error(_sentence(e), icon=":material/error:")
    for w in warnings:
        st.warning(_sentence(w), icon=":material/warning:")


def _sentence(text: str) -> str:
    text = str(text).strip()
    return (text[0].upper() + text[1:]) if text else text


def _target_widget(ws: Workspace, p: Params) -> None:
    ss = st.session_state
    if ws.task == REGRESSION:
        mean = float(np.mean(ws.y_pred.astype(float)))
        ss.setdefault("param_target_mode", "threshold")
        ss.setdefault("param_target_threshold", round(float(p.target) if p.target is not None else mean, 4))
        st.number_input("Split the model output at", key="param_target_threshold", format="%.4g",
                        help=f"Targets: outputs above this value, and outputs at or below it (mean output "
                             f"{mean:.4g}).")
        return
    classes = sorted(pd.unique(ws.y_pred).tolist(), key=str)
    lookup = {f"class:{c}": c for c in classes}
    ss["tcrex.class_lookup"] = lookup
    options = ["__default__", *lookup]
    current_value = "__default__" if p.target is None else f"class:{p.target}"
    if ss.get("param_target") not in options:
        ss["param_target"] = current_value if current_value in options else "__default__"
    name = ws.data.label_column or "output"
    st.selectbox("Target outcome", options, key="param_target",
                 format_func=lambda o: ("Any other (default)" if o == "__default__"
                                        else f"{name} = {lookup[o]}"),
                 help="Which model output the counterfactual rules should reach. Changing it re-derives rules "
                      "without regrowing the surrogate.")


def render_sidebar() -> None:
    """The always-visible summary (data, model, task, target, parameters, fit) and the parameter form."""
    ws, result, problem = current()
    p = params()
    with st.sidebar:
        if allow_pickle():
            st.warning("**Pickle loading is ON** (set by the operator). Uploaded pickle files can run code; only "
                       "load files you trust.", icon=":material/warning:")
        st.markdown("##### Active data and model")
        if ws is None:
            st.caption(f"Not ready: {problem}")
        else:
            d, m = ws.data, ws.model
            score = "" if m.score is None else f" · {m.score_name} {m.score:.3f}"
            st.caption(
                f"**Data:** {d.label} — {d.n_rows:,} rows × {len(ws.features)} features"
                + (f", label `{d.label_column}`" if d.label_column else "")
                + f"  \n**Model:** {m.label}{score}"
                + f"  \n**Task:** {ws.task} · **Target:** {p.describe_target(ws.task)}"
                + f"  \n**Parameters:** τ = {p.tau:.2f} · ρ = {p.rho:.3f} · trees = {p.n_trees}"
                + ("" if p.grower == "exact" else f" · grower {p.grower}")
                + f"  \n**Constraints:** {constraints_summary(result)}"
            )
            if result is not None:
                upd = "" if result.update_seconds is None else f", updated in {result.update_seconds:.2f} s"
                st.caption(f":green[**{result.n_rules} rules · {result.n_metarules} metarules · "
                           f"{result.n_cells:,} grid cells**] (fitted in {result.fit_seconds:.2f} s{upd})")
                n_blocked = int((result.explanations["status"].astype(str) == "no_actionable_rule").sum())
                if n_blocked:
                    st.caption(f":orange[**{n_blocked:,} of {len(result.explanations):,} rows have no actionable "
                               "rule** under the constraints]")
            elif problem:
                st.caption(f":red[**No explainer:** {problem}]")
        with st.expander("Parameters", expanded=True, icon=":material/tune:"):
            render_params_form(ws)
        if ws is not None:
            from . import constraints  # noqa: PLC0415 - imports this module

            with st.expander("Actionability constraints", expanded=False, icon=":material/lock:"):
                constraints.editor(ws, result)
