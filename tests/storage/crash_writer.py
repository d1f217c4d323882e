"""Child process for the power-loss test: appends and flushes until it is killed.

Usage: python crash_writer.py <log directory>. After every flush it prints the log end offset,
which promises that every record below it is durable. It continues from whatever log it finds,
so the test can kill it, let it recover, and kill it again.
"""

from __future__ import annotations

import sys

from raftmeta.raft.batch import make_batch
from raftmeta.storage.log import FileLog


def main(directory: str) -> None:
    log = FileLog.open(directory, segment_bytes=4096)
    offset = log.log_end_offset
    epoch = log.last_epoch or 1
    step = 0
    while True:
        pending = 2 if step % 3 == 0 else 1
        batches = []
        for _ in range(pending):
            count = 1 + step % 5
            size = 20 + (step * 37) % 300
            records = [f"{o}:".encode().ljust(size, b"r") for o in range(offset, offset + count)]
            batches.append(make_batch(offset, epoch, records))
            offset += count
        log.append(batches)
        log.flush()
        print(offset, flush=True)
        step += 1
        if step % 50 == 0:
            epoch += 1


if __name__ == "__main__":
    main(sys.argv[1])
