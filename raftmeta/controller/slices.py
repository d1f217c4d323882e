"""Big batches in bounded slices, so that one event never holds the controller's queue long.

The queue runs one event at a time, and every other request (heartbeats above all) waits
behind it. Some of the controller's own operations touch one record per partition of a broker,
or of a whole failure: fencing a broker that leads 2,000 partitions and follows 4,000 more
writes 6,000 records, and a rack of 100 brokers lost at once writes 100 times that. Computing,
applying and encoding them in one event would stall the queue for seconds at 2 million
partitions, long enough for live brokers' sessions to expire behind it. So these operations
are written ``MAX_ELECTIONS_PER_SLICE`` records at a time, each slice its own event queued
behind whatever arrived meanwhile, each computed afresh against the latest image.

Kafka makes a large non-atomic write one KIP-868 metadata transaction (Begin/EndTransaction
records around its batches) so that readers never act on half of it. Whether a slice needs
that is decided per operation, by asking what a reader, or the next controller after a
failover, sees if the operation stops between two slices:

* **Fencing a broker whose session expired** (:meth:`ClusterControlManager.fence_one_stale_broker`):
  no transaction. Each slice takes the broker out of some ISRs and moves the leaderships it
  held there, each record a whole change to its own partition that the rules allow on its own;
  the fencing record comes in the last slice. Stopped half-way, the broker is still unfenced
  and partly out of ISRs, a state a live broker's shrinking ISRs also produce: a new
  controller starts its session afresh and fences it again from the start if it stays silent,
  and a broker that does come back rejoins the ISRs through AlterPartition.
* **Controlled shutdown**: no transaction. The marker (``in_controlled_shutdown``) goes first
  with the first slice, so from then on no election hands the broker a leadership; the moves
  follow slice by slice from the periodic duties, and a controller that takes over finds the
  marker in the image and finishes them. The broker is told SHUTDOWN_NOW only once it leads
  nothing and every active broker has seen the last slice.
* **Periodic unclean elections and the preferred-leader rebalance**: no transaction, already
  capped at 1,000 elections per run (``elections.MAX_ELECTIONS_PER_RUN``) and run again
  within 10 ms while capped, as in Kafka.
* **Atomic operations stay whole**: CreateTopics, CreatePartitions and the other user
  operations that must apply all or nothing are refused above 10,000 records
  (``MAX_RECORDS_PER_USER_OP``) and written as one event, as Kafka writes them as one batch.

Not sliced, and each one event still: a broker's own request to be fenced, an
UnregisterBroker, a registration replacing an unfenced incarnation, an unfencing (elections for
every leaderless partition) and an ElectLeaders request; each is bounded by one broker's
partitions or by the partitions a client names.
"""

from __future__ import annotations

MAX_ELECTIONS_PER_SLICE = 500
"""The most elections one slice writes: about 10-20 ms of computing, applying and encoding on
this project's reference machine, so a slice stays well inside the 100 ms a queue event may
take, with room for what the commit of its batch costs later."""
