"""Crash safety of ``FileLog``: simulated lost writes, bit rot, and a real killed process."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.raft.batch import Batch, make_batch
from raftmeta.storage.codec import StopReason, encode_batch
from raftmeta.storage.errors import LogFailedError
from raftmeta.storage.log import FileLog, list_segment_files

from .support import records_for

REPO_ROOT = Path(__file__).resolve().parents[2]

_plans = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=4),  # records in the batch
        st.integers(min_value=1, max_value=60),  # bytes per record
        st.booleans(),  # flush after appending it
    ),
    min_size=1,
    max_size=12,
)


def _build(
    directory: Path, plan: list[tuple[int, int, bool]], segment_bytes: int
) -> tuple[list[Batch], list[int], int]:
    """Append per ``plan``; return the batches, their cumulative byte ends, and the bytes of
    the log (all segments end to end) that the last flush made durable."""
    log = FileLog.open(directory, segment_bytes=segment_bytes)
    batches: list[Batch] = []
    ends: list[int] = []
    total = 0
    durable = 0
    offset = 0
    for index, (count, size, flush) in enumerate(plan):
        batch = make_batch(offset, 1 + index // 4, records_for(offset, count, size))
        log.append([batch])
        batches.append(batch)
        total += len(encode_batch(batch))
        ends.append(total)
        offset += count
        if flush:
            log.flush()
            durable = total
    log.close()
    return batches, ends, durable


def _no_fsync() -> contextlib.AbstractContextManager[object]:
    """These tests model durability by which bytes survive, so real fsyncs only cost time."""
    return mock.patch("os.fsync")


def _crash(directory: Path, cut: int, vanish: bool) -> None:
    """Keep the first ``cut`` bytes of the log, as a power loss after the last flush could."""
    position = 0
    for _, path in list_segment_files(directory):
        size = path.stat().st_size
        if position + size <= cut:
            position += size
            continue
        keep = max(cut - position, 0)
        position += size
        if keep == 0 and vanish:
            path.unlink()
        else:
            os.truncate(path, keep)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=_plans,
    segment_bytes=st.sampled_from([120, 400, 1 << 20]),
    vanish=st.booleans(),
    data=st.data(),
)
def test_a_crash_at_any_byte_after_the_last_flush_keeps_a_prefix_with_every_flushed_batch(
    plan: list[tuple[int, int, bool]], segment_bytes: int, vanish: bool, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as name, _no_fsync():
        directory = Path(name)
        batches, ends, durable = _build(directory, plan, segment_bytes)
        cut = data.draw(st.integers(min_value=durable, max_value=ends[-1]), label="cut")
        _crash(directory, cut, vanish)

        log = FileLog.open(directory, segment_bytes=segment_bytes)
        survivors = sum(1 for end in ends if end <= cut)
        assert log.batches() == batches[:survivors]
        assert all(end > durable for end in ends[survivors:])
        assert log.recovery.bytes_dropped == cut - (ends[survivors - 1] if survivors else 0)

        # The recovered log is a normal log again: it extends and reopens cleanly.
        follow = make_batch(log.log_end_offset, 99, [b"after"])
        log.append([follow])
        log.flush()
        log.close()
        log = FileLog.open(directory, segment_bytes=segment_bytes)
        assert log.batches() == [*batches[:survivors], follow]
        assert log.recovery.clean
        log.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=_plans, segment_bytes=st.sampled_from([120, 1 << 20]), data=st.data())
def test_a_flipped_bit_anywhere_drops_its_batch_and_everything_after(
    plan: list[tuple[int, int, bool]], segment_bytes: int, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as name, _no_fsync():
        directory = Path(name)
        batches, ends, _ = _build(directory, plan, segment_bytes)
        bit = data.draw(st.integers(min_value=0, max_value=ends[-1] * 8 - 1), label="bit")
        position = 0
        for _, path in list_segment_files(directory):
            size = path.stat().st_size
            if position <= bit // 8 < position + size:
                raw = bytearray(path.read_bytes())
                raw[bit // 8 - position] ^= 1 << (bit % 8)
                path.write_bytes(bytes(raw))
            position += size
        hit = next(index for index, end in enumerate(ends) if bit // 8 < end)
        log = FileLog.open(directory, segment_bytes=segment_bytes)
        assert log.batches() == batches[:hit]
        assert log.recovery.reason is not None
        log.close()


# ------------------------------------------------------------------ a real process, killed


def _run_writer_until_acks(directory: Path, wanted: int) -> list[int]:
    """Start the writer, wait for ``wanted`` acknowledgements, kill -9 it, return all acks."""
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("crash_writer.py")), str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert child.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    acks: list[int] = []
    deadline = time.monotonic() + 20
    try:
        while len(acks) < wanted:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"writer acknowledged only {len(acks)} flushes in time"
            line = lines.get(timeout=remaining)
            if line is None:
                raise AssertionError(
                    f"writer exited early: {child.stderr.read() if child.stderr else ''}"
                )
            acks.append(int(line))
    finally:
        child.kill()
        child.wait(timeout=10)
    reader.join(timeout=10)
    assert not reader.is_alive()
    while (line := lines.get_nowait()) is not None:
        acks.append(int(line))  # flushed before the kill landed: just as binding
    if child.stderr is not None:
        child.stderr.close()
    return acks


def _assert_every_ack_present_once(directory: Path, acks: list[int]) -> int:
    log = FileLog.open(directory, segment_bytes=4096)
    try:
        assert log.log_end_offset >= max(acks)
        expected_offset = 0
        for batch in log.batches():
            assert batch.base_offset == expected_offset
            for offset, record in enumerate(batch.records(), start=batch.base_offset):
                assert record.startswith(f"{offset}:".encode())
            expected_offset = batch.next_offset
        return log.log_end_offset
    finally:
        log.close()


def test_kill_9_never_loses_an_acknowledged_batch(tmp_path: Path) -> None:
    first_acks = _run_writer_until_acks(tmp_path, 40)
    first_end = _assert_every_ack_present_once(tmp_path, first_acks)
    assert len(list(tmp_path.glob("*.log"))) > 1  # the writer rolled segments

    second_acks = _run_writer_until_acks(tmp_path, 40)
    assert min(second_acks) > first_end
    _assert_every_ack_present_once(tmp_path, first_acks + second_acks)
    reopened = FileLog.open(tmp_path, segment_bytes=4096)
    assert reopened.recovery.clean  # the first reopen already repaired any torn tail
    reopened.close()


# ------------------------------------------------------------- failures in the middle of a write


def _multi_segment_log(directory: Path) -> tuple[FileLog, list[Batch]]:
    batches = [make_batch(o, 1, records_for(o, 2, 30)) for o in range(0, 16, 2)]
    log = FileLog.open(directory, segment_bytes=2 * len(encode_batch(batches[0])))
    log.append(batches)
    log.flush()
    assert len(log.segment_paths()) == 4
    return log, batches


def test_a_failed_write_poisons_the_log_until_it_is_reopened(tmp_path: Path) -> None:
    log, batches = _multi_segment_log(tmp_path)

    def half_then_fail(fd: int, data: bytes | memoryview) -> None:
        os.write(fd, bytes(data)[: len(data) // 2])
        raise OSError(28, "No space left on device")

    with (
        mock.patch("raftmeta.storage.log.write_all", half_then_fail),
        pytest.raises(OSError, match="No space"),
    ):
        log.append([make_batch(16, 1, [b"lost"])])
    with pytest.raises(LogFailedError, match="reopen"):
        log.flush()
    with pytest.raises(LogFailedError):
        log.append([make_batch(16, 1, [b"again"])])
    log.close()
    log = FileLog.open(tmp_path)
    assert log.batches() == batches
    assert log.recovery.reason in (StopReason.TORN_HEADER, StopReason.TORN_PAYLOAD)


def _fail_after(calls: int) -> object:
    """A ``Path.unlink`` that works ``calls`` times, then fails as a crash would stop it."""
    real_unlink = Path.unlink
    done = [0]

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if done[0] == calls:
            raise OSError(5, "simulated crash")
        done[0] += 1
        real_unlink(self, missing_ok=missing_ok)

    return unlink


def test_an_interrupted_reset_leaves_a_prefix_of_the_old_log(tmp_path: Path) -> None:
    log, batches = _multi_segment_log(tmp_path)
    with mock.patch.object(Path, "unlink", _fail_after(2)), pytest.raises(OSError):
        log.reset(100)
    log.close()
    log = FileLog.open(tmp_path)
    assert (log.log_start_offset, log.batches()) == (0, batches[:4])


def test_an_interrupted_truncation_leaves_a_prefix_of_the_old_log(tmp_path: Path) -> None:
    log, batches = _multi_segment_log(tmp_path)
    with mock.patch.object(Path, "unlink", _fail_after(1)), pytest.raises(OSError):
        log.truncate_to(2)
    log.close()
    log = FileLog.open(tmp_path)
    assert log.batches() == batches[:6]


def test_an_interrupted_advance_start_still_starts_where_it_was_asked(tmp_path: Path) -> None:
    log, batches = _multi_segment_log(tmp_path)
    with mock.patch.object(Path, "unlink", _fail_after(0)), pytest.raises(OSError):
        log.advance_start(12)
    log.close()
    log = FileLog.open(tmp_path)
    assert (log.log_start_offset, log.batches()) == (12, batches[6:])
