"""ControllerNode as a whole: failover between controllers, snapshots of the image, a restart
that recovers the same image, metrics, and configuration errors at start-up."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import grpc
import pytest

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import parse_config
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage import MetadataDir
from tests.process.helpers import free_base_port, raftmeta
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario, run_with_deadline
from tests.support.waiting import wait_until_async


def test_a_stopped_leader_is_replaced_and_survivors_serve(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        first = await cluster.wait_for_active()
        await cluster.create_topic("before")
        survivors = [n for n in cluster.ids if n != first.node_id]
        await cluster.stop(first.node_id, graceful=False)
        second = await cluster.wait_for_active(not_node=first.node_id)
        assert second.node_id in survivors
        created = await cluster.create_topic("after")
        assert created.error_code == 0
        other = next(n for n in survivors if n != second.node_id)
        redirected = await cluster.admin(other).DescribeTopics(
            apb.DescribeTopicsRequest(all_topics=True)
        )
        assert redirected.header.error_code == ErrorCode.NOT_CONTROLLER
        assert redirected.header.controller_id == second.node_id
        assert redirected.header.controller_endpoint == second.address
        listed = await cluster.admin(second.node_id).DescribeTopics(
            apb.DescribeTopicsRequest(all_topics=True)
        )
        assert [t.name for t in listed.topics] == ["after", "before"]

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_snapshots_are_the_image_and_a_restart_recovers_it(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        for index in range(6):
            await cluster.create_topic(f"topic-{index}", partitions=4)
        active = await cluster.wait_for_active()
        follower = next(m for m in cluster.members.values() if m is not active)
        target = active.controller.committed_image.offset
        await wait_until_async(
            lambda: follower.node.running and follower.node.core.log.start_offset > target,
            "a follower snapshot past the topics",
        )
        assert list(cluster.data_dir(follower.node_id).rglob("*.checkpoint"))
        await cluster.stop(follower.node_id)
        restarted = await cluster.restart(follower.node_id)
        # It resumed from its snapshot: the log before it is gone.
        assert restarted.node.core.log.start_offset > target
        info = await (await cluster.active_admin()).DescribeCluster(
            apb.DescribeClusterRequest(include_image_digest=True)
        )
        await wait_until_async(
            lambda: restarted.controller.committed_image.offset >= info.metadata_offset,
            "the restarted node to catch up",
        )
        # Compare at one offset: replay the restarted node's image to the leader's offset.
        image = restarted.controller.committed_image
        assert image.topic_by_name("topic-5") is not None
        assert len(image.topic_ids_by_name) == 6
        leader_image = (await cluster.wait_for_active()).controller.committed_image
        assert image.digest() == leader_image.digest()

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "metadata.log.max.snapshot.interval.ms": 100,
                "metadata.log.max.record.bytes.between.snapshots": 1 << 30,
            },
        ),
    )


def test_metrics_are_served_when_configured(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.wait_for_active()
        member = cluster.members[cluster.ids[0]]
        assert member._metrics is not None
        url = member._metrics.url
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
        assert b"raftmeta_" in body

    run_scenario(scenario, ControllerQuorum(tmp_path, {"metrics.port": 0}))


def test_a_bad_placer_or_authorizer_is_a_one_line_config_error(tmp_path: Path) -> None:
    cluster = ControllerQuorum(tmp_path)
    with pytest.raises(ConfigError, match=r"replica\.placer\.class\.name"):
        ControllerNode(
            cluster.config(cluster.ids[0], **{"replica.placer.class.name": "no.such.Placer"})
        )
    with pytest.raises(ConfigError, match=r"authorizer\.class\.name.*not an authorizer"):
        ControllerNode(cluster.config(cluster.ids[0], **{"authorizer.class.name": "pathlib.Path"}))
    with pytest.raises(ConfigError, match=r"raftmeta\.acls.*unknown operation"):
        ControllerNode(
            cluster.config(
                cluster.ids[0],
                **{
                    "authorizer.class.name": "raftmeta.auth.AclAuthorizer",
                    "raftmeta.acls": "User:a:Fly:Cluster:kafka-cluster",
                },
            )
        )
    with pytest.raises(ConfigError, match=r"raftmeta\.auth\.tokens\.file"):
        ControllerNode(
            cluster.config(cluster.ids[0], **{"raftmeta.auth.tokens.file": str(tmp_path / "x")})
        )


def test_serve_refuses_an_unusable_authorizer_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "node.properties"
    config.write_text(
        "node.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{free_base_port(1)}\n"
        f"metadata.log.dir={tmp_path / 'data'}\n"
        "authorizer.class.name=pathlib.Path\n"
    )
    result = raftmeta("serve", "--config", str(config))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not an authorizer" in lines[0], result.stderr


def test_a_single_voter_started_from_its_configuration_serves(tmp_path: Path) -> None:
    """``await ControllerNode.start(config)``, the embedding API, with nothing else around."""
    MetadataDir.format(tmp_path / "node", 1, "single-voter")
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:1",
            "listeners": "CONTROLLER://127.0.0.1:0",
            "metadata.log.dir": str(tmp_path / "node"),
        }
    )

    async def main() -> None:
        member = await ControllerNode.start(config)
        try:
            await wait_until_async(lambda: member.controller.is_active, "the single voter to lead")
            assert member.address.startswith("127.0.0.1:") and not member.address.endswith(":0")
            async with grpc.aio.insecure_channel(member.address) as channel:
                admin = apb_grpc.AdminStub(channel)
                info = await admin.DescribeCluster(apb.DescribeClusterRequest())
            assert (info.header.error_code, info.cluster_id, info.controller_id) == (
                0,
                "single-voter",
                1,
            )
        finally:
            await member.stop()

    run_with_deadline(main(), 30)


def test_waiters_wake_at_commits_and_leader_changes_not_at_every_raft_input(
    tmp_path: Path,
) -> None:
    """The node reports every input it steps (fetches, votes, answers); the node's waiters
    (the Kafka listener, the controller registrar, ``serve``) are woken only when the node's
    role, epoch, leader or life moved, or a commit or snapshot changed the image."""

    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        active = await cluster.wait_for_active()
        inputs = notified = 0
        report_input = active.client.state_changed
        notify = active.changes.notify

        def counted_input() -> None:
            nonlocal inputs
            inputs += 1
            report_input()

        def counted_notify() -> None:
            nonlocal notified
            notified += 1
            notify()

        active.client.state_changed = counted_input  # type: ignore[method-assign]
        active.changes.notify = counted_notify  # type: ignore[method-assign]
        for index in range(10):
            await cluster.create_topic(f"topic-{index}")
        assert notified >= 10  # at least each create's commit
        assert notified * 2 <= inputs, (notified, inputs)
        follower = next(m for m in cluster.members.values() if m is not active)
        woken = asyncio.ensure_future(follower.changes.wait())
        await cluster.stop(active.node_id, graceful=False)
        await asyncio.wait_for(woken, 10)  # the leader's loss wakes the survivors' waiters

    run_scenario(scenario, ControllerQuorum(tmp_path))
