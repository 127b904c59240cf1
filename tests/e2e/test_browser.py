"""The dashboard server answers its health check (the pages themselves: ``test_pages.py``)."""

from __future__ import annotations

import urllib.request

import pytest

pytestmark = pytest.mark.e2e

def test_health_endpoint(streamlit_server):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore http_proxy
    with direct.open(f"{streamlit_server}/_stcore/health", timeout=10) as resp:
        assert resp.status == 200
        assert resp.read().decode().strip() == "ok"
