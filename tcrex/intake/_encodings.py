"""Text decoding of an uploaded CSV: byte-order marks, UTF-16/UTF-32 without one, UTF-8 with a few bad bytes, and
single-byte Windows/Latin-1 files, each said as a finding (a file is never silently re-decoded)."""
from __future__ import annotations

import codecs
import re

import numpy as np

from ..errors import DataError
from ._report import Finding

#: Encodings offered as an override (``read_table(..., encoding=)``): codec name -> description.
ENCODINGS = {"utf-8": "UTF-8", "cp1252": "Windows-1252 (Western European)", "latin-1": "Latin-1 (ISO-8859-1)",
             "utf-16": "UTF-16 (with byte-order mark)", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE",
             "utf-32": "UTF-32 (with byte-order mark)", "utf-32-le": "UTF-32 LE", "utf-32-be": "UTF-32 BE"}
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32", "UTF-32 LE"),
         (b"\x00\x00\xfe\xff", "utf-32", "UTF-32 BE"), (b"\xff\xfe", "utf-16", "UTF-16 LE"),
         (b"\xfe\xff", "utf-16", "UTF-16 BE"))
_WIDE_LABELS = {"utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE", "utf-32-le": "UTF-32 LE",
                "utf-32-be": "UTF-32 BE"}


def _line_of(text: str, pos: int) -> int:
    head = text[:pos]
    return head.count("\n") + head.count("\r") - head.count("\r\n") + 1


def _wide_encoding(sample: bytes) -> str | None:
    """UTF-16/UTF-32 without a byte-order mark, recognised by where the NUL bytes fall (text that is mostly ASCII
    has a NUL in every other byte, or three of every four)."""
    n = len(sample) // 4 * 4
    if n < 8:
        return None
    quad = (np.frombuffer(sample[:n], dtype=np.uint8).reshape(-1, 4) == 0).mean(axis=0)  # NUL share per position
    pair = (quad[0] + quad[2]) / 2, (quad[1] + quad[3]) / 2
    if quad[2] > 0.9 and quad[3] > 0.9 and quad[1] > 0.5 and quad[0] < 0.25:
        return "utf-32-le"
    if quad[0] > 0.9 and quad[1] > 0.9 and quad[2] > 0.5 and quad[3] < 0.25:
        return "utf-32-be"
    if pair[1] > 0.6 and pair[0] < 0.25:
        return "utf-16-le"
    if pair[0] > 0.6 and pair[1] < 0.25:
        return "utf-16-be"
    return None


def _decode_strict(data: bytes, codec: str, label: str, chosen: bool = False) -> str:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        what = "is not" if chosen else f"looks like {label} but is not"
        raise DataError(f"the file {what} valid {label} (at byte {exc.start:,}): re-save it as UTF-8, or choose "
                        "its encoding under 'How to read this file'") from None
    return text[1:] if text.startswith("\ufeff") else text


def decode_text(data: bytes, encoding: str | None = None) -> tuple[str, str, list]:
    """``(text, encoding, findings)``. Never silent: a file that is not UTF-8 is named as what it was read as, and
    bad bytes in a UTF-8 file are replaced by U+FFFD with their lines said (the whole file is never re-decoded as
    Latin-1 because of them). ``encoding`` overrides the detection."""
    if encoding is not None:
        label = ENCODINGS.get(encoding, encoding)
        chosen = Finding("encoding", f"read as {label}, as chosen", severity="info")
        if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
            text, name, found = _decode_utf8(data[3:] if data.startswith(b"\xef\xbb\xbf") else data, encoding)
            return text, name, [chosen, *found]
        return _decode_strict(data, encoding, label, chosen=True), encoding, [chosen]
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            if codec == "utf-8-sig":
                return _decode_utf8(data[len(bom):], "utf-8-sig")
            return _decode_strict(data, codec, label), codec, []
    wide = _wide_encoding(data[:65536])
    if wide:
        label = _WIDE_LABELS[wide]
        return _decode_strict(data, wide, label), wide, [
            Finding("encoding", f"the file is {label} without a byte-order mark; it was read as {label}",
                    severity="info")]
    if b"\x00" in data[:65536]:
        raise DataError("the file is not text (it contains NUL bytes): upload a CSV or a Parquet file (a UTF-16 or "
                        "UTF-32 text file that is not recognised: choose its encoding under 'How to read this file')")
    try:
        return data.decode("utf-8"), "utf-8", []
    except UnicodeDecodeError:
        pass
    escaped = data.decode("utf-8", errors="surrogateescape")  # each invalid byte -> one lone surrogate
    if re.search("[^\x00-\x7f\udc80-\udcff]", escaped):
        return _decode_utf8(data, "utf-8", escaped)  # valid multi-byte sequences: UTF-8 with a few bad bytes
    # not UTF-8 at all (no valid multi-byte sequence anywhere): a single-byte Windows or Latin-1 file
    if not re.search(b"[\x80-\x9f]", data):
        codec = "latin-1"  # latin-1 and cp1252 agree on every byte of this file
    elif re.search(b"[\x81\x8d\x8f\x90\x9d]", data):
        codec = "latin-1"  # bytes cp1252 leaves undefined
    else:
        codec = "cp1252"
    text = data.decode(codec)
    first = re.search("[^\x00-\x7f]", text)
    line = _line_of(text, first.start()) if first else 1
    return text, codec, [Finding("encoding", f"the file is not UTF-8: it was read as {ENCODINGS[codec]} (its first "
                                 f"non-ASCII character is on line {line}); if accented letters look wrong, choose "
                                 "the encoding under 'How to read this file'", severity="info")]


def _decode_utf8(data: bytes, name: str, escaped: str | None = None) -> tuple[str, str, list]:
    if escaped is None:
        try:
            return data.decode("utf-8"), name, []
        except UnicodeDecodeError:
            escaped = data.decode("utf-8", errors="surrogateescape")
    n_bad, lines, line, last = 0, [], 1, 0
    for m in re.finditer("[\udc80-\udcff]", escaped):
        n_bad += 1
        if len(lines) < 10:
            seg = escaped[last:m.start()]
            line += seg.count("\n") + seg.count("\r") - seg.count("\r\n")
            last = m.start()
            if not lines or lines[-1] != line:
                lines.append(line)
    text = escaped.translate({c: "\ufffd" for c in range(0xDC80, 0xDD00)})
    shown = ", ".join(map(str, lines)) + (", …" if len(lines) >= 10 else "")
    return text, name, [Finding("encoding", f"{n_bad:,} byte(s) are not valid UTF-8 (on line(s) {shown}); each was "
                                "replaced by '\ufffd'. The rest of the file is UTF-8, so it was not re-read in "
                                "another encoding — fix those lines, or choose the file's encoding under 'How to "
                                "read this file'", count=n_bad)]


def looks_binary(text: str) -> bool:
    sample = text[:20000]
    if not sample:
        return False
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\r\n\t") or 0x7F <= ord(ch) <= 0x9F)
    return controls / len(sample) > 0.05
