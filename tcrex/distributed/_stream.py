"""Row-streaming explanation of Parquet/CSV files, local or behind fsspec URLs (``s3://``, ``memory://``, ...)."""
from __future__ import annotations

import functools
import posixpath

import pandas as pd

from ..errors import TCRExError

EXPLAIN_COLUMNS = ("target", "rule", "metarule", "changes", "status", "text")


@functools.lru_cache(maxsize=8)
def load_rules(text: str):
    """``TCREx.from_json(text)``, cached per process (workers rebuild each explainer once)."""
    from .. import TCREx
    return TCREx.from_json(text)


@functools.lru_cache(maxsize=4)
def load_model_file(path: str):
    """The model file at ``path`` (local or an fsspec URL), loaded through :func:`tcrex.intake.load_model` and
    cached per process."""
    import fsspec

    from ..intake import load_model
    with fsspec.open(path, "rb") as fh:
        data = fh.read()
    return load_model(data, posixpath.basename(path))


def expand_paths(spec: str) -> list[str]:
    """Files named by a path, glob or fsspec URL (sorted); a directory stands for the files in it."""
    import fsspec
    fs, _, paths = fsspec.get_fs_token_paths(spec)
    out = []
    for p in paths:
        if fs.isdir(p):
            out += [q for q in fs.ls(p, detail=False) if not fs.isdir(q)]
        else:
            out.append(p)
    if not out:
        raise TCRExError(f"no input files match {spec!r}")
    proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return sorted(p if proto in ("file", "local") else f"{proto}://{p.lstrip('/')}" if proto != "memory"
                  else f"memory://{p.lstrip('/')}" for p in out)


def explain_frame(ex, df: pd.DataFrame, *, y_pred: str | None = None, model=None, keep=()) -> pd.DataFrame:
    """``ex.explain`` of the feature columns of ``df``; outputs from the column ``y_pred`` or ``model``."""
    names = list(ex.schema_.names)
    missing = [c for c in names + ([y_pred] if y_pred else []) + list(keep) if c not in df.columns]
    if missing:
        raise TCRExError(f"columns missing from the data: {', '.join(map(str, missing))}")
    X = df[names]
    if y_pred is not None:
        out = ex.explain(X, y_pred=df[y_pred].to_numpy())
    else:
        out = ex.explain(X, model=model)
    for c in keep:
        out[c] = df[c].to_numpy()
    return out


def _string_columns(schema) -> list[str]:
    import pyarrow as pa
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


def explain_parquet_file(rules: str, src: str, dst: str, *, y_pred: str | None = None, model_path: str | None = None,
                         keep=(), batch_size: int = 262_144) -> int:
    """Explain ``src`` (Parquet or CSV) into the Parquet file ``dst`` batch by batch, rows in input order.

    String columns are read dictionary-encoded. Returns the number of rows written.
    """
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    ex = load_rules(rules)
    model = load_model_file(model_path) if model_path else None
    keep = list(keep)
    n = 0
    writer = None
    with fsspec.open(src, "rb") as fin, fsspec.open(dst, "wb") as fout:
        if src.lower().endswith(".csv"):
            frames = [pd.read_csv(fin)]
            batches = (frames[0].iloc[i:i + batch_size] for i in range(0, max(len(frames[0]), 1), batch_size))
        else:
            pf = pq.ParquetFile(fin, read_dictionary=_string_columns(pq.read_schema(fin)))
            batches = (b.to_pandas() for b in pf.iter_batches(batch_size=batch_size))
        for df in batches:
            out = explain_frame(ex, df.reset_index(drop=True), y_pred=y_pred, model=model, keep=keep)
            table = pa.Table.from_pandas(out, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(fout, table.schema)
            writer.write_table(table)
            n += len(out)
        if writer is None:  # empty input: still one (empty) output with the right columns
            out = explain_frame(ex, pd.DataFrame({c: [] for c in list(ex.schema_.names) + ([y_pred] if y_pred else [])
                                                  + keep}), y_pred=y_pred, model=model, keep=keep)
            writer = pq.ParquetWriter(fout, pa.Table.from_pandas(out, preserve_index=False).schema)
        writer.close()
    return n
