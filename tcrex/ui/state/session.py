"""Every key of the dashboard's session state, declared once, with the functions that read and write it.

``st.session_state`` is one flat dictionary per browser session.  Streamlit keeps a widget's value there under the
widget's ``key=``, and the dashboard keeps its own choices there (they must survive a page switch, which widget
state does not).  Every key either kind of code *reads or writes* is declared here, with what it holds, who writes
it and when it is cleared; no other module or test spells a key.  A widget key that only names a widget (passed as
``key=`` and never read back) is the widget's identity, not state: it stays beside the widget, and Streamlit
refuses two widgets with one key.

Every function takes an optional ``state``: the mapping to use instead of ``st.session_state`` (an
``AppTest.session_state`` in the tests, another session's state in :mod:`tcrex.ui.state.memory`).  Only item access,
``in`` and ``del`` are used on it, which every one of those mappings supports.

What the values *are* (``DataSpec``, ``Params``, ``FitResult``, ...) is defined by the modules that compute them;
the rules that tie keys together (new data clears the chosen individual, ...) live there too
(:func:`tcrex.ui.state.active.use_data`).  What is cached, where and how much: :mod:`tcrex.ui.state.caching`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, MutableMapping

import streamlit as st

if TYPE_CHECKING:  # the records the accessors hand out (sources imports nothing of this module)
    from .sources import DataSpec, ModelSpec


def _ss(state: MutableMapping | None) -> MutableMapping:
    return st.session_state if state is None else state


def _get(key: str, default: Any = None, state: MutableMapping | None = None) -> Any:
    ss = _ss(state)
    return ss[key] if key in ss else default


def _set(key: str, value: Any, state: MutableMapping | None = None) -> None:
    _ss(state)[key] = value


def _setdefault(key: str, default: Any, state: MutableMapping | None = None) -> Any:
    ss = _ss(state)
    if key not in ss:
        ss[key] = default
    return ss[key]


def _pop(key: str, default: Any = None, state: MutableMapping | None = None) -> Any:
    ss = _ss(state)
    if key not in ss:
        return default
    value = ss[key]
    del ss[key]
    return value


# ============================================================================================ choices
#: The active data choice (:class:`tcrex.ui.state.sources.DataSpec`). Written by :func:`tcrex.ui.state.active.use_data` (the Data &
#: model page, the fallback when an upload is gone); starts as the loans sample; never cleared.
DATA_SPEC = "tcrex.data_spec"
#: The active model choice (:class:`tcrex.ui.state.sources.ModelSpec`, or None before one is chosen for uploaded data).
#: Written by :func:`tcrex.ui.state.active.use_data` and :func:`~tcrex.ui.state.active.use_model`; never cleared.
MODEL_SPEC = "tcrex.model_spec"
#: The applied parameters (:class:`tcrex.ui.state.active.Params`: tau, rho, trees, cell limit, grower, target,
#: constraints). Written by :func:`tcrex.ui.state.active.set_params` (sidebar Apply, constraints Apply, the favourable
#: outcome); its target and constraints are reset when the data or the model changes.
PARAMS = "tcrex.params"
#: Uploaded bytes: ``{slot: (digest, filename, bytes)}`` (the latest upload per slot, "data" or "model") and
#: ``{slot + "@": LRU of the same tuples by digest}`` (the kept uploads, :data:`tcrex.ui.state.caching.KEPT_UPLOADS`).
#: Written by :func:`tcrex.ui.state.active.remember_blob`; cleared with the session (:mod:`tcrex.ui.state.memory`).
UPLOADS = "tcrex.blobs"
#: The session's least-recently-used caches by name (``{name: LRU}``, :mod:`tcrex.ui.state.caching`); evicted by their
#: size and by the memory budget (:func:`tcrex.ui.state.memory.enforce_budget`).
CACHES = "tcrex.cache"


def data_spec(state: MutableMapping | None = None) -> DataSpec | None:
    """The active :class:`~tcrex.ui.state.sources.DataSpec`, or None before the first page set it."""
    return _get(DATA_SPEC, None, state)


def set_data_spec(spec: DataSpec, state: MutableMapping | None = None) -> None:
    _set(DATA_SPEC, spec, state)


def has_model_spec(state: MutableMapping | None = None) -> bool:
    """Whether a model choice was made (None, "no model yet", is a choice)."""
    return MODEL_SPEC in _ss(state)


def model_spec(state: MutableMapping | None = None) -> ModelSpec | None:
    """The active :class:`~tcrex.ui.state.sources.ModelSpec` (None: no model yet, or no choice made)."""
    return _get(MODEL_SPEC, None, state)


def set_model_spec(spec: ModelSpec | None, state: MutableMapping | None = None) -> None:
    _set(MODEL_SPEC, spec, state)


def params(state: MutableMapping | None = None) -> Any:
    """The applied :class:`~tcrex.ui.state.active.Params`, or None before the first page set them."""
    return _get(PARAMS, None, state)


def set_params(p, state: MutableMapping | None = None) -> None:
    _set(PARAMS, p, state)


def uploads(state: MutableMapping | None = None, create: bool = True) -> dict:
    """The session's uploaded bytes (:data:`UPLOADS`); ``create=False``: an empty dict, not stored, when there
    is none yet."""
    return _setdefault(UPLOADS, {}, state) if create else _get(UPLOADS, None, state) or {}


def holds_uploads(state: MutableMapping | None = None) -> bool:
    return bool(_get(UPLOADS, None, state))


def caches(state: MutableMapping | None = None, create: bool = True) -> dict:
    """The session's named LRU caches (:data:`CACHES`); ``create=False``: an empty dict, not stored, when
    there is none yet."""
    return _setdefault(CACHES, {}, state) if create else _get(CACHES, None, state) or {}


# ============================================================================================ fit
#: The fit result of the active choices (:class:`tcrex.ui.state.active.FitResult`). Written by
#: :func:`tcrex.ui.state.active.explainer_result` on every page run; cleared when the data changes.
LAST_FIT = "tcrex.last_fit"
#: ``(workspace key, FitResult)`` of the last successful fit: a failed fit (cell limit, no valid rule) keeps the last
#: good result of the same data and model on every page. Written by :func:`tcrex.ui.state.active.current`; cleared when the
#: data changes.
LAST_GOOD_FIT = "tcrex.last_good_fit"
#: The :class:`tcrex.errors.TCRExError` of the last fit when it failed. Written and cleared by :func:`tcrex.ui.state.active.current`.
FIT_ERROR = "tcrex.fit_error"


def current_fit(state: MutableMapping | None = None) -> Any:
    """The fit result of the active choices (:data:`LAST_FIT`), or None before the first fit."""
    return _get(LAST_FIT, None, state)


def set_current_fit(result, state: MutableMapping | None = None) -> None:
    _set(LAST_FIT, result, state)


def last_good_fit(state: MutableMapping | None = None) -> tuple | None:
    """``(workspace key, FitResult)`` of the last successful fit (:data:`LAST_GOOD_FIT`), or None."""
    return _get(LAST_GOOD_FIT, None, state)


def set_last_good_fit(workspace_key: str, result, state: MutableMapping | None = None) -> None:
    _set(LAST_GOOD_FIT, (workspace_key, result), state)


#: The token of the page run under way, renewed when it ends: a check waiting for its page to be drawn starts later.
PAGE_RUN = "tcrex.page_run"


def page_run(state: MutableMapping | None = None, *, renew: bool = False) -> object:
    if renew:  # the page run is over
        _set(PAGE_RUN, object(), state)
    return _setdefault(PAGE_RUN, object(), state)


def fit_error(state: MutableMapping | None = None) -> Any:
    return _get(FIT_ERROR, None, state)


def set_fit_error(error, state: MutableMapping | None = None) -> None:
    """Keep the error of the failed fit, or clear it (``error=None``) after a successful one."""
    if error is None:
        _pop(FIT_ERROR, None, state)
    else:
        _set(FIT_ERROR, error, state)


# ============================================================================================ the individual
#: The individual chosen on the Individual page (a row label of the data). Written by the Individual page's picker
#: and the Compare models drill-down; cleared when the data changes.
INDIVIDUAL = "tcrex.individual"
#: The edited copy of that individual (``{feature: value}``). Written by the picker's "Edit values" form and by
#: "Try this advice"; cleared with a new individual or new data.
EDITED_INDIVIDUAL = "tcrex.edited_individual"
#: True when the Individual page explains under model B of the last comparison. Written by the Compare models
#: drill-down; cleared by "Back to model A", when that comparison is gone, and when the data changes.
INDIVIDUAL_UNDER_B = "tcrex.individual_under_b"


def individual(state: MutableMapping | None = None) -> Any:
    """The chosen row label (:data:`INDIVIDUAL`), or None."""
    return _get(INDIVIDUAL, None, state)


def set_individual(row, state: MutableMapping | None = None) -> None:
    """Remember ``row`` as the individual (the default one, when none was chosen), keeping any edited copy."""
    _set(INDIVIDUAL, row, state)


def choose_individual(row, state: MutableMapping | None = None) -> None:
    """The user chose ``row``: the edited copy (of another row) is dropped."""
    _set(INDIVIDUAL, row, state)
    _pop(EDITED_INDIVIDUAL, None, state)


def edited_individual(state: MutableMapping | None = None) -> dict | None:
    return _get(EDITED_INDIVIDUAL, None, state)


def set_edited_individual(values: dict, state: MutableMapping | None = None) -> None:
    _set(EDITED_INDIVIDUAL, values, state)


def individual_under_b(state: MutableMapping | None = None) -> bool:
    return bool(_get(INDIVIDUAL_UNDER_B, False, state))


def set_individual_under_b(under_b: bool, state: MutableMapping | None = None) -> None:
    if under_b:
        _set(INDIVIDUAL_UNDER_B, True, state)
    else:
        _pop(INDIVIDUAL_UNDER_B, None, state)


def clear_data_dependents(state: MutableMapping | None = None) -> None:
    """New data: forget what named rows or fits of the old data (the individual, its edits, the model-B view, the
    fit, the last good fit and the fit error)."""
    for key in (INDIVIDUAL, EDITED_INDIVIDUAL, INDIVIDUAL_UNDER_B, INDIVIDUAL_UNDER_VERSION, LAST_FIT, LAST_GOOD_FIT,
                FIT_ERROR):
        _pop(key, None, state)


# ============================================================================================ favourable outcome
#: Names the user gave the classes, per data content (``{data key: {label: name}}``: "0 = Good, 1 = Bad"). Written by
#: the Data & model page's outcome question; never cleared (coming back to the data restores them).
CLASS_NAMES = "tcrex.class_names"
#: The favourable outcome confirmed per workspace (``{workspace key: target}``), or the one the data's metadata names.
#: Written by the outcome question and the sidebar's Apply; never cleared.
OUTCOME_CONFIRMED = "tcrex.outcome_confirmed"
#: The workspace whose favourable outcome has been set (a new one starts from its default). Written by
#: :func:`tcrex.ui.state.active.resolve_favourable`; cleared when the data or the model changes.
FAVOURABLE_FOR = "tcrex.favourable_for"


def class_names(data_key: str, state: MutableMapping | None = None) -> dict:
    return dict(_get(CLASS_NAMES, {}, state).get(data_key, {}))


def set_class_names(data_key: str, names: dict, state: MutableMapping | None = None) -> None:
    _setdefault(CLASS_NAMES, {}, state)[data_key] = names


#: The codebook the user gave, per data content (``{data key: {feature: {value: label}}}``), replacing the data's
#: own (the loans sample ships one). Written by the Data & model page's value-labels table and codebook upload;
#: never cleared (coming back to the data restores it).
VALUE_LABELS = "tcrex.value_labels"


def value_labels(data_key: str, state: MutableMapping | None = None) -> dict | None:
    """The user's codebook of this data, or None when the user has not given one (the data's own is used)."""
    book = _get(VALUE_LABELS, {}, state).get(data_key)
    return None if book is None else {f: dict(v) for f, v in book.items()}


def set_value_labels(data_key: str, book: dict, state: MutableMapping | None = None) -> None:
    _setdefault(VALUE_LABELS, {}, state)[data_key] = {f: dict(v) for f, v in book.items()}


def clear_value_labels(data_key: str, state: MutableMapping | None = None) -> None:
    _setdefault(VALUE_LABELS, {}, state).pop(data_key, None)


#: The data dictionary the user gave or edited, per data content (``{data key: the dictionary's JSON text}``,
#: :meth:`tcrex.dictionary.DataDictionary.to_json`): titles, kinds, special codes with their meanings,
#: actionability. Written by the Data & model page's dictionary table, upload and code findings; never cleared.
DICTIONARY = "tcrex.dictionary"


def dictionary_text(data_key: str, state: MutableMapping | None = None) -> str | None:
    """The JSON text of the user's dictionary of this data, or None when none was given."""
    return _get(DICTIONARY, {}, state).get(data_key)


