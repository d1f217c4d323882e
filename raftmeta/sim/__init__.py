"""A seeded whole-quorum simulator: real cores, simulated network, disks and time.

Every run is a pure function of its seed (and optional fault plan), so any failure replays
exactly with ``python -m raftmeta.sim.soak --seed N --trace``.
"""

from raftmeta.sim.cluster import Simulation, SimulationResult
from raftmeta.sim.faults import FaultPlan, random_fault_plan
from raftmeta.sim.invariants import InvariantViolation

__all__ = [
    "FaultPlan",
    "InvariantViolation",
    "Simulation",
    "SimulationResult",
    "random_fault_plan",
]
