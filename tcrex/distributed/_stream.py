"""Row-streaming explanation of Parquet/CSV files, local or behind fsspec URLs (``s3://``, ``memory://``, ...)."""
from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import posixpath
import threading
from collections import OrderedDict

import numpy as np
import pandas as pd

from ..errors import ParameterError, SchemaError, TCRExError
from ..inputs import refuse_nested_values

EXPLAIN_COLUMNS = ("target", "rule", "metarule", "changes", "status", "text")
#: Key of the Parquet metadata of ``explain --verified`` outputs saying what verification used (JSON: reference_rows,
#: not_done, rows_affected).
VERIFICATION_KEY = b"tcrex.verification"
#: What verifying recourse cannot do without reference rows (said by the CLI and written to output metadata).
NO_REFERENCE_NOT_DONE = "no search beyond the rules was done"


@functools.lru_cache(maxsize=8)
def load_rules(text: str):
    """``TCREx.from_json(text)``, cached per process (workers rebuild each explainer once)."""
    from .. import TCREx
    return TCREx.from_json(text)


def file_digest(data: bytes) -> dict:
    """What identifies a file's content: its size in bytes and its SHA-256 (what caches are keyed by and what the
    outputs name, never the path: a file replaced under the same name is another file)."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _read_pinned(path: str, digest: dict | None, what: str) -> tuple[bytes, dict]:
    """The bytes of ``path`` (local or fsspec URL) and their digest; with ``digest`` (the one the run started
    with) a file whose content has changed since is refused: a run uses one version of each input."""
    from ..inputs import read_bounded
    from ..intake import MAX_MODEL_BYTES
    data = read_bounded(path, max(MAX_MODEL_BYTES.values()), what)  # a regular file, at most budget + 1 bytes read
    got = file_digest(data)
    if digest is not None and got != digest:
        raise TCRExError(f"{what} {path} was replaced while the run was going on (it had {digest['bytes']:,} bytes, "
                         f"sha256 {digest['sha256'][:12]}…; now {got['bytes']:,} bytes, sha256 "
                         f"{got['sha256'][:12]}…); run again")
    return data, got


#: Loaded models of this process by content: (size, sha256, file name, process id, threads) -> model. A Dask worker
#: or a long-lived process serves many runs: a model file replaced under the same path is a new key, read again.
_MODELS: OrderedDict = OrderedDict()
_MODELS_KEPT = 4
_MODELS_LOCK = threading.Lock()


def load_model_file(path: str, threads: int | None = None, digest: dict | None = None):
    """The model file at ``path`` (local or an fsspec URL), loaded through :func:`tcrex.intake.load_model` once per
    process and content: the file is read and hashed at every call, and a model already loaded from the same
    bytes is reused (its sandbox worker kept); a forked pool worker never reuses its parent's model, whose sandbox
    worker process belongs to the parent.

    ``threads``: threads the model may use in its sandbox worker; None gives a Dask worker's own thread count
    (its share of the host's cores, ``dask worker --nthreads``), else ``TCREX_MODEL_THREADS`` or 1. ``digest``
    (:func:`file_digest`): the content the run started with; another content is refused. Works in any process,
    daemonic ones included (Dask nanny workers, pool workers): see docs/security.md."""
    return model_file(path, threads, digest)[0]


def model_file(path: str, threads: int | None = None, digest: dict | None = None):
    """:func:`load_model_file` and the digest of the bytes it was loaded from."""
    data, got = _read_pinned(path, digest, "the model file")
    threads = threads if threads is not None else _dask_worker_threads()
    name = posixpath.basename(path)  # the loader reads the format from its extension
    key = (got["bytes"], got["sha256"], name, os.getpid(), threads)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = _load_model(data, name, threads)
            _MODELS[key] = model
            while len(_MODELS) > _MODELS_KEPT:
                _MODELS.popitem(last=False)
        else:
            _MODELS.move_to_end(key)
    return model, got


def load_model_file_soon(path: str, threads: int | None = None) -> None:
    """Start loading the model file at ``path`` in a background thread into the cache :func:`load_model_file`
    reads: in a one-process run the model's sandbox worker then starts, imports and parses the file while this
    process imports the engine, instead of after it. A later :func:`load_model_file` of the same content waits for
    it and reuses the model; a file that fails to load is loaded again there, and refused with its message."""
    from .. import intake  # noqa: F401 - imported in this thread, never by two threads at once
    try:
        data, got = _read_pinned(path, None, "the model file")
    except (OSError, ValueError):
        return  # the run's check reads it again and says what is wrong
    threads = threads if threads is not None else _dask_worker_threads()
    name = posixpath.basename(path)
    key = (got["bytes"], got["sha256"], name, os.getpid(), threads)
    _MODELS_LOCK.acquire()  # held until the model is in the cache: released by the loading thread

    def load():
        try:
            if key not in _MODELS:
                _MODELS[key] = _load_model(data, name, threads)
                while len(_MODELS) > _MODELS_KEPT:
                    _MODELS.popitem(last=False)
        except Exception:  # noqa: BLE001, S110 - reported by the run's own check, which loads the file again
            pass
        finally:
            _MODELS_LOCK.release()

    try:
        threading.Thread(target=load, name="tcrex-model-load", daemon=True).start()
    except BaseException:
        _MODELS_LOCK.release()
        raise


def check_model_file(path: str, threads: int | None = None) -> str:
    """Load the model file at ``path`` as :func:`load_model_file` does (once per process and content: jobs that
    run later in this process reuse it) and return its description."""
    return str(load_model_file(path, threads).description)


def check_run(model_path: str | None = None, threads: int | None = None, reference_rows: str | None = None,
              names=(), out: str | None = None, marker: str | None = None) -> dict:
    """What a worker checks before any input file is read (``tcrex explain``, ``audit`` and ``compare`` run it on
    one of their workers): the model file loads (refused files stop the run with one message naming them), the
    reference rows read, and the output folder ``out`` is the client's (the file ``marker`` the client put there
    is seen) and writable (a file is written beside it, ``marker + ".seen"``).

    Returns the digests (:func:`file_digest`) of the model file (``"model"``) and of each reference file
    (``"reference_rows"``: ``[{"path", "bytes", "sha256"}, ...]``): the jobs are pinned to these contents."""
    found = {}
    if model_path:
        try:
            found["model"] = model_file(model_path, threads)[1]
        except TCRExError as exc:  # the loader's message speaks of the content: say which file it is
            raise type(exc)(f"{model_path}: {exc}") from None
    if reference_rows:
        found["reference_rows"] = reference_files(reference_rows)
        load_reference(reference_rows, tuple(names), found["reference_rows"])
    if out is not None:
        _check_out(out, marker)
    return found


def _check_out(out: str, marker: str | None) -> None:
    import fsspec
    fs, root = fsspec.core.url_to_fs(out)
    if marker is not None and not fs.exists(f"{root.rstrip('/')}/{marker}"):
        raise TCRExError(f"the output folder {out} is not the same folder on the worker (the worker runs in "
                         f"{os.getcwd()} on {_host()}); give a folder or URL every worker and this client share")
    probe = f"{root.rstrip('/')}/{marker or '.tcrex-write-check'}.seen"
    try:
        fs.makedirs(root, exist_ok=True)
        with fs.open(probe, "wb") as fh:
            fh.write(b"")
    except (OSError, ValueError) as exc:
        raise TCRExError(f"the output folder {out} is not writable from the worker ({type(exc).__name__}: "
                         f"{exc})") from None
    if marker is None:
        fs.rm(probe)


def _host() -> str:
    import socket
    return socket.gethostname()


def _dask_worker_threads() -> int | None:
    """The thread count of the Dask worker this runs on (None outside a Dask worker)."""
    try:
        from distributed import get_worker
        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


def _load_model(data: bytes, name: str, threads: int | None):
    from ..intake import SandboxLimits, load_model, sandbox_enabled
    if threads is not None and sandbox_enabled():
        return load_model(data, name, sandbox=SandboxLimits(threads=threads))
    return load_model(data, name)


class FileError(TCRExError):
    """A problem in one input file; the message names the file (and the batch of rows) it came from."""


def located(exc: BaseException, src: str, rows: tuple[int, int] | None = None) -> TCRExError:
    """``exc`` as a :class:`FileError` naming ``src`` and, when given, the rows ``[start, stop)`` of the batch
    (counted from 0 in the file, printed from 1): what a CLI user needs to find the bad input among many files.

    A problem of the run's settings rather than of the file (a :class:`tcrex.errors.ParameterError`: no favourable
    target, a bad option value; a :class:`tcrex.errors.SchemaError`: the rules file) is returned as it is: naming
    the file and its rows would blame them for what no change of the file would fix."""
    if isinstance(exc, (FileError, ParameterError, SchemaError)):
        return exc
    from ..intake import short_error
    what = str(exc) if isinstance(exc, TCRExError) else f"{type(exc).__name__}: {short_error(exc)}"
    where = src if rows is None or rows[1] <= rows[0] else f"{src}, rows {rows[0] + 1:,}-{rows[1]:,}"
    return FileError(f"{where}: {what}")


def check_number_columns(ex, df: pd.DataFrame) -> None:
    """Refuse text where the explainer expects numbers: a numeric feature stored as text (a CSV column with a
    stray word, a Parquet string column) would otherwise be parsed value by value, or fail later, silently."""
    from .. import is_categorical_column
    if len(df) == 0:  # no values (an empty file's columns have no type to speak of)
        return
    names = ex.schema_.names
    bad = [names[i] for i in ex.schema_.numeric if names[i] in df.columns and is_categorical_column(df[names[i]])
           and not pd.api.types.is_bool_dtype(df[names[i]])]  # True/False are read as 1/0
    if bad:
        raise TCRExError(f"column(s) {', '.join(map(repr, bad))} hold text (dtype "
                         f"{', '.join(str(df[c].dtype) for c in bad)}) but the rules treat them as numbers; store "
                         "them as numbers (in a CSV, a single non-numeric value makes pandas read the column as "
                         "text)")


def reference_files(spec: str) -> list[dict]:
    """The digest (:func:`file_digest`, plus ``"path"``) of each file of the reference rows ``spec``."""
    return [{"path": src, **_read_pinned(src, None, "the reference rows")[1]} for src in expand_paths(spec)]


#: Reference rows of this process by content: (names, ((size, sha256), ...)) -> frame
_REFERENCES: OrderedDict = OrderedDict()
_REFERENCES_LOCK = threading.Lock()


def load_reference(spec: str, names: tuple, digests: list[dict] | None = None) -> pd.DataFrame:
    """The reference rows of the search beyond the rules (``counterfactuals(..., reference=)``): every row of the
    Parquet/CSV file(s) ``spec``, the features ``names`` only; read once per process and content (each pool or
    Dask worker reads its own; a file replaced under the same path is read again). ``digests``
    (:func:`reference_files`): the files and contents the run started with; anything else is refused. An explainer
    restored from its JSON, given the rows it was fitted on, verifies exactly as the one that was exported
    (docs/engine.md)."""
    srcs = expand_paths(spec)
    if digests is not None and [d["path"] for d in digests] != srcs:
        raise TCRExError(f"--reference-rows {spec}: the files changed while the run was going on "
                         f"({len(digests)} then, now {len(srcs)}); run again")
    contents = []
    for i, src in enumerate(srcs):
        pinned = None if digests is None else {k: digests[i][k] for k in ("bytes", "sha256")}
        contents.append((src, *_read_pinned(src, pinned, "the reference rows")))
    key = (tuple(names), tuple((d["bytes"], d["sha256"]) for _, _, d in contents))
    with _REFERENCES_LOCK:
        frame = _REFERENCES.get(key)
    if frame is not None:
        return frame
    frames = []
    for src, data, _ in contents:
        try:
            frames.extend(_frames_of(io.BytesIO(data), src, columns=list(names)))
        except Exception as exc:  # noqa: BLE001 - re-raised naming the reference file
            raise located(exc, src, None) from None
    if not frames:
        raise TCRExError(f"--reference-rows {spec}: no rows")
    frame = pd.concat(frames, ignore_index=True)[list(names)]
    with _REFERENCES_LOCK:
        _REFERENCES[key] = frame
        while len(_REFERENCES) > 2:
            _REFERENCES.popitem(last=False)
    return frame


def expand_paths(spec: str) -> list[str]:
    """Files named by a path, glob or fsspec URL (sorted); a directory stands for the files in it."""
    import fsspec
    try:
        fs, _, paths = fsspec.get_fs_token_paths(spec)
    except ImportError as exc:  # fsspec knows the protocol but its extra is not installed (http: aiohttp, s3: s3fs)
        raise FileError(f"{spec}: this kind of address cannot be read by this installation ({exc}); install what it "
                        "names, or copy the files to a local folder") from None
    except (ValueError, TypeError) as exc:  # an unknown protocol or a malformed chain
        raise FileError(f"{spec}: not a path or URL that can be read ({exc}); give a file, folder, glob or an fsspec "
                        "URL such as s3://bucket/folder or simplecache::s3://bucket/file.parquet") from None
    out = []
    for p in paths:
        if fs.isdir(p):
            out += [q for q in fs.ls(p, detail=False) if not fs.isdir(q)]
        else:
            out.append(p)
    if not out:
        raise TCRExError(f"no input files match {spec!r}")
    if "::" in spec:  # a chain (simplecache::s3://…): each file keeps the chain before its own URL
        chain = spec.rsplit("::", 1)[0]
        return sorted(f"{chain}::{fs.unstrip_protocol(p)}" for p in out)
    proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return sorted(p if proto in ("file", "local") else f"{proto}://{p.lstrip('/')}" if proto != "memory"
                  else f"memory://{p.lstrip('/')}" for p in out)


def _explain_inputs(ex, df: pd.DataFrame, y_pred: str | None, model, keep) -> tuple[pd.DataFrame, dict]:
    """The feature columns of ``df`` and the outputs argument (the column ``y_pred`` or ``model``) of an explain
    call, after checking that every column needed is there."""
    names = list(ex.schema_.names)
    _require_columns(df, names + ([y_pred] if y_pred else []) + list(keep))
    refuse_nested_values(df, names)
    check_number_columns(ex, df)
    return df[names], ({"y_pred": df[y_pred].to_numpy()} if y_pred is not None else {"model": model})


def explain_columns(ex, df: pd.DataFrame, *, y_pred: str | None = None, model=None, keep=()) -> pd.DataFrame:
    """``ex.explain`` of the feature columns of ``df``; outputs from the column named ``y_pred`` or ``model``.

    Named for what it takes: a frame with its columns named (``y_pred`` and ``keep`` are column names), unlike the
    engine's ``TCREx.explain(X, y_pred=outputs)`` that takes the outputs themselves."""
    X, outputs = _explain_inputs(ex, df, y_pred, model, keep)
    out = ex.explain(X, **outputs)
    for c in keep:
        out[c] = df[c].to_numpy()
    return out


