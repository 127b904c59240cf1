"""The engine, split by stage. Private: every public name is imported from :mod:`tcrex` (the face, loaded lazily) or
from a public module beside it (``tcrex.text``, ``tcrex.errors``, ``tcrex.vocabulary``, ``tcrex.constraints``, ...).

* ``base``: what every stage shares: the feature schema and row encoding (``_data``), calling the model and
  detecting the task (``_outputs``), parameter checks (``_params``), boxes (``_boxes``), nearest points and
  percentile distances (``_nearest``) and whether outputs lie in a target (``_in_target``);
* ``fitting``: the surrogate and its candidate rules (``_surrogate``, ``_hist``), the targets Y* (``_targets``),
  the grid and the optimal rule per cell (``_grid``), one target's rules and metarules (``_solution``), the paper's
  steps for a fitted state (``_derive``), recounting on more rows (``_recount``) and the fitted state itself
  (``_state``);
* ``explaining``: each row's target, rule, metarule and sentence (``_lookup``), the rules and metarules tables and
  the summary text (``_summary``), the metarule tree and 2-D slices (``_metarule_views``);
* ``recourse``: counterfactual points, real examples and the local explanation (``_counterfactuals``), the search
  for advice the model confirms (``_search``), verified frames (``_verify``), metacounterfactuals checked on the
  model (``_alternatives``) and effectiveness (``_effectiveness``);
* ``serialization``: the versioned JSON export of rules and metarules (``_rules_json``);
* ``_explainer``: :class:`~tcrex.TCREx`, the facade over the stages.

A stage imports only earlier stages (``base`` < ``fitting`` < ``explaining`` < ``recourse`` < ``serialization``)
and the engine's public modules; nothing here imports ``tcrex.population``, ``tcrex.audit``, ``tcrex.compare`` or
an outer package (``tests/test_structure.py``; ``docs/architecture.md``).
"""
