"""Exceptions raised by durable storage.

Every message fits on one line and names the file involved, because these errors end up in an
operator's terminal when a node refuses to start, and the operator needs to know which file to
look at without reading a traceback.
"""

from __future__ import annotations


class StorageError(Exception):
    """Base of every storage failure, so a runtime can catch storage problems as one kind."""


class CorruptDataError(StorageError):
    """Bytes on disk or on the wire are not what a writer produced."""


class BatchDecodeError(CorruptDataError):
    """A buffer of encoded batches is not entirely valid; raised where all-or-nothing is needed.

    ``stop`` says where decoding stopped and why (a ``codec.DecodeStop``).
    """

    def __init__(self, stop: object, message: str) -> None:
        super().__init__(message)
        self.stop = stop


class LogCorruptError(CorruptDataError):
    """The segment files and the log-start checkpoint disagree in a way recovery must not guess."""


class LogUsageError(StorageError, ValueError):
    """The log was asked for something that breaks its rules (a gap, a cut inside a batch)."""


class LogFailedError(StorageError):
    """A write or fsync failed earlier; the on-disk state is unknown, so the log refuses work.

    After a failed fsync the kernel may have dropped the dirty pages, so retrying would report
    success for data that never reached the disk. Reopening the log re-establishes the truth.
    """


class QuorumStateError(CorruptDataError):
    """The quorum-state file cannot be trusted, or is missing from a directory that has seen an
    election; resetting it could allow double votes."""


class SnapshotError(StorageError):
    """A snapshot could not be written, received or found as asked."""


class SnapshotCorruptError(SnapshotError, CorruptDataError):
    """A snapshot file fails its header, structure or footer checksum."""


class MetaPropertiesError(CorruptDataError):
    """``meta.properties`` is missing a field or holds a value that cannot be parsed."""


class MetaPropertiesTooLargeError(MetaPropertiesError):
    """``meta.properties`` is far larger than any format writes: a damaged file, which the
    commands treat as the configuration error it is (exit status 2)."""


class MetadataDirError(StorageError):
    """The metadata directory cannot be used by this node as asked."""


class NotFormattedError(MetadataDirError):
    """The directory was never formatted, so it has no node or cluster identity."""


class AlreadyFormattedError(MetadataDirError):
    """Formatting would overwrite an existing identity."""


class ForeignDirectoryError(MetadataDirError):
    """The directory belongs to another node or another cluster."""


class DirectoryLockedError(MetadataDirError):
    """Another process holds the directory; two writers would corrupt the log."""
