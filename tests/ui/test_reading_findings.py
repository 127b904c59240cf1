"""Every assumption the intake made is named in a finding: a semicolon-separated upload with decimal
commas shows, in its Findings box, the delimiter, the encoding, the decimal mark and the label column it took."""
from __future__ import annotations

from tcrex import datasets

from tests.support.apptest_kit import new_app, upload_data


def test_a_semicolon_file_names_every_guess():
    frame = datasets.load_bundled_loans().head(300)
    at = new_app()
    upload_data(at, "loans-eu.csv", frame.to_csv(index=False, sep=";", decimal=",").encode())
    assert not at.exception, [e.value for e in at.exception]
    finding = next(w.value for w in at.warning if w.value.startswith("**Findings**"))
    assert "columns are separated by semicolons (detected: 10 columns)" in finding
    assert "the text was read as UTF-8" in finding
    assert "numbers written with a decimal comma were read as numbers in columns 'income'" in finding
    assert "`approved` was taken as the label column" in finding
    assert next(s for s in at.selectbox if s.label.startswith("Label column")).value == "approved"
    assert any("unless a finding below names another guess" in c.value for c in at.caption)


def test_a_plain_csv_names_only_the_label_it_took():
    frame = datasets.load_bundled_loans().head(300)
    at = new_app()
    upload_data(at, "loans.csv", frame.to_csv(index=False).encode())
    finding = next(w.value for w in at.warning if w.value.startswith("**Findings**"))
    assert "`approved` was taken as the label column" in finding
    assert "separated by" not in finding and "read as UTF-8" not in finding  # the defaults the caption names