def _require_columns(df: pd.DataFrame, wanted) -> None:
    missing = [c for c in wanted if c not in df.columns]
    if missing:
        raise TCRExError(f"columns missing from the data: {', '.join(map(str, missing))}")


def _string_columns(schema) -> list[str]:
    import pyarrow as pa
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


def _is_csv(src: str) -> bool:
    return src.lower().endswith(".csv")


def iter_frames(src: str, *, batch_size: int = 262_144, columns=None, dictionary=False):
    """The rows of one Parquet or CSV file (local or fsspec URL) as pandas frames of at most ``batch_size`` rows,
    in file order, each indexed from 0; memory holds one batch at a time.

    ``columns`` reads only those columns (a missing one is reported by name); ``dictionary`` reads Parquet string
    columns dictionary-encoded (pandas categoricals): True for all of them, or a list of column names. CSV is
    parsed by pandas in chunks of ``batch_size`` rows
    (the same parser as ``pandas.read_csv``; each chunk infers its own column types).
    """
    import fsspec
    with fsspec.open(src, "rb") as fh:
        yield from _frames_of(fh, src, batch_size=batch_size, columns=columns, dictionary=dictionary)


def _frames_of(fh, src: str, *, batch_size: int = 262_144, columns=None, dictionary=False):
    """:func:`iter_frames` of the open binary file ``fh`` (``src`` gives its kind and names it in messages)."""
    import pyarrow.parquet as pq
    if _is_csv(src):
        if columns is not None:
            head = pd.read_csv(fh, nrows=0)
            _check_columns(src, head.columns, columns)
            fh.seek(0)
        reader = pd.read_csv(fh, chunksize=batch_size, usecols=None if columns is None else list(columns))
        with reader:
            for chunk in reader:
                yield chunk.reset_index(drop=True)
        return
    schema = pq.read_schema(fh)
    if columns is not None:
        _check_columns(src, schema.names, columns)
    strings = _string_columns(schema)
    if dictionary is not True:
        strings = [c for c in strings if c in set(dictionary or ())]
    pf = pq.ParquetFile(fh, read_dictionary=strings or None)
    for batch in pf.iter_batches(batch_size=batch_size, columns=None if columns is None else list(columns)):
        yield batch.to_pandas()


