"""Finding the controllers from bootstrap servers, and following a voter whose address was
only guessed once it leads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from raftmeta.broker import Broker, BrokerState
from raftmeta.broker.discovery import DiscoveryError, _match, discover, parse_servers
from raftmeta.raft.roles import Role
from raftmeta.storage import MetadataDir
from tests.support.broker_quorum import (
    CLUSTER_ID,
    CONTROLLER_IDS,
    DEADLINE_S,
    BrokerQuorum,
)
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


def test_servers_are_split_into_named_voters_and_plain_addresses() -> None:
    named, plain = parse_servers("3000@h:1, h:2,,h:3")
    assert named == {3000: "h:1"}
    assert plain == ["h:2", "h:3"]
    for bad in ("", "h", "x@h:1", "h:port", "h:0"):
        with pytest.raises(DiscoveryError):
            parse_servers(bad)


def test_only_the_leader_is_confirmed_and_the_rest_are_matched_in_order() -> None:
    contact = _match("c", {}, ["a:1", "b:2", "c:3"], [7, 8, 9], (8, "b:2"), "a:1,b:2,c:3")
    assert contact.voters == {7: "a:1", 8: "b:2", 9: "c:3"}
    assert contact.unconfirmed == frozenset({7, 9})
    # One voter left for one address: no guess involved.
    contact = _match("c", {9: "c:3"}, ["a:1", "b:2"], [7, 8, 9], (8, "b:2"), "")
    assert contact.voters == {7: "a:1", 8: "b:2", 9: "c:3"}
    assert contact.unconfirmed == frozenset()
    # One bootstrap server: the others start at the leader's address, to be checked later.
    contact = _match("c", {}, ["b:2"], [7, 8, 9], (8, "b:2"), "b:2")
    assert contact.voters == {7: "b:2", 8: "b:2", 9: "b:2"}
    assert contact.unconfirmed == frozenset({7, 9})


def test_discovery_finds_the_cluster_id_and_every_voter(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        contact = await discover(quorum.bootstrap_servers, timeout_s=DEADLINE_S)
        assert contact.cluster_id == quorum.controllers[CONTROLLER_IDS[0]].node.cluster_id
        assert set(contact.voters) == set(CONTROLLER_IDS)
        assert set(contact.voters.values()) == set(quorum.addresses.values())
        leader = next(n for n, c in quorum.controllers.items() if c.node.core.role is Role.LEADER)
        assert contact.voters[leader] == quorum.addresses[leader]
        assert leader not in contact.unconfirmed

    run_scenario(scenario, BrokerQuorum(tmp_path))


@pytest.mark.parametrize("guess", ["swapped followers", "one bootstrap server"])
def test_a_broker_with_a_wrong_guess_follows_the_new_leader_to_its_real_address(
    tmp_path: Path, guess: str
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        await wait_until_async(
            lambda: any(c.node.core.role is Role.LEADER for c in quorum.controllers.values()),
            "a leader among the controllers",
            DEADLINE_S,
        )
        leader = next(n for n, c in quorum.controllers.items() if c.node.core.role is Role.LEADER)
        first, second = (n for n in CONTROLLER_IDS if n != leader)
        settings = quorum.broker_settings(1)
        if guess == "swapped followers":
            # As matching addresses to ids by elimination can get them.
            voters = dict(quorum.addresses)
            voters[first], voters[second] = voters[second], voters[first]
            settings = replace(
                settings, voters=voters, unconfirmed_voters=frozenset({first, second})
            )
        else:
            contact = await discover(quorum.addresses[first], timeout_s=DEADLINE_S)
            assert contact.voters[leader] == quorum.addresses[leader]
            assert contact.unconfirmed == {first, second}
            settings = replace(
                settings,
                voters=contact.voters,
                unconfirmed_voters=contact.unconfirmed,
                bootstrap_servers=contact.bootstrap_servers,
            )
        MetadataDir.format(settings.data_dir, 1, CLUSTER_ID)
        broker = Broker(settings)
        await broker.start()
        quorum.brokers[1] = broker
        await broker.wait_for(lambda: broker.state is BrokerState.RUNNING, DEADLINE_S)

        await quorum.controllers[leader].stop()
        del quorum.controllers[leader]
        topic_id = await quorum.create_topic("after-failover", partitions=1, replication_factor=1)
        await broker.wait_for(lambda: broker.image.topic(topic_id) is not None, DEADLINE_S)
        await quorum.wait_for_image(broker)
        new_leader = next(
            n for n, c in quorum.controllers.items() if c.node.core.role is Role.LEADER
        )
        assert broker.controller_addresses[new_leader] == quorum.addresses[new_leader]

    run_scenario(scenario, BrokerQuorum(tmp_path))
