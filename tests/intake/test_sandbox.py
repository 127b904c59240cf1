"""Uploaded models run in a worker process: a native crash, a hang or a memory bomb becomes a ModelError."""
import numpy as np
import pandas as pd
import pytest

from tcrex.errors import ModelError
from tcrex.intake import SandboxedModel, SandboxLimits, load_model

pytestmark = pytest.mark.slow  # sandboxed workers, crashes and timeouts: `make test`, not `make test-fast`

#: A model that hangs is stopped after this long: small, since the test checks the refusal and its message, not
#: how long it took (the other models get the sandbox's default time limit, so a loaded machine cannot fail them).
HANG_LIMIT_S = 0.5


def _model(monkeypatch, fault=""):
    xgboost = pytest.importorskip("xgboost")
    X = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 3})
    y = (X.a > 20).astype(int)
    booster = xgboost.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y).get_booster()
    data = bytes(booster.save_raw("json"))
    if fault:
        monkeypatch.setenv("TCREX_SANDBOX_FAULT", fault)
    limits = SandboxLimits(memory_gb=2, **({"predict_seconds": HANG_LIMIT_S} if fault == "hang" else {}))
    return load_model(data, "m.json", sandbox=limits), X


def test_sandboxed_model_predicts_like_in_process(monkeypatch):
    m, X = _model(monkeypatch)
    assert isinstance(m, SandboxedModel)
    assert m.predict(X).tolist() == load_model(m._data, "m.json", sandbox=False).predict(X).tolist()


@pytest.mark.parametrize("fault,words", [("segv", "crashed"), ("hang", f"did not answer in {HANG_LIMIT_S:g} s"),
                                         ("memory", "needed more than 2 GB")])
def test_fault_becomes_model_error_and_worker_restarts(monkeypatch, fault, words):
    m, X = _model(monkeypatch, fault)
    with pytest.raises(ModelError, match=words):
        m.predict(X)
    monkeypatch.delenv("TCREX_SANDBOX_FAULT")
    m._worker = None  # next call starts a fresh worker (inherits the now clean environment)
    m.limits = SandboxLimits(memory_gb=2)  # and the default time limit: a healthy model is never timed here
    assert len(m.predict(X)) == len(X)


def test_a_crash_in_the_trial_prediction_is_reported_as_a_fault_not_a_mismatch(monkeypatch):
    from tcrex.intake import ModelFaultError, check_compatibility

    m, X = _model(monkeypatch, "segv")
    with pytest.raises(ModelFaultError, match="crashed while predicting"):
        check_compatibility(m, X)  # not folded into "the model does not match the data"


def _soft_address_limit(pid: int) -> int:
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max address space"):
                return int(line.split()[3])
    raise AssertionError("no address-space line")


def test_loading_is_limited_to_the_files_budget_and_predicting_to_the_full_limit(monkeypatch):
    """While loading, the worker may take the file's memory budget (the larger of 128 MB and 50 x its
    size) plus room for the libraries, not the whole limit; the refusal names that budget. Once loaded, the soft
    limit is raised back so predictions get the full limit."""
    from tcrex.intake._worker import LOAD_HEADROOM

    with pytest.raises(ModelError) as ei:
        _model(monkeypatch, "load-memory")
    text = str(ei.value)
    assert text.startswith("loading the model needed more than 384 MB of memory, the limit for this file: 128 MB "
                           "(the memory budget of a "), text
    assert "plus 256 MB for the model libraries, at most the sandbox's limit (TCREX_SANDBOX_MEMORY_GB)" in text
    monkeypatch.delenv("TCREX_SANDBOX_FAULT")
    m, X = _model(monkeypatch)
    try:
        soft = _soft_address_limit(m._worker.proc.pid)
        # the full limit: 2 GB beyond what the libraries had mapped before loading, far above the 128 MB + 256 MB
        # of loading (what is mapped *now* also holds the model's thread stacks and arenas, so it is not compared)
        assert soft > 2 * 2**30 > 128 * 2**20 + LOAD_HEADROOM
        assert len(m.predict(X)) == len(X)
    finally:
        m.close()


def test_predict_later_answers_in_order_and_frees_the_worker(monkeypatch):
    """The rows are sent at once and the answer read later; the next request waits for it, and a failed
    answer still frees the worker for the next call."""
    m, X = _model(monkeypatch)
    want = m.predict(X)
    answer = m.predict_later(X)
    assert answer().tolist() == want.tolist()
    assert m.predict_later(X.iloc[::-1])().tolist() == want[::-1].tolist()
    monkeypatch.setenv("TCREX_SANDBOX_FAULT", "segv")
    m._worker.stop()
    m._worker = None  # restarted with the fault at the next request
    failing = m.predict_later(X)
    with pytest.raises(ModelError, match="crashed"):
        failing()
    monkeypatch.delenv("TCREX_SANDBOX_FAULT")
    m._worker = None
    assert m.predict(X).tolist() == want.tolist()


