"""The Global rules page says a degenerate fit above the rules, and its one button applies the checked suggestion
(AppTest: the real app script; the credit-card table with the model's outputs in a column)."""
from tests.support import apptest_kit as kit
from tests.support.voice_cases import credit_card_case


def _credit_card_app():
    X, model = credit_card_case()
    at = kit.new_app()
    kit.upload_data(at, "cards.csv", kit.csv_bytes(X.assign(model_says=model.predict(X))))
    kit.use_this_data(at)
    at.radio(key=kit.session.SETUP_MODEL_CHOICE).set_value("column").run()
    at.selectbox(key="setup_output_column").set_value("model_says").run()
    next(b for b in at.button if b.label == "Use this column").click()
    return at.run()


def test_degenerate_fit_is_said_and_one_click_applies_the_suggestion():
    at = kit.goto(_credit_card_app(), "global_rules")
    kit.assert_clean(at)
    before = kit.last_result(at)
    assert before.n_rules <= len(before.explainer.targets_)  # one rule per target: the degenerate default
    said = [w.value for w in at.warning if "These settings say little" in w.value]
    assert said and "Only one rule reaches" in said[0]
    finding = before.findings()[0]
    assert f"{finding.suggested_rules} rules" in said[0]
    button = next(b for b in at.button if b.key == "findings_apply")
    button.click()
    at.run()
    kit.assert_clean(at)
    after = kit.last_result(at)
    assert after.n_rules > before.n_rules
    for name, value in finding.suggestion.items():
        assert getattr(after.params, name) == value
    assert not [w.value for w in at.warning if "These settings say little" in w.value]
    assert "Not applied yet" not in " ".join(str(m.value) for m in at.sidebar.markdown)
