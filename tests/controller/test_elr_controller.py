"""The controller's KIP-966 duties: bootstrap feature levels, ELR upkeep on AlterPartition,
ClearElrRecord on a min.insync.replicas change, and UpdateFeatures' checks."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from raftmeta.common.brokers import (
    AlterPartitionRequest,
    BrokerRegistrationRequest,
    IsrMember,
    PartitionIsrChange,
)
from raftmeta.common.configs import AlterConfig, AlterConfigOp, ConfigResourceRef
from raftmeta.common.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    METADATA_VERSION,
    SUPPORTED_FEATURES,
    FeatureUpdate,
)
from raftmeta.common.topics import NewTopic
from raftmeta.controller.features import update_feature_records
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import (
    ClearElrRecord,
    ConfigResourceType,
    FeatureLevelRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicId,
    TopicRecord,
    encode_record,
)
from raftmeta.storage import SnapshotReader, SnapshotWriter
from tests.controller.harness import CLUSTER_ID, NODE_ID, Harness, run_async


def committed_records(h: Harness) -> list[Record]:
    return [
        record
        for batch in h.log.batches[: h.log.committed_count]
        if not batch.is_control
        for record in h.log.records(batch)
    ]


TOPIC = bytes(range(16))
ELR = ELIGIBLE_LEADER_REPLICAS_VERSION
ELR_ON = [FeatureUpdate(METADATA_VERSION, 27), FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 1)]


async def add_brokers(h: Harness, count: int) -> dict[int, int]:
    """Brokers 1..count of this build (reporting its feature ranges), unfenced."""
    epochs = {
        broker_id: await h.run(
            h.controller.register_broker(
                BrokerRegistrationRequest(
                    broker_id, CLUSTER_ID, bytes([broker_id]) * 16, features=SUPPORTED_FEATURES
                )
            )
        )
        for broker_id in range(1, count + 1)
    }
    for broker_id, epoch in epochs.items():
        await h.heartbeat(broker_id, epoch)
    return epochs


async def setup(*, elr: bool) -> tuple[Harness, dict[int, int], TopicId]:
    """Brokers 1-4; topic t, partition 0 on (1, 2, 3) led by 1; min ISR 2."""
    h = Harness(min_insync_replicas=2)
    await h.start()
    epochs = await add_brokers(h, 4)
    if elr:
        await h.run(h.controller.update_features(ELR_ON))
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2, 3)})]))
    return h, epochs, created.topic_id


async def shrink(h: Harness, epochs: dict[int, int], topic_id: TopicId, *isr: int) -> None:
    partition = h.log.replay_all().partition(topic_id, 0)
    assert partition is not None
    change = PartitionIsrChange(
        0,
        partition.leader_epoch,
        tuple(IsrMember(b) for b in isr),
        partition.partition_epoch,
    )
    [result] = await h.run(
        h.controller.alter_partition(AlterPartitionRequest(1, epochs[1], topic_id, (change,)))
    )
    assert result.error.ok, result.error


@run_async
async def test_alter_partition_keeps_the_elr_when_the_feature_is_on() -> None:
    h, epochs, topic_id = await setup(elr=True)
    await shrink(h, epochs, topic_id, 1, 2)
    assert h.log.replay_all().partition(topic_id, 0).elr == ()  # type: ignore[union-attr]
    await shrink(h, epochs, topic_id, 1)
    below = h.log.replay_all().partition(topic_id, 0)
    assert below is not None and below.isr == (1,) and below.elr == (2,)
    await shrink(h, epochs, topic_id, 1, 2)
    back = h.log.replay_all().partition(topic_id, 0)
    assert back is not None and back.isr == (1, 2) and back.elr == (), "back at min ISR"
    await h.stop()


@run_async
async def test_alter_partition_writes_no_elr_when_the_feature_is_off() -> None:
    h, epochs, topic_id = await setup(elr=False)
    await shrink(h, epochs, topic_id, 1)
    below = h.log.replay_all().partition(topic_id, 0)
    assert below is not None and below.isr == (1,) and below.elr == ()
    await h.stop()


@run_async
async def test_a_min_isr_change_clears_the_elr() -> None:
    h, epochs, topic_id = await setup(elr=True)
    await shrink(h, epochs, topic_id, 1)
    resource = ConfigResourceRef(ConfigResourceType.TOPIC, "t")
    await h.run(
        h.controller.incremental_alter_configs(
            {resource: [AlterConfig("min.insync.replicas", AlterConfigOp.SET, "3")]}
        )
    )
    records = h.log.replay_all()
    partition = records.partition(topic_id, 0)
    assert partition is not None and partition.elr == ()
    assert ClearElrRecord("t") in committed_records(h)
    await h.stop()


@run_async
async def test_update_features_checks_every_update_before_writing_any() -> None:
    h = Harness()
    await h.start()
    await add_brokers(h, 2)
    with pytest.raises(KafkaError) as refused:
        await h.run(
            h.controller.update_features(
                [
                    FeatureUpdate(METADATA_VERSION, 27),
                    FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 2),
                ]
            )
        )
    assert refused.value.code is ErrorCode.INVALID_UPDATE_VERSION
    assert refused.value.message == (
        "The update failed for all features since the following feature had an error: "
        "Invalid update version 2 for feature eligible.leader.replicas.version. "
        "Local controller 3000 only supports versions 0-1"
    )
    assert h.log.replay_all().features == {}
    with pytest.raises(KafkaError, match=r"depends on metadata\.version 23"):
        await h.run(
            h.controller.update_features(
                [
                    FeatureUpdate(METADATA_VERSION, 21),
                    FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 1),
                ]
            )
        )
    await h.run(h.controller.update_features(ELR_ON))
    with pytest.raises(KafkaError, match="without setting the upgrade type"):
        await h.run(h.controller.update_features([FeatureUpdate(METADATA_VERSION, 25)]))
    await h.run(
        h.controller.update_features([FeatureUpdate(METADATA_VERSION, 25, allow_downgrade=True)])
    )
    assert dict(h.log.replay_all().features) == {
        METADATA_VERSION: 25,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
    }
    await h.stop()


@run_async
async def test_the_first_leader_of_an_empty_log_writes_the_bootstrap_levels() -> None:
    h = Harness(bootstrap_features=((METADATA_VERSION, 27), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1)))
    await h.start()
    tick = await h.submit(h.controller.tick())
    h.log.commit()
    await tick
    assert FeatureLevelRecord(METADATA_VERSION, 27) in committed_records(h)
    assert dict(h.log.replay_all().features) == {
        METADATA_VERSION: 27,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
    }
    await h.stop()


def test_a_snapshot_from_before_kip_966_still_loads_and_can_be_upgraded(tmp_path: Path) -> None:
    """A snapshot of version 0 partition records (no ELR fields), as a build before KIP-966
    wrote it, loads into the controller, which then turns the feature on and keeps the ELR."""
    history: list[Record] = [
        *(
            RegisterBrokerRecord(b, bytes([b]) * 16, b, features=SUPPORTED_FEATURES, fenced=False)
            for b in (1, 2, 3)
        ),
        TopicRecord("t", TOPIC),
        PartitionRecord(0, TOPIC, (1, 2, 3), (1, 2, 3), leader=1),
    ]
    old_bytes = [
        msgpack.packb([3, 0, *msgpack.unpackb(encode_record(r))[2:-2]])
        if isinstance(r, PartitionRecord)
        else encode_record(r)
        for r in history
    ]
    with SnapshotWriter(tmp_path, SnapshotId(len(history), 1), cluster_id=CLUSTER_ID) as writer:
        writer.append(old_bytes)
        path = writer.freeze()
    h = Harness(min_insync_replicas=2)
    h.controller.handle_load_snapshot(SnapshotReader(path))
    loaded = h.controller.committed_image.partition(TOPIC, 0)
    assert loaded is not None and loaded.isr == (1, 2, 3) and loaded.elr == ()
    image = h.controller.committed_image
    upgrade = update_feature_records(image, ELR_ON, controller_id=NODE_ID)
    image.apply_batch(list(upgrade), image.offset + 1)
    assert dict(image.features) == {METADATA_VERSION: 27, ELR: 1}
