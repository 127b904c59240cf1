"""The Individual page marks each metacounterfactual ✓ / ✗ by the model's verdict, "Try
this alternative in Edit values" loads the alternative's point (the model then gives the favourable outcome),
and the rule heading names the rule whose changes are shown."""

from __future__ import annotations

from tests.support.apptest_kit import assert_clean, goto, new_app, show_row

TRY = "Try this alternative in Edit values"


def _meta_table(at):
    for t in at.table:
        frame = t.value
        if "checked on the model" in frame.columns:
            return frame
    return None


def test_alternatives_are_marked_and_the_confirmed_one_loads_into_edit_values():
    at = new_app()
    goto(at, "individual")
    seen_marks, tried = set(), 0
    for row in range(0, 80, 2):
        show_row(at, row)
        assert_clean(at)
        table = _meta_table(at)
        if table is None:
            continue
        marks = set(table["checked on the model"])
        assert marks <= {"✓ the model confirms it", "✗ the model does not confirm it"}  # a model is known
        seen_marks |= {m[0] for m in marks}
        buttons = [b for b in at.button if b.label == TRY]
        if not buttons:
            assert not any(m.startswith("✓") for m in marks)
            continue
        assert any(m.startswith("✓") for m in marks)
        picked = next(b for b in at.selectbox if b.label == "Alternative the model confirms")
        number = int(str(picked.value))
        wanted = table.loc[number] if number in table.index else table.iloc[0]
        buttons[0].click()
        at.run()
        assert_clean(at)
        assert any("Edited individual" in m.value for m in at.markdown)
        # the model confirms the alternative's point: the edited individual already has the favourable outcome
        assert any("already in the target" in i.value for i in at.info), wanted.to_dict()
        tried += 1
        if tried >= 2 and seen_marks == {"✓", "✗"}:
            break
    assert tried >= 1
    assert "✓" in seen_marks


def test_rule_heading_names_the_recommended_rule_and_the_papers_rule_as_a_second_line():
    at = new_app()
    goto(at, "individual")
    found = False
    for row in range(0, 200):
        show_row(at, row)
        caps = [c.value for c in at.caption if "paper's optimal rule" in c.value and "not confirmed" in c.value]
        nxt = [m.value for m in at.markdown if "the recommendation follows the next rule in cost order" in m.value]
        if not nxt:
            continue
        recommended = nxt[0].rsplit("cost order, ", 1)[1].split(".")[0]
        paper = nxt[0].split("The optimal rule ", 1)[1].split(" ", 1)[0]
        assert any(s.value == f"Rule {recommended}" for s in at.subheader)
        assert not any(s.value == f"Rule {paper}" for s in at.subheader)
        assert any(f"rule {paper} is not confirmed" in c for c in caps)
        found = True
        break
    assert found, "some row of the loans sample is served by the next rule"
