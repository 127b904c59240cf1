"""Per-session memory accounting, budget and least-recently-used eviction (tcrex/ui/state/memory.py)."""

from __future__ import annotations

import numpy as np

from tcrex.ui.state import caching, memory, session

from tests.support.apptest_kit import apply_params, last_result, new_app


def _state(n: int, mb: int) -> dict:
    state: dict = {}
    results = caching.session_lru("results", state)
    for i in range(n):
        results[f"k{i}"] = {"explanations": np.zeros(mb * memory.MB // 8)}
    session.uploads(state)["data"] = ("d", "x.csv", b"x" * memory.MB)
    return state


def test_usage_counts_uploads_and_fits():
    usage = memory.session_usage(_state(3, 2))
    assert usage["uploads"] >= memory.MB and usage["fits"] >= 6 * memory.MB


def test_budget_drops_least_recently_used_fits_first_and_keeps_the_active_one():
    state = _state(4, 2)
    results = caching.session_lru("results", state)
    results.lookup("k0")  # k0 used last: k1 is now the oldest
    session.set_current_fit(type("R", (), {"key": "k1", "fit_key": "-"})(), state)  # but k1 is the active fit
    dropped = memory.enforce_budget(state, budget=int(5.5 * memory.MB))
    assert list(results) == ["k1", "k0"]  # k2, k3 dropped (oldest not active), then within budget
    assert len(dropped) == 2 and all("fit" in d for d in dropped)
    assert sum(memory.session_usage(state).values()) <= 5.5 * memory.MB


def test_within_budget_nothing_is_dropped():
    state = _state(2, 1)
    assert memory.enforce_budget(state, budget=100 * memory.MB) == []
    assert len(caching.session_lru("results", state)) == 2


def test_the_app_evicts_old_fits_over_budget_and_tells_the_user(monkeypatch):
    monkeypatch.setenv(memory.BUDGET_ENV, "0.05")  # 50 KB: every private fit is over budget
    at = new_app()
    for tau in (0.8, 0.85, 0.7):
        apply_params(at, tau=tau)
    at.run()
    results = session.caches(at.session_state)["results"]
    assert last_result(at).params.tau == 0.7
    assert all(r.params.tau in (0.7, 0.9) for r in results.values())  # older private fits were dropped
    assert any("Memory budget" in t.value for t in at.toast)


def test_shared_objects_are_not_charged_to_a_session():
    at = new_app()
    assert memory.size_of(last_result(at).explainer) == 0


def test_trim_runs():
    assert memory.trim() in (-1, 0, 1)
