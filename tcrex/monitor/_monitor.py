"""The monitor: a population followed across model versions, each run recorded in the workspace store.

>>> from tcrex.monitor import Monitor
>>> mon = Monitor("~/.local/state/tcrex")                                   # doctest: +SKIP
>>> mon.init("credit", rules=ex, people=clients, id_column="client_id",    # doctest: +SKIP
...          model="models/v1.json", version="v1", groups=["sex", ["sex", "education"]])
>>> res = mon.run("credit", model="models:/credit/4", version="2026-12")   # doctest: +SKIP
>>> res.alerts, res.to_frame(), mon.history("credit").to_frame()           # doctest: +SKIP
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import time
from importlib.metadata import PackageNotFoundError, version as installed_version

import fsspec
import numpy as np
import pandas as pd

from .. import TCREx
from ..compare import check_models
from ..distributed import check_number_columns, expand_paths, file_digest, located
from ..errors import TCRExError
from ..dictionary import MAX_DICTIONARY_BYTES, DataDictionary, read_dictionary
from ..inputs import read_bounded
from ..outputs import atomic_output
from ..population import check_bootstrap_params, favourable_outcome
from ..workspace import WorkspaceStore, default_state_dir
from ._alerts import AlertPolicy, evaluate
from ._errors import MonitorError
from ._groups import figures, grouping_name
from ._parallel import _MODELS, _MODELS_LOCK, advance_part, baseline_part, ensure_order, run_parts, slices_of
from ._people import frame_bytes, from_parquet, table_from, to_parquet
from ._records import MonitorLimits, MonitorRecords, digest_of
from ._results import History, ModelVersion, RunResult
from ._sources import ModelSource, load_version, model_source
from ._vocabulary import PERSON_COLUMNS, STATUSES

#: The libraries whose versions every run records (what computed it).
PACKAGES = ("tcrex", "numpy", "pandas", "pyarrow", "scikit-learn", "xgboost", "onnxruntime", "skops", "dask",
            "distributed", "mlflow-skinny", "mlflow")


def package_versions() -> dict:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = installed_version(name)
        except PackageNotFoundError:
            continue
    return out


def open_store(store=None):
    """A :class:`tcrex.workspace.WorkspaceStore`: the one given, the SQLite folder or file / ``postgresql://`` URL
    named, or (None) the one the environment names, as for workspaces (``TCREX_STORE``, ``TCREX_STATE_DIR``)."""
    if store is None:
        store = os.environ.get("TCREX_STORE") or default_state_dir()
    if isinstance(store, WorkspaceStore):
        return store
    url = os.fspath(store)
    if url.startswith(("postgresql://", "postgres://")):
        # the monitor keeps its blobs in the database; the workspaces' upload folder is only named
        blobs = os.environ.get("TCREX_BLOBS") or os.path.join(default_state_dir(), "blobs")
        return WorkspaceStore(url, blobs=blobs)
    return WorkspaceStore(os.path.abspath(os.path.expanduser(url)))


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode("utf-8")).hexdigest()


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _json_spec(spec):
    """The favourable outcome as JSON holds it (a regression interval as a list)."""
    if isinstance(spec, tuple):
        return list(spec)
    if isinstance(spec, np.generic):
        return spec.item()
    return spec


def _spec_back(spec):
    return tuple(spec) if isinstance(spec, list) and len(spec) == 2 and not all(isinstance(v, str) for v in spec) \
        else spec


class Monitor:
    """Recourse monitored across model versions, in a workspace store (``store``: a
    :class:`tcrex.workspace.WorkspaceStore`, an SQLite folder or file, a ``postgresql://`` URL, or None for the
    store the environment names). See docs/monitor.md."""

    def __init__(self, store=None, *, limits: MonitorLimits | None = None, clock=time.time, progress=None):
        self.store = open_store(store)
        self.records = MonitorRecords(self.store, limits, clock)
        self.clock = clock
        self._say = progress or (lambda msg: None)

    # ================================================================== starting
    def init(self, name: str, *, rules, people, id_column: str, model, version: str, groups=(),
             reference_rows=None, target=None, dictionary=None, class_names=None, policy=None, n_boot: int = 1000,
             confidence: float = 0.95, random_state: int = 0, min_group_size: int = 30,
             allow_pickle: bool | None = None, scheduler=None, registered: float | None = None,
             partition_rows: int | None = None) -> RunResult:
        """Start monitoring ``people`` (a DataFrame, or Parquet/CSV files: a path, glob, directory or fsspec URL)
        under the rules ``rules`` (a fitted :class:`tcrex.TCREx` or its JSON text): their verified advice under
        the first model version, the baseline (run 0).

        ``id_column`` names each person (unique, never missing); ``groups``: the groupings every run reports on
        (column names; a list of names is their intersection); ``reference_rows``: the rows the rules were fitted
        on, for the search beyond the rules and the distances (default: a fitted explainer's own fit rows);
        ``target``: the favourable outcome (default the rules' own); ``dictionary``: the data dictionary whose
        titles and value labels the texts and group names use (a :class:`tcrex.dictionary.DataDictionary`, its file
        in any format ``tcrex fit --dictionary`` reads, or value labels ``{feature: {value: label}}``);
        ``class_names``: ``{class: name}``; ``policy``: an :class:`AlertPolicy` or its dict; ``n_boot``,
        ``confidence``, ``random_state``, ``min_group_size``: the bootstrap of every run, as for the audit.
        ``model``: the first version's model file (path, fsspec URL, ``models:/NAME/VERSION`` or
        ``models:/NAME@ALIAS``, or a :class:`ModelSource`), labelled ``version``. ``scheduler``: a Dask scheduler
        address or ``distributed.Client`` (the people re-checked on its workers, ``partition_rows`` per task)."""
        name = _check_name(name)
        check_bootstrap_params(n_boot, confidence, min_group_size)
        policy = AlertPolicy.from_dict(policy.to_dict() if isinstance(policy, AlertPolicy) else policy)
        t0 = time.perf_counter()
        if isinstance(rules, TCREx):
            ex_mem = rules
            text = rules.to_json()
            if reference_rows is None and rules.has_fit_data:
                reference_rows = rules.fit_rows()
        else:
            text = str(rules)
            ex_mem = None
        ex = _labelled(TCREx.from_json(text), dictionary, class_names)
        rules_text = ex.to_json(effectiveness=getattr(ex, "effectiveness_", None))
        del ex_mem
        ex = TCREx.from_json(rules_text)
        spec, wanted = favourable_outcome(ex, target, needs="a monitor needs", fitted="the rules")
        budget = self.records.limits.monitor_bytes  # a file larger than this could never be stored in the monitor
        X, sources = read_people(people, budget)
        groupings = _groupings(groups)
        _check_people(ex, X, id_column, groupings)
        names = list(ex.schema_.names)
        keep = list(dict.fromkeys([id_column, *names, *[c for g in groupings for c in _columns(g)]]))
        X = X[keep].reset_index(drop=True)
        ref = None
        if reference_rows is not None:
            ref = read_people(reference_rows, budget)[0] if not isinstance(reference_rows, pd.DataFrame) \
                else reference_rows
            missing = [c for c in names if c not in ref.columns]
            if missing:
                raise MonitorError(f"the reference rows lack column(s) {missing[:20]} that the rules explain")
            ref = ref[names].reset_index(drop=True)
        source = model_source(model)
        loaded = self._load(ex, X, source, allow_pickle)
        self._say(f"baseline: {len(X):,} people, model {source.origin_text} (sha256 {source.sha256[:12]}…)")
        t1 = time.perf_counter()
        frame = self._frames(baseline_part, rules_text, ref, X, None, source, _json_spec(spec), str(version),
                             allow_pickle, scheduler, loaded, partition_rows=partition_rows)
        t2 = time.perf_counter()
        params = {"id_column": id_column, "groups": [list(g) if isinstance(g, (list, tuple)) else g
                                                     for g in groupings],
                  "target": _json_spec(spec), "target_text": wanted.describe(ex.class_names or None),
                  "n_boot": int(n_boot), "confidence": float(confidence), "random_state": int(random_state),
                  "min_group_size": int(min_group_size), "policy": policy.to_dict()}
        table, refs, _ = figures(ex, X, frame, _outputs(frame), spec, reference_rows=ref, groupings=groupings,
                                 references={}, previous=None, n_boot=n_boot, confidence=confidence,
                                 random_state=random_state, min_group_size=min_group_size)
        t3 = time.perf_counter()
        people_blob = frame_bytes(X)
        ref_blob = frame_bytes(ref) if ref is not None else None
        spec_doc = {"name": name, "rules": rules_text, "rules_sha256": _sha(rules_text), "features": names,
                    "params": params, "references": refs, "people_sha256": digest_of(people_blob),
                    "reference_rows_sha256": None if ref_blob is None else digest_of(ref_blob),
                    "sources": sources, "n_people": len(X), "dictionary_sha256": _dictionary_hash(ex, dictionary),
                    "task": ex.task_, "created_with": package_versions()}
        result = self._record(name, spec_doc, None, source, loaded, str(version), frame, X, table, [], t0,
                              {"load": t1 - t0, "people": t2 - t1, "groups": t3 - t2}, registered,
                              extra_blobs={"people": people_blob, **({"reference": ref_blob} if ref_blob else {})})
        return result

    # ================================================================== running
    def run(self, name: str, *, model, version: str, allow_pickle: bool | None = None, scheduler=None,
            registered: float | None = None, partition_rows: int | None = None) -> RunResult:
        """Register ``model`` as the next version (labelled ``version``) and re-check every person's advice on it:
        kept / invalidated, fresh verified recourse for whoever needs it and holds none that works, who no longer
        needs it, per group the figures and the alerts. Recorded atomically: a run killed at any moment leaves the
        history as it was. ``scheduler``: a Dask scheduler address or ``distributed.Client`` (``partition_rows``
        people per task)."""
        t0 = time.perf_counter()
        stored = self.records.monitor(name, touch=True)
        spec_doc = stored.spec
        runs = self.records.runs(stored.name)
        if not runs:
            raise MonitorError(f"monitor {stored.name!r} has no baseline run; start it again with init")
        last = runs[-1]
        version = str(version)
        if version in {r["version"] for r in runs}:
            raise MonitorError(f"monitor {stored.name!r} already has a version labelled {version!r}; give the new "
                               "version another label")
        rules_text = spec_doc["rules"]
        ex = TCREx.from_json(rules_text)
        params = spec_doc["params"]
        spec = _spec_back(params["target"])
        X = table_from(self.records.blob(stored.name, spec_doc["people_sha256"]))
        ref = table_from(self.records.blob(stored.name, spec_doc["reference_rows_sha256"])) \
            if spec_doc.get("reference_rows_sha256") else None
        previous = from_parquet(self.records.blob(stored.name, last["people_digest"]))
        previous = previous.drop(columns=[params["id_column"]]).reset_index(drop=True)
        source = model_source(model)
        loaded = self._load(ex, X, source, allow_pickle)
        self._say(f"{stored.name}: version {version} after {last['version']}: {len(X):,} people, model "
                  f"{source.origin_text} (sha256 {source.sha256[:12]}…)")
        t1 = time.perf_counter()
        frame = self._frames(advance_part, rules_text, ref, X, previous, source, params["target"], version,
                             allow_pickle, scheduler, loaded, same_model=source.sha256 == last["model_sha256"],
                             partition_rows=partition_rows)
        t2 = time.perf_counter()
        groupings = _groupings(params["groups"])
        policy = AlertPolicy.from_dict(params["policy"])
        table, _, _ = figures(ex, X, frame, _outputs(frame), spec, reference_rows=ref, groupings=groupings,
                              references=spec_doc.get("references") or {}, previous=previous,
                              n_boot=params["n_boot"], confidence=params["confidence"],
                              random_state=params["random_state"], min_group_size=params["min_group_size"])
        last_result = RunResult.from_dict(last)
        alerts = evaluate(policy, table, last_result.groups, version=version,
                          min_group_size=params["min_group_size"], confidence=params["confidence"],
                          titles=_titles(ex), reference_names=spec_doc.get("references"))
        t3 = time.perf_counter()
        return self._record(stored.name, spec_doc, last, source, loaded, version, frame, X, table, alerts, t0,
                            {"load": t1 - t0, "people": t2 - t1, "groups": t3 - t2}, registered)

    # ================================================================== reading
    def history(self, name: str) -> History:
        """Every run of the monitor, oldest first (each as its stored record: nothing is recomputed)."""
        stored = self.records.monitor(name, touch=True)
        runs = [RunResult.from_dict(r) for r in self.records.runs(stored.name)]
        spec = {k: v for k, v in stored.spec.items() if k != "rules"}
        return History(stored.name, stored.id, stored.created, spec, runs)

    def names(self) -> list[str]:
        return self.records.names()

    def people(self, name: str, version: str | None = None) -> pd.DataFrame:
        """The per-person frame of a run (its version's label; default the last): the id, the point and advice
        under that version (the verified frame's columns) and what happened (:data:`PERSON_COLUMNS`)."""
        stored = self.records.monitor(name)
        runs = self.records.runs(stored.name)
        run = runs[-1] if version is None else next((r for r in runs if r["version"] == str(version)), None)
        if run is None:
            raise MonitorError(f"monitor {stored.name!r} has no version {version!r}; its versions are "
                               f"{[r['version'] for r in runs]}")
        return from_parquet(self.records.blob(stored.name, run["people_digest"]))

    def population(self, name: str) -> pd.DataFrame:
        """The people the monitor follows, as stored at its start (id, features, grouping columns)."""
        stored = self.records.monitor(name)
        return table_from(self.records.blob(stored.name, stored.spec["people_sha256"]))

    def explainer(self, name: str):
        """The monitor's explainer (its rules, restored from the stored JSON, labels included)."""
        return TCREx.from_json(self.records.monitor(name).spec["rules"])

    def reference_rows(self, name: str) -> pd.DataFrame | None:
        stored = self.records.monitor(name)
        digest = stored.spec.get("reference_rows_sha256")
        return table_from(self.records.blob(stored.name, digest)) if digest else None

    def model_of(self, name: str, version: str, *, allow_pickle: bool | None = None):
        """The model of a registered version, loaded from the stored file through the intake's sandbox."""
        stored = self.records.monitor(name)
        v = next((v for v in self.records.versions(stored.name) if v["label"] == str(version)), None)
        if v is None:
            raise MonitorError(f"monitor {stored.name!r} has no version {version!r}")
        data = self.records.blob(stored.name, v["model_sha256"])
        return load_version(ModelSource(data, v["filename"], v["origin"]), allow_pickle=allow_pickle)

    def delete(self, name: str) -> None:
        self.records.delete(name)

    def size_of(self, name: str) -> int:
        """Bytes the monitor's blobs take in the store (people, reference rows, models, per-person results)."""
        return self.records.size_of(self.records.monitor(name).name)

    def write_people(self, name: str, out: str, version: str | None = None) -> list[str]:
        """Write a run's per-person frame into the folder ``out`` (local or fsspec URL), one Parquet file per file
        the people came from (named as ``tcrex explain`` names its outputs), rows in input order; each file appears
        complete or not at all (:func:`tcrex.outputs.atomic_output`). Returns the paths written."""
        stored = self.records.monitor(name)
        frame = self.people(stored.name, version)
        sources = stored.spec.get("sources") or [{"name": "people.parquet", "rows": len(frame)}]
        fs, _, (root,) = fsspec.get_fs_token_paths(out)
        fs.makedirs(root, exist_ok=True)
        written, start = [], 0
        for s in sources:
            part = frame.iloc[start:start + int(s["rows"])]
            start += int(s["rows"])
            dst = f"{out.rstrip('/')}/{s['name']}"
            with atomic_output(dst, "wb") as fh:
                fh.write(to_parquet(part))
            written.append(dst)
        return written

    # ================================================================== internals
    def _load(self, ex, X, source: ModelSource, allow_pickle):
        """The version's model through the intake's sandbox, checked against the rules (features, task, classes)."""
        threads = _cores()
        loaded = load_version(source, allow_pickle=allow_pickle, threads=threads)
        try:
            check_models(ex, X.head(256), loaded)
        except MonitorError:
            raise
        except TCRExError as exc:  # the comparison's checks speak of "model B": say which model
            raise type(exc)(f"{source.origin_text}: {str(exc).replace('model B', 'this model')}") from None
        return loaded

    def _frames(self, fn, rules_text, ref, X, previous, source, spec, label, allow_pickle, scheduler, loaded,
                same_model=False, partition_rows=None):
        features = X[[c for c in X.columns]]
        shared = {"rules": rules_text, "reference": ref, "model_bytes": source.data, "filename": source.filename,
                  "sha256": source.sha256, "spec": spec, "label": label, "allow_pickle": allow_pickle}
        if previous is not None:
            shared["same_model"] = same_model
        if scheduler is None:  # one process: the model already loaded (its sandbox worker started) is the one used
            with _MODELS_LOCK:
                _MODELS[(source.sha256, os.getpid(), _cores())] = loaded
            shared["threads"] = _cores()
            parts = [{"X": features, **({"previous": previous} if previous is not None else {})}]
        else:
            parts = slices_of(features, previous, partition_rows)
        frame = run_parts(fn, {**shared, "spec": _spec_back(spec)}, parts, scheduler, self._say)
        return ensure_order(frame, len(X))

    def _record(self, name, spec_doc, last, source, loaded, label, frame, X, table, alerts, t0, seconds, registered,
                extra_blobs=None) -> RunResult:
        params = spec_doc["params"]
        id_col = params["id_column"]
        stored_frame = frame.copy()
        stored_frame.insert(0, id_col, X[id_col].to_numpy())
        people_blob = to_parquet(stored_frame)
        counts = {s: int((frame["status"].astype(object) == s).sum()) for s in STATUSES}
        counts.update(n_needing=int(frame["needs_recourse"].sum()), n_verified=int(frame["verified"].sum()))
        now = self.clock() if registered is None else float(registered)
        version = ModelVersion(label, 0 if last is None else int(last["seq"]) + 1, now, source.sha256,
                               source.filename, source.origin, str(getattr(loaded, "description", "")))
        hashes = {"model": source.sha256, "people": spec_doc["people_sha256"],
                  "reference_rows": spec_doc.get("reference_rows_sha256"), "rules": spec_doc["rules_sha256"],
                  "dictionary": spec_doc.get("dictionary_sha256"),
                  "parameters": _sha(_canonical(params)), "previous_people": None if last is None else
                  last["people_digest"], "people_results": digest_of(people_blob)}
        seconds = {**seconds, "total": time.perf_counter() - t0}
        result = RunResult(monitor=name, seq=version.seq, version=version,
                           previous_version=None if last is None else last["version"], n_people=len(X),
                           counts=counts, groups=table, alerts=list(alerts), hashes=hashes,
                           packages=package_versions(), people_digest=digest_of(people_blob),
                           target=str(params.get("target_text")), references=dict(spec_doc.get("references") or {}),
                           policy=dict(params["policy"]), seconds=seconds, recorded=now,
                           people_bytes=len(people_blob))
        record = result.to_dict()
        blobs = {"model": source.data, "people_results": people_blob, **(extra_blobs or {})}
        self._say(f"recording the run ({len(people_blob) / 2**20:,.1f} MB of per-person results)")
        if last is None:
            self.records.create(name, spec_doc, version.to_dict(), record, blobs)
        else:
            self.records.append(name, int(last["seq"]), version.to_dict(), record, blobs)
        return result


# ====================================================================================================== helpers
def _check_name(name) -> str:
    text = str(name).strip()
    if not text or len(text) > 200 or any(ord(c) < 32 for c in text):
        raise MonitorError(f"a monitor's name must be 1-200 printable characters, got {name!r}")
    return text


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _groupings(groups) -> list:
    """The groupings as given (a column name, or a list of names: their intersection), checked for shape."""
    if groups is None:
        return []
    if isinstance(groups, str):
        groups = [groups]
    out = []
    for g in groups:
        if isinstance(g, str):
            out.append(g)
        elif isinstance(g, (list, tuple)) and g and all(isinstance(c, str) for c in g):
            out.append(g[0] if len(g) == 1 else list(g))
        else:
            raise MonitorError(f"a grouping is a column name or a list of column names (an intersection), got {g!r}")
    names = [grouping_name(g) for g in out]
    if len(set(names)) != len(names):
        raise MonitorError(f"a grouping is given twice: {names}")
    return out


def _columns(g) -> list:
    return list(g) if isinstance(g, (list, tuple)) else [g]


def _check_people(ex, X: pd.DataFrame, id_column: str, groupings) -> None:
    if id_column not in X.columns:
        raise MonitorError(f"the people have no column {id_column!r} (the id column); their columns are "
                           f"{list(X.columns)[:30]}")
    ids = X[id_column]
    if ids.isna().any():
        raise MonitorError(f"the id column {id_column!r} is missing for {int(ids.isna().sum()):,} people; every person "
                           "needs an id")
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].iloc[0]
        raise MonitorError(f"the id column {id_column!r} holds {int(ids.duplicated().sum()):,} repeated id(s) (e.g. "
                           f"{dup!r}); every person needs an id of their own")
    missing = [n for n in ex.schema_.names if n not in X.columns]
    if missing:
        raise MonitorError(f"the people lack column(s) {missing[:20]} that the rules explain")
    absent = [c for g in groupings for c in _columns(g) if c not in X.columns]
    if absent:
        raise MonitorError(f"the grouping column(s) {absent} are not columns of the people")
    if len(X) == 0:
        raise MonitorError("the people table is empty")
    check_number_columns(ex, X)


def read_people(spec, budget: int | None = None) -> tuple[pd.DataFrame, list]:
    """A table of people: a DataFrame as it is, or every row of the Parquet/CSV file(s) ``spec`` (a path, glob,
    directory or fsspec URL; rows in file order, files sorted), with each file's name, rows and SHA-256.
    ``budget``: the most bytes of all files together (default: one monitor's blob budget, which the people must fit
    in to be stored); each file is read no further than what is left of it + 1 byte, and only a regular file."""
    if isinstance(spec, pd.DataFrame):
        return spec.reset_index(drop=True), [{"name": "people.parquet", "rows": len(spec)}]
    left = MonitorLimits.from_env().monitor_bytes if budget is None else int(budget)
    frames, sources = [], []
    srcs = expand_paths(os.fspath(spec))
    for src in srcs:
        data = read_bounded(src, max(left, 0), "the people file",
                            limit_hint="the people and their results must fit in one monitor's budget: raise "
                                       "TCREX_MONITOR_MAX_MB or follow fewer people per monitor")
        left -= len(data)
        try:
            frame = pd.read_csv(io.BytesIO(data)) if src.lower().endswith(".csv") else \
                pd.read_parquet(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - a reader's error, with the file it came from
            raise located(exc, src) from None
        frames.append(frame)
        base = os.path.splitext(os.path.basename(src.rstrip("/")))[0] + ".parquet"
        sources.append({"name": base, "path": src, "rows": len(frame), **file_digest(data)})
    names = [s["name"] for s in sources]
    if len(set(names)) != len(names):
        raise MonitorError(f"several people files share a name ({names}); rename them so each person's results can "
                           "be written back beside a file of their own")
    return pd.concat(frames, ignore_index=True), sources


def _labelled(ex, dictionary, class_names):
    """The explainer with the dictionary's value labels and the class names in force."""
    if dictionary is not None:
        if isinstance(dictionary, dict):
            ex = ex.update(value_labels=dictionary)
        else:
            ex = ex.update(dictionary=_dictionary_of(dictionary))
    if class_names:
        ex = ex.update(class_names=dict(class_names))
    return ex


def _dictionary_hash(ex, dictionary) -> str:
    """SHA-256 of every label the explainer holds (value labels, class names, a dictionary when it has one), plus
    the dictionary file's own bytes when one was given."""
    held = {"value_labels": {str(k): {str(a): str(b) for a, b in v.items()} for k, v in
                             (ex.schema_.value_labels or {}).items()},
            "class_names": {str(k): str(v) for k, v in (ex.class_names or {}).items()},
            "dictionary": getattr(ex, "dictionary", None)}
    text = _canonical(held)
    if dictionary is not None and not isinstance(dictionary, (dict, DataDictionary)):
        text += _sha(_dictionary_bytes(dictionary))
    return _sha(text)


def _dictionary_bytes(path) -> bytes:
    """The dictionary file's bytes: a regular file, read no further than the dictionary budget + 1 byte."""
    return read_bounded(os.fspath(path), MAX_DICTIONARY_BYTES, "the data dictionary")


def _dictionary_of(dictionary) -> DataDictionary:
    """A :class:`tcrex.dictionary.DataDictionary` as given, or read from its file (the codebook CSV/JSON and every
    dictionary format :func:`tcrex.dictionary.read_dictionary` reads), the same reader as ``tcrex fit
    --dictionary``."""
    if isinstance(dictionary, DataDictionary):
        return dictionary
    return read_dictionary(_dictionary_bytes(dictionary), os.path.basename(os.fspath(dictionary)))


def _titles(ex) -> dict:
    """Feature titles from a data dictionary, when the explainer holds one (else none: names are shown)."""
    titles = getattr(ex, "feature_titles", None)
    return dict(titles) if isinstance(titles, dict) else {}


def _outputs(frame: pd.DataFrame) -> np.ndarray:
    return np.asarray(frame["person_output"].tolist())


__all__ = ["Monitor", "open_store", "read_people", "PERSON_COLUMNS"]