def _check_columns(src, available, wanted) -> None:
    missing = [c for c in wanted if c not in set(available)]
    if missing:
        raise TCRExError(f"columns missing from {src}: {', '.join(map(str, missing))}")


def column_names(src: str) -> list[str]:
    """The columns of one Parquet or CSV file (local or fsspec URL), from its schema or header; no row is read."""
    import fsspec
    import pyarrow.parquet as pq
    with fsspec.open(src, "rb") as fh:
        if _is_csv(src):
            return [str(c) for c in pd.read_csv(fh, nrows=0).columns]
        return list(pq.read_schema(fh).names)


def count_rows(src: str, batch_size: int = 1_000_000) -> int:
    """Rows of one file: Parquet from its footer, CSV by one streaming pass over its first column."""
    import fsspec
    import pyarrow.parquet as pq
    if not _is_csv(src):
        with fsspec.open(src, "rb") as fh:
            return pq.ParquetFile(fh).metadata.num_rows
    with fsspec.open(src, "rb") as fh:
        with pd.read_csv(fh, chunksize=batch_size, usecols=[0]) as reader:
            return sum(len(c) for c in reader)


def sample_rows(srcs: list[str], n: int, seed: int, *, batch_size: int = 262_144,
                totals: list[int] | None = None, columns=None) -> tuple[pd.DataFrame, int]:
    """A uniform sample of ``n`` rows of all the files (and the total row count), streamed: the same rows, in
    the same order, as ``pandas.concat(all files).sample(n=n, random_state=seed)`` without holding all rows.
    ``columns``: read only these (the rows drawn do not depend on them)."""
    total = sum(count_rows(s) for s in srcs) if totals is None else sum(totals)
    if n >= total:
        raise ValueError(f"the sample ({n:,} rows) is not smaller than the data ({total:,} rows)")
    idx = np.random.RandomState(seed).choice(total, size=n, replace=False)  # pandas' DataFrame.sample draw
    order = np.argsort(idx, kind="stable")
    wanted = idx[order]
    pieces, offset = [], 0
    for src in srcs:
        start = offset
        try:
            for df in iter_frames(src, batch_size=batch_size, columns=columns):
                lo, hi = np.searchsorted(wanted, [offset, offset + len(df)])
                if hi > lo:
                    pieces.append(df.iloc[wanted[lo:hi] - offset])
                offset += len(df)
        except Exception as exc:  # noqa: BLE001 - any failure is re-raised naming the file and rows
            raise located(exc, src, (offset - start, offset - start + batch_size)) from None
    picked = pd.concat(pieces, ignore_index=True)
    return picked.iloc[np.argsort(order, kind="stable")].reset_index(drop=True), total


