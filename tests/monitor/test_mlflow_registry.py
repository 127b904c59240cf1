"""Model versions from an MLflow model registry: a real tracking server (full mlflow, in ``.venv-mlflow``; ``make
mlflow-server``) on loopback with a SQLite backend, models logged and registered by the mlflow client of the
optional extra ``tcrex[mlflow]``, then read by the monitor as ``models:/NAME/VERSION`` and ``models:/NAME@ALIAS``.

The artifacts go through the intake's sandbox and format rules like any file: the XGBoost flavour's JSON and the
scikit-learn flavour's skops file load, the scikit-learn flavour's pickle is refused with a message saying why
(unless the operator allows pickle), and the version's record says where it came from."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from tcrex.intake import SandboxedModel, UnsafeModelError
from tcrex.monitor import Monitor, MonitorError, load_version, model_source

from tests.support.monitor_case import GROUPS, ID, POLICY
from tests.support.servers import answers, serve_on_free_port, stop

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _server_program() -> str | None:
    found = os.environ.get("TCREX_MLFLOW_SERVER") or str(ROOT / ".venv-mlflow" / "bin" / "mlflow")
    return found if os.path.isfile(found) and os.access(found, os.X_OK) else None


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    """The tracking server's URL (MLFLOW_TRACKING_URI set for this module's tests)."""
    pytest.importorskip("mlflow", reason="the mlflow client (tcrex[mlflow]) is not installed")
    program = _server_program()
    if program is None:
        reason = ("no MLflow tracking server: `make mlflow-server` creates .venv-mlflow (or set TCREX_MLFLOW_SERVER "
                  "to an `mlflow` program)")
        if os.environ.get("TCREX_REQUIRE_MLFLOW") == "1":
            pytest.fail(reason + "; TCREX_REQUIRE_MLFLOW=1 forbids skipping")
        pytest.skip(reason)
    d = tmp_path_factory.mktemp("mlflow")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    proc, port = serve_on_free_port(
        lambda port: [program, "server", "--backend-store-uri", f"sqlite:///{d / 'mlflow.db'}",
                      "--artifacts-destination", str(d / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
                      "--workers", "1"],
        d / "server.log", ready=lambda port: answers(f"http://127.0.0.1:{port}/health"), env=env, cwd=str(d),
        limit_s=300)
    url = f"http://127.0.0.1:{port}"
    old = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = url
    try:
        yield url
    finally:
        if old is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = old
        stop(proc)


@pytest.fixture(scope="module")
def registry(tracking, case):
    """Models registered as a team would: the first model and the retrain with the XGBoost flavour (``credit``
    versions 1 and 2, alias ``champion`` on 2), a scikit-learn model with the flavour's default (skops) and one
    saved as a pickle."""
    import mlflow
    import numpy as np
    import xgboost as xgb
    from mlflow.tracking import MlflowClient
    from sklearn.linear_model import LogisticRegression

    for label in ("v1", "v2"):
        model = xgb.XGBClassifier()
        model.load_model(str(case.models[label]))
        with mlflow.start_run():
            mlflow.xgboost.log_model(model, name="model", model_format="json", registered_model_name="credit",
                                     pip_requirements=["xgboost"])
    client = MlflowClient()
    client.set_registered_model_alias("credit", "champion", "2")
    numbers = case.people[[c for c in case.fit_rows.columns if case.fit_rows[c].dtype.kind in "if"]].head(200)
    values = numbers.to_numpy(dtype=float)
    values = (values - values.mean(axis=0)) / np.where(values.std(axis=0) > 0, values.std(axis=0), 1)
    lr = LogisticRegression().fit(values, np.arange(len(numbers)) % 2)
    with mlflow.start_run():
        mlflow.sklearn.log_model(lr, name="model", registered_model_name="plain-skops", pip_requirements=["sklearn"])
    with mlflow.start_run():
        mlflow.sklearn.log_model(lr, name="model", registered_model_name="pickled", serialization_format="cloudpickle",
                                 pip_requirements=["sklearn"])
    return client


def test_registry_versions_and_aliases_load_through_the_sandbox(registry, case, tmp_path):
    one = model_source("models:/credit/1")
    assert one.filename == "model.json" and one.origin["kind"] == "mlflow"
    assert one.origin["version"] == "1" and one.origin["name"] == "credit" and one.origin["flavor"] == "xgboost"
    assert one.origin["run_id"] == registry.get_model_version("credit", "1").run_id
    champion = model_source("models:/credit@champion")
    assert champion.origin["version"] == "2" and champion.origin["alias"] == "champion"
    # the registry's copy is the very booster of the retrain: same predictions as the file it was logged from
    loaded = load_version(champion)
    assert isinstance(loaded, SandboxedModel)
    X = case.people[list(case.fit_rows.columns)].head(300)
    from tests.support.monitor_case import loaded as local
    assert (loaded.predict(X) == local(case.models["v2"]).predict(X)).all()
    skops = load_version(model_source("models:/plain-skops/1"))
    assert isinstance(skops, SandboxedModel) and skops.n_features is not None

    mon = Monitor(tmp_path / "store")
    mon.init("credit", rules=case.rules, people=case.people.head(300), id_column=ID, model="models:/credit/1",
             version="registry-1", groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=200)
    res = mon.run("credit", model="models:/credit@champion", version="champion")
    assert res.version.origin["uri"] == "models:/credit@champion" and res.version.origin["version"] == "2"
    assert res.version.model_sha256 == hashlib.sha256(champion.data).hexdigest()
    # the registry's versions give the same answers as the files they were logged from
    files = Monitor(tmp_path / "files")
    files.init("credit", rules=case.rules, people=case.people.head(300), id_column=ID, model=case.models["v1"],
               version="registry-1", groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=200)
    same = files.run("credit", model=case.models["v2"], version="champion")
    assert res.counts == same.counts
    assert res.to_dict()["groups"] == same.to_dict()["groups"]


def test_a_pickled_artifact_is_refused_with_a_clear_message(registry, monkeypatch):
    monkeypatch.delenv("TCREX_ALLOW_PICKLE", raising=False)
    src = model_source("models:/pickled/1")
    assert src.filename.endswith(".pkl")
    with pytest.raises(UnsafeModelError) as info:
        load_version(src)
    message = str(info.value)
    assert message.startswith("models:/pickled/1 = version 1")
    assert "pickle" in message and "runs whatever code it contains" in message and "skops" in message
    allowed = load_version(src, allow_pickle=True)  # the operator's switch, as for uploads
    assert isinstance(allowed, SandboxedModel)


def test_registry_errors_are_messages(registry):
    with pytest.raises(MonitorError, match="does not give this model version"):
        model_source("models:/credit/99")
    with pytest.raises(MonitorError, match="does not give this model version"):
        model_source("models:/credit@nobody")
    with pytest.raises(MonitorError, match="not an MLflow registry URI"):
        model_source("models:/credit")


def test_the_cli_takes_registry_uris(registry, case, tmp_path):
    import subprocess
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("TCREX_ALLOW_PICKLE", None)
    people = tmp_path / "people.parquet"
    case.people.head(200).to_parquet(people, index=False)
    base = [sys.executable, "-m", "tcrex", "monitor"]
    init = subprocess.run(base + ["init", "--store", str(tmp_path / "s"), "--name", "m", "--rules",
                                  str(case.folder / "rules.json"), "--reference-rows", str(case.reference_file),
                                  "--people", str(people), "--id-column", ID, "--model", "models:/credit/1",
                                  "--version", "one"], capture_output=True, text=True, env=env)
    assert init.returncode == 0, init.stderr
    refused = subprocess.run(base + ["run", "--store", str(tmp_path / "s"), "--name", "m", "--model",
                                     "models:/pickled/1", "--version", "two", "--json", str(tmp_path / "two.json")],
                             capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "error: models:/pickled/1 = version 1" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "two.json").exists()
