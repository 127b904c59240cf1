"""What can go wrong when opening or changing a workspace, each with a message a user can read."""
from __future__ import annotations

from ..errors import TCRExError


class WorkspaceError(TCRExError):
    """Base class of the workspace store's errors."""


class UnknownWorkspace(WorkspaceError):
    """The id is malformed, was never issued, or its workspace was deleted or expired."""


class ReadOnlyWorkspace(WorkspaceError):
    """A change was asked through a read-only (view) link."""


class DamagedWorkspace(WorkspaceError):
    """The stored settings or an uploaded file fail their checksum, or the store itself is damaged."""


class WorkspaceTooLarge(WorkspaceError):
    """A workspace or the whole store would exceed its size budget."""
