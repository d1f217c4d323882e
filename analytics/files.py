"""Where the audit's files live: a local path, or a URI that ``pyarrow.fs`` opens.

On a Spark cluster the executors are other machines, so the files must come from storage all
of them reach: ``s3://bucket/clusters``, ``hdfs://namenode/clusters``, ``gs://bucket/...``
(whatever ``pyarrow.fs.FileSystem.from_uri`` supports). Files are named by *locations*,
plain strings that travel inside the planned splits: a local path stays a path (and needs no
pyarrow, so ``--engine plain`` works without the spark extra), ``file://`` is turned into a
path, and anything else with a scheme is a URI each process resolves to a filesystem itself
(cached per bucket or host, since making an S3 client is not free).

S3 is configured the standard AWS way: ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``,
``AWS_REGION`` and ``AWS_ENDPOINT_URL`` for an S3-compatible server (or the URI's own
``?endpoint_override=...&scheme=http`` query); :mod:`analytics.session` passes those variables
on to the executors.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class RemoteFileError(OSError):
    """A URI that cannot be listed or read; the message is one line."""


def local_path(location: str) -> str | None:
    """The local path ``location`` names (``file://`` included), else ``None`` for a URI."""
    match = _SCHEME.match(location)
    if match is None:
        return location
    if match.group(1).lower() == "file":
        parsed = urllib.parse.urlsplit(location)
        return urllib.request.url2pathname(parsed.path)
    return None


def is_remote(location: str) -> bool:
    return local_path(location) is None


def join(location: str, name: str) -> str:
    if is_remote(location):
        base, _, query = location.partition("?")
        joined = base.rstrip("/") + "/" + name
        return f"{joined}?{query}" if query else joined
    return os.path.join(location, name)


def basename(location: str) -> str:
    if is_remote(location):
        return location.partition("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return os.path.basename(os.path.normpath(location))


@functools.lru_cache(maxsize=32)
def _filesystem(root: str, query: str) -> pafs.FileSystem:
    import pyarrow.fs as pafs

    uri = f"{root}/?{query}" if query else f"{root}/"
    try:
        filesystem, _ = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as error:
        raise RemoteFileError(f"{root}: {_first_line(error)}") from None
    return filesystem


def _resolve(location: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem of a URI (cached by scheme and bucket or host) and the path inside it."""
    try:
        import pyarrow.fs  # noqa: F401
    except ImportError:
        raise RemoteFileError(
            f"{location}: reading a URI needs pyarrow, of the spark extra "
            "(pip install 'raftmeta[spark]')"
        ) from None
    base, _, query = location.partition("?")
    parsed = urllib.parse.urlsplit(base)
    root = f"{parsed.scheme}://{parsed.netloc}"
    filesystem = _filesystem(root, query)
    path = parsed.path.rstrip("/")
    if parsed.scheme in ("s3", "gs", "gcs"):
        path = f"{parsed.netloc}{path}"
    return filesystem, path


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _remote_call(location: str, call: Any) -> Any:
    try:
        return call()
    except FileNotFoundError:
        raise FileNotFoundError(2, "no such file or directory", location) from None
    except RemoteFileError:
        raise
    except OSError as error:
        raise RemoteFileError(f"{location}: {_first_line(error)}") from None


def kind(location: str) -> str | None:
    """``"file"``, ``"dir"`` or ``None`` (absent, or something else)."""
    path = local_path(location)
    if path is not None:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return None
        return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
    import pyarrow.fs as pafs

    filesystem, inner = _resolve(location)
    info = _remote_call(location, lambda: filesystem.get_file_info(inner))
    if info.type == pafs.FileType.Directory:
        return "dir"
    if info.type == pafs.FileType.File:
        return "file"
    return None


def list_dir(location: str) -> list[tuple[str, str]]:
    """``(name, kind)`` of each entry of a directory, by name; ``kind`` as :func:`kind`."""
    path = local_path(location)
    if path is not None:
        entries = []
        for entry in os.scandir(path):
            is_dir = entry.is_dir()
            entries.append(
                (entry.name, "dir" if is_dir else "file" if entry.is_file() else "other")
            )
        return sorted(entries)
    import pyarrow.fs as pafs

    filesystem, inner = _resolve(location)
    selector = pafs.FileSelector(inner, allow_not_found=True, recursive=False)
    infos = _remote_call(location, lambda: filesystem.get_file_info(selector))
    found = []
    for info in infos:
        if info.type == pafs.FileType.Directory:
            found.append((info.base_name, "dir"))
        elif info.type == pafs.FileType.File:
            found.append((info.base_name, "file"))
    return sorted(found)


def size(location: str) -> int:
    path = local_path(location)
    if path is not None:
        return os.path.getsize(path)
    filesystem, inner = _resolve(location)
    info = _remote_call(location, lambda: filesystem.get_file_info(inner))
    return int(info.size or 0)


def open_binary(location: str) -> BinaryIO:
    """A seekable binary file; remote ones read by range, not downloaded whole."""
    path = local_path(location)
    if path is not None:
        return open(path, "rb")
    filesystem, inner = _resolve(location)
    return cast(BinaryIO, _remote_call(location, lambda: filesystem.open_input_file(inner)))


def read_range(location: str, start: int, end: int) -> bytes:
    with open_binary(location) as file:
        file.seek(start)
        return file.read(end - start)


def read_all(location: str) -> bytes:
    with open_binary(location) as file:
        return file.read()


def absolute(location: str) -> str:
    """A location every executor can resolve: a URI as it is, a local path made absolute."""
    path = local_path(location)
    return location if path is None else os.path.abspath(path)


def write_file(location: str, data: bytes) -> None:
    """Write a whole file (an object, on S3), creating its directory; local files are synced."""
    path = local_path(location)
    if path is not None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        return
    filesystem, inner = _resolve(location)

    def write() -> None:
        parent = inner.rsplit("/", 1)[0]
        filesystem.create_dir(parent, recursive=True)
        with filesystem.open_output_stream(inner) as stream:
            stream.write(data)

    _remote_call(location, write)


def ensure_bucket(location: str, create: bool = False) -> None:
    """For an ``s3://`` location, make sure its bucket exists: create it with ``create``, else
    fail in one line saying it must exist. Writing into a missing bucket would otherwise fail
    deep inside the S3 client, after the export had read everything."""
    if not location.lower().startswith("s3://"):
        return
    import pyarrow.fs as pafs

    filesystem, inner = _resolve(location)
    bucket = inner.split("/", 1)[0]
    info = _remote_call(location, lambda: filesystem.get_file_info(bucket))
    if info.type != pafs.FileType.NotFound:
        return
    if not create:
        raise RemoteFileError(
            f"s3://{bucket}: the bucket does not exist; create it first "
            f"(aws s3 mb s3://{bucket}) or pass --create-bucket"
        )
    query = location.partition("?")[2]
    creating = "&".join(filter(None, [query, "allow_bucket_creation=true"]))
    creator = _filesystem(f"s3://{bucket}", creating)
    _remote_call(location, lambda: creator.create_dir(bucket))