def set_dictionary_text(data_key: str, text: str | None, state: MutableMapping | None = None) -> None:
    """Keep (``text``) or forget (None) the user's dictionary of this data."""
    if text is None:
        _setdefault(DICTIONARY, {}, state).pop(data_key, None)
    else:
        _setdefault(DICTIONARY, {}, state)[data_key] = str(text)


def confirmed_outcomes(state: MutableMapping | None = None) -> dict:
    """``{workspace key: target}`` of the confirmed favourable outcomes (:data:`OUTCOME_CONFIRMED`)."""
    return _setdefault(OUTCOME_CONFIRMED, {}, state)


def favourable_for(state: MutableMapping | None = None) -> str | None:
    return _get(FAVOURABLE_FOR, None, state)


def set_favourable_for(workspace_key: str | None, state: MutableMapping | None = None) -> None:
    if workspace_key is None:
        _pop(FAVOURABLE_FOR, None, state)
    else:
        _set(FAVOURABLE_FOR, workspace_key, state)


# ============================================================================================ notices
#: A note about state the app changed on its own (shown once: on the next Data & model visit, else in the sidebar).
#: Written by :func:`tcrex.ui.state.active.note_for_user` and the Data & model page; cleared when shown.
NOTICE = "setup_notice"
#: What the memory budget dropped in this run (a list of lines). Written and cleared (shown as a toast) by
#: :func:`tcrex.ui.state.memory.track`.
MEMORY_NOTE = "tcrex.memory_note"


