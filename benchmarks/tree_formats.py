"""Model formats side by side: XGBoost JSON, LightGBM text, CatBoost .cbm and CatBoost JSON, each a 500-tree model
trained here on the same loans table (text categories as each library's own categorical features).

    .venv/bin/python benchmarks/tree_formats.py                  # 500 trees, 100,000 rows to predict, 3 repeats
    .venv/bin/python benchmarks/tree_formats.py --trees 100 --rows 20000 --verified-rows 300 --repeat 5

Printed per format:
* the file's size, and loading it through ``tcrex.intake.load_model``: in a fresh interpreter in process
  (``sandbox=False``; wall time of the call, and the peak RSS the call added: ``ru_maxrss`` after minus before), and
  in the sandbox (wall time including the worker's start, and the worker's peak RSS, its ``VmHWM``);
* ``predict`` of the rows in process and in the sandbox, alternated repeat by repeat (medians, rows/s, and the ratio
  sandboxed / in-process of the same run); outputs must be identical;
* verified counterfactuals (``TCREx.counterfactuals(rows, model=...)`` with the sandboxed model, as the CLI and the
  dashboard run it) on the same rows for every format: rows/s.
The machine's load (``uptime``) is printed at the start and the end.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcrex import TCREx, datasets  # noqa: E402
from tcrex.intake import load_model  # noqa: E402
from tcrex.vocabulary import recourse_outcome  # noqa: E402

FORMATS = ("xgboost-json", "lightgbm-text", "catboost-cbm", "catboost-json")
NAMES = {"xgboost-json": "model.json", "lightgbm-text": "model.txt", "catboost-cbm": "model.cbm",
         "catboost-json": "model.json"}


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _table(n: int, seed: int):
    X = datasets.make_loans(n, random_state=seed)
    y = X.pop("approved").to_numpy()
    return X, y


def train(fmt: str, X: pd.DataFrame, y, trees: int) -> bytes:
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if fmt == "xgboost-json":
        import xgboost as xgb
        Xc = X.astype({c: "category" for c in cats})
        m = xgb.XGBClassifier(n_estimators=trees, max_depth=6, enable_categorical=True, tree_method="hist",
                              n_jobs=1).fit(Xc, y)
        return bytes(m.get_booster().save_raw("json"))
    if fmt == "lightgbm-text":
        import lightgbm as lgb
        Xc = X.astype({c: "category" for c in cats})
        m = lgb.LGBMClassifier(n_estimators=trees, num_leaves=31, max_depth=6, n_jobs=1, verbose=-1).fit(Xc, y)
        return m.booster_.model_to_string().encode()
    import catboost as cb
    m = cb.CatBoostClassifier(iterations=trees, depth=6, thread_count=1, verbose=0, allow_writing_files=False,
                              cat_features=cats).fit(X, y)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m"
        if fmt == "catboost-json":
            m.save_model(str(path), format="json", pool=cb.Pool(X, cat_features=cats))
        else:
            m.save_model(str(path))
        return path.read_bytes()


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from tcrex.intake import load_model
from tcrex.intake import models, _xgboost, _lightgbm, _catboost  # noqa: F401 - the readers, before the clock
import xgboost, lightgbm, catboost  # noqa: F401 - the libraries too: the figure is the file's, not the imports'
data = open(sys.argv[2], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
load_model(data, sys.argv[3], sandbox=False)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}))
"""


def load_in_process(path: Path, name: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(path), name], capture_output=True, text=True,
                         check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _vm_hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--train-rows", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--verified-rows", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    formats = args.formats.split(",")
    print("load at start:", _uptime())
    X_train, y_train = _table(args.train_rows, 1)
    X_rows, _ = _table(args.rows, 2)
    fit_rows = X_train.iloc[:2000].reset_index(drop=True)
    verified_rows = X_rows.iloc[:args.verified_rows].reset_index(drop=True)
    results = {}
    with tempfile.TemporaryDirectory(prefix="tcrex-bench-formats-") as tmp:
        for fmt in formats:
            t = time.perf_counter()
            data = train(fmt, X_train, y_train, args.trees)
            trained = time.perf_counter() - t
            path = Path(tmp) / NAMES[fmt]
            path.write_bytes(data)
            here_load = load_in_process(path, NAMES[fmt])
            t = time.perf_counter()
            boxed = load_model(data, NAMES[fmt], sandbox=True)
            boxed_load = time.perf_counter() - t
            worker_peak = _vm_hwm_mb(boxed._worker.proc.pid)
            here = load_model(data, NAMES[fmt], sandbox=False)
            want = np.asarray(here.predict(X_rows))
            assert np.array_equal(want, np.asarray(boxed.predict(X_rows)))  # warm-up, and the same outputs
            p_here, p_boxed = [], []
            for _ in range(args.repeat):  # alternated, so both see the same machine load
                t = time.perf_counter()
                here.predict(X_rows)
                p_here.append(time.perf_counter() - t)
                t = time.perf_counter()
                boxed.predict(X_rows)
                p_boxed.append(time.perf_counter() - t)
            ex = TCREx(rho=0.02, tau=0.9).fit(fit_rows, boxed)
            t = time.perf_counter()
            cf = ex.counterfactuals(verified_rows, model=boxed)
            verified_s = time.perf_counter() - t
            worker_peak = max(worker_peak, _vm_hwm_mb(boxed._worker.proc.pid))
            boxed.close()
            r = results[fmt] = {
                "file_mb": len(data) / 2**20, "train_s": trained, "description": here.description,
                "load_in_process_s": here_load["seconds"], "load_in_process_peak_mb": here_load["peak_mb"],
                "load_sandbox_s": boxed_load, "sandbox_worker_peak_mb": worker_peak,
                "predict_in_process_s": statistics.median(p_here), "predict_sandbox_s": statistics.median(p_boxed),
                "verified_rows_per_s": len(verified_rows) / verified_s,
                "verified_share": float((recourse_outcome(cf) == "verified").mean())}
            print(f"\n{fmt}: {r['description']}")
            print(f"  file {r['file_mb']:.2f} MB (trained in {trained:.1f} s)")
            print(f"  load     in process {r['load_in_process_s'] * 1000:8.0f} ms, "
                  f"+{r['load_in_process_peak_mb']:.0f} MB peak RSS | sandboxed {r['load_sandbox_s'] * 1000:8.0f} ms (worker start + load), worker peak "
                  f"{r['sandbox_worker_peak_mb']:.0f} MB")
            ratio = r["predict_sandbox_s"] / r["predict_in_process_s"]
            print(f"  predict  {args.rows:,} rows: in process {r['predict_in_process_s'] * 1000:7.0f} ms "
                  f"({args.rows / r['predict_in_process_s']:,.0f} rows/s) | sandboxed "
                  f"{r['predict_sandbox_s'] * 1000:7.0f} ms ({args.rows / r['predict_sandbox_s']:,.0f} rows/s) | ratio {ratio:.2f}x  (median of "
                  f"{args.repeat}, alternated)")
            print(f"  verified counterfactuals: {r['verified_rows_per_s']:,.1f} rows/s on {len(verified_rows)} rows "
                  f"(sandboxed model; verified share {r['verified_share']:.2f})")
    print("\nload at end:", _uptime())
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
