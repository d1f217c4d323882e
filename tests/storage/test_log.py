from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from raftmeta.raft.batch import make_batch
from raftmeta.storage.codec import StopReason, encode_batch
from raftmeta.storage.errors import LogCorruptError, LogUsageError
from raftmeta.storage.log import LOG_START_CHECKPOINT, FileLog, segment_file_name

from .support import batch_run


def _reopen(log: FileLog, **kwargs: int) -> FileLog:
    log.close()
    return FileLog.open(log.directory, **kwargs)


def test_an_empty_directory_opens_as_an_empty_log(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    assert (log.log_start_offset, log.log_end_offset, log.batches()) == (0, 0, [])
    assert log.recovery.clean
    assert log.last_epoch is None


def test_appended_and_flushed_batches_come_back_after_reopen(tmp_path: Path) -> None:
    batches = batch_run(0, [1, 1, 2, 4])
    log = FileLog.open(tmp_path)
    log.append(batches[:2])
    log.append(batches[2:])
    log.flush()
    assert log.log_end_offset == 12
    log = _reopen(log)
    assert log.batches() == batches
    assert log.batches(from_offset=6) == batches[2:]
    assert log.epoch_cache.entries() == [(1, 0), (2, 6), (4, 9)]
    assert log.log_end_offset == log.flushed_end_offset == 12
    assert [p.name for p in log.segment_paths()] == [segment_file_name(0)]
    assert log.recovery.clean


def test_appends_that_break_the_log_rules_write_nothing(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [2]))
    with pytest.raises(LogUsageError, match="does not follow"):
        log.append(batch_run(3, [2]) + batch_run(7, [2]))
    with pytest.raises(LogUsageError, match="below the last epoch"):
        log.append(batch_run(3, [2]) + batch_run(6, [1]))
    assert log.log_end_offset == 3
    log.flush()
    assert (tmp_path / segment_file_name(0)).stat().st_size == len(encode_batch(log.batches()[0]))


def test_segments_roll_at_the_size_limit_and_reopen_in_order(tmp_path: Path) -> None:
    batches = batch_run(0, [1] * 10, records=2, size=40)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=3 * one)
    for batch in batches:
        log.append([batch])
    log.flush()
    names = [p.name for p in log.segment_paths()]
    assert names == [segment_file_name(base) for base in (0, 6, 12, 18)]
    assert sorted(p.name for p in tmp_path.glob("*.log")) == names
    log = _reopen(log, segment_bytes=3 * one)
    assert log.batches() == batches


def test_a_batch_larger_than_a_segment_gets_a_segment_of_its_own(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path, segment_bytes=10)
    log.append(batch_run(0, [1, 1]))
    log.flush()
    assert len(log.segment_paths()) == 2
    assert _reopen(log).log_end_offset == 6


def test_flush_costs_one_fsync_plus_the_directory_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [1]))
    assert calls == []
    log.flush()
    assert len(calls) == 2  # the new segment, and the directory that now names it
    calls.clear()
    for batches in (batch_run(3, [1]), batch_run(6, [1, 1])):
        log.append(batches)
        log.flush()
        assert len(calls) == 1
        calls.clear()
    log.flush()
    assert calls == []


def test_truncate_to_cuts_within_and_across_segments_and_survives_reopen(tmp_path: Path) -> None:
    batches = batch_run(0, [1, 1, 1, 2, 2, 2, 3], records=2)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=2 * one)
    log.append(batches)
    log.flush()
    assert len(log.segment_paths()) == 4

    log.truncate_to(10)  # inside the third segment
    assert log.log_end_offset == 10
    assert log.epoch_cache.entries() == [(1, 0), (2, 6)]
    log = _reopen(log, segment_bytes=2 * one)
    assert log.batches() == batches[:5]
    assert len(log.segment_paths()) == 3

    log.truncate_to(4)  # exactly at a segment's base: that segment goes entirely
    assert [p.name for p in log.segment_paths()] == [segment_file_name(0)]
    replacement = batch_run(4, [5, 5])
    log.append(replacement)
    log.flush()
    log = _reopen(log, segment_bytes=2 * one)
    assert log.batches() == batches[:2] + replacement
    assert log.epoch_cache.entries() == [(1, 0), (5, 4)]


