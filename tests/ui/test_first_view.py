"""The Overview never waits for the model check of its recourse sentence: a placeholder stands in while the check
runs in the background, and the page then shows the same sentence it would have waited for."""

from __future__ import annotations

from tests.support.apptest_kit import assert_clean, last_result, new_app

from tcrex.ui.state import checks

HEAD = "**Recourse checked on the model.**"


def _check_of(result) -> checks.Check:
    """The registry's one check of this fit result (on the model of the app)."""
    (check,) = [c for c in checks.REGISTRY.checks() if c.key[0] == result.key]
    return check


def _sentences(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith(HEAD)]


def test_overview_shows_the_checked_recourse_sentence_after_a_placeholder():
    at = new_app()
    assert_clean(at)
    if not _sentences(at):  # drawn before the check finished: the placeholder says what is being checked
        assert any(c.value.startswith(HEAD) and "Checking the recommended points" in c.value for c in at.caption)
        _check_of(last_result(at)).wait(timeout=300)
        at.run()  # what the placeholder's rerun does once the check is done
    shown = _sentences(at)
    assert len(shown) == 1
    check = _check_of(last_result(at))
    assert check.status == checks.DONE and check.error is None and check.future.done()
    eff = check.derived["effectiveness of every row"]  # the check's figures, as every page counts them
    assert shown[0] == f"{HEAD} Of the {eff.n_needing:,} who need recourse: {eff.headline()}."
    assert not any("Checking the recommended points" in c.value for c in at.caption)


def test_a_fresh_servers_model_check_waits_until_the_first_view_is_drawn():
    """The shared fit's check is asked for in the first run but starts only when the browser's next request (the
    placeholder's poll, here the next run) says the page is drawn; the sentence is then the same."""
    new_app()  # the shared fit and the model exist; what follows is a server that has never checked it
    checks.REGISTRY.reset()
    at = new_app()
    assert_clean(at)
    assert not _sentences(at) and any("Checking the recommended points" in c.value for c in at.caption)
    (check,) = checks.REGISTRY.checks()  # asked for in the run ...
    assert check.status == checks.WAITING and check.future is None  # ... to start once the page is drawn
    at.run()  # the placeholder's poll: the page was drawn
    assert check.status != checks.WAITING and check.future is not None
    check.wait(timeout=300)
    at.run()
    assert checks.REGISTRY.checks() == [check]  # one record: asked, started, done
    eff = check.derived["effectiveness of every row"]
    assert _sentences(at) == [f"{HEAD} Of the {eff.n_needing:,} who need recourse: {eff.headline()}."]


def test_the_bundled_model_predicts_the_sample_once_with_the_sandboxs_threads():
    """Loading the bundled model measures its accuracy on the sample; those outputs are the ones every page reads
    (not predicted a second time), and they equal a prediction of the same rows."""
    import numpy as np

    from tcrex import intake
    from tcrex.ui.state import session, shared

    at = new_app()
    data = shared.sample_data("loans")
    spec = session.model_spec(at.session_state)
    assert spec.kind == "bundled"
    model = shared.model(data, spec)  # the server's one, as the page got it
    known_key, known_features, known = model.known_outputs
    assert (known_key, known_features) == (data.key, tuple(data.features))
    outputs = next(iter(session.caches(at.session_state)["outputs"].values()))
    assert outputs is known  # the session's outputs are the loading's, not a second prediction
    assert np.array_equal(known, model.predict(data.frame[data.features]))
    assert model.score == float(np.mean(known == data.frame[data.label_column].to_numpy()))
    assert model.model.booster_model.get_params()["n_jobs"] == intake.model_threads()