def notice(state: MutableMapping | None = None) -> str | None:
    return _get(NOTICE, None, state)


def set_notice(text: str | None, state: MutableMapping | None = None) -> None:
    """Replace the pending note (None: no note)."""
    _set(NOTICE, text, state)


def take_notice(state: MutableMapping | None = None) -> str | None:
    """The pending note, cleared (it is shown once)."""
    return _pop(NOTICE, None, state)


def set_memory_note(lines: list[str], state: MutableMapping | None = None) -> None:
    _set(MEMORY_NOTE, lines, state)


def take_memory_note(state: MutableMapping | None = None) -> list[str] | None:
    return _pop(MEMORY_NOTE, None, state)


# ============================================================================================ sidebar form
#: Rows the active data fits on (the parameter checks of the Apply callback, which runs before the script). Written
#: by the sidebar on every run.
N_FIT_ROWS = "tcrex.n_fit_rows"
#: Why the last Apply was refused (a list of sentences). Written by the Apply callback; cleared on the next Apply.
PARAM_ERRORS = "tcrex.param_errors"
#: The workspace key the sidebar shows (the Apply callback confirms the outcome for it). Written by the sidebar.
SIDEBAR_WORKSPACE = "tcrex.sidebar_workspace"
#: The key of the favourable-outcome selectbox in use (it carries the workspace and the class names, so other data
#: gets a new widget). Written by the sidebar on every run.
TARGET_WIDGET = "tcrex.target_widget"
#: The favourable-outcome selectbox's options: ``{option: target spec}``. Written by the sidebar on every run.
CLASS_LOOKUP = "tcrex.class_lookup"
#: Widget keys of the parameter form (their values are the draft the Apply button applies).
PARAM_TAU, PARAM_RHO, PARAM_TREES = "param_tau", "param_rho", "param_trees"
PARAM_MAX_CELLS, PARAM_GROWER = "param_max_cells", "param_grower"
#: Every favourable-outcome widget key starts with this; all of them are cleared when the target is reset (new data
#: or model, an answer on the Data & model page).
TARGET_WIDGETS = "param_target"
#: The regression threshold's widgets, and the marker that they are in use (not a widget).
TARGET_THRESHOLD, TARGET_SIDE, TARGET_MODE = "param_target_threshold", "param_target_side", "param_target_mode"
#: The classification selectbox's key: this prefix and a digest of the workspace and class names.
TARGET_SELECT = "param_target@"


