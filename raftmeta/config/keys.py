"""The table of every key a node reads: its type, default, check and the README's line for it.

Keys, meanings and defaults are Kafka's wherever Kafka has the key, so that operators moving
from KRaft keep their files and habits. Each key is declared once, here; parsing, validation,
the typed :class:`~raftmeta.config.node.RaftmetaConfig` and the README's table are driven from
this table, so they cannot drift apart.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from raftmeta.config.validators import (
    AtLeast,
    Between,
    EachMatches,
    Matches,
    NonEmpty,
    SubsetOf,
    Validator,
)
from raftmeta.config.values import TYPE_SHAPES, ConfigType, parse_value


class _Required(enum.Enum):
    REQUIRED = "required"


REQUIRED: Final = _Required.REQUIRED
"""Marks a key that has no default: the node refuses to start without it."""


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One key: how to read it, what it may hold, and the line the README shows for it.

    ``default`` is written as it would appear in a file and goes through the same parser and
    validator as a user's value, so a bad default fails the tests rather than a node. ``None``
    means the key is optional and its typed value is ``None`` when absent.
    """

    name: str
    type: ConfigType
    default: str | _Required | None
    doc: str
    validator: Validator | None = None
    separator: str = ","

    @property
    def attribute(self) -> str:
        """The :class:`RaftmetaConfig` field holding this key's typed value."""
        return self.name.replace(".", "_")

    def parse(self, raw: str) -> object:
        """Turn the text of a value into its typed form, or raise ``BadValue``."""
        value = parse_value(self.type, raw, self.separator)
        if self.validator is not None:
            self.validator(value)
        return value

    def valid_values(self) -> str:
        if self.validator is not None:
            return self.validator.describe()
        return TYPE_SHAPES.get(self.type, "")


_MIB = 1024 * 1024
_FAST_FAILOVER = (
    "Kafka ships election 1000 / fetch 2000 ms, tuned for WAN-ish clusters and GC pauses; "
    "raftmeta ships 300 / 500 so that a voter killed with kill -9 is replaced in under 1 s "
    "on loopback. Raise them for slow or distant links (see controller.quorum.fetch.timeout.ms)."
)
_SLOW_LINKS = (
    " Slow links: a follower counts a fetch lost when no answer came within half this timeout "
    "(plus the leader's 250 ms long-poll wait when it had nothing to send), so the round trip "
    "between voters must stay well under half of it; past that every fetch is lost, leaders "
    "are voted out one after another and writes stop (at the default 500 ms, 400 ms of "
    "one-way delay on every link stopped writes for the whole fault). Set it to 4 or more "
    "times the worst round trip (e.g. 3500 for 400 ms each way, with "
    "controller.quorum.election.timeout.ms at about a third of it). A follower whose smoothed "
    "fetch round trip passes 30 % of this timeout logs a WARNING once per episode, and every "
    "node reports it as the gauge raftmeta_raft_fetch_round_trip_ms."
)

