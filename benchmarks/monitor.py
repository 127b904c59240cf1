"""A monitor run on a large population: time against the yardstick, peak memory, store size per run. Not run by the
tests.

    .venv/bin/python benchmarks/monitor.py                          # 1,000,000 people, one process, 2 repeats
    .venv/bin/python benchmarks/monitor.py --people 200000 --dask   # also on a local Dask cluster (2 workers)

Data (``--data``): ``loans`` (``tcrex.datasets.make_loans``, the bundled sample's generator: 9 features, target
"approved") or ``credit`` (``make_credit_card``: 23 features, amounts, coded categories, six months of status codes,
bills and payments; target "no default", education and sex immutable); ``--fit-rows`` rows to fit the rules and the
first model on, ``--people`` other rows followed by the monitor (written as ``--files`` Parquet files). Model v1
is an XGBoost classifier; v2 the same retrained on a bootstrap resample with another seed, its labels flipped for
``--flip`` of the rows (how much of the advice v2 invalidates). Both are XGBoost JSON files, loaded by the monitor
through the model sandbox.

Printed, per repeat (each repeat runs v2 on a fresh copy of the store as it was after the baseline):

* the run's wall time and its parts (reading the store and loading the model, the per-person work, the per-group
  figures, recording), the people per status;
* the yardstick, measured in the same process right after: re-scoring the stored points once (one model call on
  the people and the points of the advice they hold, the model loaded through the same sandbox) plus
  ``counterfactuals`` on the invalidated rows; the ratio run / yardstick (target <= 1.3). A second yardstick adds
  ``counterfactuals`` on every row the run searches (the invalidated, the newly rejected and those who held no
  advice: the work a run cannot skip);
* peak memory of the process tree (this process and its model sandbox workers) during the run, sampled every
  0.1 s, and the bytes the run added to the store (per-person results, the model file).

``--dask``: the same run on a ``distributed.LocalCluster`` of 2 nanny workers of 1 thread each (``--partition-rows``
people per task). The machine's load (``os.getloadavg``) is printed before and after each measurement.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The two generated tables: the bundled sample's loan applications (target "approved"), and the credit-card
#: default table with status codes and history columns (target "no default"): its one broad rule sends most
#: advice beyond the rules, which makes the verified search much slower per row (docs/benchmarks.md).
DATA = {
    "loans": {"categorical": ["employment", "home_ownership", "purpose"], "label": "approved", "target": 1,
              "constraints": {"age": "increase_only", "employment": "immutable"},
              "groups": ["employment", ["employment", "home_ownership"]]},
    "credit": {"categorical": ["sex", "education", "marital_status"], "label": "default", "target": 0,
               "constraints": {"education": "immutable", "sex": "immutable", "marital_status": "immutable",
                               "age": "increase_only"},
               "groups": ["education", ["sex", "education"]]},
}


def load() -> str:
    return "load %.1f %.1f %.1f" % os.getloadavg()


class PeakMemory:
    """Peak resident memory of this process and its children (the model's sandbox workers), sampled."""

    def __init__(self, every=0.1):
        import psutil
        self.proc, self.every, self.peak, self._stop = psutil.Process(), every, 0, threading.Event()

    def _rss(self) -> int:
        import psutil
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def __enter__(self):
        self.base = self._rss()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(self.every)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())


