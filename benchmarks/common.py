"""Shared helpers of the benchmarks: dataset discovery and loading, the 10-fold CV, the XGBoost model, timing.

The datasets are never copied into the project: they are read from ``../shared/datasets`` (relative to the
repository root) or from any folder of CSVs given on the command line, in the same format (header row, last
column ``target``, categorical columns as strings).
"""
from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "datasets"
RESULTS = ROOT / "benchmarks" / "results"
SEED = 0
N_FOLDS = 10

if str(ROOT) not in sys.path:  # make `import tcrex` work when a benchmark is run as a script
    sys.path.insert(0, str(ROOT))


@dataclass
class Dataset:
    name: str
    X: pd.DataFrame  # categorical columns as pandas "category" with the categories of the whole file
    y: np.ndarray
    categorical: list

    @property
    def shape(self) -> str:
        return f"{len(self.X):,} rows x {self.X.shape[1]} features ({len(self.categorical)} categorical)"


def dataset_paths(folders=(), names=None) -> list[Path]:
    """CSV files of ../shared/datasets plus every CSV in ``folders``; ``names`` filters by file stem."""
    paths = []
    for folder in ([SHARED_DATA] if SHARED_DATA.is_dir() else []) + [Path(f) for f in folders]:
        if not folder.is_dir():
            raise SystemExit(f"{folder} is not a folder of CSV files")
        paths.extend(sorted(folder.glob("*.csv")))
    seen: set = set()  # ../shared/datasets named again on the command line: each file once
    paths = [p for p in paths if not (p.resolve() in seen or seen.add(p.resolve()))]
    if names:
        wanted = {n.lower() for n in names}
        unknown = wanted - {p.stem.lower() for p in paths}
        if unknown:
            raise SystemExit(f"unknown dataset(s) {sorted(unknown)}; found {[p.stem for p in paths]}")
        paths = [p for p in paths if p.stem.lower() in wanted]
    if not paths:
        raise SystemExit(f"no datasets: {SHARED_DATA} is absent and no folder of CSVs was given")
    return paths


def load(path: Path) -> Dataset:
    df = pd.read_csv(path, encoding="utf-8-sig")
    if df.columns[-1] != "target":
        raise SystemExit(f"{path}: the last column must be 'target', got {df.columns[-1]!r}")
    X = df.iloc[:, :-1]
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    # one CategoricalDtype per column for the whole file, so every fold (and XGBoost) sees the same codes
    X = X.astype({c: pd.CategoricalDtype(sorted(X[c].astype(str).unique())) for c in cats})
    return Dataset(path.stem, X, df["target"].to_numpy(), cats)


def folds(n_rows: int, n_folds: int = N_FOLDS, seed: int = SEED):
    """(fold, train index, test index) of a shuffled KFold with a fixed seed."""
    for k, (tr, te) in enumerate(KFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.arange(n_rows))):
        yield k, tr, te


def train_model(X: pd.DataFrame, y: np.ndarray, seed: int = SEED):
    """The paper's black box: XGBoost with n_estimators=50, max_leaves=8, native categoricals, hist trees."""
    from xgboost import XGBClassifier
    return XGBClassifier(n_estimators=50, max_leaves=8, enable_categorical=True, tree_method="hist",
                         random_state=seed, n_jobs=os.cpu_count() or 1).fit(X, y)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2 ** 20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    import numpy
    import sklearn
    import xgboost
    load = ""
    if hasattr(os, "getloadavg"):
        load = "; load average now {:.1f} {:.1f} {:.1f} (other jobs share the machine)".format(*os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} cores{mem}; Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"pandas {pd.__version__}, scikit-learn {sklearn.__version__}, xgboost {xgboost.__version__}{load}")


def results_dir() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS


def save_figures(figures: dict, png: bool = True) -> list[Path]:
    """Write each figure as ``results/<stem>.html`` and, when kaleido renders with a local Chrome/Chromium (it
    never downloads one here), as ``<stem>.png`` too. Returns the paths written."""
    out = results_dir()
    paths = []
    for stem, fig in figures.items():
        fig.write_html(out / f"{stem}.html", include_plotlyjs="cdn")
        paths.append(out / f"{stem}.html")
    if png and figures:
        try:
            import plotly.io as pio
            figs = list(figures.values())
            pio.write_images(figs, [out / f"{stem}.png" for stem in figures],
                             width=[f.layout.width or 1100 for f in figs],
                             height=[f.layout.height or 650 for f in figs], scale=1.25)
            paths += [out / f"{stem}.png" for stem in figures]
        except Exception as exc:  # noqa: BLE001 - kaleido missing, or no local browser for it: HTML only
            print(f"  PNG skipped ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); HTML only")
    return paths


def fold_models(ds: Dataset, n_folds: int = N_FOLDS, seed: int = SEED, cache: bool = True):
    """Per fold: (fold, train index, test index, model, outputs on train, outputs on test, training seconds).

    Models are cached under results/cache (keyed by the data, fold and library versions) so that the
    benchmarks do not retrain XGBoost on every run; delete the folder to retrain.
    """
    import hashlib
    import pickle

    import xgboost
    digest = hashlib.sha1(pd.util.hash_pandas_object(ds.X, index=False).to_numpy().tobytes()
                          + ds.y.tobytes()).hexdigest()[:12]
    cache_dir = results_dir() / "cache"
    for k, tr, te in folds(len(ds.X), n_folds, seed):
        path = cache_dir / f"{ds.name}-{digest}-k{n_folds}-s{seed}-f{k}-xgb{xgboost.__version__}.pkl"
        if cache and path.exists():
            with open(path, "rb") as fh:
                model, ytr, yte, secs = pickle.load(fh)
        else:
            t = time.perf_counter()
            model = train_model(ds.X.iloc[tr], ds.y[tr], seed)
            secs = time.perf_counter() - t
            ytr, yte = model.predict(ds.X.iloc[tr]), model.predict(ds.X.iloc[te])
            if cache:
                cache_dir.mkdir(parents=True, exist_ok=True)
                with open(path, "wb") as fh:
                    pickle.dump((model, ytr, yte, secs), fh)
        yield k, tr, te, model, ytr, yte, secs


def dataset_arguments(parser) -> None:
    parser.add_argument("folders", nargs="*", type=Path,
                        help="extra folders of CSV datasets (header row, last column 'target'); "
                             f"{SHARED_DATA} is always included when present")
    parser.add_argument("--datasets", nargs="+", metavar="NAME", help="only these datasets (file stems)")


def md_table(df: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub-markdown table (no extra dependency); floats to ``digits`` significant digits."""
    def fmt(v):
        if isinstance(v, (float, np.floating)):
            if np.isnan(v):
                return ""
            return f"{v:.{digits}g}" if abs(v) < 10 ** digits else f"{v:.0f}"
        return str(v)
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" if df[c].dtype == object else "---:" for c in df.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])
