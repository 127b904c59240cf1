"""Everything a fitted explainer knows, as one plain record: :class:`FittedState`.

``TCREx.fit`` (and ``TCREx.from_json``) build it; ``update`` and ``recount`` replace it with a new one (never
change it in place), and every algorithm module (rows and sentences, counterfactuals, verified recourse,
effectiveness, frames, serialization) takes it, or the pieces it needs, as an argument. Reads never change a
state: the only values filled after construction are the declared caches of :class:`StateCache`, each a pure
function of the state's other fields, so a result is the same whether a cache was warm or cold.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ...constraints import Constraints
from ..base._data import Encoded, FeatureSchema
from ...errors import not_fitted
from ..base._nearest import PercentileScale, category_preference
from ._solution import Solution
from ...text import metarule_label, rule_label


@dataclass
class StateCache:
    """Values a :class:`FittedState` derives on first use, declared here so that nothing appears lazily.

    Each entry depends only on the state's other fields (a new state starts with a new cache), so whether a value
    was cached never changes a result."""

    #: Targets solved on demand by ``explain(..., target=...)`` for an outcome the fit did not solve; their target
    #: ids follow the fitted ones (``len(solutions) + k``, in order of first request), so ids a caller got back
    #: keep resolving (``TCREx.solution(id)``, ``rule_id``). The fitted targets (and the JSON export) never change.
    extra_solutions: list = field(default_factory=list)
    #: Target id -> per-rule observed values of the fit rows (:func:`tcrex._engine.recourse._search.compute_rule_values`), computed
    #: the first time the recourse search or the JSON export needs them.
    rule_values: dict = field(default_factory=dict)
    #: "rules" / "metarules" -> the frame of :func:`tcrex._engine.explaining._summary.rules_frame` / ``metarules_frame`` (handed out as
    #: copies): a dashboard page asks for them several times per run.
    frames: dict = field(default_factory=dict)
    #: The fit rows' :class:`PercentileScale` (sorted numeric columns), built the first time a distance needs it.
    scale: PercentileScale | None = None


@dataclass
class FittedState:
    """What ``fit`` learned (or ``from_json`` restored). Fields a JSON-restored explainer lacks are None."""

    schema: FeatureSchema  #: the features: names, kinds, categories, integer flags (``TCREx.schema_``)
    task: str  #: "classification" or "regression" (``TCREx.task_``)
    classes: list  #: the model's classes in the fit outputs, sorted; [] for regression (``TCREx.classes_``)
    constraints: Constraints  #: the parsed actionability constraints the solutions respect (``TCREx.constraints_``)
    n_fit_rows: int  #: rows the counts refer to: the fit rows, or every counted row after recount
    solutions: list  #: one :class:`Solution` per fitted target: rules, metarules, grid (``TCREx.targets_``)
    tau: float  #: minimum accuracy the solutions were derived with
    rho: float  #: minimum feasibility (share of rows) the surrogate was grown with
    max_cells: int  #: largest metarule grid allowed when a target is solved
    random_state: object  #: seed of the metarule tree when a target is solved
    max_changes: int | None = None  #: no verified advice changes more features (None: no limit)
    model: object = None  #: the model given to ``fit`` (None when fitted on ``y_pred`` or restored from JSON)
    surrogate: object = None  #: the grown surrogate (:class:`tcrex._engine.fitting._surrogate.Surrogate`); None after from_json
    grower: str | None = None  #: the grower used, "exact" or "hist"; None when a JSON export does not say
    n_surrogate_fits: int = 0  #: surrogates grown for this state (1 after fit; update and recount never regrow)
    timings: dict = field(default_factory=dict)  #: seconds per fit step ("encode", "surrogate", ...)
    fit_enc: Encoded | None = None  #: the fit rows, encoded; None after from_json
    fit_y: np.ndarray | None = None  #: the model's outputs on the fit rows; None after from_json
    fit_index: pd.Index | None = None  #: the fit rows' index; None after from_json
    fit_dtypes: dict | None = None  #: feature name -> the fit data's dtype (one-row inputs are read alike)
    category_counts: list | None = None  #: per categorical slot, the fit rows' count of each category
    category_preference: list | None = None  #: per categorical slot, the order categories are moved to
    rule_values: list | None = None  #: per fitted target, per-rule observed values restored from JSON version 4
    recounted: object = None  #: the counts of :meth:`TCREx.recount` (:class:`tcrex._engine.fitting._recount.Recounted`), or None
    recount_summary: dict | None = None  #: what the last recount changed, or None
    effectiveness: object = None  #: effectiveness loaded with a JSON export that carries it, or None
    #: the model's classes' names, class -> name (``TCREx(class_names=)``, matched by
    #: :func:`tcrex.codebook.check_class_names`); {} when none are given
    class_names: dict = field(default_factory=dict)
    #: the data dictionary the fit applied (``TCREx(dictionary=)``, a :class:`tcrex.dictionary.DataDictionary`),
    #: or None
    dictionary: object = None
    #: the suggested constraints the fit applied by default, ``{feature: reason}`` (``TCREx.suggested_constraints_``)
    suggested_constraints: dict = field(default_factory=dict)
    #: what the fit says about the dictionary: parts not used, labelled numbers asked about (``dictionary_notes_``)
    dictionary_notes: list = field(default_factory=list)
    cache: StateCache = field(default_factory=StateCache)  #: values derived on first use (see StateCache)

    # ------------------------------------------------------------------ derived views (no state changes)
    @property
    def has_fit_data(self) -> bool:
        return self.fit_enc is not None

    @property
    def min_count(self) -> int:
        """The fewest rows a rule must hold: the surrogate's minimum leaf, or ``ceil(rho * N)`` after recount."""
        return self.surrogate.min_count_ if self.recounted is None else self.recounted.min_count

    def all_solutions(self) -> list:
        """The fitted targets, then any solved on demand (their ids continue)."""
        extra = self.cache.extra_solutions
        return self.solutions + extra if extra else self.solutions

    def solution_id(self, sol: Solution) -> int:
        return next(i for i, s in enumerate(self.all_solutions()) if s is sol)

    def scale(self) -> PercentileScale:
        """The fit rows' percentile scale (cached; only for a state with fit rows)."""
        if self.cache.scale is None:
            self.cache.scale = PercentileScale(self.fit_enc)
        return self.cache.scale

    def transitions(self):
        """Per categorical slot, the allowed category moves under the constraints (None when free)."""
        c = self.constraints
        if c is None or c.trivial:
            return None
        return [None if c.features[i].is_free() else c.transition_matrix(i) for i in self.schema.categorical]

    def names(self, class_names=None):
        """The class names a text uses: ``class_names`` when a caller passes some, else the explainer's own (None
        when it has none)."""
        if class_names is not None:
            return class_names
        return self.class_names or None

    def require_surrogate(self, what: str) -> None:
        if self.surrogate is None:
            raise not_fitted(f"cannot {what}: this explainer was restored from JSON and has no surrogate; "
                                 "fit it again on data")