def explain_columns_arrow(ex, df: pd.DataFrame, *, y_pred: str | None = None, model=None, keep=(), metadata=None,
                          outputs=None):
    """:func:`explain_columns` as a ``pyarrow.Table`` (``TCREx.explain_arrow`` plus the kept columns), without a
    pandas round trip for the explanation columns; ``metadata`` is the pandas schema metadata to attach (so that
    ``pandas.read_parquet`` restores the dtypes of :func:`explain_columns`, e.g. Int64 ids). ``outputs``: the
    model's outputs on these rows when already computed (:func:`start_outputs`)."""
    import pyarrow as pa
    X, args = _explain_inputs(ex, df, y_pred, model, keep)
    outputs = args if outputs is None else {"y_pred": outputs}
    table = ex.explain_arrow(X, **outputs)
    if keep:  # as explain_columns copies them: the column's values (to_numpy), converted as pandas would
        kept = pa.Table.from_pandas(pd.DataFrame({c: df[c].to_numpy() for c in keep}), preserve_index=False,
                                    nthreads=1)
        for c in keep:
            table = table.append_column(kept.schema.field(c), kept.column(c))
    return table.replace_schema_metadata(metadata) if metadata is not None else table


def start_outputs(ex, df: pd.DataFrame, model, keep=()):
    """Start the model on the feature columns of ``df`` and return a function giving its outputs (what
    ``ex.explain(X, model=model)`` would compute): a sandboxed model predicts in its worker process while the
    caller explains the previous batch. Call the function exactly once, before starting another prediction with
    the same model (its worker answers one request at a time)."""
    X, _ = _explain_inputs(ex, df, None, model, keep)
    later = getattr(model, "predict_later", None)
    if later is None:
        y = ex.outputs(X, model=model)
        return lambda: y
    return later(X)


