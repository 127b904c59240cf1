"""The Overview never waits for the model check of its recourse sentence: a placeholder stands in while the check
runs in the background, and the page then shows the same sentence it would have waited for."""

from __future__ import annotations

from tests.support.apptest_kit import assert_clean, last_result, new_app

from tcrex.ui.state import verification

HEAD = "**Recourse checked on the model.**"


def _sentences(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith(HEAD)]


def test_overview_shows_the_checked_recourse_sentence_after_a_placeholder():
    at = new_app()
    assert_clean(at)
    if not _sentences(at):  # drawn before the check finished: the placeholder says what is being checked
        assert any(c.value.startswith(HEAD) and "Checking the recommended points" in c.value for c in at.caption)
        for future in list(verification._SHARED_CHECKS.values()):
            future.result(timeout=300)
        at.run()  # what the placeholder's rerun does once the check is done
    shown = _sentences(at)
    assert len(shown) == 1
    eff = last_result(at).cache["effectiveness of every row"]  # the check's figures, as every page counts them
    assert shown[0] == f"{HEAD} Of the {eff.n_needing:,} who need recourse: {eff.headline()}."
    assert not any("Checking the recommended points" in c.value for c in at.caption)
