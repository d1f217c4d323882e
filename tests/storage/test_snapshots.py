from __future__ import annotations

import os
import random
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raftmeta.raft.batch import SnapshotId
from raftmeta.storage.codec import decode_batches
from raftmeta.storage.crc import crc32_combine
from raftmeta.storage.errors import SnapshotCorruptError, SnapshotError
from raftmeta.storage.snapshots import (
    FOOTER_SIZE,
    MIN_SNAPSHOT_SIZE,
    SnapshotReader,
    SnapshotReceiver,
    SnapshotWriter,
    delete_snapshots_before,
    latest_snapshot,
    list_snapshots,
    partial_snapshot_path,
    read_chunk,
    remove_partial_snapshots,
    snapshot_path,
)

SNAP = SnapshotId(end_offset=120, epoch=3)


def _records(count: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    return [f"record-{i}-".encode() + rng.randbytes(rng.randrange(0, 40)) for i in range(count)]


def _write(directory: Path, snapshot_id: SnapshotId, records: list[bytes], **kwargs: int) -> Path:
    writer = SnapshotWriter(
        directory, snapshot_id, cluster_id="cluster-a", created_ms=1234, **kwargs
    )
    writer.append(records[: len(records) // 2])
    writer.append(records[len(records) // 2 :])
    assert writer.record_count == len(records)
    return writer.freeze()


@given(
    first=st.binary(max_size=200),
    second=st.binary(max_size=3000),
)
def test_crc32_combine_matches_zlib_on_the_concatenation(first: bytes, second: bytes) -> None:
    combined = crc32_combine(zlib.crc32(first), zlib.crc32(second), len(second))
    assert combined == zlib.crc32(first + second)


def test_round_trip_exposes_header_fields_records_and_batches(tmp_path: Path) -> None:
    records = _records(2500)
    path = _write(tmp_path, SNAP, records, records_per_batch=1000)
    assert path == snapshot_path(tmp_path, SNAP)
    assert path.name == "00000000000000000120-0000000003.checkpoint"
    assert not partial_snapshot_path(tmp_path, SNAP).exists()

    reader = SnapshotReader(path)
    assert reader.snapshot_id == SNAP
    assert (reader.cluster_id, reader.record_count, reader.created_ms) == ("cluster-a", 2500, 1234)
    assert reader.size == path.stat().st_size
    batches = list(reader.batches())
    assert [b.record_count for b in batches] == [1000, 1000, 500]
    assert [b.base_offset for b in batches] == [0, 1000, 2000]
    assert {b.epoch for b in batches} == {3}
    assert list(reader.records()) == records
    assert list(reader.records()) == records  # streams again from the file


def test_an_empty_snapshot_is_valid(tmp_path: Path) -> None:
    path = _write(tmp_path, SnapshotId(0, 0), [])
    reader = SnapshotReader(path)
    assert reader.record_count == 0 and list(reader.records()) == []
    assert reader.size == MIN_SNAPSHOT_SIZE + len("cluster-a")


def test_batches_are_capped_by_bytes_as_well_as_records(tmp_path: Path) -> None:
    records = [b"x" * 100] * 10
    path = _write(tmp_path, SNAP, records, max_batch_bytes=250)
    assert [b.record_count for b in SnapshotReader(path).batches()] == [3, 3, 3, 1]


def test_records_larger_than_the_read_chunk_stream_correctly(tmp_path: Path) -> None:
    records = [os.urandom(700_000), b"small", os.urandom(1_500_000)]
    path = _write(tmp_path, SNAP, records, records_per_batch=1)
    assert list(SnapshotReader(path).records()) == records


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_flipped_bit_is_rejected(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    directory = tmp_path_factory.mktemp("flip")
    path = _write(directory, SNAP, _records(30), records_per_batch=7)
    raw = bytearray(path.read_bytes())
    bit = data.draw(st.integers(min_value=0, max_value=len(raw) * 8 - 1))
    raw[bit // 8] ^= 1 << (bit % 8)
    path.write_bytes(bytes(raw))
    with pytest.raises(SnapshotCorruptError) as caught:
        SnapshotReader(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda raw: raw[:-1], "footer"),
        (lambda raw: raw + b"\x00", "footer"),
        (lambda raw: raw[:20], "too short"),
        (lambda raw: b"XXXX" + raw[4:], "magic"),
        (lambda raw: raw[:4] + b"\x07" + raw[5:], "version 7"),
        (lambda raw: raw[:-5] + bytes([raw[-5] ^ 1]) + raw[-4:], "footer"),
        (lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]), "checksum mismatch"),
    ],
)
def test_structural_damage_is_named(
    tmp_path: Path, damage: Callable[[bytes], bytes], message: str
) -> None:
    path = _write(tmp_path, SNAP, _records(5))
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(SnapshotCorruptError, match=message):
        SnapshotReader(path)


def test_a_renamed_snapshot_is_caught_by_its_header(tmp_path: Path) -> None:
    path = _write(tmp_path, SNAP, _records(5))
    lying = snapshot_path(tmp_path, SnapshotId(500, 3))
    path.rename(lying)
    with pytest.raises(SnapshotCorruptError, match="file name disagrees"):
        SnapshotReader(lying)


def test_an_abandoned_writer_leaves_only_a_part_file(tmp_path: Path) -> None:
    writer = SnapshotWriter(tmp_path, SNAP, cluster_id="c")
    writer.append(_records(3000))
    # No freeze: as if the process died here.
    assert list_snapshots(tmp_path) == []
    assert [p.name for p in tmp_path.iterdir()] == [writer.partial_path.name]
    assert writer.partial_path.name.startswith(partial_snapshot_path(tmp_path, SNAP).name[:-5])
    assert remove_partial_snapshots(tmp_path) == [writer.partial_path]
    assert list(tmp_path.iterdir()) == []
    writer.abort()


def test_a_writer_used_as_a_context_aborts_unless_frozen(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SnapshotWriter(tmp_path, SNAP, cluster_id="c") as writer:
        writer.append([b"a"])
        raise RuntimeError("snapshot generation failed")
    assert list(tmp_path.iterdir()) == []
    with SnapshotWriter(tmp_path, SNAP, cluster_id="c") as writer:
        writer.append([b"a"])
        writer.freeze()
    assert list_snapshots(tmp_path) == [SNAP]
    with pytest.raises(SnapshotError, match="closed"):
        writer.append([b"b"])
    with pytest.raises(SnapshotError, match="already exists"):
        SnapshotWriter(tmp_path, SNAP, cluster_id="c")


def test_listing_orders_by_end_offset_and_ignores_other_files(tmp_path: Path) -> None:
    ids = [SnapshotId(50, 2), SnapshotId(10, 1), SnapshotId(50, 1), SnapshotId(200, 4)]
    for snapshot_id in ids:
        _write(tmp_path, snapshot_id, [b"r"])
    (tmp_path / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "00000000000000000300-0000000005.checkpoint.part").write_bytes(b"")
    (tmp_path / "notes.checkpoint").write_bytes(b"")
    assert list_snapshots(tmp_path) == [ids[1], ids[2], ids[0], ids[3]]
    assert latest_snapshot(tmp_path) == SnapshotId(200, 4)
    assert delete_snapshots_before(tmp_path, SnapshotId(50, 2)) == [ids[1], ids[2]]
    assert list_snapshots(tmp_path) == [SnapshotId(50, 2), SnapshotId(200, 4)]


def test_no_snapshot_means_no_latest(tmp_path: Path) -> None:
    assert latest_snapshot(tmp_path) is None


def test_read_chunk_serves_the_raw_file(tmp_path: Path) -> None:
    path = _write(tmp_path, SNAP, _records(100))
    raw = path.read_bytes()
    assert read_chunk(path, 0, 10) == raw[:10]
    assert read_chunk(path, 100, 1 << 20) == raw[100:]
    assert read_chunk(path, len(raw), 10) == b""
    with pytest.raises(SnapshotError, match="outside the file"):
        read_chunk(path, len(raw) + 1, 10)


@settings(max_examples=40, deadline=None)
@given(
    chunk_sizes=st.lists(st.integers(min_value=1, max_value=900), min_size=1), resend=st.booleans()
)
def test_a_snapshot_received_in_chunks_equals_the_original(
    tmp_path_factory: pytest.TempPathFactory, chunk_sizes: list[int], resend: bool
) -> None:
    source_dir = tmp_path_factory.mktemp("leader")
    target_dir = tmp_path_factory.mktemp("follower")
    source = _write(source_dir, SNAP, _records(200, seed=5), records_per_batch=16)
    size = source.stat().st_size
    receiver = SnapshotReceiver(target_dir, SNAP, size, cluster_id="cluster-a")
    sizes = iter(chunk_sizes)
    while not receiver.complete:
        position = receiver.received_bytes
        if resend and position > 0:
            position -= 1  # a retried fetch overlapping what already arrived
        chunk = read_chunk(source, position, next(sizes, 4096))
        receiver.write_chunk(position, chunk)
    path = receiver.finish()
    assert path.read_bytes() == source.read_bytes()
    assert list(SnapshotReader(path).records()) == _records(200, seed=5)
    assert list_snapshots(target_dir) == [SNAP]


def test_receiver_refuses_gaps_overruns_and_early_finish(tmp_path: Path) -> None:
    receiver = SnapshotReceiver(tmp_path, SNAP, 100)
    receiver.write_chunk(0, b"a" * 10)
    with pytest.raises(SnapshotError, match="gap"):
        receiver.write_chunk(11, b"b")
    with pytest.raises(SnapshotError, match="overruns"):
        receiver.write_chunk(10, b"c" * 91)
    with pytest.raises(SnapshotError, match="10 of 100 bytes"):
        receiver.finish()
    receiver.abort()
    assert list(tmp_path.iterdir()) == []


def test_received_garbage_is_deleted_not_installed(tmp_path: Path) -> None:
    source = _write(tmp_path, SNAP, _records(9))
    raw = bytearray(source.read_bytes())
    raw[60] ^= 0xFF
    target = tmp_path / "target"
    target.mkdir()
    receiver = SnapshotReceiver(target, SNAP, len(raw))
    receiver.write_chunk(0, bytes(raw))
    with pytest.raises(SnapshotCorruptError, match="checksum"):
        receiver.finish()
    assert list(target.iterdir()) == []


def test_receiver_checks_the_snapshot_id_and_cluster(tmp_path: Path) -> None:
    source_dir = tmp_path / "leader"
    source_dir.mkdir()
    source = _write(source_dir, SNAP, _records(9))
    raw = source.read_bytes()
    other = SnapshotId(121, 3)
    receiver = SnapshotReceiver(tmp_path, other, len(raw))
    receiver.write_chunk(0, raw)
    with pytest.raises(SnapshotCorruptError, match="header says"):
        receiver.finish()
    receiver = SnapshotReceiver(tmp_path, SNAP, len(raw), cluster_id="cluster-b")
    receiver.write_chunk(0, raw)
    with pytest.raises(SnapshotCorruptError, match="cluster-b"):
        receiver.finish()
    assert list_snapshots(tmp_path) == []


def test_file_layout_is_pinned(tmp_path: Path) -> None:
    """Snapshots outlive the code and Spark reads them; this fails if the layout drifts."""
    path = _write(tmp_path, SNAP, [b"only"])
    raw = path.read_bytes()
    header = struct.pack(">4sBqiqqH", b"RMSN", 1, 120, 3, 1, 1234, 9) + b"cluster-a"
    assert raw.startswith(header)
    body = raw[len(header) : -FOOTER_SIZE]
    assert decode_batches(body, expected_base_offset=0)[0].records() == [b"only"]
    assert raw[-FOOTER_SIZE:] == struct.pack(
        ">4sQI", b"RMSF", len(raw) - FOOTER_SIZE, zlib.crc32(raw[:-FOOTER_SIZE])
    )


def _peer_snapshot(tmp_path: Path, seed: int) -> tuple[bytes, list[bytes]]:
    """A peer's snapshot at ``SNAP``, as the bytes a FetchSnapshot would bring, and its
    records."""
    peer = tmp_path / "peer"
    peer.mkdir()
    records = _records(40, seed=seed)
    return _write(peer, SNAP, records).read_bytes(), records


def _no_part_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".part")]


def test_a_fetched_snapshot_installed_while_the_node_writes_its_own_at_the_same_id(
    tmp_path: Path,
) -> None:
    """The race a fault campaign found: a restarted controller wrote its own snapshot while a
    peer's snapshot at the same offset was being installed; both used the same ``.part`` file,
    the install renamed it away, and the node's own freeze failed with "No such file or
    directory"."""
    fetched, peer_records = _peer_snapshot(tmp_path, seed=1)
    own = tmp_path / "own"
    own.mkdir()
    writer = SnapshotWriter(own, SNAP, cluster_id="cluster-a")
    writer.append(_records(40, seed=2))
    receiver = SnapshotReceiver(own, SNAP, len(fetched), cluster_id="cluster-a")
    receiver.write_chunk(0, fetched)
    installed = receiver.finish()
    frozen = writer.freeze()
    assert frozen == installed == snapshot_path(own, SNAP)
    assert list(SnapshotReader(frozen).records()) == peer_records, "the first in place stays"
    assert _no_part_files(own)


def test_a_snapshot_written_while_a_fetch_of_the_same_id_is_under_way(tmp_path: Path) -> None:
    """The other order: the receiver opened first and the node froze its own in between."""
    fetched, _ = _peer_snapshot(tmp_path, seed=1)
    own = tmp_path / "own"
    own.mkdir()
    own_records = _records(40, seed=2)
    receiver = SnapshotReceiver(own, SNAP, len(fetched), cluster_id="cluster-a")
    receiver.write_chunk(0, fetched[:100])
    writer = SnapshotWriter(own, SNAP, cluster_id="cluster-a")
    writer.append(own_records)
    frozen = writer.freeze()
    receiver.write_chunk(100, fetched[100:])
    assert receiver.finish() == frozen
    assert list(SnapshotReader(frozen).records()) == own_records
    assert _no_part_files(own)
