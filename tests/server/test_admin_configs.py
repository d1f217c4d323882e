"""The Admin service's configs on a real three-node quorum: DescribeConfigs with each config's
sensitivity, read-only flag, type, and synonyms and documentation when asked for; legacy
AlterConfigs replacing a resource's configs, validate-only, per-item errors, a retry answered
from its first outcome and NOT_CONTROLLER from a follower."""

from __future__ import annotations

import uuid
from pathlib import Path

from raftmeta.common.config_defs import TOPIC_CONFIG_DEFS, UpdateMode, broker_config_def
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario

TOPIC = 2
BROKER = 4
MIN_ISR = "min.insync.replicas"
RETENTION = "retention.ms"


def resource(kind: int, name: str) -> apb.ConfigResource:
    return apb.ConfigResource(resource_type=kind, resource_name=name)


async def described(
    admin: apb_grpc.AdminStub, kind: int, name: str, **flags: bool
) -> dict[str, apb.DescribedConfig]:
    answer = await admin.DescribeConfigs(
        apb.DescribeConfigsRequest(resources=[resource(kind, name)], **flags)
    )
    (result,) = answer.results
    assert result.error_code == 0, result.error_message
    return {config.name: config for config in result.configs}


def replaced(kind: int, name: str, configs: dict[str, str]) -> apb.ReplacedConfigs:
    return apb.ReplacedConfigs(resource=resource(kind, name), configs=configs)


def test_describe_configs_carries_every_field(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        admin = await cluster.active_admin()
        created = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(
                        name="fields", num_partitions=1, replication_factor=1,
                        configs={RETENTION: "60000"},
                    )
                ]
            )
        )  # fmt: skip
        assert [t.error_code for t in created.topics] == [0]

        plain = await described(admin, TOPIC, "fields")
        assert set(plain) == set(TOPIC_CONFIG_DEFS)
        assert all(not c.synonyms and not c.documentation for c in plain.values())
        assert {name: c.config_type for name, c in plain.items()} == {
            name: int(definition.type) for name, definition in TOPIC_CONFIG_DEFS.items()
        }

        full = await described(
            admin, TOPIC, "fields", include_synonyms=True, include_documentation=True
        )
        assert {name: c.documentation for name, c in full.items()} == {
            name: definition.doc or "" for name, definition in TOPIC_CONFIG_DEFS.items()
        }
        retention = [(s.name, s.value, s.source) for s in full[RETENTION].synonyms]
        assert retention[0] == (RETENTION, "60000", 1)  # the topic's own, in effect
        assert ("log.retention.hours", "168", 5) in retention  # down to the default

        broker = await described(admin, BROKER, "1", include_synonyms=True)
        secret = broker["ssl.keystore.password"]
        assert (secret.is_sensitive, secret.is_null, secret.value) == (True, True, "")
        assert broker["log.retention.hours"].read_only
        for name, config in broker.items():
            definition = broker_config_def(name)
            assert definition is not None, name
            assert config.read_only == (definition.mode is UpdateMode.READ_ONLY), name
            assert config.is_sensitive == definition.sensitive, name

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_alter_configs_replaces_each_resources_configs(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        admin = await cluster.active_admin()
        await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(
                        name="legacy", num_partitions=1, replication_factor=1,
                        configs={RETENTION: "60000"},
                    )
                ]
            )
        )  # fmt: skip

        checked = await admin.AlterConfigs(
            apb.AlterConfigsRequest(
                resources=[replaced(TOPIC, "legacy", {MIN_ISR: "1"})], validate_only=True
            )
        )
        assert [r.error_code for r in checked.results] == [0]
        assert (await described(admin, TOPIC, "legacy"))[RETENTION].source == 1  # unchanged

        request_id = uuid.uuid4().bytes
        request = apb.AlterConfigsRequest(
            resources=[
                replaced(TOPIC, "legacy", {MIN_ISR: "1"}),
                replaced(TOPIC, "ghost", {MIN_ISR: "1"}),
                replaced(TOPIC, "legacy-bad", {"no.such.config": "1"}),
            ],
            request_id=request_id,
        )
        altered = await admin.AlterConfigs(request)
        assert altered.header.error_code == 0
        assert [r.error_code for r in altered.results] == [
            0,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ]
        configs = await described(admin, TOPIC, "legacy")
        assert (configs[MIN_ISR].value, configs[MIN_ISR].source) == ("1", 1)
        assert configs[RETENTION].source == 5  # left out: deleted

        invalid = await admin.AlterConfigs(
            apb.AlterConfigsRequest(resources=[replaced(TOPIC, "legacy", {"no.such": "1"})])
        )
        assert [r.error_code for r in invalid.results] == [ErrorCode.INVALID_CONFIG]

        # A retry of the first call is answered with its outcome and writes nothing again.
        changed = await admin.AlterConfigs(
            apb.AlterConfigsRequest(resources=[replaced(TOPIC, "legacy", {MIN_ISR: "2"})])
        )
        assert [r.error_code for r in changed.results] == [0]
        again = await admin.AlterConfigs(request)
        assert [r.error_code for r in again.results] == [r.error_code for r in altered.results]
        assert (await described(admin, TOPIC, "legacy"))[MIN_ISR].value == "2"

        follower = cluster.admin((await cluster.follower()).node_id)
        refused = await follower.AlterConfigs(apb.AlterConfigsRequest(resources=[]))
        assert refused.header.error_code == ErrorCode.NOT_CONTROLLER

    run_scenario(scenario, ControllerQuorum(tmp_path))
