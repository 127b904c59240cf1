"""CSV exports never carry a cell a spreadsheet would run as a formula (tcrex.spreadsheet)."""
from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcrex import spreadsheet
from tcrex.spreadsheet import FORMULA_STARTS

PAYLOADS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1+1",
            "\r=1+1", "=cmd|'/C notepad'!A0"]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _dangerous(cell: str) -> bool:
    return cell.startswith(FORMULA_STARTS)


def test_every_formula_start_is_neutralised_in_every_kind_of_column():
    frame = pd.DataFrame({
        "text": PAYLOADS,
        "category": pd.Categorical(PAYLOADS),
        "label": pd.array(PAYLOADS, dtype="string"),
        "mixed": [1, "=1+1", None, 2.5, "@x", "ok", "-x"],
        "=header": range(7),
    })
    out = spreadsheet.to_csv(frame)
    rows = _cells(out)
    assert not any(_dangerous(c) for row in rows for c in row), rows
    assert rows[0][-1] == "'=header"
    assert rows[1][0] == "'" + PAYLOADS[0]  # the text is kept, only prefixed


def test_numbers_stay_numbers():
    frame = pd.DataFrame({"x": [-1.5, 2.0], "n": pd.array([-3, None], dtype="Int64"), "b": [True, False]})
    assert spreadsheet.to_csv(frame) == frame.to_csv(index=False, lineterminator="\r\n")


def test_the_input_frame_is_not_changed():
    frame = pd.DataFrame({"a": ["=1", "b"]})
    spreadsheet.to_csv(frame)
    assert frame["a"].tolist() == ["=1", "b"]


@pytest.mark.slow  # property test: `make test`, not `make test-fast`
@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=8), min_size=1, max_size=12))
def test_generated_cells_never_start_a_formula_and_keep_their_text(values):
    frame = pd.DataFrame({"v": values, "c": pd.Categorical(values)})
    rows = _cells(spreadsheet.to_csv(frame))[1:]
    for row, v in zip(rows, values):
        for cell in row:
            assert not _dangerous(cell)
            assert cell in (v, "'" + v)


def test_explanations_texts_and_outputs_pass_through_the_same_guard():
    from tcrex import TCREx

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=400), "=evil": rng.normal(size=400)})
    y = np.where(X["x"] > 0, "=BAD()", "+ok")  # labels a spreadsheet would run
    ex = TCREx(rho=0.05, tau=0.8).fit(X, y_pred=y)
    frame = ex.explain(X, y_pred=y)
    frame.insert(0, "model_output", y)
    rows = _cells(spreadsheet.to_csv(frame))
    assert not any(_dangerous(c) for row in rows for c in row)
