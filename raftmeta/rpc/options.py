"""The gRPC channel and server options every gRPC user in raftmeta shares: voters, brokers,
admin clients and the listeners they call.

They sit beside the generated stubs, below both the Raft runtime and the clients, so a client
of the Admin service takes its keepalive settings from here rather than from the runtime.
"""

from __future__ import annotations

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Above the 8 MiB fetch and batch limits, so a full fetch response always fits."""

GRPC_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
)

KEEPALIVE_MS = 2_000
"""How often a client pings a server while it waits for an answer."""

PING_TIMEOUT_MS = 5_000
"""How long a client waits for a ping's acknowledgement before it gives the connection up.

A server that was stopped (SIGSTOP, a frozen VM) keeps its TCP connections open, so without
pings a call to it would wait for its whole deadline; with them it fails as UNAVAILABLE after
5 to 7 s and the client tries another server. The acknowledgement comes from gRPC's own
threads, so a server that is merely busy in Python still answers; the margin is for a machine
so loaded that even those threads wait."""

SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    *GRPC_OPTIONS,
    # A server refuses pings more frequent than this (default: 5 minutes) and closes the
    # connection after a few; accept the clients' keepalive.
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
)

CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    *GRPC_OPTIONS,
    # gRPC's default reconnect backoff grows to two minutes; a restarted voter must be
    # reachable again within an election timeout or two.
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 500),
)

CLIENT_CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    *CHANNEL_OPTIONS,
    # Only while calls are open; any number of pings between data frames.
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", PING_TIMEOUT_MS),
    ("grpc.http2.ping_timeout_ms", PING_TIMEOUT_MS),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.http2.max_pings_without_data", 0),
)
"""For clients of the Admin and BrokerLifecycle services. Voters talking Raft need no pings:
the core's own timeouts already give up on a silent peer."""
