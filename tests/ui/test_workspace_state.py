"""What a dashboard workspace saves and restores (tcrex.ui.state.workspace): every persisted choice and upload comes back
equal, through the JSON text the store keeps; saved values are decoded by an allow-list, never by class name."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tcrex.ui.state import caching, session, sources, active, workspace
from tcrex.dictionary import DataDictionary, FeatureEntry
from tcrex.workspace import WorkspaceError


def _session_with_everything() -> dict:
    ss: dict = {}
    data = b"age,income,approved\n30,40.5,1\n41,20.0,0\n"
    model = b'{"learner": {}}'
    ss[session.DATA_SPEC] = sources.DataSpec("upload", "loans.csv", digest=sources.sha256(data), label="approved",
                                             drop=("id",), categorical=("region",), extra=("sex",),
                                             sentinels=("months",), reading=(("delimiter", ";"),))
    ss[session.MODEL_SPEC] = sources.ModelSpec("upload", "model.json", digest=sources.sha256(model))
    ss[session.PARAMS] = active.Params(rho=0.05, tau=0.95, n_trees=3, target={"at_least": 7}, grower="exact",
                                      constraints=(("age", '"increase_only"'), ("sex", '"immutable"')))
    ss[session.CLASS_NAMES] = {"key1": {0: "Bad", 1: "Good"}}
    ss[session.VALUE_LABELS] = {"key1": {"region": {"N": "north"}, "months": {-7.0: "no record", -8: "not asked"}}}
    ss[session.DICTIONARY] = {"key1": DataDictionary((
        FeatureEntry("status_1", title="repayment status last month", unit="months", codes=((-2, "no consumption"),
                                                                                           (0, None)),
                     labels=((1, "1 month late"),), history=False, actionability="immutable"),
        FeatureEntry("region", title="region", kind="categorical", history=True))).to_json()}
    ss[session.OUTCOME_CONFIRMED] = {"ws1": 1, "ws2": (0.5, None)}
    ss[session.FAVOURABLE_FOR] = "ws1"
    ss[session.CONSTRAINTS_CONFIRMED] = {"scope-a", "scope-b"}
    ss[session.SETUP_MODEL_CHOICE] = "upload"
    ss[session.INDIVIDUAL] = np.int64(17)
    ss[session.EDITED_INDIVIDUAL] = {"age": np.float64(31.0), "region": "north", "income": float("nan")}
    ss[session.AUDIT_PREFS] = {"key1": {"column": "sex", "reference": None}}
    ss[session.SETUP_DATA_CHOICE] = "upload"
    ss[session.COMPARE_CHOICE] = {"kind": "train", "algo": "forest", "how": "seed", "seed": 7}
    ss[session.MONITOR_CHOICE] = {"name": "nightly scoring"}
    session.set_workspace_page("audit", ss)
    uploads = session.uploads(ss)
    for slot, name, raw in (("data", "loans.csv", data), ("model", "model.json", model)):
        digest = sources.sha256(raw)
        uploads[slot] = (digest, name, raw)
        kept = caching.LRU(caching.KEPT_UPLOADS)
        kept[digest] = (digest, name, raw)
        uploads[f"{slot}@"] = kept
    return ss


def test_every_persisted_choice_and_upload_comes_back_equal():
    ss = _session_with_everything()
    settings = json.loads(json.dumps(workspace.snapshot(ss), allow_nan=False))  # what the store keeps
    blobs = {d: raw for slot in workspace.SLOTS for d, (_, _, raw) in (ss.get(session.UPLOADS, {}).get(f"{slot}@")
                                                                       or {}).items()}
    fresh: dict = {session.INDIVIDUAL: 3}
    workspace.restore(settings, blobs, fresh)
    for key in workspace.PERSISTED:
        if key == session.EDITED_INDIVIDUAL:
            continue
        assert fresh[key] == ss[key], key
    edited = fresh[session.EDITED_INDIVIDUAL]
    assert edited["age"] == 31.0 and edited["region"] == "north" and np.isnan(edited["income"])
    assert isinstance(fresh[session.PARAMS], active.Params) and fresh[session.PARAMS].constraint_spec == {
        "age": "increase_only", "sex": "immutable"}
    assert fresh[session.CLASS_NAMES]["key1"] == {0: "Bad", 1: "Good"}  # integer class labels stay integers
    assert fresh[session.VALUE_LABELS]["key1"]["months"] == {-7.0: "no record", -8: "not asked"}  # numeric codes
    # the data dictionary comes back whole: titles, codes with their meanings, labels, actionability, history
    restored = DataDictionary.from_json(fresh[session.DICTIONARY]["key1"])
    assert restored == DataDictionary.from_json(ss[session.DICTIONARY]["key1"])
    assert restored["status_1"].codes == ((-2, "no consumption"), (0, None)) and restored["region"].history
    assert session.workspace_page(fresh) == "audit"
    for slot in ("data", "model"):
        assert fresh[session.UPLOADS][slot] == ss[session.UPLOADS][slot]
        assert dict(fresh[session.UPLOADS][f"{slot}@"]) == dict(ss[session.UPLOADS][f"{slot}@"])


def test_a_choice_the_workspace_never_made_is_not_kept_from_the_session():
    ss = _session_with_everything()
    settings = workspace.snapshot({session.PARAMS: ss[session.PARAMS]})
    other = dict(ss)
    workspace.restore(settings, {}, other)
    assert session.INDIVIDUAL not in other and session.DATA_SPEC not in other
    assert other[session.PARAMS] == ss[session.PARAMS]


@pytest.mark.parametrize("tampered", [
    {"__type__": "Popen", "fields": {"args": ["rm", "-rf", "/"]}},
    {"__type__": "os.system", "fields": {}},
    {"__weird__": 1},
])
def test_saved_values_are_decoded_by_an_allow_list(tampered):
    settings = {"version": 1, "session": {session.PARAMS: tampered}}
    with pytest.raises(WorkspaceError):
        workspace.restore(settings, {}, {})


def test_a_workspace_saved_by_a_newer_version_is_refused_whole():
    ss: dict = {}
    with pytest.raises(WorkspaceError, match="newer version"):
        workspace.restore({"version": 99, "session": {session.INDIVIDUAL: 5}}, {}, ss)
    assert ss == {}


def test_a_restored_compare_choice_starts_the_compare_pages_widgets_without_a_warning():
    """A reopened link brings back how model B was made (kind, algorithm, training rows, seed); the widgets start
    there and Streamlit shows no 'default value and Session State' warning."""
    from tests.support.apptest_kit import assert_clean, goto, new_app

    from tcrex.ui.pages.compare import ALGORITHMS

    algo = list(ALGORITHMS)[-1]
    at = new_app()
    at.session_state[session.COMPARE_CHOICE] = {"kind": "train", "algo": algo, "how": "seed", "seed": 7}
    goto(at, "compare")
    assert_clean(at)
    assert not [w.value for w in at.warning if "Session State" in w.value]
    assert at.selectbox(key="compare_algo").value == algo
    assert at.selectbox(key="compare_how").value == "seed"
    assert at.number_input(key="compare_seed").value == 7
    at.number_input(key="compare_seed").set_value(9).run()  # a change the page saves for the next link
    assert session.compare_choice(at.session_state)["seed"] == 9


def test_uploads_come_back_through_a_real_store(tmp_path):
    """The store keys a kept file by its own content digest, the session by ``sources.sha256``; a link reopened
    through the store must still find the uploads its settings name (it fell back to the sample before)."""
    from tcrex.workspace import WorkspaceStore

    ss = _session_with_everything()
    db = WorkspaceStore(str(tmp_path / "state"))
    ws = db.create({"version": workspace.SETTINGS_VERSION, "title": "t"})
    for slot in ("data", "model"):
        _, name, raw = ss[session.UPLOADS][slot]
        db.put_blob(ws.id, raw, name)
    db.save(ws.id, workspace.snapshot(ss))
    opened = db.open(ws.id)
    blobs, missing = workspace.stored_uploads(db, ws.id, opened.blobs)
    assert missing == []
    fresh: dict = {}
    workspace.restore(opened.settings, blobs, fresh)
    for slot in ("data", "model"):
        assert fresh[session.UPLOADS][slot] == ss[session.UPLOADS][slot]
        assert active_digest(fresh, slot) in fresh[session.UPLOADS][f"{slot}@"]
    assert set(blobs) == {ss[session.UPLOADS][s][0] for s in ("data", "model")}


def active_digest(ss, slot):
    return (ss[session.DATA_SPEC] if slot == "data" else ss[session.MODEL_SPEC]).digest


def test_a_restored_compare_grouping_starts_the_compare_page_there_and_a_change_is_saved():
    """The walk of scenario 1: after a restart the Compare page grouped by the default column again, not by the
    one chosen (Age_band); the grouping is kept with the workspace's other compare choices."""
    from tests.support.apptest_kit import assert_clean, goto, new_app

    from tcrex.ui.pages.compare import ALGORITHMS

    at = new_app()
    goto(at, "compare")
    options = at.selectbox(key="compare_column").options
    default = at.selectbox(key="compare_column").value
    other = next(o for o in options[1:] if o != default)
    column = other.split("  (")[0]
    fresh = new_app()
    fresh.session_state[session.COMPARE_CHOICE] = {"kind": "train", "algo": list(ALGORITHMS)[0], "how": "seed", "seed": 7,
                                                   "column": column}
    goto(fresh, "compare")
    assert_clean(fresh)
    assert not [w.value for w in fresh.warning if "Session State" in w.value]
    assert fresh.selectbox(key="compare_column").value == column
    assert session.compare_choice(fresh.session_state)["seed"] == 7  # the other choices stay
    fresh.selectbox(key="compare_column").set_value(default).run()
    assert_clean(fresh)
    assert session.compare_choice(fresh.session_state)["column"] == default
    assert session.compare_choice(fresh.session_state)["seed"] == 7


def test_a_read_only_link_never_shows_an_editing_link():
    """The walk of scenario 1, step 6: a colleague's read-only link opened the Workspaces page, whose list of recent
    workspaces linked this workspace (and every other) by its editing id, so the viewer could change everything."""
    from tests.support.apptest_kit import goto, new_app

    owner = new_app()
    bound = session.workspace_binding(owner.session_state)
    assert bound is not None and bound.id and not bound.read_only
    goto(owner, "workspaces")
    assert any(bound.id in c.value for c in owner.code)  # the owner's own page shows its editing link
    viewer = new_app()
    viewer.query_params["ws"] = bound.view_id
    viewer.run()
    goto(viewer, "workspaces")
    assert session.workspace_binding(viewer.session_state).read_only
    shown = [*(m.value for m in viewer.markdown), *(c.value for c in viewer.code), *(c.value for c in viewer.caption)]
    assert not [s for s in shown if bound.id in s], shown
    assert any(bound.view_id in s for s in shown)
