"""A seeded whole-quorum simulator: real cores, simulated network, disks and time.

Every run is a pure function of its seed (and optional fault plan), so any failure replays
exactly with ``python -m raftmeta.sim.soak --seed N --trace``. A run may also carry a hostile
process (``hostile.HostilePlan``) that forges messages into the quorum during the faults.

It imports only the consensus core (``raftmeta.raft``) and the shared error codes: it plays
the runtime's part itself, so it never needs storage, the quorum runtime or anything above.
"""

from raftmeta.sim.cluster import Simulation, SimulationResult
from raftmeta.sim.faults import FaultPlan, random_fault_plan
from raftmeta.sim.hostile import HostilePlan
from raftmeta.sim.invariants import InvariantViolation

__all__ = [
    "FaultPlan",
    "HostilePlan",
    "InvariantViolation",
    "Simulation",
    "SimulationResult",
    "random_fault_plan",
]
