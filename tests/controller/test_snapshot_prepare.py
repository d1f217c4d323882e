"""The controller loads a snapshot in two halves: the build, which the Raft client runs on a
worker thread, leaves the controller as it was (still active, its images in place); the install
resigns and swaps the snapshot's image in."""

from __future__ import annotations

import asyncio
from pathlib import Path

from raftmeta.common.topics import NewTopic
from raftmeta.quorum.client import PreparingListener
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import encode_each
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter
from tests.controller.harness import CLUSTER_ID, Harness, run_async


def test_an_active_controller_stays_as_it_was_until_the_install(tmp_path: Path) -> None:
    @run_async
    async def body() -> None:
        source = Harness()
        await source.start()
        await source.add_brokers(2)
        await source.run(source.controller.create_topics([NewTopic("t", 3, 2)]))
        image = source.controller.committed_image
        end_offset = source.log.next_offset()
        with SnapshotWriter(tmp_path, SnapshotId(end_offset, 1), cluster_id=CLUSTER_ID) as writer:
            writer.append(encode_each(image.to_records()))
            reader = SnapshotReader(writer.freeze())
        await source.stop()

        h = Harness()
        await h.start()
        controller = h.controller
        assert isinstance(controller, PreparingListener)
        assert controller.is_active
        committed = controller.committed_image
        install = await asyncio.to_thread(controller.prepare_snapshot, reader)
        assert controller.is_active and controller.committed_image is committed
        install()
        assert not controller.is_active
        assert controller.committed_image.digest() == image.digest()
        assert controller.committed_image.offset == end_offset - 1
        await h.stop()

    body()
