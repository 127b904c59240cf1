"""Workspace ids: unguessable, URL-safe, and never anything but an id.

An id is 32 characters of URL-safe base64 (``secrets.token_urlsafe(24)``: 192 random bits). It is the only key a
link carries, it is checked against :data:`ID_PATTERN` before it reaches the store, and the store never turns it
into a file path (blobs are named by their content digest), so a forged or path-like id cannot name anything but
an unknown workspace.
"""
from __future__ import annotations

import re
import secrets

#: Random bytes per id: 24 bytes = 192 bits (the issue asks for at least 128).
ID_BYTES = 24
#: What a well-formed id looks like (``token_urlsafe`` of :data:`ID_BYTES` bytes is 32 characters).
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")
#: A blob's name: the SHA-256 of its bytes, in lower-case hex.
DIGEST_PATTERN = re.compile(r"[0-9a-f]{64}")


def new_id() -> str:
    return secrets.token_urlsafe(ID_BYTES)


def is_id(text) -> bool:
    """Whether ``text`` is a well-formed workspace id (not whether such a workspace exists)."""
    return isinstance(text, str) and ID_PATTERN.fullmatch(text) is not None


def is_digest(text) -> bool:
    return isinstance(text, str) and DIGEST_PATTERN.fullmatch(text) is not None
