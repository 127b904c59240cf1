"""Server-wide caches (tcrex/ui/state/shared.py): bundled samples are fitted once and shared read-only; uploads stay
in their session."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tcrex import TCREx
from tcrex.ui.state import checks, session, shared

from tests.support.apptest_kit import (apply_params, check_of, goto, last_result, loans_with_income_gaps, new_app, upload_data,
                                       use_this_data)


def test_two_sessions_share_the_bundled_explainer_object():
    a, b = new_app(), new_app()
    ra, rb = last_result(a), last_result(b)
    assert ra.explainer is rb.explainer  # one fit per server, not one per session
    assert isinstance(ra.explainer, shared.SharedTCREx)
    assert ra.explanations is not rb.explanations  # each session gets its own (shallow, copy-on-write) frame


def test_a_session_cannot_mutate_the_shared_explainer():
    at = new_app()
    ex = last_result(at).explainer
    before = ex.to_json()
    with pytest.raises(shared.SharedObjectError):
        ex.update(tau=0.5)
    with pytest.raises(shared.SharedObjectError):
        ex.tau = 0.5
    with pytest.raises(shared.SharedObjectError):
        ex.fit(None)
    with pytest.raises(shared.SharedObjectError):  # no private attribute either: reads never write one
        ex._cache = {}
    state = ex.state_
    arrays = [v for v in vars(state).values() if isinstance(v, np.ndarray) and v.dtype != object]
    arrays += [state.fit_enc.num, state.fit_enc.cat]
    for t in ex.targets_:
        arrays += [v for v in vars(t).values() if isinstance(v, np.ndarray) and v.dtype != object]
    for arr in arrays:
        with pytest.raises(ValueError):
            arr.flat[0] = arr.flat[0]
    private = copy.deepcopy(ex)
    assert type(private) is TCREx
    private.update(tau=0.6)  # a private copy is writable
    assert ex.to_json() == before
    assert new_app() is not None and last_result(new_app()).explainer.to_json() == before


def test_a_session_writing_to_its_frames_does_not_reach_another():
    a, b = new_app(), new_app()
    ra = last_result(a)
    col = ra.explanations.columns[0]
    ra.explanations.loc[ra.explanations.index[0], col] = None
    assert last_result(b).explanations[col].iloc[0] is not None


def test_changing_tau_derives_a_private_copy_without_touching_the_shared_fit():
    a, b = new_app(), new_app()
    shared_ex = last_result(b).explainer
    apply_params(a, tau=0.8)
    ra = last_result(a)
    assert ra.params.tau == 0.8 and type(ra.explainer) is TCREx
    assert ra.update_seconds is not None  # updated, not refitted
    assert last_result(b.run()).explainer is shared_ex and shared_ex.tau == 0.9


def test_an_upload_in_one_session_does_not_appear_in_another():
    a, b = new_app(), new_app()
    goto(a, "data_model")
    upload_data(a, "gaps.csv", loans_with_income_gaps(7))
    use_this_data(a)
    assert session.data_spec(a.session_state).kind == "upload"
    goto(b, "data_model")
    assert session.data_spec(b.session_state).kind == "sample"
    assert not session.holds_uploads(b.session_state)
    assert "gaps.csv" not in " ".join(str(x.value) for x in [*b.markdown, *b.caption])


def test_the_model_check_the_outputs_and_the_default_audit_are_computed_once_per_server():
    """What follows from the shared fit is the same for every session: the model's outputs, every row's checked
    point (the "verified" headline), its effectiveness and an audit with the same settings are computed by the
    first session and reused by the others, never recomputed per session or per page run."""
    a, b = new_app(), new_app()
    ya = next(iter(session.caches(a.session_state)["outputs"].values()))
    yb = next(iter(session.caches(b.session_state)["outputs"].values()))
    assert ya is yb and not ya.flags.writeable  # one array, read-only
    for at in (a, b):
        goto(at, "global_rules")
    ra, rb = last_result(a), last_result(b)
    assert ra is not rb and shared.is_shared_result(ra)
    check = check_of(ra)
    assert check is check_of(rb) and check.wait(timeout=300).status == checks.DONE  # one check for both sessions
    assert len([c for c in checks.REGISTRY.checks() if c.key == check.key]) == 1
    for at in (a, b):  # both draw from it: its effectiveness computed once, kept with the check
        goto(at, "global_rules")
    # kept with the check: the effectiveness once, and the Overview's one sentence once per wording (another
    # session's class names or titles make another sentence of the same check)
    assert [d for d in check.derived if not d.startswith("the one sentence ")] == ["effectiveness of every row"]
    for at in (a, b):
        goto(at, "audit")
    runs_a = list(session.caches(a.session_state)["audits"].values())
    runs_b = list(session.caches(b.session_state)["audits"].values())
    assert runs_a and runs_a[-1].result is runs_b[-1].result  # the default audit, computed once


def test_what_every_session_draws_of_the_shared_fit_is_built_once_and_drawn_the_same():
    """The Overview's and Global rules' figures, the metarule tree's outline and a data row's explanation on
    Individual are the same for every session of the shared fit: the first session builds them, the next draws the
    very same objects (nothing new is built) and shows the same figures; a private fit builds its own."""

    def pages(at):
        specs = []
        for page in ("home", "global_rules", "individual"):
            goto(at, page)
            assert not at.exception, [e.value for e in at.exception]
            specs += [c.proto.spec for c in at.get("plotly_chart")] + [h.proto.body for h in at.get("html")]
        return specs

    first = new_app()
    for check in checks.REGISTRY.checks():  # the check the pages show, done (not racing them)
        check.wait(timeout=300)
    shown = pages(first)
    built = dict(shared._views.items())
    kinds = {k[1] for k in built}
    assert {"figure", "built", "metarule_tree", "metarule_outline", "explain_one"} <= kinds, kinds
    second = new_app()
    assert pages(second) == shown  # the same figures, outline and explanation on screen
    assert dict(shared._views.items()).keys() == built.keys()  # nothing built again ...
    assert all(shared._views[k] is v for k, v in built.items())  # ... the same objects, drawn as they are
    apply_params(second, tau=0.8)  # a private fit: its own figures, none added to the server's views
    pages(second)
    assert dict(shared._views.items()).keys() == built.keys()


def test_a_private_fit_is_checked_in_the_background_and_then_shown():
    """Apply parameters does not wait for the model check of a private fit: it runs in the background, the page
    says "checking", and once it is done the figures are those of this fit (not the shared one)."""
    at = new_app()
    goto(at, "global_rules")
    shared_check = check_of(last_result(at)).wait(timeout=300)
    apply_params(at, tau=0.8)
    private = last_result(at)
    assert not shared.is_shared_result(private)
    check = check_of(private)
    assert check is not None and check.status != checks.WAITING  # a private fit's check starts at once
    if not check.finished:  # still checking when the page was drawn
        assert any(m.value == "checking …" for m in at.metric)
        check.wait(timeout=300)
    goto(at, "global_rules")
    assert last_result(at) is private and check.status == checks.DONE
    assert check is not shared_check and check.value.frame is not shared_check.value.frame
    assert any(m.label == "Verified by a point that follows the advice" and m.value.endswith("%") for m in at.metric)


def test_audit_figures_are_built_once_per_audit_result_and_drawn_without_being_changed():
    """The default audit is one result for every session; its figures are built once for it and each height, set
    up for drawing once (height, room for the toolbar), and every page run draws that same figure without changing
    it (drawing serialises a copy)."""
    import plotly.graph_objects as go
    from streamlit.testing.v1 import AppTest

    from tcrex.ui.pages import audit
    from tcrex.ui.state import caching

    calls = []

    def builder(result, metric="m"):
        calls.append(metric)
        return go.Figure(layout=dict(title=dict(text=f"{result.name} {metric}")))

    class Result:  # an audit result stand-in: plain data, compared by identity here
        name = "r"

    res, other = Result(), Result()
    first, height = audit._figure(builder, res, metric="a", height=420)
    assert height == 420 and first.layout.height == 420 and first.layout.title.pad.t  # as drawn
    drawn = first.to_plotly_json()
    again, _ = audit._figure(builder, res, metric="a", height=420)
    assert calls == ["a"] and again is first
    audit._figure(builder, res, metric="a", height=300)
    audit._figure(builder, res, metric="b", height=420)
    audit._figure(builder, other, metric="a", height=420)
    assert calls == ["a", "a", "b", "a"]  # other heights, arguments and results are built separately

    def draw(fig):
        from tcrex.ui.widgets import components as ui

        ui.draw_prepared(fig, height=420, key="f")

    at = AppTest.from_function(draw, args=(first,)).run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    assert first.to_plotly_json() == drawn  # drawing read the shared figure and left it as it was
    ident = id(other)
    del other
    import gc

    gc.collect()
    assert ident not in caching._derived  # released with its result
