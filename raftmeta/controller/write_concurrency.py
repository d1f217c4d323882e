"""How many clients write to the controller at once: the estimate its adaptive wait follows.

Group commit alone (``controller.append.max.in.flight``) gathers only what arrives while an
append awaits its commit. When a commit is faster than clients come back with their next
request, almost every request finds nothing in flight and goes alone, paying every per-batch
cost (a replication round, an fsync per voter, thread hand-offs) by itself. Waiting briefly
for the others lets them share one batch; but a lone client must never wait, and a fixed wait
would cost it exactly that on every request.

So the controller waits for the writers it has reason to expect. This module keeps the count:
write requests *outstanding* (staged, or appended and awaiting their commit) right now, and
the most seen outstanding at once during each of the last few groups. A lone client never has
more than one outstanding, so it is never waited for. With many clients, the peak can only
grow towards their real number: a group that waits until everyone expected is outstanding
sees, counting the requests that arrive while it is being written, at least as many as it
waited for. (Taking instead the number a commit released locks into small groups: a group of
two releases two, so two are expected, and the next group is two again.) The estimate falls
as the groups that saw more writers leave the window; a request that waited the whole cap as
the only one outstanding shows a client left alone, and the earlier peaks are forgotten at
once, so it waits the cap once, not once per remembered group.

Only the active controller's own requests that write and wait for their commit count; its
periodic writes (fencing, elections, NoOps) and replies that write nothing do not.

Pure bookkeeping, no clock: the controller calls it as requests stage, append and commit.
"""

from __future__ import annotations

from collections import deque

GROUPS_REMEMBERED = 8
"""How many recent groups' peaks the estimate takes its maximum over. After the number of
writers falls (to more than one), at most this many groups wait out the cap before the
estimate follows."""


class WriteConcurrency:
    """Write requests outstanding at the controller now, and the most lately seen at once."""

    def __init__(self, groups_remembered: int = GROUPS_REMEMBERED) -> None:
        self.staged = 0
        """Write requests whose records are staged and not yet appended."""
        self._appended: deque[int] = deque()
        """Write requests per append awaiting its commit, oldest first."""
        self._appended_total = 0
        self._peak = 0
        """The most outstanding at once since the last append."""
        self._peaks: deque[int] = deque(maxlen=groups_remembered)

    @property
    def outstanding(self) -> int:
        """Write requests staged or appended, not yet committed."""
        return self.staged + self._appended_total

    @property
    def expected(self) -> int:
        """How many writers to expect outstanding at once: the most seen lately."""
        return max(self._peak, max(self._peaks, default=0))

    def all_expected_here(self) -> bool:
        """Whether every writer the estimate expects is outstanding, so nobody else is
        coming soon and waiting longer gathers nothing."""
        return self.outstanding >= self.expected

    def stage(self) -> None:
        """One more write request staged its records."""
        self.staged += 1
        self._peak = max(self._peak, self.outstanding)

    def append(self) -> None:
        """The staged requests went to Raft as one append; the group's peak is kept."""
        self._appended.append(self.staged)
        self._appended_total += self.staged
        self.staged = 0
        self._peaks.append(self._peak)
        self._peak = self.outstanding

    def commit(self) -> None:
        """The oldest append awaiting its commit committed."""
        if self._appended:
            self._appended_total -= self._appended.popleft()

    def waited_out(self) -> None:
        """The staged requests waited the whole cap and not every expected writer came.

        If the request waiting is the only one outstanding, the clients seen lately are
        gone and one is left alone: forget the earlier peaks, so that it waits once and not
        once per remembered group. Otherwise keep them: under load, writers come back more
        slowly than the cap, and expecting fewer would only make smaller groups (more CPU
        per write, so slower still).
        """
        if self.outstanding <= 1:
            self._peaks.clear()
            self._peak = self.outstanding

    def drop_staged(self) -> None:
        """The staged requests failed without being appended."""
        self.staged = 0

    def clear(self) -> None:
        """Leadership is gone: nothing is outstanding here any more, and whoever writes to
        this controller if it leads again is learnt afresh (a lone client first)."""
        self.staged = 0
        self._appended.clear()
        self._appended_total = 0
        self._peak = 0
        self._peaks.clear()
