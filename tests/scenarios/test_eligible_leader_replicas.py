"""Eligible leader replicas (KIP-966) on a real quorum: six brokers, ``min.insync.replicas=2``,
a partition of three replicas whose brokers stop one by one until its ISR is empty.

With ``eligible.leader.replicas.version`` 1 the partition comes back with a clean leader as soon
as a replica that left the ISR cleanly returns: no unclean election, no RECOVERING. With the
feature off the same run leaves the partition offline until an unclean election. A broker that
returns without proof of a clean stop is not eligible.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from elections import ElrExposure, elr_exposure
from raftmeta.admin import AsyncAdminClient, FeatureUpdate
from raftmeta.broker import Broker
from raftmeta.cli.main import main
from raftmeta.common.brokers import BrokerRegistrationRequest
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.features import ELIGIBLE_LEADER_REPLICAS_VERSION, METADATA_VERSION
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import PartitionRegistration
from raftmeta.records import BrokerFeature
from raftmeta.server.metrics import start_metrics
from raftmeta.storage.markers import CLEAN_SHUTDOWN_FILE
from tests.server.test_metrics import scrape, value
from tests.support.broker_quorum import DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

BROKER_IDS = range(1, 7)
ELR_ON = [FeatureUpdate(METADATA_VERSION, 27), FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 1)]


def _quorum(tmp_path: Path) -> BrokerQuorum:
    return BrokerQuorum(tmp_path, controller_config={"min.insync.replicas": 2})


async def _start_all(quorum: BrokerQuorum) -> None:
    for broker_id in BROKER_IDS:
        await quorum.start_broker(broker_id)
    await wait_until_async(
        lambda: (
            all(not b.fenced for b in quorum.controllers_image().brokers.values())
            and len(quorum.controllers_image().brokers) == len(BROKER_IDS)
        ),
        "every broker registered and unfenced",
        DEADLINE_S,
    )


def _admin(quorum: BrokerQuorum) -> AsyncAdminClient:
    return AsyncAdminClient({"bootstrap.servers": quorum.bootstrap_servers})


async def _partition(quorum: BrokerQuorum, topic_id: bytes) -> PartitionRegistration:
    partition = quorum.controllers_image().partition(topic_id, 0)
    assert partition is not None
    return partition


async def _stop_cleanly(quorum: BrokerQuorum, broker_id: int) -> None:
    broker = quorum.brokers.pop(broker_id)
    assert await broker.controlled_shutdown(timeout_s=DEADLINE_S)
    await broker.stop()


async def _drain_isr(quorum: BrokerQuorum, topic_id: bytes) -> tuple[int, ...]:
    """Stops the partition's replicas one by one, cleanly, until its ISR is drained."""
    replicas = (await _partition(quorum, topic_id)).replicas
    for broker_id in replicas:
        await _stop_cleanly(quorum, broker_id)

        async def out_of_isr(broker_id: int = broker_id) -> bool:
            p = await _partition(quorum, topic_id)
            return broker_id not in p.isr or p.leader == -1

        await wait_until_async(out_of_isr, f"broker {broker_id} out of the ISR", DEADLINE_S)
    return replicas


