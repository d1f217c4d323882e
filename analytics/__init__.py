"""PySpark analytics over snapshot and log files.

Reads snapshot and log files with ``raftmeta.storage``, ``raftmeta.records`` and
``raftmeta.image``; never talks to a running quorum (no gRPC, no runtime, no controller), so an
audit runs anywhere the files are. Only the command line imports it.
"""
