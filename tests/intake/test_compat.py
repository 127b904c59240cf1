"""check_compatibility: every mismatch between a model and a table is named."""
import numpy as np
import pandas as pd
import pytest

from tcrex.errors import ModelError
from tcrex.intake import check_compatibility, load_model

from tests.support import builders as b

pytestmark = pytest.mark.slow  # trains the models it checks: `make test`, not `make test-fast`


@pytest.fixture(scope="module")
def xgb_model():
    data, _, Xc = b.xgb_classifier()
    X = Xc.copy()
    X["job"] = X["job"].astype(str)
    return load_model(data, "m.json"), X


@pytest.fixture(scope="module")
def onnx_positional():
    return load_model(b.onnx_bytes(b.onnx_linear_classifier(names=None)), "m.onnx")


def test_compatible(xgb_model):
    model, X = xgb_model
    rep = check_compatibility(model, X)
    assert rep.ok and rep.problems == [] and len(rep.trial_outputs) == 5
    assert set(rep.trial_outputs) <= {0, 1}
    assert rep.message == "the model and the data are compatible"
    rep.raise_if_problems()


def test_missing_and_extra_columns_are_named(xgb_model):
    model, X = xgb_model
    bad = X.rename(columns={"income": "Income"}).assign(approved=1)
    rep = check_compatibility(model, bad)
    assert not rep.ok
    assert any("needs column(s) ['income']" in p for p in rep.problems)
    assert any("['Income', 'approved'] that the model does not use" in p for p in rep.problems)
    with pytest.raises(ModelError, match=r"(?s)does not fit the data:.*income.*approved"):
        rep.raise_if_problems()


def test_wrong_feature_count_for_a_positional_model(onnx_positional):
    rep = check_compatibility(onnx_positional, b.numeric(k=2))
    assert not rep.ok
    assert rep.problems[0] == ("the model takes 3 input(s), matched by position because the file stores no feature "
                               "names, but the data has 2 column(s)")


def test_unseen_categories_are_listed_with_counts(xgb_model):
    model, X = xgb_model
    bad = X.copy()
    bad.loc[:9, "job"] = "astronaut"
    bad.loc[10:12, "job"] = "pilot"
    rep = check_compatibility(model, bad)
    assert any("column 'job' holds value(s) ['astronaut', 'pilot'] (13 rows) that the model was not trained with; "
               "known values: ['clerk', 'manager', 'nurse']" in p for p in rep.problems)


def test_text_in_a_numeric_feature(xgb_model):
    model, X = xgb_model
    bad = X.astype({"income": object})
    bad.loc[3, "income"] = "n/a"
    rep = check_compatibility(model, bad)
    assert any("column 'income' holds text (e.g. 'n/a', 1 rows) but the model expects numbers" in p
               for p in rep.problems)
    numbers_as_text = X.astype({"income": str})
    rep = check_compatibility(model, numbers_as_text)
    assert rep.ok and any("stored as" in w for w in rep.warnings)


def test_duplicate_columns(xgb_model):
    model, X = xgb_model
    dup = pd.concat([X, X[["age"]]], axis=1)
    rep = check_compatibility(model, dup)
    assert any("duplicate column name(s) ['age']" in p for p in rep.problems)


def test_regressor_output_check_and_trial_failure():
    data, _ = b.xgb_regressor()
    model = load_model(data, "r.json")
    X = b.numeric()
    assert check_compatibility(model, X).ok
    rep = check_compatibility(model, X.assign(a="text"))
    assert any("column 'a' holds text" in p for p in rep.problems)
    assert len(rep.problems) == 1  # the failing trial prediction says the same thing: not repeated


def test_sklearn_categories_and_kinds():
    X, y = b.loans()
    model = load_model(b.skops_bytes(b.sklearn_pipeline(X, y)), "m.skops")
    bad = X.assign(job=X.job.replace({"nurse": "doctor"}))
    rep = check_compatibility(model, bad)
    assert any("column 'job' holds value(s) ['doctor']" in p for p in rep.problems)


def test_classifier_returning_probabilities_is_flagged():
    from tcrex.intake import LoadedModel

    class Proba(LoadedModel):
        kind = "test"

        def _predict(self, X):
            return np.full(len(X), 0.3)

    model = Proba(task="classification", feature_names=["a", "b", "c"], classes=[0, 1])
    rep = check_compatibility(model, b.numeric())
    assert any("not among its classes" in p for p in rep.problems)
    assert any("probabilities" in p for p in rep.problems)


def test_empty_table(xgb_model):
    model, X = xgb_model
    rep = check_compatibility(model, X.iloc[:0])
    assert rep.problems == ["the data has no rows"]