class Overlapped:
    """Batches with the model's outputs, the model predicting batch k+1 while the caller works on batch k.

    ``batches`` yields ``(rows, frame)``; ``start(frame)`` sends the frame to the model and returns a function
    giving its outputs (:func:`start_outputs`, or ``model.predict_later``). Iterating yields ``((rows, frame),
    outputs)``: batch k is yielded once batch k+1 has been sent, so a sandboxed model (its own process) predicts
    while the caller explains or counts — one request at a time, as its worker serves them. :attr:`rows` is the
    batch a failure belongs to (sending, predicting or the caller's work), for :func:`located`. When the caller
    stops early, the answer the model owes is still read (it frees the model's worker)."""

    def __init__(self, batches, start):
        self.batches, self.start = batches, start
        self.rows = None
        self._running = None

    def __iter__(self):
        self._running = self._iterate()
        return self._running

    def close(self) -> None:
        """Stop early (also after a failure in the caller's work): reads the answer the model still owes."""
        if self._running is not None:
            self._running.close()

    def _iterate(self):
        done = None
        for rows, frame in self.batches:
            self.rows = rows
            answer = self.start(frame)
            try:
                if done is not None:
                    self.rows = done[0][0]
                    yield done
            except BaseException:
                try:
                    answer()
                except Exception:  # noqa: BLE001 - the error that stopped the caller is the one to report
                    pass
                raise
            self.rows = rows
            done = ((rows, frame), answer())
        if done is not None:
            self.rows = done[0][0]
            yield done
        self.rows = None