CONFIG_KEYS: Final[tuple[ConfigKey, ...]] = (
    # Identity and roles
    ConfigKey(
        "node.id",
        ConfigType.INT,
        REQUIRED,
        "This node's id; unique in the cluster and, for a controller, its entry in "
        "controller.quorum.voters.",
        AtLeast(0),
    ),
    ConfigKey(
        "process.roles",
        ConfigType.LIST,
        "controller",
        "What this node runs: controller (a quorum voter), broker (an observer that follows "
        "the log), or both (a combined node: one process, one node.id, its broker reading the "
        "controller's replica of the log).",
        SubsetOf(("broker", "controller")),
    ),
    ConfigKey(
        "controller.quorum.voters",
        ConfigType.VOTERS,
        None,
        "The static Raft quorum as id@host:port pairs; every node must list the same voters. "
        "Leave it out for a dynamic quorum (formatted with --standalone or "
        "--initial-controllers), whose voters live in the log; then set "
        "controller.quorum.bootstrap.servers.",
    ),
    ConfigKey(
        "controller.quorum.bootstrap.servers",
        ConfigType.LIST,
        "",
        "host:port of some controllers of a dynamic quorum (KIP-853), asked for the voters by a "
        "node whose directory does not know them yet (formatted with "
        "--no-initial-controllers) and by brokers, which then follow the voters the log "
        "names. Ignored when controller.quorum.voters is set.",
    ),
    ConfigKey(
        "listeners",
        ConfigType.LISTENERS,
        "",
        "Addresses to serve on as NAME://host:port; an empty host means every interface. "
        "Without a CONTROLLER listener a controller serves on its controller.quorum.voters entry.",
    ),
    ConfigKey(
        "advertised.listeners",
        ConfigType.ADVERTISED_LISTENERS,
        "",
        "Where others are told to reach a listener when it differs from where the node "
        "listens (NAT, a proxy, a port forward), as NAME://host:port with a name from "
        "listeners. KAFKA: what the Kafka listener registers and names in Metadata and "
        "DescribeCluster. RAFT: what DescribeEndpoints hands peers for the Raft stream (needs "
        "controller.quorum.transport=stream). A listener left out is advertised as it is bound "
        "(127.0.0.1 for a wildcard host).",
    ),
    ConfigKey(
        "metadata.log.dir",
        ConfigType.STRING,
        REQUIRED,
        "Directory holding the metadata log, snapshots, quorum-state and meta.properties; "
        "prepare it with raftmeta format.",
        NonEmpty(),
    ),
    ConfigKey(
        "cluster.id",
        ConfigType.STRING,
        None,
        "If set, must equal the cluster id in meta.properties; guards against pointing a node "
        "at another cluster's directory.",
        Matches(r"[A-Za-z0-9_-]{1,64}", "1 to 64 letters, digits, '-' or '_'"),
    ),
    # Raft
    ConfigKey(
        "controller.quorum.election.timeout.ms",
        ConfigType.INT,
        "300",
        "T for the randomized election timeout [T, 2T) of a candidate waiting for votes. "
        + _FAST_FAILOVER,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.fetch.timeout.ms",
        ConfigType.INT,
        "500",
        "A voter that has not fetched from the leader for this long starts an election; a "
        "leader not fetched from by a majority for 1.5 times this long resigns. "
        + _FAST_FAILOVER
        + _SLOW_LINKS,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.election.backoff.max.ms",
        ConfigType.INT,
        "300",
        "Cap of the exponential backoff after a lost election. " + _FAST_FAILOVER,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.append.linger.ms",
        ConfigType.INT,
        "1",
        "How long the leader gathers appends into one batch and one fsync. Kafka ships 25; "
        "1 keeps commit latency low while still batching concurrent requests.",
        AtLeast(0),
    ),
    ConfigKey(
        "controller.quorum.transport",
        ConfigType.STRING,
        "stream",
        "How voters and observers carry Raft messages: stream (framed messages on one "
        "long-lived connection per peer, served on the RAFT listener, or on a port the OS "
        "chooses when listeners names none; peers find it through the controller listener) or "
        "grpc (one gRPC call per message). A peer without a RAFT listener is reached over "
        "gRPC either way.",
        Matches(r"grpc|stream", "grpc or stream"),
    ),
    ConfigKey(
        "controller.append.max.in.flight",
        ConfigType.INT,
        "1",
        "How many of the active controller's appends may await their commit at once; requests "
        "that run meanwhile append together, as one batch, when an earlier one commits (one "
        "replication round and one fsync per voter for all of them). 0 appends each request "
        "as it runs.",
        AtLeast(0),
    ),
    ConfigKey(
        "controller.append.linger.max.ms",
        ConfigType.INT,
        "5",
        "The longest the active controller's staged requests wait for other writers before "
        "they append, once it has lately seen several write requests outstanding at once "
        "(then they go as soon as as many are outstanding again). A lone client never waits. "
        "0 turns the wait off: requests append when nothing is in flight, as group commit "
        "alone does.",
        AtLeast(0),
    ),
    ConfigKey(
        "controller.quorum.request.timeout.ms",
        ConfigType.INT,
        "2000",
        "How long a Raft request (Vote, BeginQuorumEpoch, ...) may go unanswered before it "
        "is sent again. Same as Kafka.",
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.retry.backoff.ms",
        ConfigType.INT,
        "20",
        "Pause before retrying a failed Raft request to the same peer.",
        AtLeast(0),
    ),
    # Log and snapshots
    ConfigKey(
        "metadata.log.max.record.bytes.between.snapshots",
        ConfigType.LONG,
        str(20 * _MIB),
        "Take a snapshot once this many bytes of records were committed since the last one.",
        AtLeast(1),
    ),
    ConfigKey(
        "metadata.log.max.snapshot.interval.ms",
        ConfigType.LONG,
        str(60 * 60 * 1000),
        "Take a snapshot at least this often when anything was committed; 0 turns the time "
        "trigger off.",
        AtLeast(0),
    ),
    ConfigKey(
        "metadata.log.segment.bytes",
        ConfigType.INT,
        str(1024 * _MIB),
        "Size at which the metadata log rolls to a new segment file.",
        AtLeast(1024),
    ),
    ConfigKey(
        "metadata.max.retention.bytes",
        ConfigType.LONG,
        str(100 * _MIB),
        "Delete the log below the latest snapshot (oldest snapshot interval first) while the "
        "log exceeds this size; -1 turns the size limit off.",
        AtLeast(-1),
    ),
    ConfigKey(
        "metadata.max.retention.ms",
        ConfigType.LONG,
        str(7 * 24 * 60 * 60 * 1000),
        "Delete the log below the latest snapshot once its records are older than this; -1 "
        "turns the time limit off (with both limits off the whole log is kept).",
        AtLeast(-1),
    ),
    ConfigKey(
        "metadata.max.idle.interval.ms",
        ConfigType.INT,
        "500",
        "An idle active controller appends a NoOpRecord this often, so followers and brokers "
        "can tell a quiet leader from a dead one; 0 turns it off.",
        AtLeast(0),
    ),
    # Brokers
    ConfigKey(
        "broker.heartbeat.interval.ms",
        ConfigType.INT,
        "2000",
        "How often a broker heartbeats to the active controller; must be below "
        "broker.session.timeout.ms.",
        AtLeast(1),
    ),
    ConfigKey(
        "broker.session.timeout.ms",
        ConfigType.INT,
        "9000",
        "A broker whose last heartbeat is older than this is fenced and loses its leaderships.",
        AtLeast(1),
    ),
    ConfigKey(
        "replica.catch.up.delay.ms",
        ConfigType.INT,
        "0",
        "A broker run from this file holds no data: a replica a partition reassignment adds "
        "counts as caught up once it has been live this long, and the partition leader's "
        "broker then adds it to the ISR, completing the move with the last one.",
        AtLeast(0),
    ),
    ConfigKey(
        "broker.rack",
        ConfigType.STRING,
        None,
        "The rack (or availability zone) of this broker; replica placement spreads each "
        "partition's replicas across racks.",
    ),
    ConfigKey(
        "raftmeta.broker.observer.port",
        ConfigType.INT,
        "0",
        "Port of the gRPC server (on 127.0.0.1) where a broker's observer answers Raft calls; "
        "the broker registers it as its endpoint when listeners names none. 0: one the OS "
        "picks.",
        Between(0, 65535),
    ),
    ConfigKey(
        "log.dirs",
        ConfigType.LIST,
        "",
        "A combined node's broker data directories; its broker keeps its files (broker.status, "
        "the clean-shutdown marker) in the first. Empty: the broker directory under "
        "metadata.log.dir.",
    ),
    # Leader balance and elections
    ConfigKey(
        "auto.leader.rebalance.enable",
        ConfigType.BOOLEAN,
        "true",
        "Periodically move leadership back to each partition's preferred replica.",
    ),
    ConfigKey(
        "leader.imbalance.per.broker.percentage",
        ConfigType.INT,
        "10",
        "Rebalance a broker's partitions only when more than this percentage of those it "
        "prefers to lead are led elsewhere. Kafka's KRaft controller ignores it; raftmeta "
        "honours it.",
        Between(0, 100),
    ),
    ConfigKey(
        "leader.imbalance.check.interval.seconds",
        ConfigType.LONG,
        "300",
        "How often the automatic leader rebalance runs.",
        AtLeast(1),
    ),
    ConfigKey(
        "leader.imbalance.catch.up.ms",
        ConfigType.LONG,
        "10000",
        "A replica must have been back in the ISR this long before automatic rebalance makes "
        "it leader again, so a recovering broker is not handed traffic while still catching "
        "up; 0 elects it at once, as Kafka does.",
        AtLeast(0),
    ),
    ConfigKey(
        "unclean.leader.election.interval.ms",
        ConfigType.LONG,
        str(5 * 60 * 1000),
        "How often leaderless partitions of topics allowing unclean election are given a "
        "leader from outside the ISR.",
        AtLeast(1),
    ),
    ConfigKey(
        "unclean.leader.election.enable",
        ConfigType.BOOLEAN,
        "false",
        "Cluster default for electing a leader outside the ISR when none in it is alive; may "
        "lose committed data. Topics can override it.",
    ),
    # Topic defaults
    ConfigKey(
        "num.partitions",
        ConfigType.INT,
        "1",
        "Partition count of a topic created without one.",
        AtLeast(1),
    ),
    ConfigKey(
        "default.replication.factor",
        ConfigType.INT,
        "1",
        "Replication factor of a topic created without one.",
        Between(1, 32767),
    ),
    ConfigKey(
        "min.insync.replicas",
        ConfigType.INT,
        "1",
        "Cluster default for the smallest ISR that still accepts acks=all writes.",
        AtLeast(1),
    ),
    # Plug-ins and security
    ConfigKey(
        "replica.placer.class.name",
        ConfigType.CLASS,
        "placement.striped.StripedReplicaPlacer",
        "ReplicaPlacer that chooses replicas for new partitions; it reads its own "
        "replica.placer.* keys.",
    ),
    ConfigKey(
        "authorizer.class.name",
        ConfigType.CLASS,
        None,
        "Authorizer checked on every Admin and BrokerLifecycle request and on voter changes "
        "(AddRaftVoter, RemoveRaftVoter and kraft.version need ALTER on CLUSTER, "
        "UpdateRaftVoter CLUSTER_ACTION): "
        "raftmeta.auth.AclAuthorizer (rules in raftmeta.acls) or any class with "
        "authorize(principal, operation, resource_type, resource_name). Empty: every request "
        "is allowed, as in Kafka.",
    ),
    ConfigKey(
        "super.users",
        ConfigType.LIST,
        "",
        "Principals the authorizer always allows, separated by semicolons as in Kafka: "
        "User:alice;User:bob.",
        EachMatches(r"[A-Za-z]+:.+", "a principal Type:name"),
        separator=";",
    ),
    ConfigKey(
        "raftmeta.acls",
        ConfigType.LIST,
        "",
        "Allow rules of the built-in raftmeta.auth.AclAuthorizer, comma-separated, each "
        "PrincipalType:name:Operation:ResourceType:resource-name with Kafka's operation and "
        "resource names (User:alice:Alter:Cluster:kafka-cluster); * matches any name.",
    ),
    ConfigKey(
        "raftmeta.auth.tokens.file",
        ConfigType.STRING,
        None,
        "File of token=PrincipalType:name lines: a caller sending 'authorization: Bearer "
        "<token>' is that principal, one with no token is User:ANONYMOUS, and an unknown token "
        "fails with SASL_AUTHENTICATION_FAILED. Unset: tokens are not checked.",
    ),
    ConfigKey(
        "raftmeta.allow.unauthenticated.listeners",
        ConfigType.BOOLEAN,
        "false",
        "Start even though a listener on a non-loopback address does not authenticate its "
        "callers (neither SSL with ssl.client.auth=required nor SASL). Anyone who reaches such "
        "a port can forge Raft messages and change the metadata; off, the node refuses to start.",
    ),
    # Transport security (TLS), Kafka's names; parsed by raftmeta.security
    ConfigKey(
        "listener.security.protocol.map",
        ConfigType.STRING,
        "CONTROLLER:PLAINTEXT,KAFKA:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL",
        "Protocol of each listener as NAME:PROTOCOL pairs (PLAINTEXT or SSL). The controller "
        "listener is the one named CONTROLLER (implied at the node's voter address when "
        "listeners has none); unlike Kafka's default it is mapped, to PLAINTEXT, so a file "
        "without TLS keeps working. Every listener must have an entry.",
        Matches(
            r"[A-Za-z][A-Za-z0-9_]*:[A-Za-z_]+(\s*,\s*[A-Za-z][A-Za-z0-9_]*:[A-Za-z_]+)*",
            "NAME:PROTOCOL pairs separated by commas",
        ),
    ),
    ConfigKey(
        "ssl.keystore.type",
        ConfigType.STRING,
        "PEM",
        "Format of the keystore; only PEM (what grpc reads).",
        Matches(r"(?i)PEM", "PEM"),
    ),
    ConfigKey(
        "ssl.keystore.location",
        ConfigType.STRING,
        None,
        "PEM file holding this node's private key and certificate chain; re-read when it "
        "changes, so a renewed certificate needs no restart. An SSL listener needs it (or the "
        "inline keys).",
    ),
    ConfigKey(
        "ssl.keystore.key",
        ConfigType.STRING,
        None,
        "This node's private key as inline PEM text (with ssl.keystore.certificate.chain), "
        "instead of ssl.keystore.location.",
    ),
    ConfigKey(
        "ssl.keystore.certificate.chain",
        ConfigType.STRING,
        None,
        "This node's certificate chain as inline PEM text (with ssl.keystore.key).",
    ),
    ConfigKey(
        "ssl.key.password",
        ConfigType.STRING,
        None,
        "Password of an encrypted PEM private key.",
    ),
    ConfigKey(
        "ssl.truststore.type",
        ConfigType.STRING,
        "PEM",
        "Format of the truststore; only PEM.",
        Matches(r"(?i)PEM", "PEM"),
    ),
    ConfigKey(
        "ssl.truststore.location",
        ConfigType.STRING,
        None,
        "PEM file of the CA certificates peers and clients are checked against.",
    ),
    ConfigKey(
        "ssl.truststore.certificates",
        ConfigType.STRING,
        None,
        "The trusted CA certificates as inline PEM text, instead of ssl.truststore.location.",
    ),
    ConfigKey(
        "ssl.client.auth",
        ConfigType.STRING,
        "none",
        "required: every caller of an SSL listener must present a certificate the truststore "
        "vouches for, and Raft and BrokerLifecycle calls are accepted only from the node their "
        "principal names; none: no client certificate is asked for. Kafka's requested is not "
        "offered (grpc cannot ask for an optional certificate).",
        Matches(r"(?i)required|none", "required or none (requested is not supported)"),
    ),
    ConfigKey(
        "ssl.principal.mapping.rules",
        ConfigType.STRING,
        None,
        "How a client certificate's subject becomes a principal: RULE:pattern/replacement/[LU] "
        "entries and DEFAULT, as Kafka. Nodes are User:controller-<id> and User:broker-<id>.",
    ),
    # Operations
    ConfigKey(
        "metrics.port",
        ConfigType.INT,
        "-1",
        "Port of the HTTP metrics endpoint; -1 serves none, 0 takes any free port.",
        Between(-1, 65535),
    ),
    # Kafka-protocol listener (a listener named KAFKA in listeners)
    ConfigKey(
        "socket.request.max.bytes",
        ConfigType.INT,
        "104857600",
        "Largest request the KAFKA listener reads; a bigger frame closes the connection.",
        AtLeast(8),
    ),
    ConfigKey(
        "max.connections",
        ConfigType.INT,
        "2147483647",
        "Most connections the KAFKA listener holds open at once; it closes newer ones.",
        AtLeast(0),
    ),
    ConfigKey(
        "max.connections.per.ip",
        ConfigType.INT,
        "2147483647",
        "Most connections the KAFKA listener holds open from one client address.",
        AtLeast(0),
    ),
    ConfigKey(
        "connections.max.idle.ms",
        ConfigType.LONG,
        "600000",
        "A KAFKA connection with no request in progress for this long is closed.",
        AtLeast(1),
    ),
    ConfigKey(
        "raftmeta.kafka.partial.request.timeout.ms",
        ConfigType.LONG,
        "30000",
        "How long a KAFKA connection may take to send the rest of a request it began; "
        "a slower one is closed.",
        AtLeast(1),
    ),
    ConfigKey(
        "queued.max.request.bytes",
        ConfigType.LONG,
        "-1",
        "Bytes of requests the KAFKA listener holds (read, queued or being read) across all "
        "connections before it stops reading more; -1: no limit.",
        AtLeast(-1),
    ),
    ConfigKey(
        "sasl.server.max.receive.size",
        ConfigType.INT,
        "524288",
        "Largest frame a SASL KAFKA listener reads before the connection has logged in.",
        AtLeast(8),
    ),
)

KEYS_BY_NAME: Final[Mapping[str, ConfigKey]] = {key.name: key for key in CONFIG_KEYS}
