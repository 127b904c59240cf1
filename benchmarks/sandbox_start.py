"""Where a sandboxed scikit-learn (skops) model load spends its time: the worker's start, its imports, the load.

Prints, for a small skops model (a 20-tree random forest on 8 features) and a refused 2 KB ``.skops`` file (an
archive naming a type outside the allow-list):

* a bare interpreter start (``python -c pass``) and the worker's imports alone (``python -c "import ..."``,
  the libraries a worker needs before reading a byte), each as a program started from scratch;
* the load in this process (no sandbox: the floor);
* the load in the sandbox the way the CLI does it (a worker program started for the model) and the way the
  dashboard does it (forked from the warm fork server, :func:`tcrex.intake.warm_sandbox`, started before the
  upload), both for the model and for the refused file;

each the median of ``--repeat`` runs, with the ratio to the in-process load, and the load average before and after.
Run: ``PYTHONPATH=. python benchmarks/sandbox_start.py [--repeat 5]``.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile


def _model_bytes() -> bytes:
    import numpy as np
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return sio.dumps(RandomForestClassifier(n_estimators=20, max_depth=5, random_state=0).fit(X, y))


def _refused_bytes() -> bytes:
    """A 2 KB .skops archive whose schema names ``os.system``: refused by the allow-list before anything runs."""
    schema = {"__class__": "system", "__module__": "os", "__loader__": "ObjectNode", "content": {},
              "protocol": 2, "_skops_version": "0.10"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("schema.json", json.dumps(schema) + " " * 1800)
    return buf.getvalue()


def _median(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _program(code: str):
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    from tcrex.intake import load_model, warm_sandbox
    model, refused = _model_bytes(), _refused_bytes()
    print(f"model: {len(model):,} bytes; refused file: {len(refused):,} bytes")

    def load(data, sandbox):
        try:
            m = load_model(data, "m.skops", sandbox=sandbox)
        except Exception as exc:  # noqa: BLE001 - the refused file
            return type(exc).__name__
        close = getattr(m, "close", None)
        if close:
            close()
        return "loaded"

    assert load(model, False) == "loaded" and load(refused, False) != "loaded"
    rows = [("interpreter start (python -c pass)", _median(lambda: _program("pass"), args.repeat)),
            ("worker imports (a fresh program)", _median(lambda: _program(
                "import tcrex.intake._worker, tcrex.intake.models, sklearn.ensemble, skops.io"), args.repeat))]
    floor = _median(lambda: load(model, False), args.repeat)
    rows.append(("load in process (no sandbox)", floor))
    rows.append(("model, sandbox as the CLI (a worker program)", _median(lambda: load(model, None), args.repeat)))
    rows.append(("refused 2 KB, sandbox as the CLI", _median(lambda: load(refused, None), args.repeat)))
    t0 = time.perf_counter()
    warm_sandbox()
    load(model, None)  # the first fork after the warm-up
    rows.append(("warm-up of the fork server + first load (once per app)", time.perf_counter() - t0))
    rows.append(("model, sandbox as the dashboard (forked, warm)", _median(lambda: load(model, None), args.repeat)))
    rows.append(("refused 2 KB, sandbox as the dashboard", _median(lambda: load(refused, None), args.repeat)))
    for what, s in rows:
        print(f"{what:58s} {s:7.2f} s  ({s / floor:6.1f}x the in-process load)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