def n_fit_rows(state: MutableMapping | None = None) -> int | None:
    return _get(N_FIT_ROWS, None, state)


def set_n_fit_rows(n: int, state: MutableMapping | None = None) -> None:
    _set(N_FIT_ROWS, n, state)


def param_errors(state: MutableMapping | None = None) -> list[str] | None:
    return _get(PARAM_ERRORS, None, state)


def set_param_errors(errors: list[str] | None, state: MutableMapping | None = None) -> None:
    if errors:
        _set(PARAM_ERRORS, errors, state)
    else:
        _pop(PARAM_ERRORS, None, state)


def sidebar_workspace(state: MutableMapping | None = None) -> str | None:
    return _get(SIDEBAR_WORKSPACE, None, state)


def set_sidebar_workspace(workspace_key: str, state: MutableMapping | None = None) -> None:
    _set(SIDEBAR_WORKSPACE, workspace_key, state)


def target_widget(state: MutableMapping | None = None) -> str:
    """The key of the favourable-outcome selectbox in use ("" before the sidebar drew one)."""
    return _get(TARGET_WIDGET, "", state)


def set_target_widget(key: str, state: MutableMapping | None = None) -> None:
    _set(TARGET_WIDGET, key, state)


def class_lookup(state: MutableMapping | None = None) -> dict:
    return _get(CLASS_LOOKUP, {}, state)