def numbered(frames):
    """``(rows, frame)`` for each frame: rows ``(start, stop)`` counted from 0 in the file."""
    start = 0
    for frame in frames:
        yield (start, start + len(frame)), frame
        start += len(frame)


@functools.lru_cache(maxsize=8)
def _explain_metadata(rules: str) -> dict:
    """pandas' description of :func:`explain_columns`'s explanation columns (JSON), once per explainer."""
    import pyarrow as pa
    ex = load_rules(rules)
    empty = ex.explain(pd.DataFrame({c: [] for c in ex.schema_.names}), y_pred=np.zeros(0))
    return json.loads(pa.Schema.from_pandas(empty, preserve_index=False).metadata[b"pandas"])


def _pandas_metadata(rules: str, df: pd.DataFrame, keep) -> dict:
    """The pandas schema metadata of :func:`explain_columns`'s output (explanation columns, then ``keep`` described
    from a few of their values in ``df``), so ``pandas.read_parquet`` restores its dtypes."""
    import pyarrow as pa
    meta = dict(_explain_metadata(rules))
    if keep:
        head = pd.DataFrame({c: df[c].to_numpy()[:64] for c in keep})
        kept = json.loads(pa.Schema.from_pandas(head, preserve_index=False).metadata[b"pandas"])
        meta["columns"] = meta["columns"] + kept["columns"]
    return {b"pandas": json.dumps(meta).encode()}


def explain_parquet_file(rules: str, src: str, dst: str, *, y_pred: str | None = None, model_path: str | None = None,
                         keep=(), batch_size: int = 262_144, verified: bool = False,
                         model_threads: int | None = None, reference_rows: str | None = None,
                         model_digest: dict | None = None, reference_digests: list[dict] | None = None) -> int:
    """Explain ``src`` (Parquet or CSV) into the Parquet file ``dst`` batch by batch, rows in input order.

    Parquet string columns are read dictionary-encoded; CSV is parsed in chunks of ``batch_size`` rows. The
    explanation columns go from the engine's arrays straight to Arrow (``status`` and ``text`` as dictionary
    arrays); ``pandas.read_parquet`` of the output gives :func:`explain_columns`'s columns and dtypes. Returns the
    number of rows written.

    ``verified=True`` writes instead the verified counterfactual of every row, ``ex.counterfactuals(X,
    model=model, verify=True)`` (:func:`counterfactual_table`: the point's feature columns, ``valid``, ``source``,
    ``recourse``, ``changed``, ``recommended_rule``, ...); it needs ``model_path``. Any failure is a
    :class:`FileError` naming ``src`` and the batch's rows. ``model_threads``: see :func:`load_model_file`.
    ``reference_rows``: file(s) of reference rows for the search beyond the rules (:func:`load_reference`).
    ``model_digest``, ``reference_digests``: the contents the run started with (:func:`check_run`); a file
    replaced since is refused. The output's key-value metadata ``tcrex`` names what was used: the digests of the
    rules, the model file and the reference rows (:func:`provenance`).
    """
    import fsspec
    import pyarrow.parquet as pq

    ex = load_rules(rules)
    keep = list(keep)
    if verified and not model_path:
        raise TCRExError("verified counterfactuals are checked on the model: give the model file")
    n, rows, run = 0, None, None
    n_none = 0  # rows needing recourse left without verified recourse (what reference rows could have changed)
    writer = metadata = None
    try:
        if verified and reference_rows:
            reference_digests = reference_digests or reference_files(reference_rows)
            reference = load_reference(reference_rows, tuple(ex.schema_.names), reference_digests)
        else:
            reference, reference_digests = None, None
        model, model_digest = model_file(model_path, model_threads, model_digest) if model_path else (None, None)
        used = {b"tcrex": json.dumps(provenance(rules, model_path, model_digest, reference_digests)).encode()}
        with fsspec.open(dst, "wb") as fout:
            def write(table):
                nonlocal writer, n
                if writer is None:
                    writer = pq.ParquetWriter(fout, table.schema.with_metadata({**(table.schema.metadata or {}),
                                                                                **used}))
                elif table.schema != writer.schema:  # a CSV chunk inferred another type for a kept column
                    table = _conform(table, writer.schema, src)
                writer.write_table(table)
                n += table.num_rows

            try:
                frames = numbered(iter_frames(src, batch_size=batch_size, dictionary=True))
                if model is not None and not verified:
                    # batch k is explained and written while the model predicts batch k+1 in its sandbox worker
                    run = Overlapped(frames, lambda df: start_outputs(ex, df, model, keep))
                    for (rows, df), outputs in run:
                        if metadata is None:
                            metadata = _pandas_metadata(rules, df, keep)
                        write(explain_columns_arrow(ex, df, model=model, keep=keep, metadata=metadata, outputs=outputs))
                else:
                    for rows, df in frames:
                        if verified:
                            table = counterfactual_table(ex, df, model, keep,
                                                         None if writer is None else writer.schema,
                                                         reference=reference)
                            n_none += _count_none(table)
                            write(table)
                        else:
                            if metadata is None:
                                metadata = _pandas_metadata(rules, df, keep)
                            write(explain_columns_arrow(ex, df, y_pred=y_pred, model=model, keep=keep, metadata=metadata))
                rows = run = None
                if writer is None:  # empty input: still one (empty) output with the right columns
                    empty = pd.DataFrame({c: [] for c in list(ex.schema_.names) + ([y_pred] if y_pred else [])
                                          + keep})
                    table = counterfactual_table(ex, empty, model, keep, reference=reference) if verified else explain_columns_arrow(
                        ex, empty, y_pred=y_pred, model=model, keep=keep,
                        metadata=_pandas_metadata(rules, empty, keep))
                    writer = pq.ParquetWriter(fout, table.schema.with_metadata({**(table.schema.metadata or {}),
                                                                                **used}))
                if verified:
                    writer.add_key_value_metadata({VERIFICATION_KEY: json.dumps(
                        {"reference_rows": reference_rows, "not_done": None if reference_rows else
                         NO_REFERENCE_NOT_DONE, "rows_affected": None if reference_rows else n_none})})
            finally:
                if run is not None:  # stopped by a failure: the model's pending answer is read first
                    run.close()
                if writer is not None:
                    writer.close()
    except BaseException as exc:  # no partial output that would read as a complete, shorter file
        fs, path = fsspec.core.url_to_fs(dst)
        if fs.exists(path):
            fs.rm(path)
        if isinstance(exc, Exception):
            raise located(exc, src, run.rows if run is not None else rows) from None
        raise
    return n