def build(folder: Path, data: str, n_people: int, n_fit: int, flip: float, files: int, seed: int = 7):
    import xgboost as xgb

    from tcrex import TCREx
    from tcrex.datasets import make_credit_card, make_loans
    from tcrex.intake import load_model

    conf = DATA[data]
    t = time.perf_counter()
    df = (make_loans if data == "loans" else make_credit_card)(n_people + n_fit, random_state=seed)
    y = df.pop(conf["label"])
    levels = {c: sorted(df[c].unique()) for c in conf["categorical"]}

    def frame(X):
        Z = X.copy()
        for c in conf["categorical"]:
            Z[c] = pd.Categorical(Z[c].astype(object), categories=levels[c])
        return Z

    def train(X, labels, rs):
        return xgb.XGBClassifier(n_estimators=60, max_depth=5, enable_categorical=True, tree_method="hist",
                                 random_state=rs, n_jobs=2).fit(frame(X), labels)

    fit, people = df.iloc[:n_fit].reset_index(drop=True), df.iloc[n_fit:].reset_index(drop=True)
    yf = y.iloc[:n_fit].reset_index(drop=True)
    train(fit, yf, 0).save_model(str(folder / "v1.json"))
    rng = np.random.default_rng(seed)
    boot = rng.integers(0, n_fit, n_fit)
    y2 = yf.iloc[boot].to_numpy().copy()
    flipped = rng.random(n_fit) < flip
    y2[flipped] = 1 - y2[flipped]
    train(fit.iloc[boot], y2, 1).save_model(str(folder / "v2.json"))
    people.insert(0, "client_id", np.arange(len(people), dtype=np.int64))
    (folder / "people").mkdir(exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(len(people)), files)):
        people.iloc[part].to_parquet(folder / "people" / f"part-{i:02d}.parquet", index=False)
    fit.to_parquet(folder / "fit-rows.parquet", index=False)
    ex = TCREx(rho=0.02, tau=0.9, target=conf["target"], constraints=conf["constraints"]).fit(
        fit, load_model((folder / "v1.json").read_bytes(), "v1.json", sandbox=False))
    (folder / "rules.json").write_text(ex.to_json())
    print(f"data: {data}, {n_people:,} people, {n_fit:,} fit rows, {people.shape[1] - 1} features; "
          f"{len(ex.rules_frame())} rules; built in {time.perf_counter() - t:.0f} s", flush=True)


def store_bytes(folder: Path) -> int:
    """The store's size on disk once its write-ahead log is folded into the database file."""
    import sqlite3
    con = sqlite3.connect(str(folder / "workspaces.sqlite"))
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(f.stat().st_size for f in folder.glob("workspaces.sqlite*"))


