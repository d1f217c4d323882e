"""Typed configuration: defaults, every validator, cross-key rules and the error messages."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from raftmeta.config.docs import config_table_markdown
from raftmeta.config.errors import ConfigError
from raftmeta.config.keys import CONFIG_KEYS, REQUIRED, ConfigKey
from raftmeta.config.node import (
    ConfigValue,
    RaftmetaConfig,
    load_config,
    parse_config,
    parse_override,
)
from raftmeta.config.values import ConfigType, HostPort, Listener

BASE: dict[str, ConfigValue] = {
    "node.id": 1,
    "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095",
    "metadata.log.dir": "/var/lib/raftmeta",
}


def config(**overrides: ConfigValue) -> RaftmetaConfig:
    return parse_config(BASE, {key.replace("_", "."): value for key, value in overrides.items()})


def error_for(key: str, value: ConfigValue) -> str:
    with pytest.raises(ConfigError) as raised:
        parse_config(BASE, {key: value})
    return str(raised.value)


# ---------------------------------------------------------------------------- the table


def test_every_key_has_a_typed_field_and_every_field_a_key() -> None:
    fields = {field.name for field in dataclasses.fields(RaftmetaConfig)} - {"originals"}
    assert fields == {key.attribute for key in CONFIG_KEYS}
    assert len({key.name for key in CONFIG_KEYS}) == len(CONFIG_KEYS)


def test_every_key_is_documented() -> None:
    for key in CONFIG_KEYS:
        assert key.doc.strip() and "\n" not in key.doc, key.name


def test_every_default_passes_its_own_validator() -> None:
    for key in CONFIG_KEYS:
        if isinstance(key.default, str) and key.default:
            key.parse(key.default)


def test_defaults() -> None:
    c = config()
    assert c.process_roles == ("controller",)
    assert c.listeners == ()
    assert c.cluster_id is None
    # Raft timeouts: lower than Kafka's on purpose (sub-second failover on loopback).
    assert c.controller_quorum_election_timeout_ms == 300
    assert c.controller_quorum_fetch_timeout_ms == 500
    assert c.controller_quorum_election_backoff_max_ms == 300
    assert c.controller_quorum_append_linger_ms == 1
    assert c.controller_quorum_request_timeout_ms == 2000
    # Kafka's defaults.
    assert c.controller_quorum_retry_backoff_ms == 20
    assert c.metadata_log_max_record_bytes_between_snapshots == 20 * 1024 * 1024
    assert c.metadata_log_max_snapshot_interval_ms == 3_600_000
    assert c.metadata_log_segment_bytes == 1024**3
    assert c.metadata_max_retention_bytes == 100 * 1024 * 1024
    assert c.metadata_max_idle_interval_ms == 500
    assert c.broker_heartbeat_interval_ms == 2000
    assert c.broker_session_timeout_ms == 9000
    assert c.auto_leader_rebalance_enable is True
    assert c.leader_imbalance_per_broker_percentage == 10
    assert c.leader_imbalance_check_interval_seconds == 300
    assert c.unclean_leader_election_interval_ms == 300_000
    assert c.unclean_leader_election_enable is False
    assert c.num_partitions == 1
    assert c.default_replication_factor == 1
    assert c.min_insync_replicas == 1
    assert c.replica_placer_class_name == "placement.striped.StripedReplicaPlacer"
    assert c.authorizer_class_name is None
    assert c.super_users == ()
    assert c.metrics_port == -1


@pytest.mark.parametrize(
    "key",
    [
        "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms",
        "controller.quorum.election.backoff.max.ms",
    ],
)
def test_lowered_raft_timeouts_say_why(key: str) -> None:
    doc = next(k.doc for k in CONFIG_KEYS if k.name == key)
    assert "1000" in doc and "2000" in doc and "kill -9" in doc


def test_markdown_table_has_one_row_per_key() -> None:
    table = config_table_markdown()
    lines = table.splitlines()
    assert lines[0].startswith("| Key | Type | Default |")
    assert len(lines) == 2 + len(CONFIG_KEYS)
    for key, line in zip(CONFIG_KEYS, lines[2:], strict=True):
        assert line.startswith(f"| `{key.name}` |")
        assert line.count(" | ") == 4
    assert "| `node.id` | int | *required* |" in table
    assert "| `controller.quorum.fetch.timeout.ms` | int | `500` | ≥ 1 |" in table


# ---------------------------------------------------------------------------- loading


def test_load_from_file_with_overrides(tmp_path: Path) -> None:
    path = tmp_path / "controller.properties"
    path.write_text(
        "# a controller\n"
        "node.id=2\n"
        "process.roles=broker,controller\n"
        "controller.quorum.voters=1@127.0.0.1:9093,\\\n"
        "                         2@127.0.0.1:9094\n"
        "listeners = CONTROLLER://0.0.0.0:9094, ADMIN://:19094\n"
        "metadata.log.dir : /data/meta   \n"
        "cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n",
        encoding="utf-8",
    )
    c = load_config(path, {"num.partitions": 6})
    assert c.node_id == 2
    assert c.process_roles == ("broker", "controller")
    assert c.is_broker and c.is_controller
    assert dict(c.controller_quorum_voters) == {
        1: HostPort("127.0.0.1", 9093),
        2: HostPort("127.0.0.1", 9094),
    }
    assert c.listeners == (Listener("CONTROLLER", "0.0.0.0", 9094), Listener("ADMIN", "", 19094))
    assert c.metadata_log_dir == "/data/meta"
    assert c.cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"
    assert c.num_partitions == 6
    assert c.controller_endpoint == HostPort("0.0.0.0", 9094)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConfigError, match=r"Cannot read configuration file .*nope\.properties"):
        load_config(missing)


def test_overrides_win_and_accept_python_values() -> None:
    c = parse_config(BASE, {"auto.leader.rebalance.enable": False, "node.id": "3"})
    assert c.auto_leader_rebalance_enable is False
    assert c.node_id == 3


def test_parse_override_argument() -> None:
    assert parse_override("num.partitions=3") == ("num.partitions", "3")
    assert parse_override("a=b=c") == ("a", "b=c")
    with pytest.raises(
        ConfigError, match=re.escape("Invalid override 'num.partitions': expected key=value")
    ):
        parse_override("num.partitions")


def test_unknown_keys_are_passed_through() -> None:
    c = parse_config(
        BASE, {"replica.placer.rack.weight": "2", "replica.placer.seed": 7, "num.partitoins": "3"}
    )
    assert c.unknown_keys == ("num.partitoins", "replica.placer.rack.weight", "replica.placer.seed")
    assert c.originals_with_prefix("replica.placer.") == {"rack.weight": "2", "seed": "7"}
    assert c.originals_with_prefix("replica.placer.", strip=False) == {
        "replica.placer.rack.weight": "2",
        "replica.placer.seed": "7",
    }
    assert c.originals["node.id"] == "1"


def test_config_is_immutable() -> None:
    c = config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.node_id = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.controller_quorum_voters[9] = HostPort("x", 1)  # type: ignore[index]


def test_values_are_trimmed() -> None:
    c = config(num_partitions="  4\t", metadata_log_dir=" /d ")
    assert c.num_partitions == 4
    assert c.metadata_log_dir == "/d"


# ---------------------------------------------------------------------------- error messages


@pytest.mark.parametrize("key", [k.name for k in CONFIG_KEYS if k.default is REQUIRED])
def test_missing_required_key_is_named(key: str) -> None:
    base = {k: v for k, v in BASE.items() if k != key}
    with pytest.raises(ConfigError) as raised:
        parse_config(base)
    message = str(raised.value)
    assert message.startswith(f"Missing required configuration {key},")
    assert "\n" not in message


_FREE_FORM = (ConfigType.STRING, ConfigType.LIST)
_BAD_BY_TYPE: dict[ConfigType, str] = {
    ConfigType.INT: "abc",
    ConfigType.LONG: "1.5",
    ConfigType.BOOLEAN: "yes",
    ConfigType.STRING: "",
    ConfigType.LIST: "nope:",
    ConfigType.CLASS: "NoModule",
    ConfigType.VOTERS: "one@host:1",
    ConfigType.LISTENERS: "host:9092",
    ConfigType.ADVERTISED_LISTENERS: "KAFKA://0.0.0.0:9092",
}


@pytest.mark.parametrize(
    "key",
    # Free-form strings and lists accept anything unless a validator narrows them.
    [k for k in CONFIG_KEYS if k.validator is not None or k.type not in _FREE_FORM],
    ids=lambda key: key.name,
)
def test_every_bad_value_error_is_one_line_naming_the_key(key: ConfigKey) -> None:
    bad = _BAD_BY_TYPE[key.type]
    if key.name == "cluster.id":
        bad = "not valid"  # empty means unset for an optional key
    message = error_for(key.name, bad)
    assert message.startswith(f"Invalid value '{bad}' for configuration {key.name}: "), message
    assert "\n" not in message


def test_exact_message_for_a_non_integer() -> None:
    assert error_for("controller.quorum.fetch.timeout.ms", "abc") == (
        "Invalid value 'abc' for configuration controller.quorum.fetch.timeout.ms: not an integer"
    )


def test_value_with_line_breaks_is_shown_escaped_on_one_line() -> None:
    message = error_for("num.partitions", "1\n2")
    assert message == ("Invalid value '1\\n2' for configuration num.partitions: not an integer")


def test_very_long_value_is_cut() -> None:
    message = error_for("num.partitions", "9" * 500)
    assert len(message) < 200 and "..." in message


def test_config_error_exit_code_is_the_cli_usage_status() -> None:
    assert ConfigError.exit_code == 2


# ---------------------------------------------------------------------------- validators


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("node.id", "-1", "must be at least 0"),
        ("node.id", "2147483648", "out of range for an integer (-2147483648 to 2147483647)"),
        ("node.id", "", "not an integer"),
        ("node.id", "0x10", "not an integer"),
        ("controller.quorum.election.timeout.ms", "0", "must be at least 1"),
        ("controller.quorum.fetch.timeout.ms", "-5", "must be at least 1"),
        ("controller.quorum.election.backoff.max.ms", "0", "must be at least 1"),
        ("controller.quorum.append.linger.ms", "-1", "must be at least 0"),
        ("controller.append.max.in.flight", "-1", "must be at least 0"),
        ("controller.quorum.request.timeout.ms", "0", "must be at least 1"),
        ("controller.quorum.retry.backoff.ms", "-1", "must be at least 0"),
        ("metadata.log.max.record.bytes.between.snapshots", "0", "must be at least 1"),
        ("metadata.log.max.snapshot.interval.ms", "-1", "must be at least 0"),
        ("metadata.log.segment.bytes", "1023", "must be at least 1024"),
        ("metadata.log.segment.bytes", "4294967296", "out of range for an integer"),
        ("metadata.max.retention.bytes", "-2", "must be at least -1"),
        ("metadata.max.retention.bytes", "9223372036854775808", "out of range for an integer"),
        ("metadata.max.idle.interval.ms", "-1", "must be at least 0"),
        ("broker.heartbeat.interval.ms", "0", "must be at least 1"),
        ("broker.session.timeout.ms", "0", "must be at least 1"),
        ("leader.imbalance.per.broker.percentage", "101", "must be between 0 and 100"),
        ("leader.imbalance.per.broker.percentage", "-1", "must be between 0 and 100"),
        ("leader.imbalance.check.interval.seconds", "0", "must be at least 1"),
        ("leader.imbalance.catch.up.ms", "-1", "must be at least 0"),
        ("unclean.leader.election.interval.ms", "0", "must be at least 1"),
        ("num.partitions", "0", "must be at least 1"),
        ("default.replication.factor", "0", "must be between 1 and 32767"),
        ("default.replication.factor", "32768", "must be between 1 and 32767"),
        ("min.insync.replicas", "0", "must be at least 1"),
        ("metrics.port", "65536", "must be between -1 and 65535"),
        ("metrics.port", "-2", "must be between -1 and 65535"),
        ("auto.leader.rebalance.enable", "1", "not a boolean (expected true or false)"),
        ("unclean.leader.election.enable", "on", "not a boolean (expected true or false)"),
        ("metadata.log.dir", "", "must not be empty"),
        ("cluster.id", "has space", "must be 1 to 64 letters, digits, '-' or '_'"),
        ("cluster.id", "x" * 65, "must be 1 to 64 letters, digits, '-' or '_'"),
        ("process.roles", "", "must list at least one of broker, controller"),
        ("process.roles", "controller,zookeeper", "'zookeeper' is not one of broker, controller"),
        ("process.roles", "controller,controller", "lists an entry twice"),
        ("replica.placer.class.name", "Striped", "not a class path such as"),
        ("replica.placer.class.name", "placement.1bad", "not a class path such as"),
        ("replica.placer.class.name", "", "not a class path such as"),
        ("authorizer.class.name", "a..B", "not a class path such as"),
        ("authorizer.class.name", "mod:", "not a class path such as"),
        ("authorizer.class.name", "a.b:C:D", "not a class path such as"),
        ("super.users", "User:alice;bob", "entry 'bob' is not a principal Type:name"),
    ],
)
def test_validator_rejects(key: str, value: str, problem: str) -> None:
    message = error_for(key, value)
    assert message.startswith(f"Invalid value '{value[:77]}"), message
    assert f"for configuration {key}: {problem}" in message, message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("node.id", "+1", 1),
        ("leader.imbalance.per.broker.percentage", "0", 0),
        ("metadata.max.retention.bytes", "-1", -1),
        ("metrics.port", "0", 0),
        ("auto.leader.rebalance.enable", "FALSE", False),
        ("unclean.leader.election.enable", "True", True),
        ("process.roles", " broker , controller ", ("broker", "controller")),
        ("cluster.id", "", None),
        ("authorizer.class.name", "acl.Authorizer", "acl.Authorizer"),
        ("replica.placer.class.name", "my_placers:Rack.Placer", "my_placers:Rack.Placer"),
        ("replica.placer.class.name", "a.b.c.D", "a.b.c.D"),
        ("super.users", "User:alice; User:bob;", ("User:alice", "User:bob")),
        ("super.users", "User:CN=x,O=y", ("User:CN=x,O=y",)),
    ],
)
def test_validator_accepts(key: str, value: str, expected: object) -> None:
    assert getattr(parse_config(BASE, {key: value}), key.replace(".", "_")) == expected


def test_node_id_zero_is_valid() -> None:
    assert config(node_id=0, controller_quorum_voters="0@h:1").node_id == 0


def test_broker_only_node_needs_no_vote() -> None:
    c = config(node_id=7, process_roles="broker")
    assert c.is_broker and not c.is_controller
    with pytest.raises(ConfigError, match="node 7 is not a voter and has no CONTROLLER listener"):
        _ = c.controller_endpoint


# ---------------------------------------------------------------------------- voters and listeners


def test_voters_parse_to_id_and_address() -> None:
    c = config(controller_quorum_voters=" 3@h3:1 , 1@[::1]:9093,2@node-2.example.com:65535 ")
    assert dict(c.controller_quorum_voters) == {
        1: HostPort("::1", 9093),
        2: HostPort("node-2.example.com", 65535),
        3: HostPort("h3", 1),
    }
    assert list(c.controller_quorum_voters) == [1, 2, 3]
    assert str(c.controller_quorum_voters[1]) == "[::1]:9093"
    assert c.controller_quorum_voters[3] == ("h3", 1)
    assert c.controller_endpoint == HostPort("::1", 9093)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (" , ", "no voters listed"),
        ("1@h", "'h' is not host:port"),
        ("1h:1", "entry '1h:1' is not id@host:port with a non-negative id"),
        ("x@h:1", "entry 'x@h:1' is not id@host:port"),
        ("-1@h:1", "entry '-1@h:1' is not id@host:port"),
        ("1@:9093", "':9093' has no host"),
        ("1@h:0", "port 0 is outside 1 to 65535"),
        ("1@h:65536", "port 65536 is outside 1 to 65535"),
        ("1@h:p", "'h:p' is not host:port"),
        ("1@h/x:1", "'h/x:1' has an invalid host name"),
        ("1@::1:9093", "'::1:9093' is not host:port"),
        ("1@h:1,1@h:2", "voter id 1 is listed twice"),
        ("1@h:1,2@h:1", "address h:1 is given to more than one voter"),
        ("99999999999@h:1", "out of range"),
    ],
)
def test_voters_rejected(value: str, problem: str) -> None:
    message = error_for("controller.quorum.voters", value)
    assert "for configuration controller.quorum.voters: " in message
    assert problem in message, message


def test_no_voters_and_no_bootstrap_servers_is_refused() -> None:
    message = error_for("controller.quorum.voters", "")
    assert "Missing required configuration controller.quorum.voters" in message
    assert "controller.quorum.bootstrap.servers" in message


def test_a_dynamic_quorum_needs_no_static_voters() -> None:
    config = parse_config(
        BASE,
        {
            "controller.quorum.voters": "",
            "controller.quorum.bootstrap.servers": "127.0.0.1:9093,h2:9094",
            "listeners": "CONTROLLER://127.0.0.1:9095",
        },
    )
    assert dict(config.controller_quorum_voters) == {}
    assert config.controller_quorum_bootstrap_servers == ("127.0.0.1:9093", "h2:9094")


def test_a_bootstrap_server_must_be_host_and_port() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(
            BASE,
            {"controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "nohost"},
        )
    assert "controller.quorum.bootstrap.servers: not host:port" in str(raised.value)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("host:9092", "entry 'host:9092' is not NAME://host:port"),
        ("9X://h:1", "entry '9X://h:1' is not NAME://host:port"),
        ("A://h", "'h' is not host:port"),
        ("A://h:70000", "port 70000 is outside 0 to 65535"),
        ("A://h:1,a://h:2", "listener name A is used twice"),
        ("A://h:1,B://:1", "port 1 is used by more than one listener"),
    ],
)
def test_listeners_rejected(value: str, problem: str) -> None:
    message = error_for("listeners", value)
    assert "for configuration listeners: " in message
    assert problem in message, message


def test_listeners_accept_ipv6_any_host_and_ephemeral_ports() -> None:
    c = config(listeners="controller://[::]:0,ADMIN://:0, METRICS_2://h:1")
    assert c.listeners == (
        Listener("CONTROLLER", "::", 0),
        Listener("ADMIN", "", 0),
        Listener("METRICS_2", "h", 1),
    )
    assert c.listeners[0].address == HostPort("::", 0)


@pytest.mark.parametrize(
    ("listeners", "advertised", "problem"),
    [
        (
            "RAFT://:9400",
            "RAFT://h:1",
            "advertised, but controller.quorum.transport is not stream",
        ),
        ("RAFT://:9400", "RAFT://:9401", "advertised.listeners: ':9401' has no host"),
        ("RAFT://:9400", "RAFT://h:0", "advertised.listeners: port 0 is outside 1 to 65535"),
        ("", "RAFT://h:9401", "advertised.listeners: RAFT is not a listener in listeners (none)"),
    ],
)
def test_advertised_listeners_rejected(listeners: str, advertised: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(
            BASE,
            {
                "listeners": listeners,
                "advertised.listeners": advertised,
                "controller.quorum.transport": "grpc",
            },
        )
    assert problem in str(raised.value)


def test_advertised_raft_listener_needs_the_stream_transport() -> None:
    with pytest.raises(ConfigError, match=r"controller\.quorum\.transport is not stream"):
        config(
            listeners="RAFT://:9400",
            advertised_listeners="RAFT://proxy:9401",
            controller_quorum_transport="grpc",
        )


def test_advertised_raft_listener_is_what_peers_are_told() -> None:
    from raftmeta.quorum.settings import NodeSettings

    settings = NodeSettings.from_config(
        config(listeners="RAFT://127.0.0.1:9400", advertised_listeners="raft://proxy:9401")
    )
    assert settings.stream_listen == ("127.0.0.1", 9400)
    assert settings.stream_advertised == ("proxy", 9401)
    assert NodeSettings.from_config(config()).stream_advertised is None


# ---------------------------------------------------------------------------- cross-key rules


def test_controller_must_be_a_voter() -> None:
    message = error_for("node.id", 4)
    assert message == (
        "Invalid configuration controller.quorum.voters: node.id 4 has the controller role "
        "but is not among the voters (1, 2, 3)"
    )


def test_voter_must_have_controller_role() -> None:
    message = error_for("process.roles", "broker")
    assert message.startswith("Invalid configuration process.roles: node.id 1 is listed in")


def test_heartbeat_must_be_below_session_timeout() -> None:
    message = error_for("broker.heartbeat.interval.ms", 9000)
    assert message.startswith(
        "Invalid value '9000' for configuration broker.heartbeat.interval.ms: must be less than "
        "broker.session.timeout.ms (9000)"
    )
