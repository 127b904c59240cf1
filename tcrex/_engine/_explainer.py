"""The public estimator: :class:`TCREx`, a facade over its :class:`tcrex._engine.fitting._state.FittedState`.

``fit`` (and ``from_json``) build the state; ``update`` and ``recount`` replace it; every other method reads it
through the module where its concern lives (rows and sentences :mod:`tcrex._engine.explaining._lookup`, counterfactuals
:mod:`tcrex._engine.recourse._counterfactuals`, frames :mod:`tcrex._engine.explaining._summary`, effectiveness :mod:`tcrex._engine.recourse._effectiveness`, JSON
:mod:`tcrex._engine.serialization._rules_json`, recount :mod:`tcrex._engine.fitting._recount`).
"""
from __future__ import annotations

import pickle
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from .base._boxes import Boxes
from .recourse._counterfactuals import (LocalExplanation, counterfactuals, explain_one, nearest_points, percentile_distance,
                               real_examples)
from .base._data import as_frame, conform_dtypes, one_row
from .fitting._derive import fit_state, grid_sizes, relabel_state, update_state
from .recourse._effectiveness import add_columns, from_rows, resolve
from .recourse._effectiveness import compute as compute_effectiveness
from ..errors import ParameterError, not_fitted
from .explaining._summary import metarules_frame, rules_frame, summary_text
from .base._params import MAX_CHANGES, check_parameter
from .base._in_target import in_target
from .fitting._findings import FINDINGS_BUDGET, fit_findings
from .fitting._recount import candidate_counts, recount
from .explaining._lookup import conditions_dict, explain_frame, explain_table, feature_actions, model_columns, outputs
from .serialization._rules_json import from_json, to_json
from .fitting._state import FittedState, metarule_id, rule_id
from .explaining._metarule_views import metarule_slice, metarule_tree
from ..text import box_text, class_label, output_text, value_text

__all__ = ["TCREx", "LocalExplanation"]


def _fitted(name: str, doc: str) -> property:
    """A public fitted attribute (scikit-learn's trailing underscore), read from the fitted state; absent (an
    AttributeError, so ``hasattr`` is False) before ``fit``/``from_json``."""
    def get(self):
        state = self.__dict__.get("state_")
        if state is None:
            raise AttributeError(f"{name}_ is set by fit() or from_json(); this explainer is not fitted yet")
        return getattr(state, name)
    return property(get, doc=doc)