def _count_none(table) -> int:
    """Rows of a :func:`counterfactual_table` that need recourse and have none verified nor a similar case."""
    import pyarrow.compute as pc
    from ..vocabulary import NO_VERIFIED_RECOURSE
    col = table.column("recourse").cast("string")
    return int(pc.sum(pc.equal(col, NO_VERIFIED_RECOURSE)).as_py() or 0)


def provenance(rules: str, model_path: str | None = None, model_digest: dict | None = None,
               reference_digests: list[dict] | None = None) -> dict:
    """What a run used, by content (:func:`file_digest`): the rules JSON, the model file (with its path as
    given) and each file of reference rows. Written into every output (Parquet key-value metadata ``tcrex``, a
    ``"used"`` entry of the JSON outputs), so an output says which model produced it even after the file named
    by the path was replaced."""
    used = {"rules": file_digest(rules.encode())}
    if model_path:
        used["model"] = {"path": model_path, **(model_digest or {})}
    if reference_digests:
        used["reference_rows"] = list(reference_digests)
    return used


def counterfactual_table(ex, df: pd.DataFrame, model, keep=(), schema=None, reference=None):
    """``ex.counterfactuals(X, model=model, verify=True)`` of the feature columns of ``df`` (plus ``keep``) as a
    ``pyarrow.Table`` whose types do not depend on the batch: integer features int64 and other numeric features
    float64 (null where a row has no point), categorical features as text, ``changed`` a list of feature names,
    ``source`` and ``recourse`` dictionary-encoded; columns the engine adds later keep the type of the first
    batch (``schema``)."""
    import pyarrow as pa
    names = list(ex.schema_.names)
    _require_columns(df, names + list(keep))
    check_number_columns(ex, df)
    cf = ex.counterfactuals(df[names], model=model, verify=True, reference=reference)
    clash = [c for c in keep if c in cf.columns]
    if clash:
        raise TCRExError(f"kept column(s) {', '.join(clash)} would overwrite counterfactual columns of the same "
                         "name; keep other columns (an id) and join on them")
    fixed = {}
    for f in ex.schema_.features:
        if f.is_categorical:
            if all(isinstance(c, str) for c in f.categories):
                fixed[f.name] = pa.string()
        else:
            fixed[f.name] = pa.int64() if f.integer else pa.float64()
    fixed.update({"valid": pa.bool_(), "changed": pa.list_(pa.string()), "recommended_rule": pa.int64(),
                  "source": pa.dictionary(pa.int32(), pa.string()),
                  "recourse": pa.dictionary(pa.int32(), pa.string())})
    columns, fields = [], []
    for c in list(cf.columns) + list(keep):
        s = cf[c] if c in cf.columns else df[c]
        want = fixed.get(c)
        if want is None and schema is not None and c in schema.names:
            want = schema.field(c).type
        if c == "changed":
            arr = pa.array([list(t) if isinstance(t, tuple) else None for t in s], type=want)
        elif pa.types.is_dictionary(want or pa.null()):
            arr = pa.array(s.astype(object).where(s.notna(), None).to_numpy(), type=pa.string()).dictionary_encode()
            arr = arr.cast(want)
        else:
            values = s.to_numpy() if not isinstance(s.dtype, pd.CategoricalDtype) else s.astype(object).to_numpy()
            if want is not None and pa.types.is_integer(want) and values.dtype.kind == "f":
                arr = pa.array(values, mask=np.isnan(values)).cast(want)  # NaN: no point for this row
            else:
                arr = pa.array(s.array if want is None else values, from_pandas=True)
                if want is not None and arr.type != want:
                    arr = arr.cast(want)
        columns.append(arr)
        fields.append(pa.field(str(c), arr.type))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _conform(table, schema, src):
    import pyarrow as pa
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        bad = [f.name for f, g in zip(schema, table.schema) if f.type != g.type]
        raise TCRExError(f"{src}: column(s) {', '.join(bad)} change type between chunks of the CSV (e.g. whole "
                         "numbers first, text or decimals later); convert the file to Parquet or make the column's "
                         "values uniform") from None


