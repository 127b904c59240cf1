"""Recourse monitored across model versions: who keeps, loses and gains verified recourse at every release.

>>> from tcrex.monitor import Monitor
>>> mon = Monitor()                                  # the workspace store (TCREX_STORE / TCREX_STATE_DIR)  # doctest: +SKIP
>>> mon.init("credit", rules=ex, people=clients, id_column="client_id", model="v1.json", version="v1",
...          groups=["sex", ["sex", "education"]])                                                        # doctest: +SKIP
>>> res = mon.run("credit", model="models:/credit@champion", version="2026-12")                           # doctest: +SKIP
>>> res.alerts, res.to_frame(), mon.history("credit").to_frame(), mon.people("credit")                    # doctest: +SKIP

A monitor follows a **population** (people with an id) under fixed **rules** (a T-CREx explainer's JSON, with its
reference rows) across a sequence of **model versions** (label, time, the model file's SHA-256, where it came
from). The baseline is every person's verified advice under the first version; each **run** re-checks the advice
every person holds on the new model (kept / invalidated), searches fresh verified recourse for whoever needs it and
holds none that works (invalidated, newly rejected, none before), notes who no longer needs it, and reports per
group the verified-recourse share, the invalidation rate, the mean changes and distance with bootstrap intervals —
aggregates of the per-person frame computed by their owners (:func:`tcrex.audit.audit` on the run's frame,
:func:`tcrex.compare.compare_from_counts`, :mod:`tcrex.population`'s bootstrap) — and the **alerts** of its
:class:`AlertPolicy`. Runs are immutable records in the workspace store (SQLite or PostgreSQL), written atomically.

The package by concern: ``_vocabulary`` (statuses, alert kinds, columns), ``_people`` (per person, version to
version), ``_groups`` (per group, from the owners), ``_alerts`` (the policy and its sentences), ``_sources`` (model
files, MLflow registry, the intake's sandbox), ``_parallel`` (one process or Dask), ``_records`` (the tables in the
store), ``_results`` (the typed results and their JSON) and ``_monitor`` (:class:`Monitor`). See docs/monitor.md.
"""
from ._alerts import Alert, AlertPolicy
from ._errors import ConcurrentRun, DamagedMonitor, MonitorError, MonitorTooLarge, UnknownMonitor
from ._groups import GROUP_COLUMNS
from ._monitor import Monitor, open_store, read_people
from ._people import advance_frame, baseline_frame
from ._records import MonitorLimits
from ._results import History, ModelVersion, RunResult
from ._sources import MLFLOW_PREFIX, ModelSource, load_version, model_source, parse_registry_uri
from ._vocabulary import (ALERT_KINDS, BASELINE, EVERYONE, GAP_WIDENING, HISTORY_FORMAT, INVALIDATION, PERSON_COLUMNS,
                          RUN_FORMAT, SHARE_DROP, STATUS_TEXT, STATUSES)
from ._vocabulary import VERSION as FORMAT_VERSION

__all__ = ["Monitor", "AlertPolicy", "Alert", "RunResult", "History", "ModelVersion", "ModelSource", "MonitorLimits",
           "model_source", "load_version", "parse_registry_uri", "open_store", "read_people", "baseline_frame",
           "advance_frame", "MonitorError", "UnknownMonitor", "DamagedMonitor", "MonitorTooLarge", "ConcurrentRun",
           # each person's status between two versions (the values of the frames' "status" column), in order
           "STATUSES", "STATUS_TEXT", "BASELINE", "ALERT_KINDS", "SHARE_DROP", "GAP_WIDENING", "INVALIDATION",
           "EVERYONE", "PERSON_COLUMNS", "GROUP_COLUMNS", "MLFLOW_PREFIX", "RUN_FORMAT", "HISTORY_FORMAT",
           "FORMAT_VERSION"]
