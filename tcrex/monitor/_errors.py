"""What can go wrong with a monitor, each with a message a user can read."""
from __future__ import annotations

from ..errors import TCRExError


class MonitorError(TCRExError):
    """Base class of the monitor's errors: a bad argument, an unknown monitor, a version label used twice."""


class UnknownMonitor(MonitorError):
    """No monitor of that name (or id) is in the store."""


class DamagedMonitor(MonitorError):
    """A stored record or blob fails its checksum: reported, never used."""


class MonitorTooLarge(MonitorError):
    """Recording a run would exceed a monitor's or the store's size budget."""


class ConcurrentRun(MonitorError):
    """Another run of the same monitor was recorded while this one was computed."""