def rederive(state: FittedState, **changes) -> FittedState:
    """A copy of ``state`` with ``changes`` (new parameters, counts or solutions) and a fresh cache (the percentile
    scale is kept: it depends on the fit rows only). ``update`` and ``recount`` build their state this way."""
    return replace(state, cache=StateCache(scale=state.cache.scale), **changes)


def category_counts(enc: Encoded, schema: FeatureSchema) -> list:
    """Per categorical slot, the rows' count of each category."""
    return [np.bincount(enc.cat[:, j], minlength=len(schema.features[i].categories))
            for j, i in enumerate(schema.categorical)]


def preference_of(counts, schema: FeatureSchema):
    """The category preference of moves (:func:`tcrex._engine.base._nearest.category_preference`), None without counts."""
    return None if counts is None else category_preference(counts, schema)


def rule_id(state: FittedState, target: int, rule) -> str | None:
    """The public id of a rule ("R3"): rules of every target numbered in order from 1 (see ``TCREx.rule_id``)."""
    if rule is None or (isinstance(rule, float) and rule != rule) or int(rule) < 0:
        return None
    offset = sum(s.n_rules for s in state.all_solutions()[:int(target)])
    return rule_label(offset + int(rule) + 1)


def metarule_id(state: FittedState, target: int, metarule) -> str | None:
    """The public id of a metarule ("M4"), numbered like :func:`rule_id`."""
    if metarule is None or (isinstance(metarule, float) and metarule != metarule) or int(metarule) < 0:
        return None
    offset = sum(len(s.metarules) for s in state.all_solutions()[:int(target)])
    return metarule_label(offset + int(metarule) + 1)