def test_truncate_to_refuses_cuts_inside_batches_or_below_the_start(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [1, 1, 1]))
    log.advance_start(3)
    with pytest.raises(LogUsageError, match="inside a batch"):
        log.truncate_to(4)
    with pytest.raises(LogUsageError, match="inside a batch"):
        log.truncate_to(8)  # inside the last batch
    with pytest.raises(LogUsageError, match="inside a batch"):
        log.batches(from_offset=8)
    assert log.batches(from_offset=9) == []
    with pytest.raises(LogUsageError, match="below the log start"):
        log.truncate_to(0)
    log.truncate_to(100)  # past the end: nothing to cut
    assert log.log_end_offset == 9


def test_truncating_everything_leaves_an_empty_log_that_accepts_appends(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [1, 1]))
    log.flush()
    log.truncate_to(0)
    assert log.segment_paths() == []
    assert _reopen(log).log_end_offset == 0
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [2]))
    log.flush()
    assert _reopen(log).batches() == batch_run(0, [2])


def test_advance_start_drops_whole_segments_and_hides_the_rest(tmp_path: Path) -> None:
    batches = batch_run(0, [1, 1, 2, 2, 3, 3], records=2)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=2 * one)
    log.append(batches)
    log.flush()
    log.advance_start(6)  # inside the second segment, at a batch boundary
    assert log.log_start_offset == 6
    assert log.batches() == batches[3:]
    assert log.epoch_cache.entries() == [(2, 6), (3, 8)]
    assert [p.name for p in log.segment_paths()] == [segment_file_name(b) for b in (4, 8)]
    log = _reopen(log, segment_bytes=2 * one)
    assert (log.log_start_offset, log.batches()) == (6, batches[3:])
    assert json.loads((tmp_path / LOG_START_CHECKPOINT).read_text())["log_start_offset"] == 6


def test_advance_start_checks_its_argument(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [1, 1]))
    with pytest.raises(LogUsageError, match="inside a batch"):
        log.advance_start(1)
    with pytest.raises(LogUsageError, match="inside a batch"):
        log.advance_start(5)  # inside the last batch
    with pytest.raises(LogUsageError, match="use reset"):
        log.advance_start(7)
    log.advance_start(3)
    with pytest.raises(LogUsageError, match="cannot move back"):
        log.advance_start(0)


def test_advance_start_to_the_end_empties_the_log_durably(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.append(batch_run(0, [1, 1]))
    log.advance_start(6)
    assert log.segment_paths() == []
    log = _reopen(log)
    assert (log.log_start_offset, log.log_end_offset) == (6, 6)
    log.append(batch_run(6, [2]))
    log.flush()
    assert _reopen(log).batches() == batch_run(6, [2])


def test_reset_starts_an_empty_log_anywhere_and_survives_reopen(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path, segment_bytes=100)
    log.append(batch_run(0, [1] * 6))
    log.flush()
    log.reset(1000)
    assert (log.log_start_offset, log.log_end_offset, len(log.epoch_cache)) == (1000, 1000, 0)
    assert list(tmp_path.glob("*.log")) == []
    log = _reopen(log)
    assert (log.log_start_offset, log.log_end_offset) == (1000, 1000)
    with pytest.raises(LogUsageError):
        log.append(batch_run(0, [1]))
    log.append(batch_run(1000, [7]))
    log.flush()
    assert _reopen(log).batches() == batch_run(1000, [7])


def test_closed_log_refuses_work(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.close()
    log.close()
    with pytest.raises(LogUsageError, match="closed"):
        log.append(batch_run(0, [1]))


# ------------------------------------------------------------------------ recovery from damage


def _written_log(directory: Path, batches: int = 5) -> list[bytes]:
    log = FileLog.open(directory)
    encoded = []
    for batch in batch_run(0, range(1, batches + 1)):
        log.append([batch])
        encoded.append(encode_batch(batch))
    log.flush()
    log.close()
    return encoded


def test_torn_tail_is_cut_back_to_the_last_whole_batch(tmp_path: Path) -> None:
    encoded = _written_log(tmp_path)
    segment = tmp_path / segment_file_name(0)
    keep = sum(len(e) for e in encoded[:3])
    os.truncate(segment, keep + 7)
    log = FileLog.open(tmp_path)
    assert log.log_end_offset == 9
    assert log.recovery.reason is StopReason.TORN_HEADER
    assert log.recovery.dropped_from_offset == 9
    assert log.recovery.bytes_dropped == 7
    assert log.recovery.truncated_segment == segment.name
    assert "offset 9" in log.recovery.describe()
    assert segment.stat().st_size == keep
    log = _reopen(log)
    assert log.recovery.clean and log.log_end_offset == 9


@pytest.mark.parametrize("garbage", [b"\x00" * 200, b"\x01" + b"\xff" * 60, b"x"])
def test_trailing_garbage_is_dropped(tmp_path: Path, garbage: bytes) -> None:
    _written_log(tmp_path)
    with open(tmp_path / segment_file_name(0), "ab") as file:
        file.write(garbage)
    log = FileLog.open(tmp_path)
    assert log.log_end_offset == 15
    assert log.recovery.bytes_dropped == len(garbage)


def test_a_bad_batch_drops_every_later_segment(tmp_path: Path) -> None:
    batches = batch_run(0, [1] * 6, records=2)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=2 * one)
    log.append(batches)
    log.flush()
    log.close()
    with open(tmp_path / segment_file_name(4), "r+b") as file:
        file.seek(one + 40)
        byte = file.read(1)
        file.seek(one + 40)
        file.write(bytes([byte[0] ^ 0x01]))
    log = FileLog.open(tmp_path)
    assert log.batches() == batches[:3]
    assert log.recovery.reason is StopReason.CRC_MISMATCH
    assert log.recovery.segments_deleted == (segment_file_name(8),)
    assert log.recovery.bytes_dropped == 3 * one
    assert sorted(p.name for p in tmp_path.glob("*.log")) == [segment_file_name(b) for b in (0, 4)]


def test_a_missing_segment_in_the_middle_drops_everything_after_it(tmp_path: Path) -> None:
    batches = batch_run(0, [1] * 6, records=2)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=2 * one)
    log.append(batches)
    log.flush()
    log.close()
    (tmp_path / segment_file_name(4)).unlink()
    log = FileLog.open(tmp_path)
    assert log.batches() == batches[:2]
    assert log.recovery.reason is StopReason.NOT_CONTIGUOUS
    assert log.recovery.segments_deleted == (segment_file_name(8),)


