"""The values requests and replies carry, shared by the clients, the controller and the policy.

Kafka keeps its request and response types in ``common`` so that its clients and its
controller speak about the same objects without either importing the other; this package does
the same. It holds frozen values and enums only: the election type and the partitions an
election names (:mod:`.elections`), topic creation, deletion and description (:mod:`.topics`),
config resources and sources (:mod:`.configs`), Kafka's table of topic and dynamic broker
configs (:mod:`.config_defs`) and the precedence of the levels that set them
(:mod:`.config_levels`), a broker's registration, heartbeat and AlterPartition
(:mod:`.brokers`), the cluster's brokers as DescribeCluster reports them (:mod:`.cluster`),
ACLs (:mod:`.acls`), feature levels (:mod:`.features`), and the per-item outcome they all
share (:mod:`.items`). The requests of :mod:`raftmeta.apis` are made of them, so both wires'
adapters hand the API layer the same values.

May import :mod:`raftmeta.errors` and :mod:`raftmeta.records` only. Everything that reads them
(``admin/``, ``apis/``, ``broker/``, ``controller/``, ``elections/``, ``server/``) sits above it.
"""
