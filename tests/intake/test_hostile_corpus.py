"""The hostile-input corpus (tests/intake/hostile_corpus.py), a small deterministic subset: each case in a child
process with a memory limit and a timeout (benchmarks/hostile_corpus.py runs them all and prints the tally)."""
import pytest

from benchmarks.hostile_corpus import BAD, run
from tests.intake.hostile_corpus import cases

pytestmark = pytest.mark.slow  # the hostile corpus, file by file: `make test`, not `make test-fast`

QUICK = [c for c in cases() if c.quick]


def test_the_corpus_covers_every_class_and_names_are_unique():
    every = cases()
    assert len({c.name for c in every}) == len(every) > 150
    assert {c.cls for c in every if c.kind == "table"} >= {"encoding", "delimiter", "separators", "exact values",
                                                            "line endings", "size", "parquet", "archive", "nesting",
                                                            "garbage", "formula", "xss", "combined", "mutation"}
    assert {c.cls for c in every if c.kind == "model"} == {"xgboost", "skops", "onnx", "pickle"}


@pytest.mark.parametrize("kind", ["table", "model"])
def test_quick_subset_has_no_bad_outcome(kind):
    names = [c.name for c in QUICK if c.kind == kind]
    results = run(names, timeout=90, memory_gb=3, batch=len(names))
    assert set(results) == set(names)
    bad = {n: (r.outcome, r.detail) for n, r in results.items() if r.outcome in BAD}
    assert not bad, bad
    if kind == "table":  # the classifier can fail: a file that must be refused is, a file read is checked
        assert results["table/delimiter/header-comma-rows-semicolon"].outcome == "refused"
        assert results["table/exact values/leading-zero-codes"].outcome == "ok"
    else:
        assert results["model/pickle/pickle-as-m.json"].outcome == "refused"


def test_the_classifier_sees_a_silent_change_and_a_formula():
    """The outcomes are computed, not assumed: a case whose declared reading is wrong is a silent change."""
    from benchmarks import hostile_corpus as runner
    from tests.intake import hostile_corpus as corpus

    import pandas as pd

    frame = pd.DataFrame({"code": [7, 7, 7]})
    assert runner._differences(frame, corpus.Expect(values={"code": ["007", "07", "7"]})) == \
        "'code' row 0: read 7, the file holds '007'"
    assert runner._formula_cells("a,b\r\n=1+1,-2\r\n'=1,x\r\n") == ["=1+1"]
    assert runner.XSS_PATTERN.search(f"<p>{corpus.XSS}</p>") and not runner.XSS_PATTERN.search(
        "<p>&lt;script&gt;tcrexXSS()&lt;/script&gt;</p>")
