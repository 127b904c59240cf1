"""Sample data sets and the bundled sample model.

This module is pure Python (numpy, pandas, scikit-learn, xgboost); it never
imports streamlit, so the engine, the tests and the scripts can use it without
the dashboard.

What is here
------------
``make_loans(n_samples, random_state)``
    A synthetic but plausible loan-application data set: numeric and
    categorical applicant features plus a binary ``approved`` decision that a
    hidden, noisy rule set produced.  It is the running example of the
    project: counterfactual rules ("what would have to change for this
    applicant to be approved?") are easy to read on it.

``load_sample(name)``
    ``(X, y)`` for one of the names in :data:`SAMPLES`: ``"loans"`` (the
    generated set above), ``"wine"`` (multi-class) and ``"diabetes"``
    (regression).

``load_bundled_model()``
    The XGBoost classifier shipped in ``sample_data/`` (trained on
    ``sample_data/loans.csv`` by ``sample_data/build.py``), wrapped so that
    ``predict`` accepts a plain DataFrame such as the one ``pandas.read_csv``
    returns.

``load_bundled_loans()``
    The bundled CSV ``sample_data/loans.csv`` read back with the documented
    dtypes.

``make_credit_bureau(n_samples, random_state)``
    A generated credit-bureau-like data set with coded categories (A11…A14
    style) and the bureau's special codes (−7/−8/−9 "no such record"), with
    its codebook :data:`CREDIT_BUREAU_CODEBOOK` (``{feature: {value: label}}``,
    numeric codes keyed as numbers) for ``TCREx(value_labels=...)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .resources import app_root

__all__ = [
    "BundledModel",
    "LOANS_CATEGORIES",
    "LOANS_CATEGORICAL",
    "LOANS_COLUMNS",
    "LOANS_NUMERIC",
    "LOANS_TARGET",
    "LOANS_VALUE_LABELS",
    "LOANS_CODEBOOK",
    "codebook_csv",
    "SAMPLES",
    "SAMPLE_DATA_DIR",
    "SampleInfo",
    "load_bundled_loans",
    "load_bundled_model",
    "load_sample",
    "make_loans",
]

#: Directory holding the bundled CSV and model (``<repo>/sample_data`` in a checkout, ``tcrex/_app/sample_data``
#: in an installed wheel).
SAMPLE_DATA_DIR = app_root() / "sample_data"

#: File names inside :data:`SAMPLE_DATA_DIR`.
LOANS_CSV = "loans.csv"
LOANS_MODEL = "loans_model.json"
LOANS_MODEL_META = "loans_model.meta.json"
#: The second bundled model: the same classifier retrained on a bootstrap resample (``sample_data/build.py``), the
#: default "new model" of the dashboard's Compare models page (``load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B)``).
LOANS_MODEL_B = "loans_model_b.json"
LOANS_MODEL_B_META = "loans_model_b.meta.json"
#: The loans sample's codebook (``LOANS_VALUE_LABELS`` as CSV ``feature,value,label``), written by build.py.
LOANS_CODEBOOK = "loans_codebook.csv"

# ---------------------------------------------------------------------------
# The loans data set
# ---------------------------------------------------------------------------

#: Name of the binary target column of :func:`make_loans`.
LOANS_TARGET = "approved"

#: Numeric feature columns of :func:`make_loans` and their dtypes.
LOANS_NUMERIC: dict[str, str] = {
    "age": "int64",  # years, 18..80
    "income": "float64",  # yearly income, thousands, 1 decimal
    "loan_amount": "float64",  # requested amount, thousands, 1 decimal
    "credit_history_years": "int64",  # years since the first credit line
    "debt_to_income": "float64",  # existing monthly debt / monthly income, 3 decimals
    "n_late_payments": "int64",  # late payments in the last 5 years
}

#: Categorical (string) feature columns of :func:`make_loans` and their levels,
#: in a fixed order (the order the bundled model uses).
LOANS_CATEGORIES: dict[str, list[str]] = {
    "employment": ["Salaried", "Self-employed", "Unemployed", "Retired"],
    "home_ownership": ["Rent", "Mortgage", "Own"],
    "purpose": ["Car", "Home", "Education", "Business", "Debt consolidation"],
}

#: Names of the categorical feature columns of :func:`make_loans`.
LOANS_CATEGORICAL: list[str] = list(LOANS_CATEGORIES)

#: The loans sample's codebook ``{feature: {value: label}}`` (``TCREx(value_labels=...)``): what each category
#: means to an applicant, and the one coded number (no late payments). Shipped as ``sample_data/loans_codebook.csv``.
LOANS_VALUE_LABELS: dict[str, dict] = {
    "employment": {"Salaried": "salaried employee", "Self-employed": "self-employed, own business",
                   "Unemployed": "not currently employed", "Retired": "retired, on a pension"},
    "home_ownership": {"Rent": "rents the home", "Mortgage": "owns the home with a mortgage",
                       "Own": "owns the home outright"},
    "purpose": {"Debt consolidation": "paying off other debts", "Car": "buying a car", "Home": "home improvement",
                "Education": "tuition and courses", "Business": "starting or growing a business"},
    "n_late_payments": {0: "no late payments on record"},
}

#: All columns of :func:`make_loans`, in order (features first, target last).
LOANS_COLUMNS: list[str] = [
    "age",
    "employment",
    "income",
    "home_ownership",
    "purpose",
    "loan_amount",
    "credit_history_years",
    "debt_to_income",
    "n_late_payments",
    LOANS_TARGET,
]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _pick(rng: np.random.Generator, levels: Sequence[str], probs: np.ndarray) -> np.ndarray:
    """Draw one level per row; ``probs`` has shape (n, len(levels)), rows sum to 1."""
    cum = np.cumsum(probs, axis=1)
    u = rng.random(len(probs))[:, None]
    idx = (u > cum).sum(axis=1)
    idx = np.minimum(idx, len(levels) - 1)  # guard against rounding at the top
    return np.asarray(levels, dtype=object)[idx]


def make_loans(n_samples: int = 4000, random_state: int | None = 0) -> pd.DataFrame:
    """Generate a synthetic loan-application data set.

    Each row is one application.  The features are drawn so that they are
    plausible together (retired applicants are old, home loans are large,
    the credit history is never longer than the adult life, ...), and the
    decision ``approved`` comes from a hidden scoring rule with thresholds and
    interactions, passed through a logistic link and sampled, so the labels are
    noisy but learnable (a small gradient-boosted model reaches about 85-90 %
    accuracy).  About 40 % of the applications are approved.

    Columns (see also :data:`LOANS_NUMERIC` and :data:`LOANS_CATEGORIES`):

    ========================  =========  ==============================================
    column                    dtype      meaning
    ========================  =========  ==============================================
    ``age``                   int64      applicant age in years (18-80)
    ``employment``            str        Salaried / Self-employed / Unemployed / Retired
    ``income``                float64    yearly income in thousands (1 decimal)
    ``home_ownership``        str        Rent / Mortgage / Own
    ``purpose``               str        Car / Home / Education / Business /
                                         Debt consolidation
    ``loan_amount``           float64    requested amount in thousands (1 decimal)
    ``credit_history_years``  int64      years since the first credit line
    ``debt_to_income``        float64    existing monthly debt / income (3 decimals)
    ``n_late_payments``       int64      late payments in the last five years
    ``approved``              int64      1 = approved, 0 = rejected
    ========================  =========  ==============================================

    The hidden decision logic, roughly: a low debt-to-income ratio, a loan that
    is small relative to income (home loans may be larger if the applicant
    already owns or has a mortgage), few late payments and a long credit
    history make approval likely; unemployment, more than two late payments or
    a debt-to-income ratio above 0.43 make it unlikely; young self-employed
    applicants asking for business loans and young renters are penalised.

    Parameters
    ----------
    n_samples:
        Number of rows.
    random_state:
        Seed for :func:`numpy.random.default_rng`; the same seed gives the same
        frame.  ``None`` draws fresh entropy.

    Returns
    -------
    pandas.DataFrame
        ``n_samples`` rows, the columns :data:`LOANS_COLUMNS`, no missing
        values.  String columns have pandas' default string dtype.
    """
    if n_samples < 1:
        raise ValueError("n_samples must be at least 1")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)

    # --- age and employment -------------------------------------------------
    age = np.clip(np.round(rng.normal(42.0, 13.0, n)), 18, 80).astype(np.int64)
    p_retired = np.where(age >= 67, 0.85, np.where(age >= 60, 0.30, 0.0))
    p_unemployed = np.where(age < 25, 0.14, 0.07) * (1.0 - p_retired)
    p_self = 0.17 * (1.0 - p_retired - p_unemployed)
    p_salaried = 1.0 - p_retired - p_unemployed - p_self
    employment = _pick(
        rng,
        LOANS_CATEGORIES["employment"],
        np.column_stack([p_salaried, p_self, p_unemployed, p_retired]),
    )

    # --- income (thousands per year): log-normal, peaks in mid career ---------
    median = np.select(
        [
            employment == "Salaried",
            employment == "Self-employed",
            employment == "Unemployed",
        ],
        [48.0, 55.0, 13.0],
        default=30.0,  # Retired
    )
    career = np.exp(-(((age - 48.0) / 22.0) ** 2))  # 0..1 bump around 48
    median = median * (0.65 + 0.45 * career)
    sigma = np.where(employment == "Self-employed", 0.55, 0.38)
    income = np.round(np.clip(median * np.exp(rng.normal(0.0, sigma)), 5.0, 400.0), 1)

    # --- home ownership: renters are young, owners are old and richer --------
    z_own = -2.6 + 0.06 * (age - 18) + 0.35 * np.log(income / 40.0)
    z_mort = -0.4 + 0.03 * (age - 18) + 0.6 * np.log(income / 40.0) - 0.0006 * (age - 45) ** 2
    w = np.column_stack([np.ones(n), np.exp(z_mort), np.exp(z_own)])
    home_ownership = _pick(rng, LOANS_CATEGORIES["home_ownership"], w / w.sum(axis=1, keepdims=True))

    # --- purpose --------------------------------------------------------------
    base = np.array([0.25, 0.13, 0.10, 0.09, 0.43])  # Car Home Edu Business Debt
    p = np.tile(base, (n, 1))
    p[:, 2] *= np.where(age < 30, 3.0, np.where(age > 50, 0.2, 0.8))  # Education
    p[:, 3] *= np.where(employment == "Self-employed", 4.0, 0.6)  # Business
    p[:, 1] *= np.where(home_ownership == "Own", 0.3, 1.2)  # Home
    p[:, 1] *= np.where(employment == "Unemployed", 0.2, 1.0)
    purpose = _pick(rng, LOANS_CATEGORIES["purpose"], p / p.sum(axis=1, keepdims=True))

    # --- requested amount (thousands) ----------------------------------------
    typical = np.select(
        [purpose == "Car", purpose == "Home", purpose == "Education", purpose == "Business"],
        [18.0, 160.0, 22.0, 55.0],
        default=14.0,  # Debt consolidation
    )
    scale = (income / 45.0) ** np.where(purpose == "Home", 0.8, 0.5)
    loan_amount = np.round(np.clip(typical * scale * np.exp(rng.normal(0.0, 0.45, n)), 1.0, 900.0), 1)

    # --- credit history, debt-to-income, late payments ----------------------
    adult_years = age - 18
    credit_history_years = np.floor(adult_years * rng.beta(4.0, 2.0, n)).astype(np.int64)
    dti_mean = np.where(purpose == "Debt consolidation", 0.36, 0.24)
    dti_mean = np.where(employment == "Unemployed", dti_mean + 0.12, dti_mean)
    dti_mean = np.clip(dti_mean + 0.06 * (home_ownership == "Mortgage") - 0.04 * (income > 90), 0.05, 0.8)
    k = 9.0
    debt_to_income = np.round(np.clip(rng.beta(dti_mean * k, (1.0 - dti_mean) * k), 0.0, 0.95), 3)
    late_rate = 0.25 + 2.2 * debt_to_income + 0.6 * (employment == "Unemployed") + 0.4 * (age < 25)
    n_late_payments = rng.poisson(late_rate).astype(np.int64)

    # --- hidden decision logic ----------------------------------------------
    loan_to_income = loan_amount / income
    lti_allowed = np.where(
        purpose == "Home",
        np.where(home_ownership == "Rent", 3.0, 4.5),
        np.where(purpose == "Business", 1.2, 0.6),
    )
    score = (
        1.9
        - 6.5 * np.maximum(debt_to_income - 0.25, 0.0)
        - 2.4 * (debt_to_income > 0.43)
        - 2.2 * np.maximum(loan_to_income / lti_allowed - 1.0, 0.0)
        - 0.8 * np.minimum(n_late_payments, 2)
        - 2.6 * (n_late_payments > 2)
        + 0.13 * np.minimum(credit_history_years, 15)
        - 1.4 * ((credit_history_years < 2) & (income < 60))
        - 3.0 * (employment == "Unemployed")
        - 0.6 * (employment == "Retired") * (income < 25)
        - 1.8 * ((employment == "Self-employed") & (purpose == "Business") & (credit_history_years < 5))
        - 0.7 * ((age < 25) & (home_ownership == "Rent"))
        + 0.6 * (home_ownership == "Own")
        + 0.35 * np.log(income / 45.0)
        - 2.1
    )
    p_approve = _sigmoid(2.2 * score)
    approved = (rng.random(n) < p_approve).astype(np.int64)

    frame = pd.DataFrame(
        {
            "age": age,
            "employment": pd.array(employment.tolist(), dtype="str"),
            "income": income.astype(np.float64),
            "home_ownership": pd.array(home_ownership.tolist(), dtype="str"),
            "purpose": pd.array(purpose.tolist(), dtype="str"),
            "loan_amount": loan_amount.astype(np.float64),
            "credit_history_years": credit_history_years,
            "debt_to_income": debt_to_income.astype(np.float64),
            "n_late_payments": n_late_payments,
            LOANS_TARGET: approved,
        },
        columns=LOANS_COLUMNS,
    )
    return frame


def loans_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with the documented loans dtypes.

    Integer and float columns are cast to ``int64`` / ``float64``, categorical
    columns to pandas' string dtype.  Useful after ``pandas.read_csv``.
    """
    out = frame.copy()
    for col, dtype in LOANS_NUMERIC.items():
        if col in out:
            out[col] = out[col].astype(dtype)
    for col in LOANS_CATEGORICAL:
        if col in out:
            out[col] = out[col].astype("str")
    if LOANS_TARGET in out:
        out[LOANS_TARGET] = out[LOANS_TARGET].astype("int64")
    return out


