"""Rebuild the bundled sample data and model.

Usage (from the repository root)::

    .venv/bin/python sample_data/build.py            # rewrite sample_data/*
    .venv/bin/python sample_data/build.py --out-dir /tmp/x   # write elsewhere

Writes five files:

``loans.csv``
    ``tcrex.datasets.make_loans(n_samples=4000, random_state=0)``.
``loans_model.json``
    An ``xgboost.XGBClassifier`` (50 trees, at most 8 leaves each, ``hist``,
    native categorical support) trained on the CSV, saved in XGBoost's own JSON
    format (no pickle).
``loans_model.meta.json``
    Feature order, the category list of every categorical feature (in the
    order used for training), the target name, the class labels and some
    provenance.
``loans_model_b.json`` and ``loans_model_b.meta.json``
    A second classifier with the same parameters, retrained on a bootstrap
    resample of the CSV (seed ``BOOTSTRAP_SEED``) with another XGBoost seed:
    "the model after retraining", which the dashboard's *Compare models* page
    compares with the first one by default.  ``tcrex.datasets.load_bundled_model`` uses it to turn string
    columns into ``category`` columns with exactly these categories, so the
    model predicts the same whatever order pandas gives the categories (and on
    XGBoost versions older than 3.1, which do not store categories in the
    model).

After writing, the script reloads everything from disk and checks that the
reloaded model predicts exactly like the one in memory; it exits non-zero
otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script: make `tcrex` importable
    sys.path.insert(0, str(REPO_ROOT))

from tcrex.datasets import (  # noqa: E402
    LOANS_CATEGORIES,
    LOANS_CODEBOOK,
    LOANS_CSV,
    LOANS_MODEL,
    LOANS_MODEL_B,
    LOANS_MODEL_B_META,
    LOANS_MODEL_META,
    LOANS_TARGET,
    LOANS_VALUE_LABELS,
    codebook_csv,
    load_bundled_loans,
    load_bundled_model,
    make_loans,
    model_meta_record,
)

N_SAMPLES = 4000
RANDOM_STATE = 0
#: The second bundled model: trained on a bootstrap resample drawn with this seed, XGBoost seeded with it too.
BOOTSTRAP_SEED = 1
XGB_PARAMS = dict(
    n_estimators=50,
    max_leaves=8,
    enable_categorical=True,
    tree_method="hist",
    random_state=0,
)


def to_model_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Features only, categorical columns as ``category`` with the fixed levels."""
    X = frame.drop(columns=[LOANS_TARGET]).copy()
    for col, levels in LOANS_CATEGORIES.items():
        X[col] = pd.Categorical(X[col].astype(object), categories=levels)
    return X


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(out_dir: Path) -> dict:
    import xgboost as xgb  # noqa: PLC0415 - XGBoost (slow to import) only when the model is rebuilt

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / LOANS_CSV
    model_path = out_dir / LOANS_MODEL
    meta_path = out_dir / LOANS_MODEL_META

    # 1. data
    make_loans(n_samples=N_SAMPLES, random_state=RANDOM_STATE).to_csv(csv_path, index=False)
    (out_dir / LOANS_CODEBOOK).write_text(codebook_csv(LOANS_VALUE_LABELS), encoding="utf-8")

    # 2. model, trained on the CSV as read back from disk
    data = load_bundled_loans(csv_path)
    X = to_model_frame(data)
    y = data[LOANS_TARGET].to_numpy()
    clf = xgb.XGBClassifier(**XGB_PARAMS)
    clf.fit(X, y)
    clf.save_model(str(model_path))
    in_memory = clf.predict_proba(X)
    accuracy = float(np.mean(clf.predict(X) == y))

    meta = model_meta_record(
        features=list(X.columns),
        categories=LOANS_CATEGORIES,
        target=LOANS_TARGET,
        classes=[int(c) for c in clf.classes_],
        model_file=LOANS_MODEL,
        data_file=LOANS_CSV,
        data_sha256=sha256(csv_path),
        generator=f"tcrex.datasets.make_loans(n_samples={N_SAMPLES}, random_state={RANDOM_STATE})",
        xgboost_version=xgb.__version__,
        params={k: v for k, v in XGB_PARAMS.items()},
        train_accuracy=round(accuracy, 4),
    )
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    # 2b. the retrained model: same parameters, a bootstrap resample of the rows, another seed
    pick = np.random.default_rng(BOOTSTRAP_SEED).integers(0, len(X), size=len(X))
    clf_b = xgb.XGBClassifier(**{**XGB_PARAMS, "random_state": BOOTSTRAP_SEED})
    clf_b.fit(X.iloc[pick], y[pick])
    model_b_path = out_dir / LOANS_MODEL_B
    clf_b.save_model(str(model_b_path))
    in_memory_b = clf_b.predict_proba(X)
    meta_b = dict(meta, model_file=LOANS_MODEL_B, params={**XGB_PARAMS, "random_state": BOOTSTRAP_SEED},
                  train_accuracy=round(float(np.mean(clf_b.predict(X) == y)), 4),
                  retrained=f"bootstrap resample of the {len(X)} rows (numpy default_rng({BOOTSTRAP_SEED}))",
                  agreement_with_model_a=round(float(np.mean(clf_b.predict(X) == clf.predict(X))), 4))
    (out_dir / LOANS_MODEL_B_META).write_text(json.dumps(meta_b, indent=2) + "\n", encoding="utf-8")

    # 3. verify: everything reloaded from disk must predict exactly the same
    fresh = pd.read_csv(csv_path)  # plain strings, as any user would read it
    X_disk = to_model_frame(fresh)
    plain = xgb.XGBClassifier()
    plain.load_model(str(model_path))
    checks = {
        "plain XGBClassifier, fixed categories": plain.predict_proba(X_disk),
        "load_bundled_model on raw CSV": load_bundled_model(model_path, meta_path).predict_proba(fresh),
    }
    # pandas' own (alphabetical) category order; XGBoost >= 3.1 re-codes it
    if tuple(int(p) for p in xgb.__version__.split(".")[:2]) >= (3, 1):
        alpha = fresh.drop(columns=[LOANS_TARGET]).copy()
        for col in LOANS_CATEGORIES:
            alpha[col] = alpha[col].astype("category")
        checks["plain XGBClassifier, alphabetical categories"] = plain.predict_proba(alpha)
    checks_b = {"load_bundled_model on raw CSV (model B)": (
        load_bundled_model(model_b_path).predict_proba(fresh), in_memory_b)}
    for name, (proba, want) in checks_b.items():
        if not np.array_equal(proba, want):
            raise SystemExit(f"verification failed ({name}): max |diff| = {float(np.max(np.abs(proba - want)))}")
    checks.update({k: v[0] for k, v in checks_b.items()})
    for name, proba in checks.items():
        if name in checks_b:
            continue
        if not np.array_equal(proba, in_memory):
            diff = float(np.max(np.abs(proba - in_memory)))
            raise SystemExit(f"verification failed ({name}): max |diff| = {diff}")

    return {
        "rows": len(data),
        "approved_share": round(float(y.mean()), 4),
        "train_accuracy": round(accuracy, 4),
        "files": {p.name: p.stat().st_size for p in (csv_path, model_path, meta_path, model_b_path,
                                                     out_dir / LOANS_MODEL_B_META, out_dir / LOANS_CODEBOOK)},
        "checks": list(checks),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="where to write the files (default: sample_data/)",
    )
    args = parser.parse_args(argv)
    report = build(args.out_dir)
    print(f"wrote {args.out_dir}")
    for name, size in report["files"].items():
        print(f"  {name:<24} {size / 1024:8.1f} KiB")
    print(
        f"rows={report['rows']} approved={report['approved_share']:.1%} "
        f"train accuracy={report['train_accuracy']:.3f}"
    )
    print("verified (identical probabilities): " + "; ".join(report["checks"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
