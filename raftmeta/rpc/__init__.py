"""gRPC bindings: modules generated from ``proto/raftmeta/*.proto`` by
``python -m raftmeta.rpc.generate`` (``raft_pb2``, ``raft_pb2_grpc``). Import them directly;
this package re-exports nothing so that importing it stays free of protobuf descriptors."""
