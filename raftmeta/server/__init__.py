"""The composition root: a controller node assembled from the quorum runtime and the controller,
served over gRPC (Admin, BrokerLifecycle), with metrics and the ``serve`` entry point.

May import every layer below it (``quorum/``, ``controller/``, policy, records, storage); nothing
but the command line imports it.
"""