class TCREx:
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
    constraints : None, "auto" or dict
        Actionability per feature name: "immutable", "increase_only", "decrease_only", ``{"weight": w}``,
        ``{"transitions": {from: [to, ...]}}`` for categoricals, or a dict combining a direction/kind with a
        weight. The metarules stay exact; inputs with no allowed rule get status ``no_actionable_rule``.
        None (default) or "auto": with a ``dictionary``, the actionability it declares and, for the features it
        leaves unsettled, the suggested one (protected attributes immutable, age increase only, history columns
        immutable except the most recent: :func:`tcrex.constraints.suggest_constraints`), listed with reasons in
        ``suggested_constraints_``; without a dictionary, none. ``{}``: every feature free (the dictionary's
        actionability and the suggestions switched off). A non-empty dict: exactly it, plus what the dictionary
        declares for the features it does not name.
    grower : "auto", "exact" or "hist"
        "exact" grows scikit-learn's CART (the paper's choice); "hist" a histogram-based tree (faster on large
        data, thresholds between binned values). "auto" (default) takes "hist" where it provably considers
        exactly CART's splits (one tree, every numeric column with at most 255 distinct float32-exact values),
        else "hist" from 2,000 fit rows on and "exact" below; ``grower_`` records the choice.
    random_state : int
        Seed of the surrogate and of the metarule tree.
    special_codes : "auto", None or dict
        Values of numeric features that are codes ("no such record": credit-bureau -7/-8/-9, 999), not numbers:
        a verified point never moves a feature into or out of one, unless a transition constraint allows it
        (``constraints={f: {"transitions": {-9: ["value"]}}}``). "auto" (default) detects them in the fit rows
        (:func:`tcrex.sentinel_codes`); a dict ``{feature: [codes]}`` declares them for the features it names
        (``[]``: none) and detects them for the others; None: no feature has any. ``schema_`` lists them.
    max_changes : int or None
        No verified advice changes more features than this (default 3); a person whose recourse would need more
        gets "no verified recourse within k changes" and the nearest similar case. None: no limit.
    value_labels : dict, optional
        A codebook ``{feature: {value: label}}`` ("Checking_account_status": {"A14": "no checking account"}):
        every sentence, frame and figure then says "no checking account (A14)" where it would say "A14". Values
        as the data holds them (text for categoricals, numbers for a numeric feature's codes, matched as floats;
        :mod:`tcrex.codebook`). Checked in ``fit``: an unknown feature or category is an error. Kept in the JSON
        export; ``update(value_labels=...)`` changes it without refitting.
    class_names : dict, optional
        ``{class: name}`` (``{1: "approved", 0: "rejected"}``): the default class names of every text (a method's
        own ``class_names=`` overrides them); checked against the model's classes in ``fit``, kept in the JSON
        export.
    dictionary : tcrex.dictionary.DataDictionary, optional
        What the data means (:mod:`tcrex.dictionary`; read a file with ``tcrex.dictionary.read_dictionary``): per
        column a title (every text then says "repayment status last month (status_1)"), value labels (merged
        under ``value_labels``), special codes (merged under ``special_codes``: categories beside the number line,
        never moved into or out of), the kind (categorical / numeric) and the actionability (see
        ``constraints``). Columns it describes that are not features, and labels of values the data does not
        have, are left out and said in ``dictionary_notes_``, as is every labelled number that is not a code.
        Kept in the JSON export.
    """

    def __init__(self, rho=0.02, tau=0.9, n_trees=1, max_cells=100_000, target=None, task=None,
                 categorical_features=None, numeric_features=None, surrogate_params=None, constraints=None,
                 grower="auto", random_state=0, special_codes="auto", max_changes=MAX_CHANGES, value_labels=None,
                 class_names=None, dictionary=None):
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
        self.special_codes = special_codes
        self.max_changes = max_changes
        self.value_labels = value_labels
        self.class_names = class_names
        self.dictionary = dictionary

    schema_ = _fitted("schema", "The features (names, kinds, categories).")
    task_ = _fitted("task", '"classification" or "regression".')
    classes_ = _fitted("classes", "The model's classes in the fit outputs ([] for regression).")
    constraints_ = _fitted("constraints", "The parsed actionability constraints.")
    n_fit_rows_ = _fitted("n_fit_rows", "Rows the counts refer to (the fit rows, or all counted rows after recount).")
    model_ = _fitted("model", "The model given to fit (None when fitted on y_pred or restored from JSON).")
    surrogate_ = _fitted("surrogate", "The grown surrogate (None after from_json).")
    grower_ = _fitted("grower", 'The grower used, "exact" or "hist" ("auto" resolved).')
    n_surrogate_fits_ = _fitted("n_surrogate_fits", "Surrogates grown (update and recount never regrow).")
    timings_ = _fitted("timings", "Seconds per fit step.")
    targets_ = _fitted("solutions", "One :class:`tcrex.Solution` (rules, metarules, grid; every field declared) per "
                       "fitted target, in target-id order.")
    recount_counts_ = _fitted("recounted", "The counts of recount() (None before any recount).")
    recount_summary_ = _fitted("recount_summary", "What the last recount changed (None before any recount).")
    effectiveness_ = _fitted("effectiveness", "Effectiveness loaded with a JSON export that carries it, or None.")
    dictionary_ = _fitted("dictionary", "The data dictionary the fit applied (a tcrex.dictionary.DataDictionary), "
                          "or None.")
    suggested_constraints_ = _fitted("suggested_constraints", "The suggested constraints applied by default "
                                     "(constraints='auto' with a dictionary): {feature: reason}.")
    dictionary_notes_ = _fitted("dictionary_notes", "What the fit says about the dictionary: parts not used, "
                                "labelled numbers that may be codes.")

    # ------------------------------------------------------------------ sklearn-style parameters
    _PARAMS = ("rho", "tau", "n_trees", "max_cells", "target", "task", "categorical_features",
               "numeric_features", "surrogate_params", "constraints", "grower", "random_state", "special_codes",
               "max_changes", "value_labels", "class_names", "dictionary")

    # scikit-learn's estimator contract without deriving from its BaseEstimator: importing sklearn.base costs
    # ~1.7 s of CPU (it loads scipy.stats), which every CLI command paid before its first row although a restored
    # explainer never touches scikit-learn (docs/benchmarks.md, "The CLI's fixed cost and 2M rows"). ``clone``, ``get_params``,
    # ``set_params``, ``check_is_fitted`` and ``get_tags`` work as on a BaseEstimator (tests/engine/test_estimator.py).
    def get_params(self, deep=True) -> dict:
        """The parameters by name, as scikit-learn's ``BaseEstimator.get_params`` gives them (``deep``: also
        ``name__param`` of a parameter that is itself an estimator)."""
        out = {}
        for name in self._PARAMS:
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def __sklearn_tags__(self):
        """scikit-learn's default estimator tags (what ``BaseEstimator`` gives; imported on first use)."""
        from sklearn.utils import Tags, TargetTags  # noqa: PLC0415 - only scikit-learn itself asks for tags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False), transformer_tags=None,
                    regressor_tags=None, classifier_tags=None)

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
        return "state_" in self.__dict__

    def _state(self) -> FittedState:
        """The fitted state, or a NotFittedError saying how to get one."""
        state = self.__dict__.get("state_")
        if state is None:
            raise not_fitted("this TCREx explainer is not fitted yet; call fit(X, model) or from_json(text)")
        return state

    def _surrogate_state(self, what: str) -> FittedState:
        state = self._state()
        state.require_surrogate(what)
        return state

    def outputs(self, X, *, y_pred=None, model=None) -> np.ndarray:
        """The model outputs on ``X``: ``y_pred`` checked against the rows, else ``model`` (or the fitted model)
        applied to ``X``."""
        state = self._state() if y_pred is None else self.__dict__.get("state_")  # y_pred needs no fit
        return outputs(state, as_frame(X), y_pred, model)

    def _check_params(self) -> None:
        for name in ("rho", "tau", "n_trees", "max_cells", "task", "grower", "special_codes", "max_changes",
                     "value_labels"):
            check_parameter(name, getattr(self, name))

    # ------------------------------------------------------------------ fitting
    def fit(self, X, model=None, *, y_pred=None, progress=None) -> "TCREx":
        """Grow the surrogate on X and derive rules and metarules (paper steps a-e).

        ``model`` is anything with ``predict`` or a callable ``X -> outputs``; alternatively pass the model's
        outputs on X as ``y_pred`` (validity is then estimated on exactly those outputs). ``progress`` is an
        optional callback ``progress(step: str, fraction: float)``.
        """
        report = progress or (lambda step, fraction: None)
        self._check_params()
        t0 = time.perf_counter()
        for k in [k for k in self.__dict__ if k not in self._PARAMS]:  # a fit starts from scratch (a failed one
            del self.__dict__[k]  # leaves no old state behind)
        self.state_ = fit_state(as_frame(X), model, y_pred, self.get_params(), report, t0)
        report("done", 1.0)
        return self

    def fit_findings(self, *, explanations=None, counterfactuals=None, budget: float = FINDINGS_BUDGET,
                     class_names: dict | None = None) -> list:
        """What this fit says too little about, as :class:`tcrex.FitFinding` s (empty when nothing): one rule, one
        metarule, a metarule with no condition serving >= 90 % of the people needing recourse, or (given
        ``counterfactuals``, the verified frame of :meth:`counterfactuals`) many more people verified beyond the
        rules than through them. Each finding carries a plain sentence and a suggested parameter set (smaller
        ``rho`` and/or more ``n_trees``) that was fitted on the same rows within ``budget`` seconds and gives more
        rules (``suggestion`` None when no setting tried did). ``explanations``: :meth:`explain` of the fit rows,
        computed when not given (an explainer restored from JSON needs it, and gets no suggestion).
        ``class_names`` ``{class: name}`` names the outcomes in the sentences (default: the fit's own)."""
        self._state()
        return fit_findings(self, explanations, counterfactuals, budget, class_names)

    def grid_sizes(self, X, model=None, *, y_pred=None) -> list:
        """Per target, the metarule grid :meth:`fit` with these parameters would build (a
        :class:`tcrex._engine.fitting._grid.GridSize`: maximal-valid rules, states per feature, ``n_cells``, ``seconds()`` and
        ``limit_message(max_cells)``), counted before anything per cell is built: only the surrogate is grown.
        Use it to preview a fit that ``max_cells`` would refuse (:class:`~tcrex.errors.CellLimitError`) or that
        would take long; the explainer itself is left unfitted/unchanged."""
        self._check_params()
        return grid_sizes(as_frame(X), model, y_pred, self.get_params())

    def update(self, *, tau=None, target=None, constraints=None, value_labels=None, class_names=None,
               dictionary=None, progress=None) -> "TCREx":
        """Re-derive rules and metarules for a new ``tau``, ``target`` and/or ``constraints`` from the grown
        surrogate (``constraints={}`` removes them), and/or change the codebook ``value_labels`` or the
        ``class_names`` (``{}`` removes them).

        Steps b-e only: the surrogate is never regrown (``n_surrogate_fits_`` stays the same). Pass
        ``target="default"`` to go back to the default targets. After :meth:`recount`, rules are re-derived from
        the recounted counts (all rows), not from the fit sample. Labels and names change only words: they need
        no surrogate (an explainer restored from JSON takes them too) and re-derive nothing. ``dictionary`` (a
        :class:`tcrex.dictionary.DataDictionary`) puts another dictionary's words in force the same way: its
        titles and labels (its special codes must be the ones the rules were fitted with: codes change rules).
        """
        if value_labels is not None or class_names is not None or dictionary is not None:
            relabelled = relabel_state(self._state(), value_labels, class_names, dictionary)  # checked first
            if tau is target is constraints is None:
                self.state_ = relabelled
                self._keep_labels(value_labels, class_names, dictionary)
                return self
        state = self._surrogate_state("change tau or the target")
        if value_labels is not None or class_names is not None or dictionary is not None:
            state = relabelled
        if tau is not None:
            check_parameter("tau", tau)
        new_target = self.target
        if target is not None:
            new_target = None if isinstance(target, str) and target == "default" else target
        report = progress or (lambda step, fraction: None)
        # everything is parsed and derived before anything changes: invalid constraints, no valid rule or a cell
        # limit leave the explainer as it was
        self.state_ = update_state(state, self.tau if tau is None else tau, constraints, new_target, report)
        self.tau, self.target = self.state_.tau, new_target
        if constraints is not None:
            self.constraints = constraints or None
        self._keep_labels(value_labels, class_names, dictionary)
        report("done", 1.0)
        return self

    def _keep_labels(self, value_labels, class_names, dictionary=None) -> None:
        """The parameters follow what ``update`` put in force (a later ``fit`` uses them too)."""
        if dictionary is not None:
            self.dictionary = self.state_.dictionary
        if value_labels is not None:
            self.value_labels = value_labels or None
        if class_names is not None:
            self.class_names = class_names or None

    def solution(self, target: int):
        """The :class:`tcrex.Solution` (rules, metarules and grid) of the target id ``target`` (as returned in
        ``explain()['target']``: the fitted targets, then those solved on demand by ``explain(..., target=...)``)."""
        return self._state().all_solutions()[target]

    # ------------------------------------------------------------------ explaining
    def explain(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """Local explanations for every row of X, as a DataFrame aligned with X.

        Columns: ``target`` (the serving target's index: into ``targets_``, then past it for a target solved
        on demand, see :meth:`solution`), ``rule`` and ``metarule`` (indices within that target, missing when
        none; they are not ids: :meth:`rule_id` / :meth:`metarule_id` give the public ids "R3" / "M4"),
        ``changes`` (features to change), ``status`` (ok / already_in_target / already_in_rule / no_rule /
        no_actionable_rule) and ``text``. Outputs come from ``y_pred`` or the model (the fit's or ``model=``);
        ``target`` picks a class (targeted multi-class) or regression threshold/interval instead of the fitted
        targets; a target the fit did not solve is solved on the fly (the fitted ``targets_`` never change).
        """
        return explain_frame(self._state(), X, y_pred, target, model)

    def explain_arrow(self, X, *, y_pred=None, target=None, model=None):
        """:meth:`explain` as a ``pyarrow.Table`` built straight from the engine's arrays (no pandas round trip;
        what the Parquet writers of :mod:`tcrex.distributed` use): ``target``, ``rule`` and ``metarule`` int64,
        null where :meth:`explain` has a missing index, ``changes`` int64, ``status`` and ``text`` dictionary-encoded
        strings (int32 indices; ``status``'s dictionary is every status, in ``tcrex.vocabulary.STATUSES`` order, as the
        categories of :meth:`explain`). Rows in the order of X; X's index is not carried."""
        return explain_table(self._state(), X, y_pred, target, model)

    def value_text(self, feature: str, value) -> str:
        """``value`` of ``feature`` as every text states it: "no checking account (A14)" when the codebook
        (``value_labels``) labels it, else the value ("A14", "5"); :func:`tcrex.text.value_text`."""
        state = self._state()
        return value_text(value, state.schema.features[state.schema.index(feature)].labels)

    def class_text(self, value) -> str:
        """A model output (a class) as texts name it: its class name when ``class_names`` has one, else the value."""
        return class_label(value, self._state().class_names or None) or output_text(value)

    def conditions_text(self, boxes: Boxes, r: int) -> str:
        """Box ``r`` of ``boxes`` (a solution's rules or metarules) as text ("age > 30, job in {a, b}")."""
        return box_text(self._state().schema, boxes, r)

    def feature_actions(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """Per row and feature: "change" (outside its rule), "keep" (the rule constrains it and the row already
        satisfies that) or "" (the rule leaves the feature free, or the row has no rule). Paper Figure 8b."""
        return feature_actions(self._state(), X, y_pred, target, model)

    # ------------------------------------------------------------------ richer local outputs
    def counterfactuals(self, X, *, verify=None, model=None, y_pred=None, target=None, reference=None,
                        text=True, class_names=None) -> pd.DataFrame:
        """The counterfactual point of each row, verified on the model when one is known.

        ``verify`` (default: True when a model is known, from ``fit`` or ``model=``) finds for every row that
        needs recourse a point the model confirms that *is* the advice (see :mod:`tcrex._engine.recourse._search`): a point of
        the paper's optimal rule changing exactly the features the advice names to values the data holds, else
        of the next rule in cost order, else a minimal change beyond the rules (from the nearest ``reference``
        row with the target output, default the fit rows). Columns, beside the point's features:

        * ``valid``: the model confirms the point (missing for rows that do not need recourse);
        * ``source``: ``boundary`` / ``searched`` (the paper's rule) / ``next_rule`` / ``minimal_change`` /
          ``example`` (a similar real case only, never verified recourse);
        * ``recourse``: ``verified`` / ``similar_case`` / ``none`` (:func:`tcrex.vocabulary.recourse_outcome`, the one
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
        state = self._state()
        return counterfactuals(state, X, verify, model, y_pred, target, reference, text, state.names(class_names))

    def nearest_points(self, X, target: int, rule: int) -> pd.DataFrame:
        """For each row, the nearest point of rule ``rule`` of target ``target`` (features the rule leaves free,
        or already satisfies, keep their values; ``(low, high]`` and integer features respected; category moves
        follow the constraints' transitions)."""
        return nearest_points(self._state(), X, target, rule)

    def real_examples(self, X, *, y_pred=None, target=None, model=None) -> pd.DataFrame:
        """For each row, the nearest fit row inside its rule whose model output is in the target.

        The model is known to reach the target there. Distance is the total percentile shift (categorical
        mismatch counts 1). Returns the example's index in the fit data, its distance, then its features.
        """
        return real_examples(self._state(), X, y_pred, target, model)

    def in_target(self, outputs, targets) -> np.ndarray:
        """Per row, whether ``outputs[i]`` (of any model) lies in target ``targets[i]`` (target indices as in
        :meth:`explain`'s ``target`` column; missing indices give False): the engine's own target containment."""
        return in_target(self._state().all_solutions(), outputs, targets)

    def fit_rows(self) -> pd.DataFrame:
        """The fit rows (features, fit index, the fit data's column types); not available after ``from_json``."""
        state = self._state()
        if not state.has_fit_data:
            raise not_fitted("this explainer was restored from JSON and holds no fit rows; pass the rows yourself")
        return conform_dtypes(state.schema.decode(state.fit_enc, state.fit_index), state.fit_dtypes)

    @property
    def has_fit_data(self) -> bool:
        """Whether the explainer holds its fit rows (needed for real examples and fit-data percentiles); an
        explainer restored from JSON does not."""
        state = self.__dict__.get("state_")
        return state is not None and state.has_fit_data

    def percentile_distance(self, X_from, X_to, *, reference=None) -> np.ndarray:
        """Row-wise total percentile shift from each row of ``X_from`` to the same row of ``X_to``.

        Per numeric feature the absolute difference of the two values' percentiles, plus 1 per categorical
        feature that differs (Pawelczyk et al. 2020; the paper's distance). Percentiles come from the fit data,
        or from the rows of ``reference`` when given (needed for an explainer restored from JSON).
        """
        return percentile_distance(self._state(), X_from, X_to, reference)

    def explain_one(self, x, *, y_pred=None, target=None, model=None, n_alternatives=5,
                    verify=None, reference=None, class_names=None) -> LocalExplanation:
        """The full local explanation of one input: rule, metarule, changes, keeps, counterfactual point, a
        real example, and metacounterfactuals (the nearest other metarules whose rule differs, paper §6.2).

        ``verify`` (default: True when a model is known) checks the points on the model: ``counterfactual`` is
        then the verified point (see :meth:`counterfactuals`) with ``counterfactual_valid/output/source``, next
        to ``boundary_point`` and the example with their own ``*_valid`` / ``*_output``."""
        state = self._state()
        return explain_one(state, x, y_pred, target, model, n_alternatives, verify, reference,
                           state.names(class_names))

    # ------------------------------------------------------------------ global summary
    def effectiveness(self, X=None, *, model=None, y_pred=None, explanations=None, counterfactuals=None,
                      reference=None):
        """Who has recourse that works, on a population (the fit rows by default): of the rows needing recourse,
        how many have verified recourse (by source), a similar real case only, or none — the one definition of
        :func:`tcrex.vocabulary.recourse_outcome` — and per rule and metarule the share of served inputs whose nearest
        point of the rule already flips the model, and whose verified point lies in the rule. Returns a
        plain-data ``Effectiveness`` (counts, ``headline()``, ``rules`` and ``metarules`` frames).

        Given ``explanations`` (from :meth:`explain`) and ``counterfactuals`` (from :meth:`counterfactuals` with
        ``verify=True``) of the same rows, it summarises those without calling the model again (any subset of
        rows verified once)."""
        state = self._state()
        if explanations is not None or counterfactuals is not None:
            if explanations is None or counterfactuals is None:
                raise ParameterError("pass both explanations= and counterfactuals= (of the same rows), or neither")
            return from_rows(state, explanations, counterfactuals)
        X = None if X is None else model_columns(state, as_frame(X), model)
        return compute_effectiveness(state, X, model, y_pred, reference)

    def rules_frame(self, X=None, *, model=None, y_pred=None, effectiveness=None) -> pd.DataFrame:
        """Every rule of every target with its n, feasibility, accuracy and complexity (tie-break order).

        Given a population ``X`` and/or a model (or ``effectiveness=`` from :meth:`effectiveness`, or True for
        the fit rows), adds ``n_served``, ``boundary_effectiveness`` and ``effectiveness``."""
        state = self._state()
        return add_columns(rules_frame(state), resolve(state, effectiveness, X, model, y_pred), "rule")

    def metarules_frame(self, X=None, *, model=None, y_pred=None, effectiveness=None) -> pd.DataFrame:
        """Every metarule with its rule, worst-case sparsity and what to change / keep inside it (plus the
        effectiveness columns, as in :meth:`rules_frame`)."""
        state = self._state()
        return add_columns(metarules_frame(state), resolve(state, effectiveness, X, model, y_pred), "metarule")

    def rule_id(self, target: int, rule) -> str | None:
        """The one public id of rule ``rule`` of target ``target`` ("R1", "R2", …): the rules of every target are
        numbered in order from 1, so ids never collide across targets (rule 0 of target 1 follows the last rule
        of target 0). None for no rule (None or a negative rule, e.g. a metarule without an actionable rule).
        Every table, figure and report shows rules by this id (column ``rule_id`` of :meth:`rules_frame`)."""
        if rule is None or (isinstance(rule, float) and rule != rule) or int(rule) < 0:
            return None
        return rule_id(self._state(), target, rule)

    def metarule_id(self, target: int, metarule) -> str | None:
        """The one public id of metarule ``metarule`` of target ``target`` ("M1", "M2", …), numbered like
        :meth:`rule_id`: from 1, over every target in order, so ids never collide across targets. None for no
        metarule (None or negative). Tables, figures and reports show metarules by this id (column
        ``metarule_id`` of :meth:`metarules_frame`); ``metarule`` columns keep the index within the target."""
        if metarule is None or (isinstance(metarule, float) and metarule != metarule) or int(metarule) < 0:
            return None
        return metarule_id(self._state(), target, metarule)

    def summary_text(self, class_names=None, target: int | None = None) -> str:
        """The global textual summary: per target, its rules, then per metarule "if …: change …, keeping …".

        ``class_names`` (``{label: name}``) names the classes ("approved" instead of "output = 1"); rules are
        named by their :meth:`rule_id`. ``target`` (an index into ``targets_``) keeps one target; default every
        target. A rule without any condition (it covers every input) is flagged: it describes the model, it is not
        advice."""
        state = self._state()
        return summary_text(state, state.names(class_names), target)

    # ------------------------------------------------------------------ structured views (figures, reports)
    def rule_conditions(self, target: int, rule: int) -> dict:
        """``{feature: {"low", "high", "text"} | {"in", "text"}}`` for the features rule ``rule`` constrains."""
        state = self._state()
        return conditions_dict(state.schema, state.all_solutions()[target].rules, rule)

    def metarule_conditions(self, target: int, metarule: int) -> dict:
        """``{feature: {"low", "high", "text"} | {"in", "text"}}`` for the features metarule ``metarule``
        constrains."""
        state = self._state()
        return conditions_dict(state.schema, state.all_solutions()[target].metarules, metarule)

    def metarule_tree(self, target: int = 0) -> dict:
        """The metarules of one target as a tree of splits with metarules at the leaves (paper Figure 7)."""
        state = self._state()
        return metarule_tree(state.all_solutions()[target], state.schema)

    def metarule_slice(self, target: int, x: str, y: str, individual) -> pd.DataFrame:
        """Exact metarule regions on the plane of features ``x`` and ``y`` through ``individual`` (a row whose
        other features stay fixed): one row per pair of grid states with extent, metarule, rule and changes."""
        state = self._state()
        schema = state.schema
        enc = schema.encode(one_row(individual, schema.names, state.fit_dtypes))
        return metarule_slice(state.all_solutions()[target], schema, schema.index(x), schema.index(y), enc)

    # ------------------------------------------------------------------ export / import
    def to_json(self, indent=None, *, effectiveness=None, findings=None) -> str:
        """The versioned JSON export; ``effectiveness`` (from :meth:`effectiveness`) adds per-rule and
        per-metarule effectiveness as optional fields (format version 3); ``findings`` (from :meth:`fit_findings`)
        adds them as ``"findings"`` (plain data; readers ignore it)."""
        return to_json(self.get_params(), self._state(), indent=indent, effectiveness=effectiveness,
                       findings=findings)

    @classmethod
    def from_json(cls, text, *, max_grid_bytes: int | None = None) -> "TCREx":
        """Rebuild an explainer from :meth:`to_json`'s text, checking it as untrusted input (docs/security.md).
        ``max_grid_bytes``: memory the rebuilt grid's cell-by-rule tables may need (default
        ``tcrex._engine.serialization._rules_json.MAX_GRID_BYTES``, 256 MB); raise it only for a trusted, very large explainer."""
        return from_json(cls, text, max_grid_bytes=max_grid_bytes)

    def __getstate__(self):
        state = dict(self.__dict__)
        fitted = state.get("state_")
        if fitted is not None:
            # the frames are rebuilt on demand; the other cached values travel (they equal what would be rebuilt)
            fitted = replace(fitted, cache=replace(fitted.cache, frames={}))
            if fitted.model is not None:
                try:
                    pickle.dumps(fitted.model)
                except Exception:  # noqa: BLE001 - foreign code (a lambda, a local function): pickle without it
                    fitted = replace(fitted, model=None)
            state["state_"] = fitted
        return state

    # ------------------------------------------------------------------ recount (tcrex/py)
    def candidate_counts(self, X, *, y_pred=None, model=None):
        """Mergeable per-candidate-rule counts on the rows X (add the results of several partitions)."""
        state = self._surrogate_state("count candidate rules")
        X = as_frame(X)
        return candidate_counts(state, X, outputs(state, X, y_pred, model))

    def recount(self, counts) -> "TCREx":
        """Re-choose the valid rules (rho, tau) from counts over all rows and rebuild the metarules.

        The counts are kept (``recount_counts_``): later ``update()`` calls and targets derived on demand use them
        (and their minimum rule size ``ceil(rho * counts.n_rows)``), never the fit sample's counts."""
        self.state_ = recount(self._surrogate_state("recount candidate rules"), counts, self.target)
        return self
