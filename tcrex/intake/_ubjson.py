"""A small, bounded UBJSON decoder (the subset XGBoost writes, plus the rest of Draft 12).

XGBoost's ``.ubj`` models are decoded here in Python instead of by XGBoost's C++ reader, so that a hostile file
meets only checked code: every length is compared with the bytes that remain before anything is allocated,
nesting depth is capped, strings must be valid UTF-8, and the elements that take no bytes (typed containers of
null/true/false) are counted against one budget for the whole file. Typed numeric arrays (``[$d#...``) become numpy arrays
without a per-element Python loop. Any problem raises :class:`UBJSONError` with the byte offset.
"""
from __future__ import annotations

import struct

import numpy as np

MAX_DEPTH = 64
#: Elements of typed containers of zero-byte values (null/true/false) in the whole file: only these are not bounded by
#: the bytes they occupy (each costs an 8-byte list slot once decoded). Counted for the file, not per container:
#: 250 containers of 1,000,000 ``T`` each (2.9 KB) passed a per-container bound and decoded to ~1.9 GB.
MAX_EMPTY_ELEMENTS = 1_000_000

# marker -> (numpy big-endian dtype, size in bytes)
_NUMERIC = {
    b"i": (np.dtype(">i1"), 1),
    b"U": (np.dtype(">u1"), 1),
    b"I": (np.dtype(">i2"), 2),
    b"l": (np.dtype(">i4"), 4),
    b"L": (np.dtype(">i8"), 8),
    b"d": (np.dtype(">f4"), 4),
    b"D": (np.dtype(">f8"), 8),
}
_INT_MARKERS = (b"i", b"U", b"I", b"l", b"L")


class UBJSONError(ValueError):
    """The bytes are not (bounded, well-formed) UBJSON."""


class _Reader:
    def __init__(self, data: bytes):
        self.data = memoryview(data)
        self.pos = 0
        self.n = len(data)
        self.empty_left = MAX_EMPTY_ELEMENTS  # the file's budget of zero-byte elements

    def fail(self, what: str):
        raise UBJSONError(f"{what} at byte {self.pos}")

    def take(self, k: int) -> memoryview:
        if k < 0 or self.pos + k > self.n:
            self.fail(f"unexpected end of data (needs {k} more byte(s), {self.n - self.pos} left)")
        out = self.data[self.pos:self.pos + k]
        self.pos += k
        return out

    def marker(self) -> bytes:
        m = bytes(self.take(1))
        while m == b"N":  # no-op
            m = bytes(self.take(1))
        return m

    def peek(self) -> bytes:
        if self.pos >= self.n:
            self.fail("unexpected end of data")
        return bytes(self.data[self.pos:self.pos + 1])

    def integer(self, m: bytes) -> int:
        if m not in _INT_MARKERS:
            self.fail(f"expected an integer marker, got {m!r}")
        dtype, size = _NUMERIC[m]
        return int(np.frombuffer(self.take(size), dtype=dtype)[0])

    def length(self) -> int:
        k = self.integer(self.marker())
        if k < 0:
            self.fail(f"negative length {k}")
        return k

    def string(self) -> str:
        k = self.length()
        raw = self.take(k)
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            self.fail("string is not valid UTF-8")

    def value(self, m: bytes, depth: int):
        if m in _NUMERIC:
            dtype, size = _NUMERIC[m]
            v = np.frombuffer(self.take(size), dtype=dtype)[0]
            return float(v) if m in (b"d", b"D") else int(v)
        if m == b"Z":
            return None
        if m == b"T":
            return True
        if m == b"F":
            return False
        if m == b"C":
            return bytes(self.take(1)).decode("latin-1")
        if m == b"S":
            return self.string()
        if m == b"H":  # high-precision number, as text
            text = self.string()
            try:
                return int(text) if text.lstrip("-").isdigit() else float(text)
            except ValueError:
                self.fail(f"bad high-precision number {text[:40]!r}")
        if m == b"[":
            return self.array(depth + 1)
        if m == b"{":
            return self.object(depth + 1)
        self.fail(f"unknown marker {m!r}")

    def _container_header(self) -> tuple[bytes | None, int | None]:
        vtype, count = None, None
        if self.peek() == b"$":
            self.pos += 1
            vtype = bytes(self.take(1))
            if vtype not in _NUMERIC and vtype not in (b"Z", b"T", b"F", b"C", b"S", b"H", b"[", b"{"):
                self.fail(f"bad container element type {vtype!r}")
            if self.peek() != b"#":
                self.fail("a typed container needs a count ('#')")
        if self.peek() == b"#":
            self.pos += 1
            count = self.length()
            remaining = self.n - self.pos
            if vtype in _NUMERIC:
                if count * _NUMERIC[vtype][1] > remaining:
                    self.fail(f"container declares {count} elements but only {remaining} bytes remain")
            elif vtype in (b"Z", b"T", b"F"):
                if count > self.empty_left:
                    self.fail(f"container declares {count:,} elements of null/true/false, which take no bytes; the "
                              f"file may hold at most {MAX_EMPTY_ELEMENTS:,} such elements in all")
                self.empty_left -= count
            elif count > remaining:
                self.fail(f"container declares {count} elements but only {remaining} bytes remain")
        return vtype, count

    def array(self, depth: int):
        if depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH}")
        vtype, count = self._container_header()
        if vtype in _NUMERIC:
            dtype, size = _NUMERIC[vtype]
            arr = np.frombuffer(self.take(count * size), dtype=dtype)
            return arr.astype(dtype.newbyteorder("="))
        out = []
        if count is not None:
            for _ in range(count):
                out.append(self.value(vtype or self.marker(), depth))
            return out
        while True:
            m = self.marker()
            if m == b"]":
                return out
            out.append(self.value(m, depth))

    def object(self, depth: int) -> dict:
        if depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH}")
        vtype, count = self._container_header()
        out = {}
        if count is not None:
            for _ in range(count):
                key = self.string()
                if key in out:
                    self.fail(f"duplicate key {key!r}")
                out[key] = self.value(vtype or self.marker(), depth)
            return out
        while True:
            if self.peek() == b"}":
                self.pos += 1
                return out
            if self.peek() == b"N":
                self.pos += 1
                continue
            key = self.string()
            if key in out:
                self.fail(f"duplicate key {key!r}")
            out[key] = self.value(self.marker(), depth)


def decode(data: bytes):
    """Decode one UBJSON value that spans all of ``data``."""
    r = _Reader(bytes(data))
    try:
        value = r.value(r.marker(), 0)
    except struct.error as exc:  # pragma: no cover - numpy reads above never raise this, kept as a guard
        raise UBJSONError(str(exc)) from None
    if r.pos != r.n:
        raise UBJSONError(f"{r.n - r.pos} unexpected byte(s) after the end of the document at byte {r.pos}")
    return value


def looks_like_ubjson(data: bytes) -> bool:
    """An object whose first key has an integer length marker: what XGBoost's .ubj files start with."""
    return len(data) >= 3 and data[:1] == b"{" and data[1:2] in _INT_MARKERS
