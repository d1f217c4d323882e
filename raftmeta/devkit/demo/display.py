"""How the demo shows its progress: one line per step, with a spinner and the elapsed time.

On a terminal the running step spins and its clock ticks (``rich.progress``); finished steps
keep their line with a tick or a cross and the time they took. Into a pipe or a file (CI, a
test) the same steps come out as plain lines, one when a step ends, so logs stay readable.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text


class _StateColumn(ProgressColumn):
    """A spinner while the step runs, then a green tick or a red cross."""

    def __init__(self) -> None:
        super().__init__()
        self._spinner = Spinner("dots", style="cyan")

    def render(self, task: Task) -> RenderableType:
        state = task.fields.get("state")
        if state == "done":
            return Text("✓", style="bold green")
        if state == "failed":
            return Text("✗", style="bold red")
        return self._spinner.render(task.get_time())


class _SecondsColumn(ProgressColumn):
    """Elapsed time as ``12.3 s``: the steps are seconds long, not hours."""

    def render(self, task: Task) -> RenderableType:
        elapsed = task.elapsed or 0.0
        return Text(f"{elapsed:5.1f} s", style="dim")


class StepDisplay:
    """Shows each step as it starts, runs and ends; a context manager around the whole run."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._live = console.is_terminal
        self._progress = Progress(
            _StateColumn(),
            TextColumn("{task.description}"),
            _SecondsColumn(),
            TextColumn("[dim]{task.fields[note]}"),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._title = ""

    def __enter__(self) -> StepDisplay:
        if self._live:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live:
            if self._task is not None and kind is not None:
                self._progress.update(self._task, state="failed")
                self._progress.stop_task(self._task)
            self._progress.stop()

    def begin(self, title: str) -> None:
        self._title = title
        self._task = self._progress.add_task(title, total=None, state="running", note="")

    def note(self, text: str) -> None:
        """A few words on what the running step is waiting for."""
        if self._task is not None:
            self._progress.update(self._task, note=text)

    def end(self, *, ok: bool, note: str = "") -> float:
        """Mark the running step done or failed; returns how long it took in seconds."""
        assert self._task is not None
        self._progress.update(self._task, state="done" if ok else "failed", note=note)
        self._progress.stop_task(self._task)
        elapsed = self._progress.tasks[-1].elapsed or 0.0
        if not self._live:
            mark = "✓" if ok else "✗"
            suffix = f"  {note}" if note else ""
            self.console.print(
                f"{mark} {self._title}  {elapsed:.1f} s{suffix}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        self._task = None
        return elapsed

    def show(self, renderable: RenderableType) -> None:
        """Print a table or text above the live lines (or in sequence, off a terminal)."""
        self.console.print(renderable)


def steps_table(rows: list[tuple[str, float, str]]) -> Table:
    """The closing table: every step that ran, how long it took, what it found."""
    table = Table(title="raftmeta demo", title_justify="left", show_edge=False)
    table.add_column("step")
    table.add_column("time", justify="right")
    table.add_column("result")
    for title, seconds, result in rows:
        table.add_row(title, f"{seconds:.1f} s", result)
    return table
