"""A broker of a dynamic quorum (KIP-853) configured with ``controller.quorum.bootstrap.servers``
only, as Kafka's brokers are: it learns the voters from the quorum and follows them as they
change. Real ``raftmeta serve`` controllers under a writer and a ``raftmeta broker`` process:
the broker keeps following the log after a controller joins, a first voter is removed and its
process is gone."""

from __future__ import annotations

from pathlib import Path

from raftmeta.cli.devcluster import BrokerProcess, broker_properties
from raftmeta.cli.quorum_describe import QuorumInfo
from raftmeta.config.properties import format_properties
from tests.process.membership_changes import dynamic_quorum

BROKER_ID = 1


def observer_end(info: QuorumInfo, node_id: int) -> int:
    return next((o.log_end_offset for o in info.observers if o.node_id == node_id), -1)


def test_a_broker_given_bootstrap_servers_follows_the_voters_as_they_change(
    tmp_path: Path,
) -> None:
    with dynamic_quorum(tmp_path) as quorum:
        properties = broker_properties(
            BROKER_ID,
            quorum.first_ports,
            tmp_path / "broker-1",
            quorum.cluster_id,
            None,
            dynamic=True,
        )
        assert "controller.quorum.voters" not in properties
        config = tmp_path / "broker-1.properties"
        config.write_text(format_properties(properties))
        broker = BrokerProcess(BROKER_ID, config, tmp_path / "broker-1.log")
        quorum.start_all()
        broker.start()
        try:
            quorum.wait_for(
                lambda info: (
                    info.leader is not None
                    and observer_end(info, BROKER_ID) >= info.high_watermark > 0
                ),
                "the broker to follow the log",
            )
            quorum.new_controller(3003)
            quorum.start(3003)
            added = quorum.add_controller(3003)
            assert added.returncode == 0, added.stderr
            removed = quorum.remove_controller(3000, quorum.directory_id(3000))
            assert removed.returncode == 0, removed.stderr
            quorum.nodes[3000].kill()
            after = quorum.wait_for(
                lambda info: {v.node_id for v in info.voters} == {3001, 3002, 3003},
                "voters 3001-3003",
            )
            # The broker follows the new leader and voters: its log end passes what was
            # committed once the first voter was gone.
            quorum.wait_for(
                lambda info: observer_end(info, BROKER_ID) > after.high_watermark,
                "the broker to follow the changed quorum",
            )
            assert broker.running, broker.log_tail()
            assert "Traceback" not in (tmp_path / "broker-1.log").read_text()
        finally:
            broker.signal(15)
            broker.wait(30)
            if broker.running:
                broker.kill()
