"""The values requests and replies carry, shared by the clients, the controller and the policy.

Kafka keeps its request and response types in ``common`` so that its clients and its
controller speak about the same objects without either importing the other; this package does
the same. It holds frozen values and enums only: the election type and the partitions an
election names (:mod:`.elections`), topic creation and deletion (:mod:`.topics`), config
resources and sources (:mod:`.configs`), a broker's registration, heartbeat and AlterPartition
(:mod:`.brokers`), and the per-item outcome they all share (:mod:`.items`).

May import :mod:`raftmeta.errors` and :mod:`raftmeta.records` only. Everything that reads them
(``admin/``, ``broker/``, ``controller/``, ``elections/``, ``server/``) sits above it.
"""
