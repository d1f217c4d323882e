"""Two small files beside ``meta.properties``: the bootstrap feature levels and the clean-stop
marker.

``bootstrap.features`` is what ``raftmeta format --release-version`` chose: one
``name=level`` line per feature. Kafka writes the same choice as ``bootstrap.checkpoint``, a
snapshot of FeatureLevelRecords; raftmeta keeps it as text because storage sits below the
record layer, and the controller that first leads an empty log turns it into
FeatureLevelRecords (the records, not this file, are then the truth).

``clean_shutdown`` holds the broker epoch of an incarnation that finished a controlled
shutdown. The next start reads and deletes it and sends the epoch as PreviousBrokerEpoch, as
Kafka's broker does with its clean-shutdown file: with eligible leader replicas on, a broker
that cannot show it stopped cleanly leaves every ISR and ELR. Deleting it at start means a
crash later in that run leaves no proof behind.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from raftmeta.storage.errors import StorageError
from raftmeta.storage.fsutil import fsync_directory, write_file_atomically

BOOTSTRAP_FEATURES_FILE = "bootstrap.features"
CLEAN_SHUTDOWN_FILE = "clean_shutdown"


def write_bootstrap_features(root: str | os.PathLike[str], levels: Mapping[str, int]) -> None:
    text = "".join(f"{name}={level}\n" for name, level in sorted(levels.items()))
    write_file_atomically(Path(root) / BOOTSTRAP_FEATURES_FILE, text.encode("utf-8"))


def read_bootstrap_features(root: str | os.PathLike[str]) -> dict[str, int]:
    """The levels ``format`` chose; empty for a directory formatted without a release."""
    path = Path(root) / BOOTSTRAP_FEATURES_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    levels: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        name, sep, level = line.partition("=")
        if not sep or not name or not level.strip().isdigit():
            raise StorageError(f"{path}: line {number} is not name=level: {line!r}")
        levels[name.strip()] = int(level)
    return levels


def write_clean_shutdown(root: str | os.PathLike[str], broker_epoch: int) -> None:
    write_file_atomically(Path(root) / CLEAN_SHUTDOWN_FILE, f"{broker_epoch}\n".encode())


def take_clean_shutdown(root: str | os.PathLike[str]) -> int:
    """The epoch a clean stop left, or -1; the marker is gone (durably) once this returns."""
    path = Path(root) / CLEAN_SHUTDOWN_FILE
    try:
        text = path.read_text("ascii").strip()
    except FileNotFoundError:
        return -1
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fsync_directory(path.parent)
    try:
        return int(text)
    except ValueError:
        return -1
