"""``meta.properties``: which node and which cluster a metadata directory belongs to.

Written once by ``raftmeta format`` (as ``kafka-storage format`` does) and checked at every start,
so that a node pointed at another node's directory, or at a directory from another cluster,
refuses to run instead of joining a quorum with someone else's log and votes.

Java properties style, the subset Kafka writes::

    # comment
    version=1
    node.id=1
    cluster.id=MkU3OEVBNTcwNTJENDM2Qg
    directory.id=J8aAPcfLQt2bqs1JT_rMgQ

Keys this version does not know are ignored, so a later version can add some. The file is a
few hundred bytes; one over ``MAX_META_PROPERTIES_BYTES`` is not one a format wrote (a disk
that appended a gigabyte of zeros to it, say) and is refused before it is read whole, so a
node stops at once with one line instead of parsing it for minutes.

``directory.id`` (KIP-853) is what tells a voter from the same node id on a wiped disk.
``raftmeta format`` always writes one. A directory formatted before it existed has none and
still opens: its node can be a static voter (``controller.quorum.voters`` names node ids only,
and a voter without a known directory id matches any directory), but it cannot be a voter of a
dynamic quorum, whose voters are (node id, directory id) pairs, until it is formatted again.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from raftmeta.config.properties import parse_properties
from raftmeta.storage.errors import MetaPropertiesError, MetaPropertiesTooLargeError
from raftmeta.storage.fsutil import write_file_atomically

META_PROPERTIES_FILE = "meta.properties"
META_PROPERTIES_VERSION = 1
MAX_META_PROPERTIES_BYTES = 8192
"""Far above anything a format writes (about 200 bytes), far below a size that takes time."""
_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def generate_id() -> str:
    """A random id in Kafka's textual form: a UUID as 22 characters of URL-safe base64.

    Like Kafka, never one starting with '-': command lines would read it as an option
    (``--cluster-id -x...``), which broke one in 64 generated ids.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


def check_id(kind: str, value: str) -> str:
    """Ids land in a key=value file and in log lines; keep them to characters that survive."""
    if not _ID_PATTERN.match(value):
        raise ValueError(f"{kind} {value!r} must be 1-64 characters of A-Z a-z 0-9 _ -")
    return value


@dataclass(frozen=True, slots=True)
class MetaProperties:
    node_id: int
    cluster_id: str
    directory_id: str | None
    """None only for a directory formatted before directory ids existed (a static voter)."""
    version: int = META_PROPERTIES_VERSION

    def __post_init__(self) -> None:
        if self.node_id < 0:
            raise ValueError(f"node id {self.node_id} is negative")
        check_id("cluster id", self.cluster_id)
        if self.directory_id is not None:
            check_id("directory id", self.directory_id)

    def to_text(self) -> str:
        directory = "" if self.directory_id is None else f"directory.id={self.directory_id}\n"
        return (
            "# Identity of this raftmeta metadata directory; written by 'raftmeta format'.\n"
            f"version={self.version}\n"
            f"node.id={self.node_id}\n"
            f"cluster.id={self.cluster_id}\n"
            f"{directory}"
        )


def read_meta_properties(path: str | os.PathLike[str]) -> MetaProperties:
    """Parse ``path``; ``FileNotFoundError`` if absent, ``MetaPropertiesError`` if unusable."""
    file = Path(path)
    try:
        with file.open("rb") as stream:
            raw = stream.read(MAX_META_PROPERTIES_BYTES + 1)
    except IsADirectoryError:
        raise MetaPropertiesError(f"{file}: is a directory, not a properties file") from None
    check_meta_properties_size(file, len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MetaPropertiesError(f"{file}: not a text file (not UTF-8)") from None
    try:
        values = parse_properties(text)
        version = _whole_number(values, "version")
        if version != META_PROPERTIES_VERSION:
            raise ValueError(f"unsupported version {version}")
        return MetaProperties(
            node_id=_whole_number(values, "node.id"),
            cluster_id=_required(values, "cluster.id"),
            directory_id=values.get("directory.id"),
            version=version,
        )
    except ValueError as exc:
        raise MetaPropertiesError(f"{file}: {exc}") from None


def check_meta_properties_size(path: str | os.PathLike[str], size: int | None = None) -> None:
    """Raise ``MetaPropertiesTooLargeError`` if ``path`` (of ``size`` bytes, or as much as
    the file system says) is over ``MAX_META_PROPERTIES_BYTES``; a missing file passes."""
    file = Path(path)
    if size is None:
        try:
            size = file.stat().st_size
        except FileNotFoundError:
            return
    if size > MAX_META_PROPERTIES_BYTES:
        with contextlib.suppress(OSError):
            size = max(size, file.stat().st_size)
        raise MetaPropertiesTooLargeError(
            f"{file}: {size} bytes, more than the {MAX_META_PROPERTIES_BYTES} a meta.properties "
            "may hold; it is damaged (restore it or format a fresh directory)"
        )


def write_meta_properties(path: str | os.PathLike[str], properties: MetaProperties) -> None:
    """Replace ``path`` atomically: a crash leaves the old identity or the new, never half."""
    write_file_atomically(Path(path), properties.to_text().encode("utf-8"))


def _whole_number(values: dict[str, str], key: str) -> int:
    """``key``'s value as a number, or a one-line error naming the key and quoting the value."""
    text = _required(values, key).strip()
    if text.startswith("-") and text[1:].isascii() and text[1:].isdigit():
        raise ValueError(f"{key}={text} is negative")
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise ValueError(f"{key}={shown!r} is not a whole number from 0 to 9999999999")
    return int(text)


def _required(values: dict[str, str], key: str) -> str:
    if key not in values:
        raise ValueError(f"missing {key}")
    return values[key]
