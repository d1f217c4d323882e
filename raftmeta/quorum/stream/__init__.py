"""The Raft stream transport: the core's messages as frames on one long-lived TCP (or TLS)
connection per peer pair, many in flight at once.

A second implementation of the transport seam (:mod:`raftmeta.quorum.transport`), beside
gRPC: ``frames`` (the envelope), ``server`` (a node's RAFT listener), ``connection`` (one
multiplexed client connection) and ``peers`` (the node's channel: finds each peer's RAFT
listener through the gRPC ``DescribeEndpoints`` call, and keeps using gRPC for a peer that
has none). The bodies are the gRPC service's protobuf messages and every inbound one passes
the same edge checks (:mod:`raftmeta.quorum.edge`), so the two transports differ only in the
envelope: a length-prefixed frame costs about a quarter of a grpc.aio unary round trip.
"""