def test_with_elr_on_a_clean_replica_comes_back_as_a_clean_leader(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await _start_all(quorum)
        async with _admin(quorum) as admin:
            await admin.update_features(ELR_ON)
        topic_id = await quorum.create_topic("orders", 1, 3)
        first, second, last = await _drain_isr(quorum, topic_id)

        drained = await _partition(quorum, topic_id)
        assert drained.leader == -1 and drained.isr == ()
        # The two that left below min ISR hold every committed write: they are the ELR.
        assert sorted(drained.elr) == sorted((second, last))
        assert drained.last_known_elr == (last,)
        assert first not in drained.elr

        await quorum.start_broker(second)  # its clean-stop marker is on disk

        async def led() -> PartitionRegistration | None:
            p = await _partition(quorum, topic_id)
            return p if p.leader != -1 else None

        back = await wait_until_async(led, "the partition led again", DEADLINE_S)
        assert back.leader == second, "a clean election from the ELR"
        assert back.isr == (second,)
        assert back.leader_recovery_state == 0, "clean: no RECOVERING"
        assert back.elr == (last,) and back.last_known_elr == ()

        # The metrics say so: one partition led from the ELR, none left to an unclean election.
        node = next(n for n in quorum.controllers.values() if n.controller.is_active)
        server = start_metrics(0, node.node, node.controller, client=node.client, host="127.0.0.1")
        try:
            samples = await scrape(server)
        finally:
            server.close()
        assert value(samples, "raftmeta_partitions_led_from_elr") == 1
        assert value(samples, "raftmeta_partitions_unclean_only") == 0

    run_scenario(scenario, _quorum(tmp_path))


def test_with_elr_off_the_same_run_needs_an_unclean_election(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await _start_all(quorum)
        topic_id = await quorum.create_topic("orders", 1, 3)
        _first, second, last = await _drain_isr(quorum, topic_id)
        drained = await _partition(quorum, topic_id)
        assert drained.leader == -1 and drained.isr == (last,) and drained.elr == ()

        await quorum.start_broker(second)
        await wait_until_async(
            lambda: not quorum.controllers_image().brokers[second].fenced,
            "the returning broker unfenced",
            DEADLINE_S,
        )
        assert (await _partition(quorum, topic_id)).leader == -1, "offline without ELR"
        async with _admin(quorum) as admin:
            result = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("orders", 0)])
            assert await result.partitions() == {TopicPartition("orders", 0): None}
        unclean = await _partition(quorum, topic_id)
        assert unclean.leader == second and unclean.leader_recovery_state == 1

    run_scenario(scenario, _quorum(tmp_path))