def yardstick(folder: Path, statuses: pd.Series):
    """The bare work of a run: one model call on the people and the points they hold, counterfactuals on the
    invalidated rows (and on every row a run searches)."""
    from tcrex import TCREx, conform_dtypes
    from tcrex.intake import SandboxLimits, load_model
    from tcrex.monitor import Monitor

    mon = Monitor(folder / "store-baseline")
    people, fit = mon.population("bench"), mon.reference_rows("bench")
    previous = mon.people("bench", "v1")
    ex = TCREx.from_json((folder / "rules.json").read_text())
    names = list(ex.schema_.names)
    model = load_model((folder / "v2.json").read_bytes(), "v2.json", sandbox=SandboxLimits(threads=os.cpu_count()))
    X = people[names]
    held = previous["verified"].to_numpy(dtype=bool)
    points = conform_dtypes(previous.loc[held, names].reset_index(drop=True), X)
    ex.outputs(X.head(100), model=model)  # the sandbox started, as the run's own check does
    t0 = time.perf_counter()
    ex.outputs(pd.concat([X, points], ignore_index=True), model=model)
    t1 = time.perf_counter()
    inval = (statuses == "invalidated").to_numpy()
    ex.counterfactuals(X[inval], model=model, reference=fit)
    t2 = time.perf_counter()
    searched = statuses.isin(["invalidated", "newly_needing", "gained", "still_none"]).to_numpy()
    rest = searched & ~inval
    ex.counterfactuals(X[rest], model=model, reference=fit) if rest.any() else None
    t3 = time.perf_counter()
    return {"rescore": t1 - t0, "invalidated": t2 - t1, "other_searched": t3 - t2, "n_points": int(held.sum()),
            "n_invalidated": int(inval.sum()), "n_other_searched": int(rest.sum())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=sorted(DATA), default="loans")
    ap.add_argument("--people", type=int, default=1_000_000)
    ap.add_argument("--fit-rows", type=int, default=20_000)
    ap.add_argument("--flip", type=float, default=0.05, help="share of v2's training labels flipped")
    ap.add_argument("--files", type=int, default=4, help="Parquet files the people are written as")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dask", action="store_true")
    ap.add_argument("--partition-rows", type=int, default=250_000)
    ap.add_argument("--keep", help="folder to build in and keep (default: a temporary one)")
    args = ap.parse_args(argv)

    from tcrex.monitor import Monitor

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tcrex-monitor-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{load()}; {os.cpu_count()} cores; folder {folder}", flush=True)
    build(folder, args.data, args.people, args.fit_rows, args.flip, args.files)
    base = folder / "store-baseline"
    shutil.rmtree(base, ignore_errors=True)
    with PeakMemory() as mem:
        t = time.perf_counter()
        first = Monitor(base).init("bench", rules=(folder / "rules.json").read_text(), people=folder / "people",
                                   id_column="client_id", model=folder / "v1.json", version="v1",
                                   groups=DATA[args.data]["groups"], reference_rows=folder / "fit-rows.parquet")
        dt = time.perf_counter() - t
    print(f"baseline: {dt:.1f} s ({ {k: round(v, 1) for k, v in first.seconds.items()} }); peak memory "
          f"{mem.peak / 2**30:.2f} GB; {first.counts['n_needing']:,} need recourse, {first.counts['n_verified']:,} "
          f"verified; store {store_bytes(base) / 2**20:,.0f} MB; {load()}", flush=True)
    modes = [("one process", None)] + ([("dask", "dask")] if args.dask else [])
    for mode, scheduler in modes:
        for rep in range(args.repeat if scheduler is None else 1):
            store = folder / f"store-{mode.replace(' ', '-')}-{rep}"
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(base, store)
            before = store_bytes(store)
            client = cluster = None
            if scheduler:
                import distributed
                cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                   dashboard_address=None)
                client = distributed.Client(cluster)
            print(f"[{mode} {rep + 1}] {load()}", flush=True)
            with PeakMemory() as mem:
                t = time.perf_counter()
                res = Monitor(store).run("bench", model=folder / "v2.json", version="v2", scheduler=client,
                                         partition_rows=args.partition_rows)
                run_s = time.perf_counter() - t
            if client is not None:
                client.close()
                cluster.close()
            c = res.counts
            print(f"  run {run_s:.1f} s; parts { {k: round(v, 1) for k, v in res.seconds.items()} }; peak memory "
                  f"{mem.peak / 2**30:.2f} GB (process tree); store +{(store_bytes(store) - before) / 2**20:,.1f} MB "
                  f"(per-person results {res.people_bytes / 2**20:,.1f} MB); {load()}", flush=True)
            print("  statuses: " + ", ".join(f"{k} {c[k]:,}" for k in ("kept", "invalidated", "gained",
                                                                         "newly_needing", "no_longer_needing",
                                                                         "still_none", "not_needing")), flush=True)
            if scheduler is None:
                statuses = Monitor(store).people("bench", "v2")["status"].astype(str)
                y = yardstick(folder, statuses)
                bare = y["rescore"] + y["invalidated"]
                full = bare + y["other_searched"]
                print(f"  yardstick: re-score {y['n_points']:,} points + {res.n_people:,} people {y['rescore']:.1f} s, "
                      f"counterfactuals on {y['n_invalidated']:,} invalidated {y['invalidated']:.1f} s -> "
                      f"{bare:.1f} s; ratio {run_s / bare:.2f}x. With the {y['n_other_searched']:,} other rows a run "
                      f"searches ({y['other_searched']:.1f} s): {full:.1f} s, ratio {run_s / full:.2f}x; {load()}",
                      flush=True)
            shutil.rmtree(store, ignore_errors=True)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