def set_class_lookup(lookup: dict, state: MutableMapping | None = None) -> None:
    _set(CLASS_LOOKUP, lookup, state)


# ============================================================================================ constraints editor
#: Scopes (data + model) where the user applied or reset constraints once (suggestions are no longer pre-filled).
#: Written by the editors' Apply / Reset; never cleared.
CONSTRAINTS_CONFIRMED = "tcrex.constraints_confirmed"
#: ``(level, text)`` saying what the last Apply / Reset did. Written by the callbacks; cleared when shown.
CONSTRAINTS_MESSAGE = "tcrex.constraints_message"
#: Bumped on every apply / reset from the table editor: the table widget restarts from the applied constraints.
CONSTRAINTS_TABLE_VERSION = "tcrex.constraints_table_version"
#: Every widget key of the constraints editors starts with this (:func:`tcrex.ui.widgets.constraints.widget_key`).
CONSTRAINT_WIDGETS = "con_"


def constraints_confirmed(scope: str, state: MutableMapping | None = None) -> bool:
    return scope in _setdefault(CONSTRAINTS_CONFIRMED, set(), state)


def confirm_constraints(scope: str, state: MutableMapping | None = None) -> None:
    _setdefault(CONSTRAINTS_CONFIRMED, set(), state).add(scope)


def set_constraints_message(level: str, text: str, state: MutableMapping | None = None) -> None:
    _set(CONSTRAINTS_MESSAGE, (level, text), state)


