"""Expiring exports (tcrex/ui/widgets/downloads.py): the wrapper builds on call and predicts Streamlit's media file id."""

from __future__ import annotations

from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from tcrex.ui.widgets import downloads


def test_the_predicted_id_is_the_one_streamlit_stores_the_export_under():
    storage = MemoryMediaFileStorage("/media")
    for payload in (b'{"a": 1}', b"x" * (3 * 1024 * 1024)):  # small, and over the 1 MiB partial-hash threshold
        stored = storage.load_and_get_id(payload, "application/json", MediaFileKind.DOWNLOADABLE, "r.json")
        assert downloads.file_id(payload, "application/json", "r.json") == stored


def test_the_builder_runs_only_when_called_and_returns_bytes():
    calls = []
    data = downloads.expiring(lambda: calls.append(1) or "é,1\n", "text/csv", "x.csv")
    assert calls == []
    assert data() == "é,1\n".encode() and calls == [1]


def test_ttl_from_the_environment(monkeypatch):
    monkeypatch.setenv(downloads.TTL_ENV, "7")
    assert downloads.ttl_seconds() == 7
    monkeypatch.setenv(downloads.TTL_ENV, "nonsense")
    assert downloads.ttl_seconds() == 30