def test_a_broker_back_from_an_unclean_stop_is_not_eligible(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await _start_all(quorum)
        async with _admin(quorum) as admin:
            await admin.update_features(ELR_ON)
        topic_id = await quorum.create_topic("orders", 1, 3)
        _first, second, last = await _drain_isr(quorum, topic_id)
        # A crash leaves no clean-stop proof: what the next start finds is what a crash left.
        (quorum.root / f"broker-{second}" / CLEAN_SHUTDOWN_FILE).unlink()
        await quorum.start_broker(second)
        await wait_until_async(
            lambda: not quorum.controllers_image().brokers[second].fenced,
            "the returning broker unfenced",
            DEADLINE_S,
        )
        after = await _partition(quorum, topic_id)
        assert second not in after.elr and after.elr == (last,)
        assert after.leader == -1, "no clean leader while the last eligible replica is away"
        assert elr_exposure(quorum.controllers_image(), 2) == ElrExposure(0, 0)

        # The last one back without proof too: nothing eligible is left, and its election as
        # the last known leader is unclean (RECOVERING), as Kafka's balanced recovery is.
        await _stop_cleanly(quorum, second)
        (quorum.root / f"broker-{last}" / CLEAN_SHUTDOWN_FILE).unlink()
        await quorum.start_broker(last)

        async def led() -> PartitionRegistration | None:
            p = await _partition(quorum, topic_id)
            return p if p.leader != -1 else None

        back = await wait_until_async(led, "the last known leader elected", DEADLINE_S)
        assert back.leader == last and back.leader_recovery_state == 1
        assert back.isr == (last,) and back.elr == () and back.last_known_elr == ()

    run_scenario(scenario, _quorum(tmp_path))


def test_features_upgrade_refused_while_a_broker_lacks_support(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await _start_all(quorum)
        old = BrokerFeature(ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 0)
        await _stop_cleanly(quorum, 6)
        settings = dataclasses.replace(
            quorum.broker_settings(6),
            supported_features=(BrokerFeature(METADATA_VERSION, 7, 27), old),
        )
        broker = Broker(settings)
        await broker.start()
        quorum.brokers[6] = broker
        await wait_until_async(
            lambda: (
                quorum.controllers_image().brokers[6].features[-1] == old
                and not quorum.controllers_image().brokers[6].fenced
            ),
            "broker 6 back, supporting ELR 0 only",
            DEADLINE_S,
        )
        cli = ["features", "upgrade", "--bootstrap-server", quorum.bootstrap_servers]
        elr = f"--feature={ELIGIBLE_LEADER_REPLICAS_VERSION}=1"
        status = await asyncio.to_thread(main, [*cli, "--feature=metadata.version=4.1-IV1", elr])
        out, err = capsys.readouterr()
        assert status == 1 and out == ""
        assert err.count("\n") == 1
        assert (
            "Invalid update version 1 for feature eligible.leader.replicas.version. "
            "Broker 6 only supports versions 0-0 (INVALID_UPDATE_VERSION)" in err
        )
        assert ELIGIBLE_LEADER_REPLICAS_VERSION not in quorum.controllers_image().features
        assert METADATA_VERSION not in quorum.controllers_image().features, "all or nothing"

        # Dry run after broker 6 is upgraded: accepted, nothing written.
        await _stop_cleanly(quorum, 6)
        await quorum.start_broker(6)
        await wait_until_async(
            lambda: (
                quorum.controllers_image().brokers[6].features[-1].max_supported_version == 1
                and not quorum.controllers_image().brokers[6].fenced
            ),
            "broker 6 upgraded",
            DEADLINE_S,
        )
        status = await asyncio.to_thread(main, [*cli, elr, "--dry-run"])
        out, err = capsys.readouterr()
        assert (status, out, err) == (
            0,
            f"{ELIGIBLE_LEADER_REPLICAS_VERSION} can be upgraded to 1.\n",
            "",
        )
        assert ELIGIBLE_LEADER_REPLICAS_VERSION not in quorum.controllers_image().features

        status = await asyncio.to_thread(main, [*cli, "--release-version", "4.1"])
        out, err = capsys.readouterr()
        assert status == 0, err
        await wait_until_async(
            lambda: quorum.controllers_image().features.get(ELIGIBLE_LEADER_REPLICAS_VERSION) == 1,
            "ELR finalized",
            DEADLINE_S,
        )
        status = await asyncio.to_thread(
            main, ["features", "describe", "--bootstrap-server", quorum.bootstrap_servers]
        )
        out, _err = capsys.readouterr()
        assert status == 0
        assert (
            "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\t"
            "SupportedMaxVersion: 1\tFinalizedVersionLevel: 1\t" in out
        )
        assert "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t" in out
        assert "FinalizedVersionLevel: 4.1-IV1" in out

        # A downgrade needs the downgrade action, not upgrade.
        status = await asyncio.to_thread(
            main, [*cli, f"--feature={ELIGIBLE_LEADER_REPLICAS_VERSION}=0"]
        )
        _out, err = capsys.readouterr()
        assert status == 1 and "downgrade" in err
        down = ["features", "downgrade", "--bootstrap-server", quorum.bootstrap_servers]
        status = await asyncio.to_thread(
            main, [*down, f"--feature={ELIGIBLE_LEADER_REPLICAS_VERSION}=0"]
        )
        out, err = capsys.readouterr()
        assert (status, err) == (0, "")
        assert out == f"{ELIGIBLE_LEADER_REPLICAS_VERSION} was downgraded to 0.\n"

    run_scenario(scenario, _quorum(tmp_path))


def test_a_broker_without_a_finalized_level_cannot_register(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await _start_all(quorum)
        async with _admin(quorum) as admin:
            await admin.update_features(ELR_ON)
            with pytest.raises(KafkaError) as refused:
                await admin.update_features([FeatureUpdate(METADATA_VERSION, 99)])
        assert refused.value.code is ErrorCode.INVALID_UPDATE_VERSION
        assert refused.value.message.startswith(
            "The update failed for all features since the following feature had an error: "
        )
        controller = quorum.active_controller()
        old_build = (BrokerFeature(METADATA_VERSION, 7, 21),)
        with pytest.raises(KafkaError) as unsupported:
            await controller.register_broker(
                BrokerRegistrationRequest(
                    7, controller.settings.cluster_id, bytes(16), features=old_build
                )
            )
        assert unsupported.value.code is ErrorCode.UNSUPPORTED_VERSION
        assert "does not support finalized version 1 of eligible.leader.replicas.version" in (
            unsupported.value.message
        )

    run_scenario(scenario, _quorum(tmp_path))
