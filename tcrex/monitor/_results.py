"""What a monitor returns, as plain data with a versioned JSON form: a model version, one run, the history."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import SchemaError
from ..population import json_records, json_value
from ._alerts import Alert
from ._groups import GROUP_COLUMNS
from ._vocabulary import HISTORY_FORMAT, RUN_FORMAT, STATUSES, VERSION


@dataclass(frozen=True)
class ModelVersion:
    """A registered model version: its ``label``, when it was registered, its model file's SHA-256, the file's
    name and where it came from (``origin``), and what the intake says it is (``description``)."""

    label: str
    seq: int
    registered: float
    model_sha256: str
    filename: str
    origin: dict
    description: str = ""

    @property
    def origin_text(self) -> str:
        o = self.origin or {}
        if o.get("kind") == "mlflow":
            return f"{o.get('uri')} (MLflow model {o.get('name')} version {o.get('version')})"
        if o.get("kind") == "file":
            return str(o.get("path"))
        return str(o.get("text") or o.get("kind") or self.filename)

    def to_dict(self) -> dict:
        return {"label": self.label, "seq": self.seq, "registered": self.registered,
                "model_sha256": self.model_sha256, "filename": self.filename, "origin": dict(self.origin),
                "description": self.description}

    @classmethod
    def from_dict(cls, d: dict) -> "ModelVersion":
        return cls(str(d["label"]), int(d["seq"]), float(d["registered"]), str(d["model_sha256"]),
                   str(d.get("filename") or ""), dict(d.get("origin") or {}), str(d.get("description") or ""))


def _plain(v):
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return json_value(v)


@dataclass
class RunResult:
    """One run of a monitor: a model version registered and every person's advice re-checked on it (the baseline
    is run 0). ``counts``: people per status (:data:`~tcrex.monitor.STATUSES`); ``groups``: per group (everyone
    first) the verified-recourse share with its interval, mean changes and distance, the gap from the reference,
    the change since the previous version and the invalidation rate (``to_frame()``); ``alerts``; ``hashes``:
    what the run used, by SHA-256 (model, people, reference rows, rules, dictionary, parameters); ``packages``:
    the versions of the libraries that computed it."""

    monitor: str
    seq: int
    version: ModelVersion
    previous_version: str | None
    n_people: int
    counts: dict
    groups: pd.DataFrame
    alerts: list
    hashes: dict
    packages: dict
    people_digest: str
    target: str
    references: dict = field(default_factory=dict)
    policy: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    recorded: float | None = None
    people_bytes: int | None = None

    # ------------------------------------------------------------------ figures
    @property
    def everyone(self) -> dict:
        """The whole population's row of :attr:`groups`."""
        return self.groups[self.groups["feature"].isna()].iloc[0].to_dict()

    @property
    def verified_share(self) -> float:
        return float(self.everyone["verified_share"])

    @property
    def invalidation_rate(self) -> float:
        return float(self.everyone["invalidation_rate"])

    @property
    def alerted(self) -> bool:
        return bool(self.alerts)

    def headline(self) -> str:
        c = self.counts
        if self.previous_version is None:
            return (f"Baseline {self.version.label}: {c.get('n_needing', 0):,} of {self.n_people:,} people need "
                    f"recourse; {self.verified_share:.0%} of them hold verified advice.")
        alerts = f"{len(self.alerts)} alert{'s' if len(self.alerts) != 1 else ''}" if self.alerts else "no alert"
        return (f"Version {self.version.label} (after {self.previous_version}): advice kept for {c['kept']:,}, "
                f"invalidated for {c['invalidated']:,}; {c['gained']:,} gained recourse, {c['newly_needing']:,} "
                f"newly need it, {c['no_longer_needing']:,} no longer do; verified recourse "
                f"{self.verified_share:.0%}; {alerts}.")

    def to_frame(self) -> pd.DataFrame:
        """One row per group (everyone first), with the version's label."""
        out = self.groups.copy()
        out.insert(0, "version", self.version.label)
        return out

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict:
        c = self.counts
        return {
            "format": RUN_FORMAT, "format_version": VERSION, "monitor": self.monitor, "seq": self.seq,
            "version": self.version.label, "model_sha256": self.version.model_sha256,
            "model": self.version.to_dict(), "previous_version": self.previous_version,
            "recorded": self.recorded, "target": self.target, "n_people": int(self.n_people),
            "n_needing": int(c.get("n_needing", 0)), "n_verified": int(c.get("n_verified", 0)),
            **{f"n_{s}": int(c.get(s, 0)) for s in STATUSES},
            "verified_share": json_value(self.verified_share), "invalidation_rate": json_value(self.invalidation_rate),
            "headline": self.headline(), "groups": json_records(self.groups[GROUP_COLUMNS]),
            "references": dict(self.references), "alerts": [a.to_dict() for a in self.alerts],
            "policy": dict(self.policy), "hashes": _plain(self.hashes), "packages": dict(self.packages),
            "people_digest": self.people_digest, "people_bytes": self.people_bytes, "seconds": _plain(self.seconds)}

    def to_json(self, indent=None) -> str:
        """Versioned JSON (``format`` ``tcrex-monitor-run``); :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=str)

    @classmethod
    def from_dict(cls, d: dict) -> "RunResult":
        if not isinstance(d, dict) or d.get("format") != RUN_FORMAT:
            raise SchemaError(f"not a monitor run (expected format {RUN_FORMAT!r})")
        if d.get("format_version") != VERSION:
            raise SchemaError(f"monitor run format version {d.get('format_version')!r} is not supported (this tcrex "
                              f"reads version {VERSION})")
        try:
            groups = pd.DataFrame(d["groups"], columns=GROUP_COLUMNS)
            for col in GROUP_COLUMNS:
                if col in ("feature", "value", "group"):
                    groups[col] = groups[col].astype(object).where(groups[col].notna(), None)
                elif col in ("small_group", "is_reference", "gap_clear"):
                    groups[col] = groups[col].astype(bool)
                elif col.startswith("n_"):
                    groups[col] = groups[col].astype(np.int64)
                else:
                    groups[col] = pd.to_numeric(groups[col], errors="coerce").astype(float)
            counts = {s: int(d[f"n_{s}"]) for s in STATUSES}
            counts.update(n_needing=int(d["n_needing"]), n_verified=int(d["n_verified"]))
            return cls(monitor=d["monitor"], seq=int(d["seq"]), version=ModelVersion.from_dict(d["model"]),
                       previous_version=d.get("previous_version"), n_people=int(d["n_people"]), counts=counts,
                       groups=groups, alerts=[Alert.from_dict(a) for a in d.get("alerts") or []],
                       hashes=dict(d.get("hashes") or {}), packages=dict(d.get("packages") or {}),
                       people_digest=str(d["people_digest"]), target=str(d.get("target")),
                       references=dict(d.get("references") or {}), policy=dict(d.get("policy") or {}),
                       seconds=dict(d.get("seconds") or {}), recorded=d.get("recorded"),
                       people_bytes=d.get("people_bytes"))
        except (KeyError, TypeError, ValueError) as exc:
            raise SchemaError(f"monitor run is incomplete or damaged ({type(exc).__name__}: {exc})") from None

    @classmethod
    def from_json(cls, text) -> "RunResult":
        try:
            doc = json.loads(text) if isinstance(text, (str, bytes)) else text
        except ValueError as exc:
            raise SchemaError(f"not a monitor run JSON: {exc}") from None
        return cls.from_dict(doc)


@dataclass
class History:
    """Every run of a monitor, oldest first (the baseline is the first): ``versions`` on a timeline, ``runs``
    with their per-group figures and alerts; ``to_frame()`` one row per (version, group)."""

    monitor: str
    id: str
    created: float
    spec: dict
    runs: list

    @property
    def versions(self) -> list:
        return [r.version for r in self.runs]

    @property
    def last(self) -> RunResult:
        return self.runs[-1]

    def timeline(self) -> pd.DataFrame:
        """One row per version: label, registered (a UTC timestamp), model SHA-256, origin, people per status,
        verified share, invalidation rate, alerts."""
        rows = []
        for r in self.runs:
            e = r.everyone
            rows.append({"seq": r.seq, "version": r.version.label,
                         "registered": pd.Timestamp(r.version.registered, unit="s", tz="UTC"),
                         "model_sha256": r.version.model_sha256, "origin": r.version.origin_text,
                         "previous_version": r.previous_version, "n_people": r.n_people,
                         "n_needing": r.counts.get("n_needing", 0),
                         **{f"n_{s}": int(r.counts.get(s, 0)) for s in STATUSES},
                         "verified_share": e["verified_share"], "ci_low": e["ci_low"], "ci_high": e["ci_high"],
                         "invalidation_rate": e["invalidation_rate"], "n_alerts": len(r.alerts)})
        return pd.DataFrame(rows)

    def to_frame(self) -> pd.DataFrame:
        """One row per (version, group): the run's per-group table with the version's label and sequence."""
        parts = [r.to_frame().assign(seq=r.seq) for r in self.runs]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["version", *GROUP_COLUMNS])

    def alerts(self) -> pd.DataFrame:
        """Every alert of every run, with its version."""
        rows = [{"version": r.version.label, "seq": r.seq, **a.to_dict()} for r in self.runs for a in r.alerts]
        return pd.DataFrame(rows, columns=["version", "seq", "kind", "feature", "value", "group", "before", "after",
                                           "threshold", "ci_low", "ci_high", "message"])

    def to_dict(self) -> dict:
        return {"format": HISTORY_FORMAT, "format_version": VERSION, "monitor": self.monitor, "id": self.id,
                "created": self.created, "spec": _plain(self.spec), "runs": [r.to_dict() for r in self.runs]}

    def to_json(self, indent=None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=str)

    @classmethod
    def from_json(cls, text) -> "History":
        try:
            doc = json.loads(text) if isinstance(text, (str, bytes)) else text
        except ValueError as exc:
            raise SchemaError(f"not a monitor history JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != HISTORY_FORMAT:
            raise SchemaError(f"not a monitor history (expected format {HISTORY_FORMAT!r})")
        return cls(doc["monitor"], doc["id"], float(doc["created"]), dict(doc.get("spec") or {}),
                   [RunResult.from_dict(r) for r in doc["runs"]])


def finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False