def take_constraints_message(state: MutableMapping | None = None) -> tuple[str, str] | None:
    return _pop(CONSTRAINTS_MESSAGE, None, state)


def constraints_table_version(state: MutableMapping | None = None) -> int:
    return int(_get(CONSTRAINTS_TABLE_VERSION, 0, state))


def bump_constraints_table(state: MutableMapping | None = None) -> None:
    _set(CONSTRAINTS_TABLE_VERSION, constraints_table_version(state) + 1, state)


# ============================================================================================ full reruns
#: Flags an Apply callback inside a fragment sets so the fragment reruns the whole app (:mod:`tcrex.ui.widgets.fragments`):
#: one for the parameter form, one for the constraints editor. Cleared by the rerun.
PARAMS_RERUN = "tcrex.params_rerun"
CONSTRAINTS_RERUN = "tcrex.constraints_rerun"


def raise_flag(flag: str, state: MutableMapping | None = None) -> None:
    _set(flag, True, state)


def take_flag(flag: str, state: MutableMapping | None = None) -> bool:
    """Whether ``flag`` was raised; lowered by reading it."""
    return bool(_pop(flag, False, state))


# ============================================================================================ audit and compare
#: The last audit run (:class:`tcrex.ui.pages.audit.AuditRun`; the report and the exports read it). Written by the
#: Audit page; read only while its fit is the active one.
LAST_AUDIT = "tcrex.last_audit"
#: The audit's choices kept across pages (``{data key: {setting: value}}``). Written by the Audit page's controls.
AUDIT_PREFS = "tcrex.audit_prefs"
#: The last comparison (:class:`tcrex.ui.pages.compare.ComparisonRun`). Written by the Compare models page; read only
#: while its fit is the active one.
LAST_COMPARISON = "tcrex.last_comparison"


def last_audit(state: MutableMapping | None = None) -> Any:
    return _get(LAST_AUDIT, None, state)


def set_last_audit(run, state: MutableMapping | None = None) -> None:
    _set(LAST_AUDIT, run, state)


def audit_prefs(state: MutableMapping | None = None) -> dict:
    return _setdefault(AUDIT_PREFS, {}, state)


#: How model B of the Compare models page is made (``{"kind", "algo", "how", "seed"}``), saved with the workspace so a
#: reopened link starts the page's widgets there. Written by :func:`tcrex.ui.pages.compare.model_b_controls`.
COMPARE_CHOICE = "tcrex.compare_choice"


def compare_choice(state: MutableMapping | None = None) -> dict:
    return dict(_get(COMPARE_CHOICE, {}, state))


def set_compare_choice(choice: dict, state: MutableMapping | None = None) -> None:
    _set(COMPARE_CHOICE, dict(choice), state)


#: The monitor this workspace follows on the Monitor page (``{"name": ...}``: a monitor of the store), saved with the
#: workspace so its read-only link shows the same monitor. Written by :mod:`tcrex.ui.pages.monitor`.
MONITOR_CHOICE = "tcrex.monitor_choice"
#: ``{"monitor": name, "version": label}`` while the Individual page explains under a monitored model version
#: (the Monitor page's drill-down); cleared by "Back to model A" and when the data changes.
INDIVIDUAL_UNDER_VERSION = "tcrex.individual_under_version"


def monitor_choice(state: MutableMapping | None = None) -> dict:
    return dict(_get(MONITOR_CHOICE, {}, state))


def set_monitor_choice(choice: dict, state: MutableMapping | None = None) -> None:
    _set(MONITOR_CHOICE, dict(choice), state)


def individual_under_version(state: MutableMapping | None = None) -> dict | None:
    found = _get(INDIVIDUAL_UNDER_VERSION, None, state)
    return dict(found) if found else None


def set_individual_under_version(view: dict | None, state: MutableMapping | None = None) -> None:
    if view:
        _set(INDIVIDUAL_UNDER_VERSION, dict(view), state)
    else:
        _pop(INDIVIDUAL_UNDER_VERSION, None, state)


