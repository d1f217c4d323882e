"""What every test layer shares: waiting on a condition, running a scenario, and the fixtures
more than one test package builds on.

- ``waiting``: ``wait_until`` (threads and processes) and ``wait_until_async`` (an event
  loop), with one error, ``WaitTimeout``, that names what was awaited and the last value seen.
- ``scenario``: ``run_scenario`` starts a fixture, runs a coroutine against it under a
  deadline and always closes the fixture; ``run_with_deadline`` is the same without a fixture.
- ``controller_quorum``: ``ControllerQuorum``, in-process controllers on loopback gRPC (the
  server, admin and command-line tests).
- ``broker_quorum``: ``BrokerQuorum``, in-process controllers with embedded brokers (the broker
  and scenario tests).

The fixtures that one package alone uses stay beside its tests, named for their layer:
``CoreCluster`` (tests/raft), ``NodeCluster`` (tests/quorum), ``ProcessQuorum``
(tests/process).

May import anything in ``raftmeta/`` and the standard library; never a test module, so any
test package can import it without a cycle.
"""
