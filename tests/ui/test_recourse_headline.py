"""The Individual page's headline names the rule whose changes it states (the walk of scenario 1, step 4: the
headline said only "Recourse (2 changes)" while the rule heading further down said "Rule R2")."""
from __future__ import annotations

import re

import pytest
from tests.support.apptest_kit import assert_clean, goto, new_app, show_row

pytestmark = pytest.mark.apptest


def test_the_headline_names_the_rule_of_the_heading_below():
    at = new_app()
    goto(at, "individual")
    named = 0
    for row in range(0, 40, 3):
        show_row(at, row)
        assert_clean(at)
        headline = [s.value for s in at.success if s.value.startswith("**Recourse")]
        if not headline:
            continue
        lead = re.match(r"\*\*Recourse (?:by rule (R\d+)|beyond the rules) \((\d+) changes?\):\*\*", headline[0])
        assert lead, headline[0]
        headings = [h.value for h in [*at.markdown, *at.subheader, *at.header] if re.fullmatch(r"#* ?Rule R\d+", h.value)
                    or re.fullmatch(r"Rule R\d+", h.value)]
        if lead.group(1):
            assert any(h.endswith(f"Rule {lead.group(1)}") for h in headings), (headline[0], headings)
            named += 1
    assert named >= 3
