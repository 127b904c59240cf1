"""Every test here starts a real cluster (Dask scheduler and nanny workers on loopback, or Spark): marked ``cluster``
so the fast tier (``make test-fast``) leaves them out."""
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.cluster)