def codebook_csv(value_labels: dict) -> str:
    """A codebook ``{feature: {value: label}}`` as the CSV text ``feature,value,label`` (one line per label; what
    ``sample_data/build.py`` writes and the intake reads back)."""
    import csv  # noqa: PLC0415 - only the sample builder and the dashboard's download need it
    import io  # noqa: PLC0415

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["feature", "value", "label"])
    for feature, labels in value_labels.items():
        for value, label in labels.items():
            writer.writerow([feature, value, label])
    return out.getvalue()


def load_bundled_loans(path: str | Path | None = None) -> pd.DataFrame:
    """Read the bundled ``sample_data/loans.csv`` (or ``path``) with the loans dtypes."""
    path = Path(path) if path is not None else SAMPLE_DATA_DIR / LOANS_CSV
    return loans_dtypes(pd.read_csv(path))


# ---------------------------------------------------------------------------
# Sample registry
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleInfo:
    """Description of one sample data set returned by :func:`load_sample`."""

    name: str
    description: str
    task: str  # "binary", "multiclass" or "regression"
    target: str  # name of the target column / Series
    #: the outcome an applicant wants (None: the data names none; the dashboard then asks)
    favourable: object = None
    #: readable names of the class labels ({} when the labels are their own names)
    class_names: dict = field(default_factory=dict)
    #: the codebook file in :data:`SAMPLE_DATA_DIR` (value labels, CSV ``feature,value,label``), or None
    codebook: str | None = None