def _mapped_files(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


def test_a_started_worker_imports_only_what_its_model_needs(monkeypatch):
    """The worker (a fresh interpreter in batch runs) no longer imports the whole engine and, through
    XGBoost's scikit-learn wrappers, scikit-learn: ~1 s of CPU per worker, paid by every pool and Dask worker."""
    m, X = _model(monkeypatch)
    try:
        assert len(m.predict(X)) == len(X)
        maps = _mapped_files(m._worker.proc.pid)
        assert "/xgboost/" in maps
        assert "/sklearn/" not in maps and "/scipy/stats/" not in maps.replace("\\", "/")
    finally:
        m.close()


def test_a_worker_started_ahead_of_its_model_is_the_one_that_loads_it(monkeypatch):
    """``tcrex explain --model`` starts the worker before it imports pandas and the engine: the model
    loaded next with the same settings runs in that very process, which imported only what the model needs, and
    answers as a worker started for it does; with other settings (thread count) a new worker starts, and the one
    started ahead ends when its pipe is closed."""
    from tcrex.intake import start_model_worker

    m, X = _model(monkeypatch)
    want = m.predict(X).tolist()
    m.close()
    start_model_worker("model.json", threads=1)
    from tcrex.intake import _spawn

    ahead = _spawn._SPARE["popen"]
    again = load_model(m._data, "m.json", sandbox=SandboxLimits(memory_gb=2, threads=1))
    try:
        assert again._worker.proc.pid == ahead.pid and not _spawn._SPARE
        assert again.predict(X).tolist() == want
        maps = _mapped_files(ahead.pid)
        assert "/xgboost/" in maps and "/sklearn/" not in maps
    finally:
        again.close()
    assert ahead.wait(60) == 0
    start_model_worker("model.json", threads=1)
    unused = _spawn._SPARE["popen"]
    other = load_model(m._data, "m.json", sandbox=SandboxLimits(memory_gb=2, threads=2))
    try:
        assert other._worker.proc.pid != unused.pid and other.predict(X).tolist() == want
    finally:
        other.close()
    assert unused.wait(60) == 0  # its pipe closed unused: it ended by itself


def test_the_workers_packages_give_their_names_on_demand(tmp_path):
    """The worker's ``tcrex`` is registered without its ``__init__`` (``_sandbox._BOOT``): a name imports only
    the module that defines it; a name it does not know runs the whole ``__init__`` once, so every name still
    works and means what it means in the app."""
    import subprocess
    import sys

    code = ("import importlib.util, sys\n"
            "for name in ('tcrex', 'tcrex.intake'):\n"
            "    sys.modules[name] = importlib.util.module_from_spec(importlib.util.find_spec(name))\n"
            "from tcrex.intake._worker import import_on_demand\n"
            "import_on_demand(sys.modules['tcrex'], sys.modules['tcrex.intake'])\n"
            "import tcrex\n"
            "from tcrex import as_frame\n"
            "from tcrex.intake import _base\n"
            "assert as_frame.__module__ == 'tcrex._engine.base._data' and tcrex.intake._base is _base\n"
            "assert 'tcrex._engine._explainer' not in sys.modules and 'sklearn' not in sys.modules\n"
            "from tcrex import TCREx\n"
            "assert TCREx.__module__ == 'tcrex._engine._explainer' and 'tcrex.compare' not in sys.modules\n"
            "assert tcrex.__version__ and not hasattr(tcrex, 'rule_stability')\n"
            "print('ok')\n")
    import tcrex
    root = str(__import__("pathlib").Path(tcrex.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": root})
    assert out.stdout.strip() == "ok", out.stderr


def _load_in_forked_child(data: bytes, X: pd.DataFrame) -> list:
    return load_model(data, "m.json", sandbox=SandboxLimits(memory_gb=2)).predict(X).tolist()


def test_a_process_forked_after_the_dashboard_warmed_up_starts_its_own_workers(monkeypatch):
    """The dashboard warms a fork server up (warm_up); a pool worker forked from that process (the CLI's --workers
    in the same interpreter, a test run) inherits the wish but not the fork server, which is its parent's child:
    it used to fail with "ChildProcessError: No child processes". It starts its workers as programs instead."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from tcrex.intake import _sandbox

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork start method on this platform")
    m, X = _model(monkeypatch)
    # the wish is this test's own: later tests of this process start their workers as programs again
    monkeypatch.setattr(_sandbox, "_FORK_SERVER", {"wanted": False, "pid": None})
    _sandbox.warm_up()
    with ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as pool:
        assert pool.submit(_load_in_forked_child, m._data, X).result() == m.predict(X).tolist()
