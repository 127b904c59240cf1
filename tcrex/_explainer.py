"""The public estimator: :class:`TCREx`."""
from __future__ import annotations

import pickle
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ._boxes import Boxes
from .constraints import Constraints
from ._data import Encoded, FeatureSchema, _native, as_frame
from .errors import ModelError, NoValidRuleError, NotFittedError, ParameterError
from ._local import PercentileScale, category_preference, move_into, nearest_rows
from ._params import check_parameter
from ._outputs import (as_regression, check_n_classes, check_outputs, check_rows_for_rho, check_task, detect_task,
                       model_feature_names, model_frame, predict)
from ._solution import Solution
from ._surrogate import Surrogate
from ._targets import Target, serving_target, targets_from_spec
from .vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, CLASSIFICATION, NO_ACTIONABLE_RULE, NO_RULE, OK,
                         REGRESSION, STATUSES)
from .text import (NO_ACTIONABLE_RECOURSE, box_conditions, box_text, change_keep_sentence, if_sentence,
                   is_trivial_rule, metacounterfactual_sentence, metarule_label, pluralise, rule_label,
                   status_sentence, trivial_rule_note)

_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES))  # built once: validating categories costs per call


@dataclass
class LocalExplanation:
    """Everything T-CREx says about one input, as plain data (see :meth:`TCREx.explain_one`)."""

    output: object
    status: str
    text: str
    target: int | None = None
    target_description: str | None = None
    rule: int | None = None
    rule_id: str | None = None  # the rule's public id ("R3", :meth:`TCREx.rule_id`), unique across targets
    rule_conditions: dict = field(default_factory=dict)
    metarule: int | None = None
    metarule_id: str | None = None  # the metarule's public id ("M4", :meth:`TCREx.metarule_id`), unique across targets
    metarule_conditions: dict = field(default_factory=dict)
    changes: list = field(default_factory=list)  # [{"feature", "current", "condition", ...}]
    keeps: list = field(default_factory=list)
    n_changes: int = 0
    counterfactual: dict | None = None  # nearest point of the rule box
    example: dict | None = None  # nearest fit row inside the rule whose output is in the target
    example_index: object = None
    alternatives: list = field(default_factory=list)  # metacounterfactuals, nearest first
    # model verification (``verify=True``): the counterfactual above is then the verified point
    counterfactual_valid: bool | None = None  # the model's output at the counterfactual is in the target
    counterfactual_output: object = None
    counterfactual_source: str | None = None  # boundary / searched / example (tcrex.SOURCES)
    boundary_point: dict | None = None  # the nearest point of the rule box (the paper's point)
    boundary_valid: bool | None = None
    boundary_output: object = None
    example_valid: bool | None = None
    example_output: object = None
    # what was verified (issue #24): the text, changes and keeps above then describe the verified point
    recourse: str | None = None  # verified / similar_case / none (tcrex.RECOURSE_OUTCOMES)
    recommended_rule: int | None = None  # the rule whose point the model confirms (index within the target)
    recommended_rule_id: str | None = None
    recommended_rule_conditions: dict = field(default_factory=dict)
    changed: list = field(default_factory=list)  # the features the verified point changes, as the text names them
    paper_text: str | None = None  # the paper's sentence for the optimal rule (before verification)
    notes: list = field(default_factory=list)  # what verification could not do (e.g. no reference rows)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class TCREx(BaseEstimator):
    """Counterfactual rules and metarules (Bewley et al., ICML 2024) for any black-box model.

    Parameters
    ----------
    rho : float in (0, 1]
        Minimum feasibility: a rule must hold at least ``ceil(rho * N)`` fit rows (the surrogate's minimum leaf).
    tau : float in (0, 1]
        Minimum accuracy: at least this share of a rule's rows must have an output in the target.
    n_trees : int
        Surrogate size: 1 grows a decision tree (the paper's default), more grow a random forest.
    max_cells : int
        Largest metarule grid allowed; checked before the grid is built.
    target : None, class label(s), threshold or (low, high)
        None: binary -> the other class, multi-class -> any other class, regression -> split at the mean output
        (the shortest number splitting the fit outputs as the mean does).
        A class (or list of classes) targets them; a number splits a regression output there; a pair is the
        regression interval ``(low, high]`` (None for an open end). ``{"at_least": c}`` targets every class whose
        (numeric) label is at least ``c`` -- "this class or better" for an ordinal score such as a wine quality --
        and ``{"at_most": c}`` every class at most ``c`` (lower is better).
    task : None, "classification" or "regression"
        None detects the task from the model and its outputs.
    categorical_features, numeric_features : list of column names
        Override the detected column types (object/string/category/bool columns are categorical by default).
    surrogate_params : dict
        Extra keyword arguments for the surrogate grower (e.g. ``max_depth``).
    constraints : dict, optional
        Actionability per feature name: "immutable", "increase_only", "decrease_only", ``{"weight": w}``,
        ``{"transitions": {from: [to, ...]}}`` for categoricals, or a dict combining a direction/kind with a
        weight. The metarules stay exact; inputs with no allowed rule get status ``no_actionable_rule``.
    grower : "auto", "exact" or "hist"
        "exact" grows scikit-learn's CART (the paper's choice); "hist" a histogram-based tree (faster on large
        data, thresholds between binned values). "auto" (default) takes "hist" where it provably considers
        exactly CART's splits (one tree, every numeric column with at most 255 distinct float32-exact values),
        else "hist" from 2,000 fit rows on and "exact" below; ``grower_`` records the choice.
    random_state : int
        Seed of the surrogate and of the metarule tree.
    """

    def __init__(self, rho=0.02, tau=0.9, n_trees=1, max_cells=100_000, target=None, task=None,
                 categorical_features=None, numeric_features=None, surrogate_params=None, constraints=None,
                 grower="auto", random_state=0):
        self.rho = rho
        self.tau = tau
        self.n_trees = n_trees
        self.max_cells = max_cells
        self.target = target
        self.task = task
        self.categorical_features = categorical_features
        self.numeric_features = numeric_features
        self.surrogate_params = surrogate_params
        self.constraints = constraints
        self.grower = grower
        self.random_state = random_state

    # ------------------------------------------------------------------ sklearn-style parameters
    _PARAMS = ("rho", "tau", "n_trees", "max_cells", "target", "task", "categorical_features",
               "numeric_features", "surrogate_params", "constraints", "grower", "random_state")

    def set_params(self, **params) -> "TCREx":
        for k, v in params.items():
            if k not in self._PARAMS:
                raise ParameterError(f"unknown parameter {k!r}; parameters are {list(self._PARAMS)}")
            setattr(self, k, v)
        return self

    def __repr__(self, N_CHAR_MAX=700) -> str:
        """Every parameter, in ``__init__`` order (scikit-learn's repr shows only the changed ones)."""
        return "TCREx(" + ", ".join(f"{p}={getattr(self, p)!r}" for p in self._PARAMS) + ")"

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "targets_")

    def outputs(self, X, *, y_pred=None, model=None) -> np.ndarray:
        """The model outputs on ``X``: ``y_pred`` checked against the rows, else ``model`` (or the fitted model)
        applied to ``X``."""
        return self._outputs(as_frame(X), y_pred, model)

    def _check_params(self) -> None:
        for name in ("rho", "tau", "n_trees", "max_cells", "task", "grower"):
            check_parameter(name, getattr(self, name))

    # ------------------------------------------------------------------ fitting
    def _reset(self) -> None:
        """Forget every fitted attribute and lazy cache of a previous fit: a fit starts from scratch."""
        for k in list(self.__dict__):
            if k not in self._PARAMS:
                del self.__dict__[k]

    def fit(self, X, model=None, *, y_pred=None, progress=None) -> "TCREx":
        """Grow the surrogate on X and derive rules and metarules (paper steps a-e).

        ``model`` is anything with ``predict`` or a callable ``X -> outputs``; alternatively pass the model's
        outputs on X as ``y_pred`` (validity is then estimated on exactly those outputs). ``progress`` is an
        optional callback ``progress(step: str, fraction: float)``.
        """
        report = progress or (lambda step, fraction: None)
        self._check_params()
        t0 = time.perf_counter()
        X = as_frame(X)
        self._reset()
        schema = FeatureSchema.detect(X, self.categorical_features, self.numeric_features)
        enc = schema.encode(X)
        report("model outputs", 0.02)
        if y_pred is not None:
            y = check_outputs(y_pred, len(X))
        else:
            y = predict(model, X)
        task = check_task(self.task) or detect_task(y, model if y_pred is None else None)
        if task == REGRESSION:
            y = as_regression(y)
            classes = []
            y_code = y
        else:
            classes_arr, y_code = np.unique(y, return_inverse=True)
            classes = [c.item() if isinstance(c, np.generic) else c for c in classes_arr]
            if len(classes) < 2:
                raise ModelError(f"the model outputs a single class ({classes[0]!r}) on every row; there is no "
                                 "other output to reach — use data on which it predicts at least two classes")
            check_n_classes(classes)
        rows_problem = check_rows_for_rho(len(X), self.rho)
        if rows_problem:
            raise ParameterError(rows_problem)
        self.constraints_ = Constraints(schema, self.constraints)
        self.schema_ = schema
        self._fit_dtypes = {str(c): d for c, d in zip(X.columns, X.dtypes) if str(c) in schema._index}
        self.task_ = task
        self.classes_ = classes
        self.n_fit_rows_ = len(X)
        self.model_ = model if y_pred is None else None
        self._fit_enc = enc
        self._fit_y = y
        self._fit_index = X.index
        report("surrogate", 0.05)
        t1 = time.perf_counter()
        self.surrogate_ = Surrogate(schema, task, self.rho, self.n_trees, self.random_state,
                                    self.surrogate_params, self.grower).fit(enc, y_code)
        self.grower_ = self.surrogate_.grower_  # the grower used ("auto" resolved)
        self.n_surrogate_fits_ = 1
        t2 = time.perf_counter()
        self.timings_ = {"encode": t1 - t0, "surrogate": t2 - t1}
        self._derive(self.target, lambda step, f: report(step, 0.3 + 0.7 * f))
        self.timings_["rules_and_metarules"] = time.perf_counter() - t2
        self.timings_["total"] = time.perf_counter() - t0
        report("done", 1.0)
        return self

    def update(self, *, tau=None, target=None, constraints=None, progress=None) -> "TCREx":
        """Re-derive rules and metarules for a new ``tau``, ``target`` and/or ``constraints`` from the grown
        surrogate (``constraints={}`` removes them).

        Steps b-e only: the surrogate is never regrown (``n_surrogate_fits_`` stays the same). Pass
        ``target="default"`` to go back to the default targets. After :meth:`recount`, rules are re-derived from
        the recounted counts (all rows), not from the fit sample.
        """
        self._require_surrogate("change tau or the target")
        if tau is not None:
            _check_tau(tau)
        new_target = self.target
        if target is not None:
            new_target = None if isinstance(target, str) and target == "default" else target
        report = progress or (lambda step, fraction: None)
        t0 = time.perf_counter()
        # parse everything before changing anything: invalid constraints must leave tau and the target as they were
        new_constraints = Constraints(self.schema_, constraints) if constraints is not None else None
        old = (self.tau, self.target, self.constraints, self.constraints_)
        self.tau = self.tau if tau is None else tau
        self.target = new_target
        if new_constraints is not None:
            self.constraints_ = new_constraints
            self.constraints = constraints or None
        try:
            self._derive(self.target, report)
        except Exception:  # a failed update (no valid rule, cell limit) leaves the explainer as it was
            self.tau, self.target, self.constraints, self.constraints_ = old
            raise
        self.timings_["rules_and_metarules"] = time.perf_counter() - t0
        report("done", 1.0)
        return self

    def _derive(self, spec, report) -> None:
        targets = targets_from_spec(spec, self.task_, self._fit_y, self.classes_)
        solutions = []
        for t, target in enumerate(targets):
            sub = (lambda step, f, t=t: report(f"{step} (target {t})", (t + f) / len(targets)))  # noqa: E731
            solutions.append(self._solve(target, sub))
        if all(s.n_rules == 0 for s in solutions):
            best = max(s.n_candidates for s in solutions)
            raise NoValidRuleError(
                f"no valid rule: none of the {best} candidate rules holds at least {self._min_count} "
                f"rows (rho={self.rho}) with accuracy >= tau={self.tau}. Lower tau, lower rho, or use more "
                "surrogate trees.")
        for t, s in enumerate(solutions):
            if s.n_rules == 0:
                warnings.warn(f"target {t} ({s.target.describe()}) has no valid rule at tau={self.tau}; inputs it "
                              f"serves get status {NO_RULE!r}", stacklevel=3)
        self.targets_ = solutions
        self._extra_targets = []

    def _solve(self, target: Target, report) -> Solution:
        from ._recount import counts_for  # the fit's counts, or all rows' after recount()
        n_inside, n_target, n_rows, min_count = counts_for(self, target)
        return Solution.derive(self.schema_, target, self.surrogate_.candidates_, n_inside, n_target, n_rows,
                               self.tau, min_count, self.max_cells, self.random_state, report, self.constraints_)

    @property
    def _min_count(self) -> int:
        rec = self.__dict__.get("recount_counts_")
        return self.surrogate_.min_count_ if rec is None else rec.min_count

    @property
    def _all_targets(self) -> list:
        """The fitted targets, then any derived on demand by ``explain(..., target=...)`` (ids continue)."""
        return self.targets_ + self.__dict__.get("_extra_targets", [])

    def solution(self, target: int):
        """The rules, metarules and grid of target id ``target`` (as returned in ``explain()['target']``)."""
        self._require_fitted()
        return self._all_targets[target]

    def _require_fitted(self) -> None:
        if not hasattr(self, "targets_"):
            raise NotFittedError("this TCREx explainer is not fitted yet; call fit(X, model) or from_json(text)")

    def _require_surrogate(self, what: str) -> None:
        self._require_fitted()
        if getattr(self, "surrogate_", None) is None:
            raise NotFittedError(f"cannot {what}: this explainer was restored from JSON and has no surrogate; "
                                 "fit it again on data")

    # ------------------------------------------------------------------ outputs and targets for rows
    def _outputs(self, X: pd.DataFrame, y_pred, model=None) -> np.ndarray:
        if y_pred is not None:
            return check_outputs(y_pred, len(X))
        model = model if model is not None else getattr(self, "model_", None)
        if model is None:
            raise ModelError("no model to compute outputs: pass y_pred= (the model's outputs on X) or model=")
        return predict(model, model_frame(model, X, self.schema_.names))

    def _model_columns(self, X: pd.DataFrame, model) -> pd.DataFrame:
        """X as the model takes it when its points are checked (counterfactuals, effectiveness): the explainer's
        features in the model's declared order (same set), else in fit order; extra columns dropped. Points are
        built like X, so a model that reads columns by position must see them in its own order."""
        model = model if model is not None else getattr(self, "model_", None)
        names = [str(n) for n in self.schema_.names]
        declared = model_feature_names(model)
        want = declared if declared is not None and set(declared) == set(names) else names
        cols = [str(c) for c in X.columns]
        if cols == want or not set(want) <= set(cols) or len(set(cols)) != len(cols):
            return X
        return X.set_axis(cols, axis=1)[want]

    def _solutions_for(self, target) -> list[Solution]:
        if target is None:
            return self.targets_
        wanted = targets_from_spec(target, self.task_, self._fit_y if hasattr(self, "_fit_y") else np.zeros(1),
                                   self.classes_)
        found = []
        for w in wanted:
            match = next((s for s in self._all_targets if s.target == w), None)
            if match is None:  # derived on demand and cached apart, so the fitted targets (and JSON) stay as fitted
                self._require_surrogate(f"explain towards {w.describe()}")
                match = self._solve(w, lambda step, f: None)
                self._extra_targets = self.__dict__.get("_extra_targets", []) + [match]
            found.append(match)
        return found

    def _serving(self, solutions, y) -> np.ndarray:
        """Index into ``self.targets_`` of the target serving each row, -1 when its output is already in it."""
        targets = [s.target for s in solutions]
        ids = np.array([self._all_targets.index(s) for s in solutions], dtype=np.int64)
        if self.task_ == CLASSIFICATION:
            inv, uniq = pd.factorize(np.asarray(y))
            local = serving_target(targets, np.asarray(uniq))[inv]
        else:
            local = serving_target(targets, as_regression(y))
        return np.where(local >= 0, ids[np.maximum(local, 0)], -1)

    # ------------------------------------------------------------------ explaining
    def explain(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """Local explanations for every row of X, as a DataFrame aligned with X.

        Columns: ``target`` (index into ``targets_``), ``rule`` and ``metarule`` (indices within that target,
        missing when none; :meth:`rule_id` / :meth:`metarule_id` give the public ids "R3" / "M4"), ``changes``
        (features to change), ``status`` (ok / already_in_target / already_in_rule / no_rule / no_actionable_rule)
        and ``text``. Outputs come from ``y_pred`` or the model (the fit's or ``model=``); ``target`` picks a class
        (targeted multi-class) or regression threshold/interval instead of the fitted targets.
        """
        X, res, (codes, sentences) = self._explain_parts(X, y_pred, target, model)
        return pd.DataFrame({
            "target": _ids(res["target"]),
            "rule": _ids(res["rule"]),
            "metarule": _ids(res["metarule"]),
            "changes": res["changes"],
            "status": pd.Categorical.from_codes(res["status"], dtype=_STATUS_DTYPE),
            "text": pd.Categorical.from_codes(codes, categories=pd.Index(sentences, dtype=object), validate=False),
        }, index=X.index)

    def explain_arrow(self, X, *, y_pred=None, target=None, model=None):
        """:meth:`explain` as a ``pyarrow.Table`` built straight from the engine's arrays (no pandas round trip;
        what the Parquet writers of :mod:`tcrex.distributed` use): ``target``, ``rule`` and ``metarule`` int64,
        null where :meth:`explain` has a missing id, ``changes`` int64, ``status`` and ``text`` dictionary-encoded
        strings (int32 indices; ``status``'s dictionary is every status, in ``tcrex.STATUSES`` order, as the
        categories of :meth:`explain`). Rows in the order of X; X's index is not carried."""
        import pyarrow as pa
        X, res, (codes, sentences) = self._explain_parts(X, y_pred, target, model)

        def ids(values):
            return pa.array(values, type=pa.int64(), mask=values < 0)

        return pa.table({
            "target": ids(res["target"]), "rule": ids(res["rule"]), "metarule": ids(res["metarule"]),
            "changes": pa.array(res["changes"], type=pa.int64()),
            "status": pa.DictionaryArray.from_arrays(pa.array(res["status"].astype(np.int32)),
                                                     pa.array(list(STATUSES), type=pa.string())),
            "text": pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32, copy=False)),
                                                   pa.array(sentences, type=pa.string())),
        })

    def _explain_parts(self, X, y_pred, target, model):
        """The frame, the lookup (``_lookup``) and the sentences (codes per row, distinct sentences) behind
        :meth:`explain` and :meth:`explain_arrow`."""
        self._require_fitted()
        X = as_frame(X)
        enc = self.schema_.encode(X)
        y = self._outputs(X, y_pred, model)
        res = self._lookup(enc, y, self._solutions_for(target))
        return X, res, self._text_codes(res)

    def _lookup(self, enc: Encoded, y, solutions) -> dict:
        n = len(enc)
        tgt = self._serving(solutions, y)
        rule = np.full(n, -1, dtype=np.int64)
        meta = np.full(n, -1, dtype=np.int64)
        changes = np.zeros(n, dtype=np.int64)
        pattern = np.full(n, -1, dtype=np.int64)
        served = np.flatnonzero(np.bincount(tgt + 1)[1:])  # the targets serving a row, ascending (small ids)
        for t in served:
            if len(served) == 1 and (tgt == t).all():
                rule, meta, changes, pattern = self._all_targets[t].lookup(enc)
                break
            rows = np.flatnonzero(tgt == t)
            rule[rows], meta[rows], changes[rows], pattern[rows] = self._all_targets[t].lookup(enc, rows)
        status = np.full(n, STATUSES.index(OK), dtype=np.int64)
        status[(tgt >= 0) & (rule >= 0) & (changes == 0)] = STATUSES.index(ALREADY_IN_RULE)
        has_rules = np.array([s.n_rules > 0 for s in self._all_targets] + [False])[tgt]
        status[(tgt >= 0) & (rule < 0) & has_rules] = STATUSES.index(NO_ACTIONABLE_RULE)
        status[(tgt >= 0) & (rule < 0) & ~has_rules] = STATUSES.index(NO_RULE)
        status[tgt < 0] = STATUSES.index(ALREADY_IN_TARGET)
        return {"target": tgt, "rule": rule, "metarule": meta, "changes": changes, "pattern": pattern,
                "status": status}

    def _row_outside(self, res, row: int) -> np.ndarray:
        """Which features row ``row`` of a lookup must change (from its cell's pattern)."""
        t = int(res["target"][row])
        if t < 0:
            return np.zeros(len(self.schema_), dtype=bool)
        return self._all_targets[t].outside([res["pattern"][row]])[0]

    def _text_codes(self, res) -> tuple[np.ndarray, list]:
        """Per row the code of its sentence, and the distinct sentences in order of appearance; each sentence is
        built once per distinct (target, rule and change pattern, status)."""
        n = len(res["target"])
        n_targets = len(self._all_targets) + 1
        key = ((res["pattern"] + 1) * n_targets + res["target"] + 1) * len(STATUSES) + res["status"]
        inv, uniq = pd.factorize(key)
        first = np.empty(len(uniq), dtype=np.int64)
        first[inv[::-1]] = np.arange(n)[::-1]  # the first row of every distinct key
        conditions = {}  # (target, rule) -> its conditions: many patterns share a rule
        texts = [self._sentence(int(res["target"][row]), int(res["rule"][row]), STATUSES[res["status"][row]],
                                self._row_outside(res, row), conditions) for row in first]
        # sentences repeat across rows, so a categorical column holds each one once (in order of appearance)
        code_of = {}
        codes = np.array([code_of.setdefault(text, len(code_of)) for text in texts], dtype=np.int64)
        return (codes[inv] if n else np.zeros(0, dtype=np.int64)), list(code_of)

    def _sentence(self, t: int, r: int, status: str, outside: np.ndarray, memo: dict | None = None) -> str:
        """The row's sentence (:func:`tcrex.text.status_sentence`), given only what its status speaks of."""
        if status == ALREADY_IN_TARGET:
            return status_sentence(status)
        sol = self._all_targets[t]
        if status == NO_RULE:
            return status_sentence(status, target=sol.target.describe(), tau=self.tau)
        if status == NO_ACTIONABLE_RULE:
            return status_sentence(status, constraints=self.constraints_.describe())
        change, keep = self._change_keep(sol, r, outside, memo)
        return status_sentence(status, changes=change, keeps=keep)

    def _change_keep(self, sol: Solution, r: int, outside: np.ndarray, memo: dict | None = None) -> tuple[list, list]:
        """The rule's constrained features split into those to change and those to keep (with conditions);
        ``memo`` caches the rule's conditions across calls."""
        memo = {} if memo is None else memo
        key = (id(sol), r)
        if key not in memo:
            memo[key] = self._conditions(sol.rules, r)
        change, keep = [], []
        for i, cond in memo[key].items():
            entry = {"feature": self.schema_.names[i], "condition": cond["text"], **cond["bounds"]}
            (change if outside[i] else keep).append(entry)
        return change, keep

    def _conditions(self, boxes: Boxes, r: int) -> dict:
        """Constrained features of box r: feature index -> {"text", "bounds"} in the user's terms."""
        return box_conditions(self.schema_, boxes, r)

    def conditions_text(self, boxes: Boxes, r: int) -> str:
        return box_text(self.schema_, boxes, r)

    def feature_actions(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """Per row and feature: "change" (outside its rule), "keep" (the rule constrains it and the row already
        satisfies that) or "" (the rule leaves the feature free, or the row has no rule). Paper Figure 8b."""
        self._require_fitted()
        X = as_frame(X)
        enc = self.schema_.encode(X)
        res = self._lookup(enc, self._outputs(X, y_pred, model), self._solutions_for(target))
        action = np.zeros((len(enc), len(self.schema_)), dtype=np.int8)  # 0 free, 1 keep, 2 change
        for t in np.unique(res["target"][res["rule"] >= 0]):
            rows = np.flatnonzero((res["target"] == t) & (res["rule"] >= 0))
            sol = self._all_targets[t]
            outside = sol.outside(res["pattern"][rows])
            constrained = sol.rules.constrained(self.schema_.numeric, self.schema_.categorical)[res["rule"][rows]]
            action[rows] = np.where(outside, 2, np.where(constrained, 1, 0))
        return pd.DataFrame({name: pd.Categorical.from_codes(action[:, i], categories=["", "keep", "change"])
                             for i, name in enumerate(self.schema_.names)}, index=X.index)

    # ------------------------------------------------------------------ richer local outputs
    def counterfactuals(self, X, *, verify=None, model=None, y_pred=None, target=None, reference=None,
                        text=True, class_names=None) -> pd.DataFrame:
        """The counterfactual point of each row, verified on the model when one is known.

        ``verify`` (default: True when a model is known, from ``fit`` or ``model=``) finds for every row that
        needs recourse a point the model confirms that *is* the advice (see :mod:`tcrex._recourse`): a point of
        the paper's optimal rule changing exactly the features the advice names to values the data holds, else
        of the next rule in cost order, else a minimal change beyond the rules (from the nearest ``reference``
        row with the target output, default the fit rows). Columns, beside the point's features:

        * ``valid``: the model confirms the point (missing for rows that do not need recourse);
        * ``source``: ``boundary`` / ``searched`` (the paper's rule) / ``next_rule`` / ``minimal_change`` /
          ``example`` (a similar real case only, never verified recourse);
        * ``recourse``: ``verified`` / ``similar_case`` / ``none`` (:func:`tcrex.recourse_outcome`, the one
          definition every count uses); missing for rows that do not need recourse;
        * ``changed`` (the features the point changes, exactly those the sentence names), ``n_changes``;
        * ``rule`` (the paper's optimal rule) and ``recommended_rule`` (the rule whose point was verified), both
          indices within the row's target (:meth:`rule_id` gives the public id);
        * ``output`` (the model's output at the point) and ``text`` (the sentence stating the verified values;
          ``text=False`` skips it; ``class_names`` such as ``{0: "rejected"}`` name the model's outputs in it).

        Rows already in the target keep their values; rows needing recourse with nothing found get missing
        features. ``frame.attrs["notes"]`` says what could not be done (an explainer restored from JSON needs
        ``reference=`` rows for the search beyond the rules). ``verify=False`` returns the paper's boundary points
        only (rows with no actionable rule get missing values).
        """
        self._require_fitted()
        X = self._model_columns(as_frame(X), model)
        enc = self.schema_.encode(X)
        res = self._lookup(enc, self._outputs(X, y_pred, model), self._solutions_for(target))
        from ._verify import verified_frame, wants_verify
        if wants_verify(self, verify, model):
            return verified_frame(self, X, enc, res, model if model is not None else self.model_, reference, text,
                                  class_names)
        moved = self._move_to_rules(enc, res)
        out = self._decode(moved, X.index)
        out.loc[(res["target"] >= 0) & (res["rule"] < 0)] = np.nan  # no rule, or none actionable
        return out

    def nearest_points(self, X, target: int, rule: int) -> pd.DataFrame:
        """For each row, the nearest point of rule ``rule`` of target ``target`` (features the rule leaves free,
        or already satisfies, keep their values; ``(low, high]`` and integer features respected; category moves
        follow the constraints' transitions)."""
        self._require_fitted()
        X = as_frame(X)
        enc = self.schema_.encode(X)
        sol = self.solution(target)
        if not 0 <= rule < sol.n_rules:
            raise ParameterError(f"target {target} has rules 0..{sol.n_rules - 1}, not {rule}")
        moved = move_into(enc, sol.rules, np.full(len(enc), rule), self.schema_, self._category_preference(),
                          self._transitions())
        return self._decode(moved, X.index)

    def _move_to_rules(self, enc: Encoded, res) -> Encoded:
        moved = Encoded(enc.num.copy(), enc.cat.copy())
        for t in np.unique(res["target"][res["rule"] >= 0]):
            rows = np.flatnonzero((res["target"] == t) & (res["rule"] >= 0))
            part = move_into(enc.take(rows), self._all_targets[t].rules, res["rule"][rows], self.schema_,
                             self._category_preference(), self._transitions())
            moved.num[rows], moved.cat[rows] = part.num, part.cat
        return moved

    def _transitions(self):
        """Per categorical slot, the allowed category moves under the constraints (None when free)."""
        c = getattr(self, "constraints_", None)
        if c is None or c.trivial:
            return None
        return [None if c.features[i].is_free() else c.transition_matrix(i) for i in self.schema_.categorical]

    def _category_counts(self):
        """Per categorical slot, the fit rows' count of each category (restored from JSON when exported), or
        None: the preference of category moves and what the JSON export carries for it."""
        counts = self.__dict__.get("_cat_counts")
        if counts is None and getattr(self, "_fit_enc", None) is not None:
            counts = self._cat_counts = [np.bincount(self._fit_enc.cat[:, j],
                                                     minlength=len(self.schema_.features[i].categories))
                                         for j, i in enumerate(self.schema_.categorical)]
        return counts

    def _restore_category_counts(self, counts) -> None:
        self._cat_counts = counts
        self._cat_pref = None

    def _category_preference(self):
        if getattr(self, "_cat_pref", None) is None:
            counts = self._category_counts()
            if counts is None:
                return None
            self._cat_pref = category_preference(counts, self.schema_)
        return self._cat_pref

    def _decode(self, enc: Encoded, index, as_categorical: dict | None = None) -> pd.DataFrame:
        """Rows back to feature values. ``as_categorical``: feature name -> (codes of the schema's categories in a
        pandas CategoricalDtype, or -1 where absent; that dtype): those columns come out as that dtype directly,
        the same column as decoding to values and casting (model calls on data held as pandas categories)."""
        cols = {}
        for i, f in enumerate(self.schema_.features):
            slot = self.schema_.slot[i]
            if f.is_categorical and as_categorical and f.name in as_categorical:
                codes, dtype = as_categorical[f.name]
                cols[f.name] = pd.Categorical.from_codes(codes[enc.cat[:, slot]], dtype=dtype)
            elif f.is_categorical:
                cols[f.name] = np.asarray(f.categories, dtype=object)[enc.cat[:, slot]]
            else:
                col = enc.num[:, slot]
                cols[f.name] = col.astype(np.int64) if f.integer and np.all(col == np.round(col)) else col
        return pd.DataFrame(cols, index=index)

    def real_examples(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """For each row, the nearest fit row inside its rule whose model output is in the target.

        The model is known to reach the target there. Distance is the total percentile shift (categorical
        mismatch counts 1). Returns the example's index in the fit data, its distance, then its features.
        """
        self._require_fitted()
        if not hasattr(self, "_fit_enc"):
            raise NotFittedError("real examples need the fit data, which a JSON export does not hold")
        X = as_frame(X)
        enc = self.schema_.encode(X)
        res = self._lookup(enc, self._outputs(X, y_pred, model), self._solutions_for(target))
        pos = np.full(len(enc), -1, dtype=np.int64)
        dist = np.full(len(enc), np.nan)
        scale = self._scale()
        for t in np.unique(res["target"][res["rule"] >= 0]):
            sol = self._all_targets[t]
            in_target = sol.target.contains(self._fit_y)
            for r in np.unique(res["rule"][(res["target"] == t) & (res["rule"] >= 0)]):
                rows = np.flatnonzero((res["target"] == t) & (res["rule"] == r))
                pool = np.flatnonzero(sol.rules.take([r]).contains(self._fit_enc)[:, 0] & in_target)
                best, d = nearest_rows(enc.take(rows), self._fit_enc.take(pool), scale)
                ok = best >= 0
                pos[rows[ok]] = pool[best[ok]]
                dist[rows] = d
        found = pos >= 0
        feats = self._decode(self._fit_enc.take(np.maximum(pos, 0)), X.index)
        feats.loc[~found] = np.nan
        out = pd.DataFrame({"example_index": pd.array(np.where(found, 0, 0), dtype="object"),
                            "distance": dist}, index=X.index)
        out["example_index"] = [self._fit_index[p] if p >= 0 else None for p in pos]
        return pd.concat([out, feats], axis=1)

    def _scale(self) -> PercentileScale:
        if getattr(self, "_pscale", None) is None:
            self._pscale = PercentileScale(self._fit_enc)
        return self._pscale

    def in_target(self, outputs, targets) -> np.ndarray:
        """Per row, whether ``outputs[i]`` (of any model) lies in target ``targets[i]`` (target ids as in
        :meth:`explain`'s ``target`` column; missing ids give False): the engine's own target containment."""
        from ._reach import in_target
        return in_target(self, outputs, targets)

    def fit_rows(self) -> pd.DataFrame:
        """The fit rows (features, fit index, the fit data's column types); not available after ``from_json``."""
        self._require_fitted()
        if not self.has_fit_data:
            raise NotFittedError("this explainer was restored from JSON and holds no fit rows; pass the rows yourself")
        return _restore_dtypes(self._decode(self._fit_enc, self._fit_index), getattr(self, "_fit_dtypes", None))

    @property
    def has_fit_data(self) -> bool:
        """Whether the explainer holds its fit rows (needed for real examples and fit-data percentiles); an
        explainer restored from JSON does not."""
        return getattr(self, "_fit_enc", None) is not None

    def percentile_distance(self, X_from, X_to, *, reference=None) -> np.ndarray:
        """Row-wise total percentile shift from each row of ``X_from`` to the same row of ``X_to``.

        Per numeric feature the absolute difference of the two values' percentiles, plus 1 per categorical
        feature that differs (Pawelczyk et al. 2020; the paper's distance). Percentiles come from the fit data,
        or from the rows of ``reference`` when given (needed for an explainer restored from JSON).
        """
        self._require_fitted()
        a, b = self.schema_.encode(as_frame(X_from)), self.schema_.encode(as_frame(X_to))
        if len(a) != len(b):
            raise ParameterError(f"X_from has {len(a)} rows but X_to has {len(b)}; pair each row with one row")
        if reference is not None:
            scale = PercentileScale(self.schema_.encode(as_frame(reference)))
        elif self.has_fit_data:
            scale = self._scale()
        else:
            raise NotFittedError("percentiles need the fit data, which a JSON export does not hold; pass "
                                 "reference= (rows whose percentiles to use)")
        return scale.distance(a, b)

    def explain_one(self, x, *, y_pred=None, target=None, model=None, n_alternatives=5,
                    verify=None, reference=None, class_names=None) -> LocalExplanation:
        """The full local explanation of one input: rule, metarule, changes, keeps, counterfactual point, a
        real example, and metacounterfactuals (the nearest other metarules whose rule differs, paper §6.2).

        ``verify`` (default: True when a model is known) checks the points on the model: ``counterfactual`` is
        then the verified point (see :meth:`counterfactuals`) with ``counterfactual_valid/output/source``, next
        to ``boundary_point`` and the example with their own ``*_valid`` / ``*_output``."""
        self._require_fitted()
        X = _one_row(x, self.schema_.names, getattr(self, "_fit_dtypes", None))
        enc = self.schema_.encode(X)
        y = self._outputs(X, None if y_pred is None else np.atleast_1d(np.asarray(y_pred, dtype=object)), model)
        res = self._lookup(enc, y, self._solutions_for(target))
        status = STATUSES[res["status"][0]]
        output = y[0].item() if isinstance(y[0], np.generic) else y[0]
        text = self._sentence(int(res["target"][0]), int(res["rule"][0]), status, self._row_outside(res, 0))
        exp = LocalExplanation(output=output, status=status, text=text)
        t = int(res["target"][0])
        if t < 0:
            return exp
        sol = self._all_targets[t]
        exp.target, exp.target_description = t, sol.target.describe()
        r = int(res["rule"][0])
        if res["metarule"][0] >= 0:
            exp.metarule = int(res["metarule"][0])
            exp.metarule_id = self.metarule_id(t, exp.metarule)
            exp.metarule_conditions = self._conditions_dict(sol.metarules, exp.metarule)
        from ._verify import verify_one, wants_verify
        verify = wants_verify(self, verify, model)
        if r < 0:
            if exp.metarule is not None:  # no actionable rule here: where would there be one?
                exp.alternatives = self._metacounterfactuals(enc, sol, r, exp.metarule, n_alternatives)
            if verify:  # no rule: a minimal change beyond the rules may still work
                verify_one(self, exp, X, enc, res, model if model is not None else self.model_, reference,
                           class_names)
            return exp
        exp.rule, exp.rule_id = r, self.rule_id(t, r)
        exp.rule_conditions = self._conditions_dict(sol.rules, r)
        change, keep = self._change_keep(sol, r, self._row_outside(res, 0))
        current = X.iloc[0]
        for item in change + keep:
            item["current"] = _native(current[item["feature"]])
        exp.changes, exp.keeps, exp.n_changes = change, keep, len(change)
        moved = self._move_to_rules(enc, res)
        exp.counterfactual = {k: _native(v) for k, v in self._decode(moved, X.index).iloc[0].items()}
        if hasattr(self, "_fit_enc"):
            ex = self.real_examples(X, y_pred=y, target=target)
            if ex["example_index"].iloc[0] is not None:
                exp.example_index = ex["example_index"].iloc[0]
                exp.example = {k: _native(v) for k, v in ex.iloc[0, 2:].items()}
        exp.alternatives = self._metacounterfactuals(enc, sol, r, exp.metarule, n_alternatives)
        if verify:
            verify_one(self, exp, X, enc, res, model if model is not None else self.model_, reference, class_names)
        return exp

    def _conditions_dict(self, boxes: Boxes, r: int) -> dict:
        return {self.schema_.names[i]: {**c["bounds"], "text": c["text"]} for i, c in self._conditions(boxes, r).items()}

    def _metacounterfactuals(self, enc: Encoded, sol: Solution, rule: int, metarule: int, k: int) -> list:
        others = np.flatnonzero(sol.metarule_rule != rule)
        if not len(others):
            return []
        rows = Encoded(np.repeat(enc.num, len(others), axis=0), np.repeat(enc.cat, len(others), axis=0))
        num_out, cat_out = sol.metarules.outside(rows, others)
        n_meta = num_out.sum(axis=1) + cat_out.sum(axis=1)
        moved = move_into(rows, sol.metarules, others, self.schema_, self._category_preference())
        r2, m2, c2, p2 = sol.lookup(moved)
        o2 = sol.outside(p2)
        order = np.lexsort((others, c2, n_meta))[:k]
        t = next(i for i, s in enumerate(self._all_targets) if s is sol)
        meta_outside = np.zeros((len(others), len(self.schema_)), dtype=bool)
        meta_outside[:, self.schema_.numeric] = num_out
        meta_outside[:, self.schema_.categorical] = cat_out
        result = []
        for a in order:
            m = int(others[a])
            mconds = self._conditions(sol.metarules, m)
            meta_changes = [{"feature": self.schema_.names[i], "condition": mconds[i]["text"], **mconds[i]["bounds"]}
                            for i in np.flatnonzero(meta_outside[a])]
            change, keep = self._change_keep(sol, int(r2[a]), o2[a]) if r2[a] >= 0 else ([], [])
            result.append({"metarule": m, "metarule_id": self.metarule_id(t, m), "rule": int(r2[a]),
                           "rule_id": self.rule_id(t, int(r2[a])),
                           "n_metachanges": int(n_meta[a]),
                           "metachanges": meta_changes, "n_changes": int(c2[a]), "changes": change, "keeps": keep,
                           "text": metacounterfactual_sentence(meta_changes, change, keep, actionable=r2[a] >= 0)})
        return result

    # ------------------------------------------------------------------ global summary
    def effectiveness(self, X=None, *, model=None, y_pred=None, explanations=None, counterfactuals=None,
                      reference=None):
        """Who has recourse that works, on a population (the fit rows by default): of the rows needing recourse,
        how many have verified recourse (by source), a similar real case only, or none — the one definition of
        :func:`tcrex.recourse_outcome` — and per rule and metarule the share of served inputs whose nearest
        point of the rule already flips the model, and whose verified point lies in the rule. Returns a
        plain-data ``Effectiveness`` (counts, ``headline()``, ``rules`` and ``metarules`` frames).

        Given ``explanations`` (from :meth:`explain`) and ``counterfactuals`` (from :meth:`counterfactuals` with
        ``verify=True``) of the same rows, it summarises those without calling the model again (any subset of
        rows verified once)."""
        self._require_fitted()
        if explanations is not None or counterfactuals is not None:
            if explanations is None or counterfactuals is None:
                raise ParameterError("pass both explanations= and counterfactuals= (of the same rows), or neither")
            from ._effectiveness import from_rows
            return from_rows(self, explanations, counterfactuals)
        from ._effectiveness import compute
        return compute(self, None if X is None else self._model_columns(as_frame(X), model), model, y_pred, reference)

    def rules_frame(self, X=None, *, model=None, y_pred=None, effectiveness=None) -> pd.DataFrame:
        """Every rule of every target with its n, feasibility, accuracy and complexity (tie-break order).

        Given a population ``X`` and/or a model (or ``effectiveness=`` from :meth:`effectiveness`, or True for
        the fit rows), adds ``n_served``, ``boundary_effectiveness`` and ``effectiveness``."""
        return self._with_effectiveness(self._memo_frame("rules", self._rules_frame), "rule", X, model, y_pred,
                                        effectiveness)

    def _with_effectiveness(self, frame, kind: str, X, model, y_pred, effectiveness) -> pd.DataFrame:
        """``frame()`` (the rules or metarules frame) with the effectiveness columns of ``kind`` when asked for."""
        from ._effectiveness import add_columns, resolve
        self._require_fitted()
        eff = resolve(self, effectiveness, X, model, y_pred)
        return add_columns(frame(), eff, kind)

    def _rules_frame(self) -> pd.DataFrame:
        rows = []
        for t, sol in enumerate(self.targets_):
            complexity = sol.rules.complexity()
            n_meta = np.bincount(sol.metarule_rule[sol.metarule_rule >= 0], minlength=sol.n_rules)
            for r in range(sol.n_rules):
                rows.append({"target": t, "target_description": sol.target.describe(), "rule": r,
                             "rule_id": self.rule_id(t, r),
                             "conditions": self.conditions_text(sol.rules, r), "n": int(sol.rule_n[r]),
                             "feasibility": float(sol.feasibility[r]), "accuracy": float(sol.accuracy[r]),
                             "complexity": int(complexity[r]), "n_metarules": int(n_meta[r])})
        return pd.DataFrame(rows, columns=["target", "target_description", "rule", "rule_id", "conditions", "n",
                                           "feasibility", "accuracy", "complexity", "n_metarules"])

    def rule_id(self, target: int, rule) -> str | None:
        """The one public id of rule ``rule`` of target ``target`` ("R1", "R2", …): the rules of every target are
        numbered in order from 1, so ids never collide across targets (rule 0 of target 1 follows the last rule
        of target 0). None for no rule (None or a negative rule, e.g. a metarule without an actionable rule).
        Every table, figure and report shows rules by this id (column ``rule_id`` of :meth:`rules_frame`)."""
        if rule is None or (isinstance(rule, float) and rule != rule) or int(rule) < 0:
            return None
        self._require_fitted()
        offset = sum(s.n_rules for s in self._all_targets[:int(target)])
        return rule_label(offset + int(rule) + 1)

    def metarule_id(self, target: int, metarule) -> str | None:
        """The one public id of metarule ``metarule`` of target ``target`` ("M1", "M2", …), numbered like
        :meth:`rule_id`: from 1, over every target in order, so ids never collide across targets. None for no
        metarule (None or negative). Tables, figures and reports show metarules by this id (column
        ``metarule_id`` of :meth:`metarules_frame`); ``metarule`` columns keep the index within the target."""
        if metarule is None or (isinstance(metarule, float) and metarule != metarule) or int(metarule) < 0:
            return None
        self._require_fitted()
        offset = sum(len(s.metarules) for s in self._all_targets[:int(target)])
        return metarule_label(offset + int(metarule) + 1)

    def metarules_frame(self, X=None, *, model=None, y_pred=None, effectiveness=None) -> pd.DataFrame:
        """Every metarule with its rule, worst-case sparsity and what to change / keep inside it (plus the
        effectiveness columns, as in :meth:`rules_frame`)."""
        return self._with_effectiveness(self._memo_frame("metarules", self._metarules_frame), "metarule", X, model,
                                        y_pred, effectiveness)

    def _memo_frame(self, name: str, build):
        """``build`` wrapped so that its frame is built once per set of solutions (the targets' rules and
        metarules): a dashboard page asks for the metarules frame several times per run (tree, outline, tables),
        and building it costs a noticeable share of a page on hundreds of metarules. Each call gets a copy. The
        memo is keyed on the solution objects themselves, so ``fit``/``update``/``recount`` (new solutions)
        never see a stale frame."""
        def frame() -> pd.DataFrame:
            solutions = tuple(getattr(self, "_all_targets", None) or self.targets_)
            memo = getattr(self, "_frame_memo", None)
            if memo is None or len(memo[0]) != len(solutions) or any(a is not b for a, b in zip(memo[0], solutions)):
                memo = (solutions, {})
                self._frame_memo = memo
            if name not in memo[1]:
                memo[1][name] = build()
            return memo[1][name].copy()
        return frame

    def _metarules_frame(self) -> pd.DataFrame:
        rows = []
        for t, sol in enumerate(self.targets_):
            for m in range(len(sol.metarules)):
                r = int(sol.metarule_rule[m])
                change, keep = self._metarule_change_keep(sol, m) if r >= 0 else ([], [])
                text = change_keep_sentence(change, keep) if r >= 0 else NO_ACTIONABLE_RECOURSE
                rows.append({"target": t, "metarule": m, "metarule_id": self.metarule_id(t, m),
                             "rule": r if r >= 0 else None,
                             "rule_id": self.rule_id(t, r), "conditions": self.conditions_text(sol.metarules, m),
                             "sparsity": int(sol.metarule_sparsity[m]), "n_cells": int(sol.metarule_cells[m]),
                             "change": [c["feature"] for c in change], "keep": [k["feature"] for k in keep],
                             "text": text})
        return pd.DataFrame(rows, columns=["target", "metarule", "metarule_id", "rule", "rule_id", "conditions",
                                           "sparsity", "n_cells", "change", "keep", "text"])

    def _metarule_change_keep(self, sol: Solution, m: int) -> tuple[list, list]:
        """Worst case over the metarule: a rule feature is to change if any part of the metarule lies outside."""
        r = int(sol.metarule_rule[m])
        cells = np.flatnonzero(sol.cell_metarule == m)
        states = np.stack(np.unravel_index(cells, sol.grid.dims), axis=1)
        outside = np.zeros(len(self.schema_), dtype=bool)
        for i, table in enumerate(sol.tables):
            outside[i] = table[states[:, i], r].any()
        return self._change_keep(sol, r, outside)

    def summary_text(self, class_names=None, target: int | None = None) -> str:
        """The global textual summary: per target, its rules, then per metarule "if …: change …, keeping …".

        ``class_names`` (``{label: name}``) names the classes ("approved" instead of "output = 1"); rules are
        named by their :meth:`rule_id`. ``target`` (an index into ``targets_``) keeps one target; default every
        target. A rule without any condition (it covers every input) is flagged: it describes the model, it is not
        advice."""
        self._require_fitted()
        if target is None:
            chosen = range(len(self.targets_))
        elif isinstance(target, (int, np.integer)) and not isinstance(target, bool) \
                and 0 <= int(target) < len(self.targets_):
            chosen = [int(target)]
        else:
            raise ParameterError(f"target must be the index of one of the {len(self.targets_)} target(s) "
                                 f"(0 to {len(self.targets_) - 1}), got {target!r}")
        rules = self.rules_frame()
        metas = self.metarules_frame()
        lines = []
        for t in chosen:
            sol = self.targets_[t]
            # the outcome, never the internal index of the target entry (people read this)
            lines.append(f"Toward {sol.target.describe(class_names)} — {pluralise(sol.n_rules, 'rule')}, "
                         f"{pluralise(len(sol.metarules), 'metarule')}, {pluralise(sol.n_cells, 'grid cell')}")
            trivial = set()
            for _, r in rules[rules.target == t].iterrows():
                note = ""
                if is_trivial_rule(r.complexity):
                    trivial.add(int(r.rule))
                    note = f"  — {trivial_rule_note(sol.target.describe(class_names), r.accuracy)}"
                lines.append(f"  Rule {r.rule_id}: {r.conditions}  [accuracy {r.accuracy:.3f}, feasibility "
                             f"{r.feasibility:.3f}, complexity {r.complexity}]{note}")
            for _, m in metas[metas.target == t].iterrows():
                flag = " — a rule without conditions, not advice" if m.rule is not None and m.rule == m.rule \
                    and int(m.rule) in trivial else ""
                if isinstance(m.rule_id, str):
                    lines.append(f"  {if_sentence(m.conditions, m.text)} ({m.metarule_id} → {m.rule_id}, up to "
                                 f"{pluralise(m.sparsity, 'change')}{flag})")
                else:  # constraints forbid every rule here (the frame's missing id reads back as NaN, not None)
                    lines.append(f"  {if_sentence(m.conditions, m.text)} ({m.metarule_id} → no actionable rule)")
        return "\n".join(lines)

    # ------------------------------------------------------------------ structured views (figures, reports)
    def rule_conditions(self, target: int, rule: int) -> dict:
        """``{feature: {"low", "high", "text"} | {"in", "text"}}`` for the features rule ``rule`` constrains."""
        self._require_fitted()
        return self._conditions_dict(self._all_targets[target].rules, rule)

    def metarule_conditions(self, target: int, metarule: int) -> dict:
        self._require_fitted()
        return self._conditions_dict(self._all_targets[target].metarules, metarule)

    def metarule_tree(self, target: int = 0) -> dict:
        """The metarules of one target as a tree of splits with metarules at the leaves (paper Figure 7)."""
        from ._views import metarule_tree
        self._require_fitted()
        return metarule_tree(self._all_targets[target], self.schema_)

    def metarule_slice(self, target: int, x: str, y: str, individual) -> pd.DataFrame:
        """Exact metarule regions on the plane of features ``x`` and ``y`` through ``individual`` (a row whose
        other features stay fixed): one row per pair of grid states with extent, metarule, rule and changes."""
        from ._views import metarule_slice
        self._require_fitted()
        enc = self.schema_.encode(_one_row(individual, self.schema_.names, getattr(self, "_fit_dtypes", None)))
        return metarule_slice(self._all_targets[target], self.schema_, self.schema_.index(x), self.schema_.index(y), enc)

    # ------------------------------------------------------------------ export / import
    def to_json(self, indent=None, *, effectiveness=None) -> str:
        """The versioned JSON export; ``effectiveness`` (from :meth:`effectiveness`) adds per-rule and
        per-metarule effectiveness as optional fields (format version 3)."""
        from ._serialize import to_json
        self._require_fitted()
        return to_json(self, indent=indent, effectiveness=effectiveness)

    @classmethod
    def from_json(cls, text, *, max_grid_bytes: int | None = None) -> "TCREx":
        """Rebuild an explainer from :meth:`to_json`'s text, checking it as untrusted input (docs/security.md).
        ``max_grid_bytes``: memory the rebuilt grid's cell-by-rule tables may need (default
        ``tcrex._serialize.MAX_GRID_BYTES``, 256 MB); raise it only for a trusted, very large explainer."""
        from ._serialize import from_json
        return from_json(cls, text, max_grid_bytes=max_grid_bytes)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_frame_memo", None)  # rebuilt on demand
        model = state.get("model_")
        if model is not None:
            try:
                pickle.dumps(model)
            except Exception:  # noqa: BLE001 - foreign code (a lambda, a local function): pickle without it
                state["model_"] = None
        return state

    # ------------------------------------------------------------------ recount (tcrex/_recount.py)
    def candidate_counts(self, X, *, y_pred=None, model=None):
        """Mergeable per-candidate-rule counts on the rows X (add the results of several partitions)."""
        from ._recount import candidate_counts
        self._require_surrogate("count candidate rules")
        X = as_frame(X)
        return candidate_counts(self, X, self._outputs(X, y_pred, model))

    def recount(self, counts) -> "TCREx":
        """Re-choose the valid rules (rho, tau) from counts over all rows and rebuild the metarules.

        The counts are kept (``recount_counts_``): later ``update()`` calls and targets derived on demand use them
        (and their minimum rule size ``ceil(rho * counts.n_rows)``), never the fit sample's counts."""
        from ._recount import recount
        self._require_surrogate("recount candidate rules")
        self.recount_summary_ = recount(self, counts)
        return self


def _check_tau(tau) -> None:
    check_parameter("tau", tau)


def _one_row(x, names, dtypes=None) -> pd.DataFrame:
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise ParameterError(f"explain_one takes one row, got {len(x)}; use explain() for many")
        return _restore_dtypes(x, dtypes)
    if isinstance(x, pd.Series):
        return _restore_dtypes(x.to_frame().T.infer_objects(), dtypes)
    if isinstance(x, dict):
        return _restore_dtypes(pd.DataFrame([x]), dtypes)
    arr = np.asarray(x, dtype=object).reshape(1, -1)
    if arr.shape[1] != len(names):
        raise ParameterError(f"expected {len(names)} values ({names}), got {arr.shape[1]}")
    return _restore_dtypes(pd.DataFrame(arr, columns=names).infer_objects(), dtypes)


def _restore_dtypes(X: pd.DataFrame, dtypes) -> pd.DataFrame:
    """Give a one-row frame the column dtypes of the fit data (a Series of a mixed frame holds objects), so a
    model that reads dtypes (XGBoost's native categoricals) sees what it was trained on. The cast never changes
    a value: a value the fit dtype cannot hold exactly (3.9 in a column fitted as integers, an unseen category)
    keeps its column as it is, so the row is read exactly as :meth:`TCREx.explain` reads it from a frame (and
    encoding reports what it cannot read by name)."""
    if not dtypes or len({str(c) for c in X.columns}) != X.shape[1]:  # duplicate names: encoding reports them
        return X
    out = None
    for j, c in enumerate(X.columns):
        want = dtypes.get(str(c))
        col = X.iloc[:, j]
        if want is None or col.dtype == want:
            continue
        try:
            if isinstance(want, pd.CategoricalDtype):
                if not col.isna().all() and not col.dropna().isin(want.categories).all():
                    continue
            cast = col.astype(want)
        except Exception:  # noqa: BLE001 - a value the dtype cannot hold (too large, text): encoding reports it
            continue
        if not isinstance(want, pd.CategoricalDtype) and not _same_values(col, cast):
            continue  # a lossy cast (3.9 -> 3, "3" -> 3, 2**53 + 1 -> float): keep the value as given
        if out is None:
            out = X.copy()
        out.isetitem(j, cast)
    return X if out is None else out


def _same_values(before: pd.Series, after: pd.Series) -> bool:
    """Whether a cast kept every value (missing stays missing; 3.0 -> 3 is kept, 3.9 -> 3 and "3" -> 3 are not)."""
    a, b = before.to_numpy(dtype=object), after.to_numpy(dtype=object)
    for u, v in zip(a, b):
        if pd.isna(u) or pd.isna(v):
            if not (pd.isna(u) and pd.isna(v)):
                return False
        elif not (u == v and v == u):  # Python compares int and float exactly (2**53 + 1 != 2.0**53)
            return False
    return True


def _ids(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Ids as a nullable Int64 column, missing where the engine says -1 (none)."""
    values = np.asarray(values, dtype=np.int64)
    missing = values < 0
    return pd.arrays.IntegerArray(np.where(missing, 0, values), missing)
