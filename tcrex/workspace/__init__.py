"""Workspaces: everything a user did in the dashboard, stored as it changes, reopened from a link.

:class:`WorkspaceStore` owns the store (SQLite by default, PostgreSQL for a team; uploads in a content-addressed
blob folder or fsspec URL); :func:`export_workspace` / :func:`import_workspace` move a workspace as one zip
(``tcrex workspace export|import``). What a workspace's settings hold is the dashboard's business
(:mod:`tcrex.ui.state.workspace`); this package stores them as plain JSON and never imports Streamlit. See
docs/deployment.md, "Workspaces".
"""
from ._activity import ACTIONS, Entry, LogCheck, log_csv, log_frame, log_json
from ._archive import archive_budget, export_workspace, import_workspace
from ._errors import (DamagedWorkspace, ReadOnlyWorkspace, StoreUnavailable, UnknownWorkspace, WorkspaceError,
                      WorkspaceTooLarge)
from ._ids import is_id, new_id
from ._store import (ANYONE, ROLES, SAVE_STEPS, UPLOAD_STEPS, Health, Limits, Workspace, WorkspaceStore, WorkspaceSummary,
                     default_state_dir, principal_of, size_text)

__all__ = ["ANYONE", "ROLES", "principal_of", "ACTIONS", "Entry", "LogCheck", "log_csv", "log_frame", "log_json",
           "WorkspaceStore", "Workspace", "SAVE_STEPS", "UPLOAD_STEPS", "WorkspaceSummary", "Limits", "Health",
           "default_state_dir", "size_text", "export_workspace", "import_workspace", "archive_budget", "is_id",
           "new_id", "WorkspaceError", "UnknownWorkspace", "ReadOnlyWorkspace", "DamagedWorkspace", "WorkspaceTooLarge",
           "StoreUnavailable"]
