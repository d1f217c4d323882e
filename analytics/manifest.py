"""The manifest ``raftmeta log export`` writes beside the files it copies.

A log segment cut short by a failed upload, a full disk or a careless ``cp`` still reads as a
valid, shorter log: its batches carry no promise of how many follow. The manifest is that
promise, so an audit can tell an export that is whole from one that lost its tail. It lives
in the metadata folder, ``__cluster_metadata-0/raftmeta-export.json``::

    {"format": 1, "cluster_id": "...", "high_watermark": 13,
     "snapshots": [{"file": "00000000000000000006-0000000002.checkpoint", "bytes": 812}],
     "segments": [{"file": "00000000000000000006.log", "bytes": 1590,
                   "base_offset": 6, "next_offset": 13}]}

It is written after the snapshots and the log and before ``meta.properties``, so an export
that has a ``meta.properties`` has its manifest too.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

MANIFEST_FILE = "raftmeta-export.json"
FORMAT = 1


class ManifestError(ValueError):
    """A manifest that cannot be read; the message is one line."""


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    file: str
    bytes: int


@dataclass(frozen=True, slots=True)
class SegmentEntry:
    file: str
    bytes: int
    base_offset: int
    next_offset: int
    """One past the last offset the segment holds."""


@dataclass(frozen=True, slots=True)
class Manifest:
    cluster_id: str
    high_watermark: int
    snapshots: tuple[SnapshotEntry, ...]
    segments: tuple[SegmentEntry, ...]
    """In offset order, each starting where the one before ends."""

    @property
    def log_end(self) -> int | None:
        """The offset the exported log promises to reach, ``None`` if it exported no log."""
        return self.segments[-1].next_offset if self.segments else None

    def encode(self) -> bytes:
        document = {
            "format": FORMAT,
            "cluster_id": self.cluster_id,
            "high_watermark": self.high_watermark,
            "snapshots": [{"file": s.file, "bytes": s.bytes} for s in self.snapshots],
            "segments": [
                {
                    "file": s.file,
                    "bytes": s.bytes,
                    "base_offset": s.base_offset,
                    "next_offset": s.next_offset,
                }
                for s in self.segments
            ],
        }
        return (json.dumps(document, indent=2) + "\n").encode()


def _int(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError(f"{key} is not a non-negative integer: {value!r}")
    return value


def _name(entry: dict[str, Any]) -> str:
    value = entry.get("file")
    if not isinstance(value, str) or not value or "/" in value or value in (".", ".."):
        raise ManifestError(f"file is not a file name: {value!r}")
    return value


def parse_manifest(data: bytes) -> Manifest:
    """The manifest in ``data``; :class:`ManifestError` names what is wrong with it."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestError(f"not JSON ({error})") from None
    if not isinstance(document, dict):
        raise ManifestError("not a JSON object")
    if document.get("format") != FORMAT:
        raise ManifestError(f"format {document.get('format')!r}, this version reads {FORMAT}")
    snapshots = document.get("snapshots")
    segments = document.get("segments")
    if not isinstance(snapshots, list) or not isinstance(segments, list):
        raise ManifestError("snapshots and segments must be lists")
    if not all(isinstance(entry, dict) for entry in (*snapshots, *segments)):
        raise ManifestError("every snapshot and segment entry must be an object")
    parsed_segments = tuple(
        SegmentEntry(
            _name(entry),
            _int(entry, "bytes"),
            _int(entry, "base_offset"),
            _int(entry, "next_offset"),
        )
        for entry in segments
    )
    for before, after in itertools.pairwise(parsed_segments):
        if after.base_offset != before.next_offset:
            raise ManifestError(f"{after.file} does not start where {before.file} ends")
    return Manifest(
        cluster_id=str(document.get("cluster_id") or ""),
        high_watermark=_int(document, "high_watermark"),
        snapshots=tuple(SnapshotEntry(_name(e), _int(e, "bytes")) for e in snapshots),
        segments=parsed_segments,
    )
