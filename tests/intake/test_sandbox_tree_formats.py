"""LightGBM and CatBoost models in the sandbox's worker: loaded and run there like every uploaded format (its limits,
its libraries only), predicting exactly what the model predicts in process; a fault of the library ends the worker,
not the app."""
import numpy as np
import pytest

from tcrex.errors import ModelError
from tcrex.intake import SandboxedModel, SandboxLimits, _sandbox, load_model

from tests.support import builders as b

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")
pytestmark = pytest.mark.slow  # starts sandbox workers: `make test`, not `make test-fast`

FORMATS = [("lightgbm", "text", "model.txt"), ("lightgbm", "json", "dump.json"), ("catboost", "cbm", "model.cbm"),
           ("catboost", "json", "model.json")]


def _mapped_files(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.parametrize("lib,fmt,name", FORMATS)
@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_sandboxed_model_predicts_as_in_process(lib, fmt, name, task):
    make = b.lgb_model if lib == "lightgbm" else b.cb_model
    data, _, X = make(task, fmt=fmt, n_estimators=20)
    here = load_model(data, name, sandbox=False)
    there = load_model(data, name, sandbox=SandboxLimits(memory_gb=2, threads=1))
    try:
        assert isinstance(there, SandboxedModel) and there.kind == lib
        assert there.categorical_features == here.categorical_features == b.TREE_TABLE_CATEGORIES
        assert there.description == here.description and there.classes == here.classes
        assert np.array_equal(there.predict(X), here.predict(X))
        assert np.array_equal(there.predict_proba(X), here.predict_proba(X))
        maps = _mapped_files(there._worker.proc.pid)
        assert f"/{lib}/" in maps
        # LightGBM's scikit-learn wrappers are kept out of a worker started as a program, as XGBoost's are (a
        # worker forked from the dashboard's warm fork server has scikit-learn preloaded, for skops files)
        if lib == "lightgbm" and not _sandbox._fork_server_wanted():
            assert "/sklearn/" not in maps
    finally:
        there.close()


def test_a_crash_of_the_library_ends_only_the_worker(monkeypatch):
    data, m, X = b.lgb_model("binary", n_estimators=10)
    model = load_model(data, "m.txt", sandbox=SandboxLimits(memory_gb=2))
    try:
        want = model.predict(X)
        model._worker.stop()
        model._worker = None
        monkeypatch.setenv("TCREX_SANDBOX_FAULT", "segv")
        with pytest.raises(ModelError, match=r"crashed while predicting \(SIGSEGV\)"):
            model.predict(X)
        monkeypatch.delenv("TCREX_SANDBOX_FAULT")
        assert np.array_equal(model.predict(X), want) and np.array_equal(want, m.predict(X))
    finally:
        model.close()


def test_loading_is_held_to_the_files_memory_budget():
    """A LightGBM text file declaring far more than it holds is refused by its checks in the worker; a model that
    loads but would need more than the worker's limit would be stopped by it (the limit is what the worker got)."""
    from tests.support import hostile_trees as ht

    make, expected = ht.LGB_MUTATIONS["ten-million-tokens"]
    with pytest.raises(ModelError, match=expected):
        load_model(make(), "m.txt", sandbox=SandboxLimits(memory_gb=1))
