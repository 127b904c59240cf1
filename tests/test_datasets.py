"""Sample data sets and the bundled model (tcrex.datasets, sample_data/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcrex import datasets
from tcrex.datasets import (
    LOANS_CATEGORIES,
    LOANS_COLUMNS,
    LOANS_NUMERIC,
    LOANS_TARGET,
    SAMPLES,
    load_bundled_loans,
    load_bundled_model,
    load_sample,
    make_loans,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO_ROOT / "sample_data"


# --- make_loans -------------------------------------------------------------


def test_make_loans_is_deterministic():
    a = make_loans(1500, random_state=7)
    b = make_loans(1500, random_state=7)
    pd.testing.assert_frame_equal(a, b)
    c = make_loans(1500, random_state=8)
    assert not a.equals(c)


def test_make_loans_columns_and_dtypes():
    frame = make_loans()
    assert list(frame.columns) == LOANS_COLUMNS
    assert len(frame) == 4000
    for col, dtype in LOANS_NUMERIC.items():
        assert frame[col].dtype == np.dtype(dtype), col
    for col, levels in LOANS_CATEGORIES.items():
        assert pd.api.types.is_string_dtype(frame[col]), col
        assert set(frame[col].unique()) == set(levels), col
    assert frame[LOANS_TARGET].dtype == np.dtype("int64")
    assert set(frame[LOANS_TARGET].unique()) == {0, 1}


def test_make_loans_has_no_missing_values():
    assert not make_loans(3000, random_state=3).isna().any().any()


@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_make_loans_class_balance(seed):
    share = make_loans(4000, random_state=seed)[LOANS_TARGET].mean()
    assert 0.35 <= share <= 0.45


def test_make_loans_values_are_plausible():
    frame = make_loans(4000, random_state=5)
    assert frame["age"].between(18, 80).all()
    assert (frame["income"] > 0).all()
    assert (frame["loan_amount"] > 0).all()
    assert frame["debt_to_income"].between(0, 1).all()
    assert (frame["n_late_payments"] >= 0).all()
    assert (frame["credit_history_years"] >= 0).all()
    assert (frame["credit_history_years"] <= frame["age"] - 18).all()
    # a retiree is old; home loans are the largest
    assert frame.loc[frame["employment"] == "Retired", "age"].min() >= 60
    medians = frame.groupby("purpose")["loan_amount"].median()
    assert medians.idxmax() == "Home"


def test_make_loans_rejects_empty():
    with pytest.raises(ValueError):
        make_loans(0)


# --- load_sample --------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_load_sample(name):
    X, y = load_sample(name)
    info = SAMPLES[name]
    assert info.name == name
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert len(X) == len(y) > 100
    assert y.name == info.target
    assert info.target not in X.columns
    assert not X.isna().any().any() and not y.isna().any()
    if info.task == "binary":
        assert set(y.unique()) == {0, 1}
    elif info.task == "multiclass":
        assert set(y.unique()) == {0, 1, 2}
    else:
        assert info.task == "regression"
        assert y.dtype == np.dtype("float64") and y.nunique() > 50


def test_load_sample_specifics():
    X, y = load_sample("wine")
    assert X.shape == (178, 13) and y.name == "cultivar"
    X, y = load_sample("diabetes")
    assert X.shape == (442, 10) and y.name == "progression"
    assert set(X["sex"].unique()) == {1.0, 2.0}  # unscaled
    X, y = load_sample("loans")
    pd.testing.assert_frame_equal(X, make_loans().drop(columns=[LOANS_TARGET]))


def test_load_sample_unknown_name():
    with pytest.raises(KeyError, match="unknown sample"):
        load_sample("titanic")


# --- bundled files ------------------------------------------------------------


def test_bundled_files_are_small():
    names = ["loans.csv", "loans_model.json", "loans_model.meta.json"]
    total = sum((SAMPLE_DIR / n).stat().st_size for n in names)
    assert total < 2 * 1024 * 1024


def test_bundled_csv_is_make_loans_output():
    frame = load_bundled_loans()
    pd.testing.assert_frame_equal(frame, make_loans(4000, random_state=0), check_exact=False, rtol=1e-12)


def test_bundled_model_meta_matches_data():
    meta = json.loads((SAMPLE_DIR / "loans_model.meta.json").read_text())
    assert meta["target"] == LOANS_TARGET
    assert meta["features"] == [c for c in LOANS_COLUMNS if c != LOANS_TARGET]
    assert meta["categories"] == LOANS_CATEGORIES
    assert meta["classes"] == [0, 1]


def test_bundled_model_predicts_well_on_csv():
    model = load_bundled_model()
    raw = pd.read_csv(SAMPLE_DIR / "loans.csv")  # plain strings, not categories
    predictions = model.predict(raw)
    assert predictions.shape == (len(raw),)
    assert set(np.unique(predictions)) <= {0, 1}
    accuracy = float(np.mean(predictions == raw[LOANS_TARGET].to_numpy()))
    assert accuracy > 0.8
    proba = model.predict_proba(raw)
    assert proba.shape == (len(raw), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)


def test_bundled_model_generalises():
    fresh = make_loans(3000, random_state=2024)
    assert load_bundled_model().score(fresh, fresh[LOANS_TARGET]) > 0.8


def test_bundled_model_ignores_category_order_and_extra_columns():
    model = load_bundled_model()
    raw = pd.read_csv(SAMPLE_DIR / "loans.csv").head(500)
    expected = model.predict_proba(raw)
    shuffled = raw[list(reversed(raw.columns))].copy()
    for col, levels in LOANS_CATEGORIES.items():
        shuffled[col] = pd.Categorical(shuffled[col], categories=list(reversed(levels)))
    np.testing.assert_array_equal(model.predict_proba(shuffled), expected)


def test_plain_xgboost_load_predicts_like_wrapper():
    import xgboost as xgb

    raw = pd.read_csv(SAMPLE_DIR / "loans.csv")
    X = raw.drop(columns=[LOANS_TARGET])
    for col, levels in LOANS_CATEGORIES.items():
        X[col] = pd.Categorical(X[col], categories=levels)
    clf = xgb.XGBClassifier()
    clf.load_model(str(SAMPLE_DIR / "loans_model.json"))
    np.testing.assert_array_equal(clf.predict_proba(X), load_bundled_model().predict_proba(raw))


def test_bundled_model_missing_column():
    raw = pd.read_csv(SAMPLE_DIR / "loans.csv").drop(columns=["income"])
    with pytest.raises(KeyError, match="income"):
        load_bundled_model().predict(raw)


@pytest.mark.slow  # retrains the bundled model: `make test`, not `make test-fast`
def test_build_script_reproduces_bundled_files(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SAMPLE_DIR / "build.py"), "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # the script must not depend on the working directory
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "loans.csv").read_bytes() == (SAMPLE_DIR / "loans.csv").read_bytes()
    rebuilt = load_bundled_model(tmp_path / "loans_model.json")
    raw = pd.read_csv(SAMPLE_DIR / "loans.csv")
    agreement = np.mean(rebuilt.predict(raw) == load_bundled_model().predict(raw))
    assert agreement > 0.98


@pytest.mark.slow  # a fresh interpreter: `make test`, not `make test-fast`
def test_datasets_module_does_not_import_streamlit():
    code = "import sys, tcrex.datasets; print('streamlit' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )
    assert out.stdout.strip() == "False"
    assert datasets.SAMPLE_DATA_DIR == SAMPLE_DIR


def test_make_credit_card_is_deterministic_and_holds_codes_beside_delays():
    from tcrex.datasets import (CREDIT_CARD_STATUS_CODES, CREDIT_CARD_TARGET, credit_card_codebook,
                                credit_card_columns, credit_card_titles, make_credit_card)

    a, b = make_credit_card(800, random_state=3), make_credit_card(800, random_state=3)
    pd.testing.assert_frame_equal(a, b)
    cols = credit_card_columns()
    for c in cols["status"]:
        values = set(a[c].unique())
        assert values <= set(CREDIT_CARD_STATUS_CODES) | set(range(1, 9))
        assert values & set(CREDIT_CARD_STATUS_CODES) and values & set(range(1, 9))
    assert set(a[CREDIT_CARD_TARGET].unique()) == {0, 1}
    assert 0.05 < a[CREDIT_CARD_TARGET].mean() < 0.5
    book, titles = credit_card_codebook(), credit_card_titles()
    assert set(book) == set(cols["status"]) | {"sex", "education", "marital_status"}
    assert set(titles) == set(a.columns) - {CREDIT_CARD_TARGET}
    # a differently shaped table: other codes, other names, more months
    c = make_credit_card(300, months=9, status_codes={-5: "closed", -4: "frozen"}, status="pay_m{k}", bill="b{k}",
                         paid="p{k}")
    assert [f"pay_m{k}" for k in range(1, 10)] == credit_card_columns(9, status="pay_m{k}")["status"]
    assert set(c["pay_m1"].unique()) <= {-5, -4} | set(range(1, 9))
    assert "b9" in c.columns and "status_1" not in c.columns