#: The sample data sets :func:`load_sample` knows, by name.
SAMPLES: dict[str, SampleInfo] = {
    "loans": SampleInfo(
        name="loans",
        description=(
            "Synthetic loan applications (4000 rows): age, employment, income, home "
            "ownership, purpose, loan amount, credit history, debt-to-income ratio "
            "and late payments; target: whether the loan was approved."
        ),
        task="binary",
        target=LOANS_TARGET,
        favourable=1,
        class_names={1: "approved", 0: "rejected"},
        codebook=LOANS_CODEBOOK,
    ),
    "wine": SampleInfo(
        name="wine",
        description=(
            "UCI wine recognition data (178 rows, 13 chemical measurements); "
            "target: which of three cultivars (0, 1, 2) the wine comes from."
        ),
        task="multiclass",
        target="cultivar",
    ),
    "diabetes": SampleInfo(
        name="diabetes",
        description=(
            "Diabetes data of Efron et al. (442 patients, 10 baseline variables, "
            "unscaled); target: a quantitative measure of disease progression one "
            "year later."
        ),
        task="regression",
        target="progression",
    ),
}


def load_sample(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """Load a sample data set as ``(X, y)``.

    ``name`` is one of :data:`SAMPLES`:

    ``"loans"``
        :func:`make_loans` with its defaults (4000 rows, ``random_state=0``,
        the same rows as ``sample_data/loans.csv``); ``y`` is ``approved``
        (0/1).
    ``"wine"``
        :func:`sklearn.datasets.load_wine`; ``y`` is ``cultivar`` (0, 1, 2).
    ``"diabetes"``
        :func:`sklearn.datasets.load_diabetes` with ``scaled=False``; ``y`` is
        ``progression`` (float).

    ``X`` holds only features; ``y.name`` is the target column name.  The
    scikit-learn data sets ship with scikit-learn, so nothing is downloaded.
    """
    if name not in SAMPLES:
        raise KeyError(f"unknown sample {name!r}; choose one of {sorted(SAMPLES)}")
    target = SAMPLES[name].target
    if name == "loans":
        frame = make_loans()
    elif name == "wine":
        from sklearn.datasets import load_wine  # noqa: PLC0415 - only this sample needs sklearn's loaders

        bunch = load_wine(as_frame=True)
        frame = bunch.frame.rename(columns={"target": target})
        frame[target] = frame[target].astype("int64")
    else:  # diabetes
        from sklearn.datasets import load_diabetes  # noqa: PLC0415 - only this sample needs sklearn's loaders

        bunch = load_diabetes(as_frame=True, scaled=False)
        frame = bunch.frame.rename(columns={"target": target})
        frame[target] = frame[target].astype("float64")
    X = frame.drop(columns=[target]).reset_index(drop=True)
    y = frame[target].reset_index(drop=True).rename(target)
    return X, y


# ---------------------------------------------------------------------------
# The bundled model
# ---------------------------------------------------------------------------


def model_frame(X: pd.DataFrame, feature_names: Sequence[str], categories: dict[str, list]) -> pd.DataFrame:
    """The columns a tree model was trained on, in its order, with its dtypes.

    Categorical columns become pandas categoricals over exactly the training ``categories`` (values compared as
    text, so a CSV's ``1`` matches a category ``"1"``; missing or unknown values become missing, which the trees
    route along their default branch); every other column becomes float64 (a non-numeric value raises).
    Extra columns are ignored.
    """
    missing = [c for c in feature_names if c not in X.columns]
    if missing:
        raise KeyError(f"missing feature columns: {missing}")
    out = X.loc[:, list(feature_names)].copy()
    for col in feature_names:
        if col in categories:
            values = out[col]
            if not isinstance(values.dtype, pd.StringDtype):  # text already needs no per-value conversion
                values = values.astype(object).where(values.notna(), None).map(lambda v: v if v is None else str(v))
            out[col] = pd.Categorical(values, categories=categories[col])
        else:
            out[col] = pd.to_numeric(out[col]).astype("float64")
    return out


@dataclass
class BundledModel:
    """The bundled XGBoost loans classifier, ready for plain DataFrames.

    XGBoost needs categorical features as pandas ``category`` columns.  A frame
    read from CSV has strings instead, and even a ``category`` column may list
    its categories in another order than at training time.  ``predict`` and
    ``predict_proba`` therefore first select :attr:`feature_names` (in the
    training order; extra columns such as the target are ignored) and cast every
    categorical column to a ``CategoricalDtype`` with exactly the categories
    recorded at training time (:attr:`categories`, read from
    ``loans_model.meta.json``).  A value outside those categories becomes
    missing, which the trees route along their default branch.

    Attributes
    ----------
    booster_model:
        The underlying :class:`xgboost.XGBClassifier`.
    feature_names:
        Feature columns in training order.
    categories:
        ``{column: [category, ...]}`` for the categorical features.
    target:
        Name of the target column (``"approved"``).
    classes_:
        Class labels, ``[0, 1]``.
    meta:
        The whole metadata record from ``loans_model.meta.json``.
    """

    booster_model: Any
    feature_names: list[str]
    categories: dict[str, list[str]]
    target: str
    classes_: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def prepare(self, X: pd.DataFrame) -> pd.DataFrame:
        """Return the feature frame exactly as the model was trained on it."""
        return model_frame(X, self.feature_names, self.categories)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities, shape ``(n, 2)``."""
        return self.booster_model.predict_proba(self.prepare(X))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class labels (0/1) as an ``int64`` array."""
        return np.asarray(self.booster_model.predict(self.prepare(X))).astype(np.int64)

    def score(self, X: pd.DataFrame, y: Sequence[Any] | pd.Series) -> float:
        """Accuracy of :meth:`predict` against ``y`` (:func:`tcrex.performance.score`)."""
        from .performance import score  # noqa: PLC0415 - scikit-learn's metrics load when a score is asked for
        from .vocabulary import CLASSIFICATION  # noqa: PLC0415

        return score(np.asarray(y), self.predict(X), CLASSIFICATION)


def read_model_meta(path: str | Path | None = None) -> dict[str, Any]:
    """Read ``loans_model.meta.json`` (feature order, categories, target, ...)."""
    path = Path(path) if path is not None else SAMPLE_DATA_DIR / LOANS_MODEL_META
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def load_bundled_model(
    model_path: str | Path | None = None, meta_path: str | Path | None = None
) -> BundledModel:
    """Load the bundled loans classifier from XGBoost's native JSON.

    ``model_path`` defaults to ``sample_data/loans_model.json`` and
    ``meta_path`` to the ``.meta.json`` next to it, which records the feature
    order and the category lists used at training time (written by
    ``sample_data/build.py``).  Nothing is unpickled.

    Returns a :class:`BundledModel`; ``model.predict(frame)`` works on the CSV
    as read by :func:`pandas.read_csv` or on :func:`make_loans` output.
    """
    import xgboost as xgb  # noqa: PLC0415 - XGBoost (slow to import) only for the bundled model

    model_path = Path(model_path) if model_path is not None else SAMPLE_DATA_DIR / LOANS_MODEL
    if meta_path is None:
        meta_path = model_path.with_name(model_path.name.removesuffix(".json") + ".meta.json")
    meta = read_model_meta(meta_path)
    clf = xgb.XGBClassifier()
    clf.load_model(str(model_path))
    return BundledModel(
        booster_model=clf,
        feature_names=list(meta["features"]),
        categories={k: list(v) for k, v in meta["categories"].items()},
        target=str(meta["target"]),
        classes_=np.asarray(meta.get("classes", [0, 1])),
        meta=meta,
    )


def model_meta_record(
    features: Sequence[str],
    categories: Mapping[str, Sequence[str]],
    target: str,
    classes: Sequence[Any],
    **extra: Any,
) -> dict[str, Any]:
    """Build the metadata record stored next to a model (used by ``build.py``)."""
    record: dict[str, Any] = {
        "features": list(features),
        "categories": {k: list(v) for k, v in categories.items()},
        "target": target,
        "classes": [int(c) if isinstance(c, (int, np.integer)) else c for c in classes],
    }
    record.update(extra)
    return record


# ---------------------------------------------------------------------------
# Groups with a known recourse disparity (for the subgroup recourse audit)
# ---------------------------------------------------------------------------


def make_recourse_groups(n_samples: int = 4000, disparity: bool = True,
                         random_state: int | None = 0) -> pd.DataFrame:
    """Applicants in groups with a planted recourse disparity (or none), for testing and demonstrating
    :func:`tcrex.audit.audit`.

    Columns: ``age`` (int), ``income`` and ``savings`` (thousands, 1 decimal), ``employment`` (categorical),
    ``group`` and ``approved``.  The decision is exact and the same for everyone::

        approved = income > 50 and savings > 10

    ``group`` is *not* used by the decision and is meant to be left out of the model's features (``age`` and
    ``employment`` are noise features the decision ignores).

    ``disparity=True``: group ``"A"`` (about 55%) always has savings above 10 (uniform 12..50) and income uniform
    20..80; group ``"B"`` (about 45%) never has enough savings (uniform 0..9), and 90% of it has an income of at
    most 50 (uniform 20..50; the other 10% uniform 50..80).  So a rejected applicant of group A needs exactly one
    change (income), while every applicant of group B is rejected and needs two changes (income and savings)
    unless their income is already above 50: on average B needs about 0.9 more changes than A, and B's recourse
    always involves savings.  (The B applicants above 50 matter: without them "income > 50" alone would look like
    a perfectly accurate rule on the data, and T-CREx would rightly report it.)

    ``disparity=False``: groups ``"A"``, ``"B"``, ``"C"`` (50/30/20%) are drawn independently of everything
    else, income uniform 20..80 and savings uniform 0..50 for everyone, so no group differs in anything.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    if disparity:
        group = np.where(rng.random(n) < 0.55, "A", "B").astype(object)
        is_b = group == "B"
        income_b = np.where(rng.random(n) < 0.9, rng.uniform(20, 50, n), rng.uniform(50, 80, n))
        income = np.where(is_b, income_b, rng.uniform(20, 80, n))
        savings = np.where(is_b, rng.uniform(0, 9, n), rng.uniform(12, 50, n))
    else:
        group = rng.choice(np.array(["A", "B", "C"], dtype=object), size=n, p=[0.5, 0.3, 0.2])
        income = rng.uniform(20, 80, n)
        savings = rng.uniform(0, 50, n)
    income = np.round(income, 1)
    savings = np.round(savings, 1)
    frame = pd.DataFrame({
        "age": rng.integers(18, 71, n).astype(np.int64),
        "income": income,
        "savings": savings,
        "employment": rng.choice(np.array(["Salaried", "Self-employed", "Unemployed"], dtype=object), size=n),
        "group": group,
    })
    frame["approved"] = ((frame["income"] > 50) & (frame["savings"] > 10)).astype(np.int64)
    return frame


__all__ += ["make_recourse_groups"]


# ---------------------------------------------------------------------------
# A credit-bureau-like data set: coded categories and special codes
# ---------------------------------------------------------------------------

#: Name of the target column of :func:`make_credit_bureau` ("Good" / "Bad").
CREDIT_BUREAU_TARGET = "RiskPerformance"

#: The codebook of :func:`make_credit_bureau`: ``{feature: {value: label}}``. Categorical features hold codes in
#: the style of the German credit data (A11…A14); numeric features hold the credit bureau's special codes
#: (−7/−8/−9, keyed as numbers), which mean "no such record", not a quantity.
CREDIT_BUREAU_CODEBOOK: dict[str, dict[Any, str]] = {
    "Checking_account_status": {"A11": "overdrawn (< 0)", "A12": "0 to 200", "A13": "200 or more",
                                "A14": "no checking account"},
    "Credit_history": {"A30": "no credits taken", "A31": "all credits here paid back duly",
                       "A32": "existing credits paid back duly till now", "A33": "delay in paying off in the past",
                       "A34": "critical account / other credits existing"},
    "Savings": {"A61": "under 100", "A62": "100 to 500", "A63": "500 to 1000", "A64": "1000 or more",
                "A65": "unknown / no savings account"},
    "Purpose": {"A40": "car (new)", "A41": "car (used)", "A42": "furniture / equipment", "A43": "radio / television",
                "A46": "education", "A49": "business"},
    "Personal_status_and_sex": {"A91": "male: divorced / separated", "A92": "female: divorced / separated / married",
                                "A93": "male: single", "A94": "male: married / widowed", "A95": "female: single"},
    "Foreign_worker": {"A201": "yes", "A202": "no"},
    "Age_band": {"A81": "under 25", "A82": "25 to 39", "A83": "40 to 59", "A84": "60 or over"},
    "ExternalRiskEstimate": {-9: "no bureau record"},
    "MSinceOldestTradeOpen": {-9: "no bureau record", -8: "no usable trades"},
    "MSinceMostRecentDelq": {-9: "no bureau record", -8: "no usable trades", -7: "no delinquency on record"},
    "MSinceMostRecentInqexcl7days": {-9: "no bureau record", -8: "no usable inquiries",
                                     -7: "no inquiry in the period"},
    "NetFractionRevolvingBurden": {-9: "no bureau record", -8: "no revolving trades"},
    "NetFractionInstallBurden": {-9: "no bureau record", -8: "no instalment trades"},
    "PercentTradesNeverDelq": {-9: "no bureau record"},
    CREDIT_BUREAU_TARGET: {"Good": "repaid as agreed", "Bad": "90 days or more past due"},
}

#: The special codes of the numeric features of :func:`make_credit_bureau` (those in the codebook).
CREDIT_BUREAU_SPECIAL_CODES: dict[str, list[int]] = {
    f: sorted(k for k in labels) for f, labels in CREDIT_BUREAU_CODEBOOK.items()
    if labels and all(isinstance(k, int) for k in labels)}


def make_credit_bureau(n_samples: int = 6000, random_state: int | None = 0) -> pd.DataFrame:
    """A generated credit-bureau-like data set with coded categories and special codes, for recourse that has to
    keep codes as codes. Its codebook is :data:`CREDIT_BUREAU_CODEBOOK`.

    * seven **coded categorical** features (``Checking_account_status`` A11…A14, ``Credit_history`` A30…A34,
      ``Savings`` A61…A65, ``Purpose``, ``Personal_status_and_sex`` A91…A95, ``Foreign_worker`` A201/A202,
      ``Age_band`` A81…A84), drawn as in the German credit data;
    * ten **numeric** features named like the FICO HELOC columns, seven of them with the bureau's **special
      codes**: −9 "no bureau record" (about 3 % of the rows: every bureau feature of the row is −9), −8 "no
      usable trades / no instalment trades / no revolving trades", −7 "no delinquency on record" / "no inquiry in
      the period"; plus ``Duration_months``, ``Credit_amount`` and ``NumInqLast6M``;
    * ``RiskPerformance``, "Good" or "Bad" (about half "Bad"), from a noisy logistic score in which the codes
      carry their own effect (never delinquent is good, no record is bad), not their numeric value.

    Deterministic for a given ``random_state``; nothing is read from disk."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    cb = CREDIT_BUREAU_CODEBOOK

    def codes(feature, probs):
        return _pick(rng, list(cb[feature]), np.tile(np.asarray(probs, dtype=np.float64), (n, 1)))

    no_record = rng.random(n) < 0.03
    ext = np.clip(np.round(rng.normal(72, 10, n)), 33, 94)
    oldest = np.clip(np.round(rng.gamma(3.0, 70, n)), 2, 800)
    no_trades = rng.random(n) < 0.02
    never_delq = rng.random(n) < 0.45
    m_delq = np.minimum(np.round(rng.exponential(20, n)), oldest)
    no_inq = rng.random(n) < 0.2
    no_inq_data = ~no_inq & (rng.random(n) < 0.02)
    m_inq = np.clip(np.round(rng.exponential(3, n)), 0, 24)
    revolving = np.clip(np.round(rng.gamma(1.2, 30, n)), 0, 200)
    no_install = rng.random(n) < 0.35
    install = np.clip(np.round(rng.normal(65, 20, n)), 0, 150)
    pct_never = np.clip(np.round(100 - rng.exponential(7, n)), 0, 100)
    pct_never[never_delq] = 100
    frame = pd.DataFrame({
        "Checking_account_status": codes("Checking_account_status", [0.27, 0.27, 0.07, 0.39]),
        "Duration_months": np.clip(np.round(rng.gamma(3.0, 7, n)), 4, 72).astype(np.int64),
        "Credit_history": codes("Credit_history", [0.04, 0.05, 0.53, 0.09, 0.29]),
        "Purpose": codes("Purpose", [0.25, 0.10, 0.20, 0.30, 0.05, 0.10]),
        "Credit_amount": np.round(np.exp(rng.normal(7.8, 0.75, n)), -1).astype(np.int64),
        "Savings": codes("Savings", [0.60, 0.10, 0.06, 0.05, 0.19]),
        "Personal_status_and_sex": codes("Personal_status_and_sex", [0.05, 0.31, 0.55, 0.09, 0.0]),
        "Foreign_worker": codes("Foreign_worker", [0.96, 0.04]),
        "Age_band": codes("Age_band", [0.19, 0.50, 0.25, 0.06]),
        "ExternalRiskEstimate": ext,
        "MSinceOldestTradeOpen": np.where(no_trades, -8, oldest),
        "MSinceMostRecentDelq": np.where(no_trades, -8, np.where(never_delq, -7, m_delq)),
        "MSinceMostRecentInqexcl7days": np.where(no_inq, -7, np.where(no_inq_data, -8, m_inq)),
        "NumInqLast6M": np.where(no_inq, 0, rng.poisson(1.5, n)),
        "NetFractionRevolvingBurden": np.where(no_trades, -8, revolving),
        "NetFractionInstallBurden": np.where(no_trades | no_install, -8, install),
        "PercentTradesNeverDelq": pct_never,
    })
    bureau = [f for f in CREDIT_BUREAU_SPECIAL_CODES]
    for f in bureau:
        frame.loc[no_record, f] = -9
    for f in bureau + ["NumInqLast6M"]:
        frame[f] = frame[f].astype(np.int64)
    # the score: codes carry their own effect, never their numeric value
    z = (0.08 * (np.where(no_record, 60, ext) - 72)
         - 0.9 * no_record
         + np.select([frame.Checking_account_status == "A11", frame.Checking_account_status == "A12",
                      frame.Checking_account_status == "A14"], [-0.8, -0.3, 0.6], 0.0)
         + np.select([frame.Credit_history == "A34", frame.Credit_history == "A33",
                      frame.Credit_history == "A30"], [0.5, -0.6, -0.7], 0.0)
         + np.select([frame.Savings == "A61", frame.Savings == "A64"], [-0.3, 0.5], 0.0)
         - 0.025 * (frame.Duration_months - 20) - 0.00004 * (frame.Credit_amount - 2500)
         + np.where(never_delq & ~no_record & ~no_trades, 0.7, 0.02 * np.minimum(m_delq, 48) - 0.5)
         - 0.25 * np.where(no_inq, 0, np.maximum(3 - m_inq, 0)) - 0.2 * frame.NumInqLast6M
         - 0.012 * np.where(no_trades | no_record, 40, revolving - 30)
         - 0.01 * np.where(no_trades | no_install | no_record, 0, install - 65)
         + 0.004 * np.where(no_trades, 24, np.minimum(oldest, 300) - 200)
         + 0.04 * (np.where(no_record, 90, pct_never) - 95)
         + 0.6 + rng.normal(0, 0.6, n))
    frame[CREDIT_BUREAU_TARGET] = np.where(z > 0, "Good", "Bad").astype(object)
    return frame


__all__ += ["CREDIT_BUREAU_CODEBOOK", "CREDIT_BUREAU_SPECIAL_CODES", "CREDIT_BUREAU_TARGET", "make_credit_bureau"]


# ---------------------------------------------------------------------------
# A credit-card-like data set: monthly status codes beside delays, coded categories, amounts, history columns
# ---------------------------------------------------------------------------

#: Name of the target column of :func:`make_credit_card` (1 = defaults next month, 0 = does not).
CREDIT_CARD_TARGET = "default"

#: The default status codes of :func:`make_credit_card`'s monthly repayment-status columns: codes, not amounts,
#: beside the ordinary values 1…8 ("months of delay").
CREDIT_CARD_STATUS_CODES: dict[int, str] = {-2: "no consumption that month", -1: "paid in full",
                                            0: "revolving credit (minimum paid)"}

_CARD_CATEGORIES = {"sex": {"c1": "male", "c2": "female"},
                    "education": {"c1": "graduate school", "c2": "university", "c3": "high school", "c4": "other"},
                    "marital_status": {"c1": "married", "c2": "single", "c3": "other"}}
_MONTH_WORDS = {1: "last month", 2: "two months ago", 3: "three months ago", 4: "four months ago",
                5: "five months ago", 6: "six months ago"}


def credit_card_columns(months: int = 6, status: str = "status_{k}", bill: str = "bill_{k}",
                        paid: str = "paid_{k}") -> dict[str, list[str]]:
    """The monthly columns of :func:`make_credit_card` by family (``status``, ``bill``, ``paid``), most recent
    month first (``k`` = 1 is last month)."""
    return {family: [pattern.format(k=k) for k in range(1, months + 1)]
            for family, pattern in (("status", status), ("bill", bill), ("paid", paid))}


def credit_card_codebook(months: int = 6, status_codes: dict | None = None, **names) -> dict[str, dict]:
    """``{feature: {value: label}}`` of :func:`make_credit_card` with the same arguments: the status codes of every
    status column (with ``1``…``8`` labelled "k month(s) late") and the coded categories."""
    codes = CREDIT_CARD_STATUS_CODES if status_codes is None else dict(status_codes)
    delays = {d: f"{d} month{'s' if d > 1 else ''} late" for d in range(1, 9)}
    book: dict[str, dict] = {c: {**codes, **delays} for c in credit_card_columns(months, **names)["status"]}
    book.update({f: dict(labels) for f, labels in _CARD_CATEGORIES.items()})
    return book


def credit_card_titles(months: int = 6, **names) -> dict[str, str]:
    """``{feature: title}`` of :func:`make_credit_card`: what each column means, in words a board reads
    ("repayment status last month", "amount paid six months ago")."""
    cols = credit_card_columns(months, **names)
    titles = {"credit_limit": "credit limit", "sex": "sex", "education": "education",
              "marital_status": "marital status", "age": "age in years"}
    for k in range(1, months + 1):
        when = _MONTH_WORDS.get(k, f"{k} months ago")
        titles[cols["status"][k - 1]] = f"repayment status {when}"
        titles[cols["bill"][k - 1]] = f"bill amount {when}"
        titles[cols["paid"][k - 1]] = f"amount paid {when}"
    return titles


def make_credit_card(n_samples: int = 4000, months: int = 6, status_codes: dict | None = None,
                     random_state: int | None = 0, **names) -> pd.DataFrame:
    """A generated credit-card default table shaped like the UCI "default of credit card clients" data: special
    codes that sit *on* the number line beside ordinary values, coded categories and history columns.

    * ``credit_limit`` (amount), ``sex``, ``education``, ``marital_status`` (codes ``c1``, ``c2``, …) and ``age``;
    * per month ``k`` = 1 (last month) … ``months``: a repayment status (``status_{k}``) holding a **code** from
      ``status_codes`` (default :data:`CREDIT_CARD_STATUS_CODES`: −2 no consumption, −1 paid in full, 0 revolving
      credit — values *inside* the range of a number, so no heuristic that looks for outliers can tell) or the
      months of delay 1…8; the bill (``bill_{k}``) and the amount paid (``paid_{k}``). Statuses are correlated
      from month to month, as real repayment histories are;
    * ``default``: 1 if the client defaults next month, 0 if not (about a quarter 1), from a noisy score in which
      last month's delay weighs most, older delays less, the codes carry their own effect (never their numeric
      value), and paying a larger share of last month's bill and a higher limit lower the risk — so recourse
      through the amounts exists for people whose status columns are codes or history.

    ``names`` renames the monthly families with patterns (``status="pay_status_m{k}"``, ``bill=…``, ``paid=…``)
    so tests can use a table shaped differently from the default. Deterministic for a given ``random_state``."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    if months < 1:
        raise ValueError(f"months must be at least 1, got {months}")
    codes = sorted(CREDIT_CARD_STATUS_CODES if status_codes is None else status_codes)
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    cols = credit_card_columns(months, **names)
    frame = pd.DataFrame({
        "credit_limit": (np.round(np.exp(rng.normal(11.6, 0.8, n)), -4)).clip(10_000, 800_000).astype(np.int64),
        "sex": rng.choice(np.array(["c1", "c2"], dtype=object), n, p=[0.4, 0.6]),
        "education": rng.choice(np.array(["c1", "c2", "c3", "c4"], dtype=object), n, p=[0.35, 0.47, 0.16, 0.02]),
        "marital_status": rng.choice(np.array(["c1", "c2", "c3"], dtype=object), n, p=[0.45, 0.53, 0.02]),
        "age": rng.integers(21, 76, n).astype(np.int64),
    })
    # a latent repayment habit drives every month's status (months are correlated)
    habit = rng.normal(0, 1, n)
    code_p = np.array([0.15, 0.2, 0.65][: len(codes)] if len(codes) <= 3 else np.full(len(codes), 1 / len(codes)))
    code_p = code_p / code_p.sum()
    status = np.empty((months, n), dtype=np.int64)
    delay = np.zeros((months, n))
    for k in range(months):
        late = rng.random(n) < _sigmoid(-1.6 + 1.1 * habit + rng.normal(0, 0.6, n))
        months_late = np.clip(np.round(rng.gamma(1.3 + np.maximum(habit, 0), 1.0, n)), 1, 8).astype(np.int64)
        status[k] = np.where(late, months_late, rng.choice(np.array(codes, dtype=np.int64), n, p=code_p))
        delay[k] = np.where(late, months_late, 0)
    limit = frame["credit_limit"].to_numpy(np.float64)
    bill = np.round(limit * np.clip(rng.beta(2, 3, (months, n)), 0, 1.2), -1)
    share = np.clip(rng.beta(1.5 - 0.3 * np.tanh(habit), 3, (months, n)), 0, 1)
    paid = np.round(bill * share, -1)
    no_consumption = status == codes[0]
    bill[no_consumption] = 0
    paid[no_consumption] = 0
    for k in range(months):
        frame[cols["status"][k]] = status[k]
        frame[cols["bill"][k]] = bill[k].astype(np.int64)
        frame[cols["paid"][k]] = paid[k].astype(np.int64)
    ratio_1 = np.where(bill[0] > 0, paid[0] / np.maximum(bill[0], 1), 1.0)
    code_effect = {codes[0]: -0.2, codes[-1]: 0.1} if len(codes) > 1 else {codes[0]: 0.0}
    z = (-1.7 + 1.05 * delay[0] + sum(0.35 / (k + 1) * delay[k] for k in range(1, months))
         + np.vectorize(lambda v: code_effect.get(v, 0.0))(status[0])
         - 2.2 * (ratio_1 - 0.3) - 0.7 * (np.log(limit) - 11.6) + 0.004 * (frame["age"].to_numpy() - 35)
         + rng.normal(0, 0.5, n))
    frame[CREDIT_CARD_TARGET] = (z > 0).astype(np.int64)
    return frame


__all__ += ["CREDIT_CARD_STATUS_CODES", "CREDIT_CARD_TARGET", "credit_card_codebook", "credit_card_columns",
            "credit_card_titles", "make_credit_card"]
