"""Durable storage: segmented log, quorum-state file, snapshots, meta.properties.

``MetadataDir`` is the entry point for a node; the pieces below it are usable on their own
(the codec on the wire, ``SnapshotReader`` from analytics, ``FileLog`` in tests).

May import the consensus core's value types (``raftmeta.raft``) and the ``.properties``
format (``raftmeta.config.properties``); never networking, the runtime or anything above.
"""

from raftmeta.storage.codec import (
    BATCH_HEADER_SIZE,
    BatchScanner,
    DecodeResult,
    DecodeStop,
    StopReason,
    decode_batch,
    decode_batches,
    encode_batch,
    encode_batches,
    encoded_size,
    scan_batches,
)
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR, MetadataDir, StartupReport
from raftmeta.storage.errors import (
    AlreadyFormattedError,
    BatchDecodeError,
    CorruptDataError,
    DirectoryLockedError,
    ForeignDirectoryError,
    LogCorruptError,
    LogFailedError,
    LogUsageError,
    MetadataDirError,
    MetaPropertiesError,
    MetaPropertiesTooLargeError,
    NotFormattedError,
    QuorumStateError,
    SnapshotCorruptError,
    SnapshotError,
    StorageError,
)
from raftmeta.storage.log import DEFAULT_SEGMENT_BYTES, FileLog, RecoveryReport
from raftmeta.storage.meta_properties import (
    MetaProperties,
    generate_id,
    read_meta_properties,
    write_meta_properties,
)
from raftmeta.storage.quorum_state import QuorumStateStore
from raftmeta.storage.snapshots import (
    SnapshotHeader,
    SnapshotReader,
    SnapshotReceiver,
    SnapshotWriter,
    delete_snapshots_before,
    latest_snapshot,
    list_snapshots,
    read_chunk,
    remove_partial_snapshots,
    snapshot_file_name,
)

__all__ = [
    "BATCH_HEADER_SIZE",
    "DEFAULT_SEGMENT_BYTES",
    "METADATA_PARTITION_DIR",
    "AlreadyFormattedError",
    "BatchDecodeError",
    "BatchScanner",
    "CorruptDataError",
    "DecodeResult",
    "DecodeStop",
    "DirectoryLockedError",
    "FileLog",
    "ForeignDirectoryError",
    "LogCorruptError",
    "LogFailedError",
    "LogUsageError",
    "MetaProperties",
    "MetaPropertiesError",
    "MetaPropertiesTooLargeError",
    "MetadataDir",
    "MetadataDirError",
    "NotFormattedError",
    "QuorumStateError",
    "QuorumStateStore",
    "RecoveryReport",
    "SnapshotCorruptError",
    "SnapshotError",
    "SnapshotHeader",
    "SnapshotReader",
    "SnapshotReceiver",
    "SnapshotWriter",
    "StartupReport",
    "StopReason",
    "StorageError",
    "decode_batch",
    "decode_batches",
    "delete_snapshots_before",
    "encode_batch",
    "encode_batches",
    "encoded_size",
    "generate_id",
    "latest_snapshot",
    "list_snapshots",
    "read_chunk",
    "read_meta_properties",
    "remove_partial_snapshots",
    "scan_batches",
    "snapshot_file_name",
    "write_meta_properties",
]