def test_interrupted_advance_start_is_finished_by_recovery(tmp_path: Path) -> None:
    batches = batch_run(0, [1] * 6, records=2)
    one = len(encode_batch(batches[0]))
    log = FileLog.open(tmp_path, segment_bytes=2 * one)
    log.append(batches)
    log.flush()
    log.close()
    # The checkpoint reached the disk but the process died before deleting any segment.
    (tmp_path / LOG_START_CHECKPOINT).write_text('{"data_version": 1, "log_start_offset": 8}')
    log = FileLog.open(tmp_path)
    assert log.recovery.clean
    assert log.recovery.segments_below_start == (segment_file_name(0), segment_file_name(4))
    assert log.batches() == batches[4:]


def test_log_start_past_all_data_gives_an_empty_log_there(tmp_path: Path) -> None:
    _written_log(tmp_path)
    (tmp_path / LOG_START_CHECKPOINT).write_text('{"data_version": 1, "log_start_offset": 40}')
    log = FileLog.open(tmp_path)
    assert (log.log_start_offset, log.log_end_offset) == (40, 40)
    assert list(tmp_path.glob("*.log")) == []


def test_log_start_inside_a_batch_is_refused(tmp_path: Path) -> None:
    _written_log(tmp_path)
    (tmp_path / LOG_START_CHECKPOINT).write_text('{"data_version": 1, "log_start_offset": 4}')
    with pytest.raises(LogCorruptError, match="not a batch boundary"):
        FileLog.open(tmp_path)


@pytest.mark.parametrize("text", ["", "{", '{"data_version": 2, "log_start_offset": 1}', "[]"])
def test_unreadable_checkpoint_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / LOG_START_CHECKPOINT).write_text(text)
    with pytest.raises(LogCorruptError, match=LOG_START_CHECKPOINT):
        FileLog.open(tmp_path)


def test_a_first_segment_after_the_log_start_is_a_gap(tmp_path: Path) -> None:
    log = FileLog.open(tmp_path)
    log.reset(10)
    log.append(batch_run(10, [1]))
    log.flush()
    log.close()
    os.rename(tmp_path / segment_file_name(10), tmp_path / segment_file_name(13))
    log = FileLog.open(tmp_path)
    assert (log.log_start_offset, log.log_end_offset) == (10, 10)
    assert log.recovery.reason is StopReason.NOT_CONTIGUOUS


def test_a_lower_epoch_after_a_higher_one_is_treated_as_corruption(tmp_path: Path) -> None:
    good = batch_run(0, [3])
    with open(tmp_path / segment_file_name(0), "wb") as file:
        file.write(encode_batch(good[0]) + encode_batch(make_batch(3, 2, [b"old"])))
    log = FileLog.open(tmp_path)
    assert log.batches() == good
    assert log.recovery.reason is StopReason.EPOCH_REGRESSION