def audit_frame(ex, df: pd.DataFrame, *, groups: str, y_pred: str | None = None, model=None, target=None,
                reference=None, group_labels: dict | None = None):
    """The audit counts (:func:`tcrex.audit.audit_counts`) of the rows of ``df``: features, the grouping column
    ``groups`` and the outputs from the column ``y_pred`` or ``model``. Groups are named by the codebook's
    labels (``group_labels`` for the column, over the explainer's labels of that feature:
    :func:`tcrex.audit.named_groups`)."""
    from ..audit import audit_counts
    from ..population import named_groups
    names = list(ex.schema_.names)
    _require_columns(df, names + [groups] + ([y_pred] if y_pred else []))
    check_number_columns(ex, df)
    y = df[y_pred].to_numpy() if y_pred else ex.outputs(df[names], model=model)
    X = df.drop(columns=[y_pred]) if y_pred and y_pred != groups and y_pred not in names else df
    return audit_counts(ex, X, named_groups(ex, X, groups, group_labels), y_pred=y, model=model,
                        target=target, reference_rows=reference)


def audit_file(rules: str, src: str, *, groups: str, y_pred: str | None = None, model_path: str | None = None,
               target=None, batch_size: int = 262_144, model_threads: int | None = None,
               reference_rows: str | None = None, model_digest: dict | None = None,
               reference_digests: list[dict] | None = None, group_labels: dict | None = None):
    """The audit counts of one Parquet or CSV file, batch by batch (they add up); only the features, the grouping
    column and the outputs' column are read (string features dictionary-encoded, the grouping column plain, so
    its labels sort as in an in-memory audit). Any failure is a :class:`FileError` naming ``src`` and the rows.
    ``model_digest``, ``reference_digests``: the contents the run started with (:func:`check_run`)."""
    ex = load_rules(rules)
    names = list(ex.schema_.names)
    cols = list(dict.fromkeys(names + [groups] + ([y_pred] if y_pred else [])))
    total, rows, n = None, None, 0
    try:
        reference = load_reference(reference_rows, tuple(names), reference_digests) \
            if reference_rows and model_path else None
        model = load_model_file(model_path, model_threads, model_digest) if model_path else None
        for df in iter_frames(src, batch_size=batch_size, columns=cols, dictionary=[c for c in names if c != groups]):
            rows = (n, n + len(df))
            c = audit_frame(ex, df, groups=groups, y_pred=y_pred, model=model, target=target, reference=reference,
                            group_labels=group_labels)
            total = c if total is None else total + c
            n += len(df)
        rows = None
        if total is None:  # no rows: the counts of an empty frame (an audit's zero)
            total = audit_frame(ex, pd.DataFrame({c: [] for c in cols}), groups=groups, y_pred=y_pred, model=model,
                                target=target, reference=reference, group_labels=group_labels)
    except Exception as exc:  # noqa: BLE001 - any failure is re-raised naming the file and rows
        raise located(exc, src, rows) from None
    return total