def last_comparison(state: MutableMapping | None = None) -> Any:
    return _get(LAST_COMPARISON, None, state)


def set_last_comparison(run, state: MutableMapping | None = None) -> None:
    _set(LAST_COMPARISON, run, state)


# ============================================================================================ widgets
#: The Data & model page's data-source and model-source radios. The model radio is cleared when the data changes
#: (it restarts from the new data's model).
SETUP_DATA_CHOICE = "setup_data_choice"
SETUP_MODEL_CHOICE = "setup_model_choice"
#: The Individual page's widget prefix: "Try this advice" switches its mode to "edit" and clears its edited values.
INDIVIDUAL_WIDGETS = "ind"


def widget_key(prefix: str, name: str) -> str:
    """The key of the ``name`` widget among those a caller prefixed with ``prefix`` (``"ind"``, ``"audit"``)."""
    return f"{prefix}_{name}"


def has_widget(key: str, state: MutableMapping | None = None) -> bool:
    """Whether the widget ``key`` holds a value (it was drawn, or set, in this session)."""
    return key in _ss(state)


def widget_value(key: str, default: Any = None, state: MutableMapping | None = None) -> Any:
    return _get(key, default, state)


def set_widget(key: str, value: Any, state: MutableMapping | None = None) -> None:
    """Give the widget ``key`` a value (before it is drawn in this run, or from a callback)."""
    _set(key, value, state)


def default_widget(key: str, value: Any, state: MutableMapping | None = None) -> Any:
    """The widget's value, set to ``value`` first when it has none."""
    return _setdefault(key, value, state)


def clear_widget(key: str, state: MutableMapping | None = None) -> None:
    """Forget the widget ``key``'s value: next time it is drawn from its default."""
    _pop(key, None, state)


def clear_widgets(prefix: str, keep: Callable[[str], bool] | str | None = None,
                  state: MutableMapping | None = None) -> None:
    """Forget every widget whose key starts with ``prefix`` (except ``keep``: a key, or a test of keys)."""
    ss = _ss(state)
    spare = (lambda k: k == keep) if isinstance(keep, str) else keep or (lambda k: False)
    for k in [k for k in ss if str(k).startswith(prefix) and not spare(str(k))]:
        del ss[k]


# ============================================================================================ workspace
#: The session's workspace (:class:`tcrex.ui.state.workspace.Binding`: link ids, read-only or not, what was saved last).
#: Written by :func:`tcrex.ui.state.workspace.attach` on the session's first run (and by Duplicate / Delete / New on the
#: Workspaces page); never cleared.
WORKSPACE = "tcrex.workspace"
#: The page open when the workspace was last saved (its URL path). Written by :func:`tcrex.ui.state.workspace.save`;
#: restored with the workspace.
WORKSPACE_PAGE = "tcrex.workspace_page"


def workspace_binding(state: MutableMapping | None = None) -> Any:
    return _get(WORKSPACE, None, state)


def set_workspace_binding(binding, state: MutableMapping | None = None) -> None:
    _set(WORKSPACE, binding, state)


def workspace_page(state: MutableMapping | None = None) -> str | None:
    return _get(WORKSPACE_PAGE, None, state)


def set_workspace_page(path: str, state: MutableMapping | None = None) -> None:
    _set(WORKSPACE_PAGE, path, state)


def read_keys(keys, state: MutableMapping | None = None) -> dict:
    """The values of those of ``keys`` the session holds (a workspace's snapshot, :mod:`tcrex.ui.state.workspace`)."""
    ss = _ss(state)
    return {key: ss[key] for key in keys if key in ss}


def write_keys(values: dict, keys, state: MutableMapping | None = None) -> None:
    """Set ``keys`` from ``values``; a key ``values`` lacks is removed, so it takes its default (restoring a
    workspace must not keep another workspace's choice)."""
    ss = _ss(state)
    for key in keys:
        if key in values:
            ss[key] = values[key]
        elif key in ss:
            del ss[key]
