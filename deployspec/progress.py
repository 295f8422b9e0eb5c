"""Progress on stderr for runs longer than a second: a bar on a terminal, lines otherwise.

Within a long exhaustive search, how far it got (depth, states, states/s): beside
the bar on a terminal, else a line at most every ``every`` seconds."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, every: float = 10.0):
        self.total = total
        self.count = 0
        self.started = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self._rich = None
        self.label = "checking"
        self.quiet = False
        #: seconds between two lines about a running search (without a terminal)
        self.every = every
        self._said = time.perf_counter()
        #: lines of the first second, said once the run turns out to be longer
        self._held: list[str] = []

    def __enter__(self):
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            # on stderr, which is the terminal here: stdout may be a file
            self._rich = RichProgress(
                TextColumn("{task.description}"), BarColumn(bar_width=10),
                TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                TextColumn("{task.fields[detail]}"),
                console=Console(stderr=True), transient=True, redirect_stdout=False,
            )
            self._rich.__enter__()
            self._task = self._rich.add_task("checking", total=self.total, detail="")
        return self

    def start(self, label: str) -> None:
        self.label = label
        self._said = time.perf_counter()
        if self._rich is not None:
            self._rich.update(self._task, description=label, detail="")

    def searching(self, text: str) -> None:
        """How far the running search got (``engines.explore_text.progress_text``)."""
        if self._rich is not None:
            self._rich.update(self._task, detail=text)
        elif time.perf_counter() - self._said >= self.every:
            self._said = time.perf_counter()
            self._line(f"  {self.label}: {text}")

    def done(self, result, seconds: float | None = None, *, engines: str | None = None,
             verdict: str | None = None) -> None:
        """A search ended: ``result`` its first result, ``seconds`` all it took (else the result's);
        ``engines`` and ``verdict`` as the line says them where several searches made one
        answer (a close look: the random search, then the explorer; the table's cell)."""
        self.count += 1
        if seconds is None:
            seconds = result.stats.get("seconds", 0)
        if self._rich is not None:
            self._rich.advance(self._task)
            return
        if verdict is None:
            # an exhaustive search a bound or budget stopped proved nothing: "holds*", as in the table
            unfinished = "*" if result.verdict == "holds" and result.stats.get("complete") is False else ""
            verdict = result.verdict + unfinished
        line = (f"[{self.count}/{self.total}] {result.variant} · {result.property} · {engines or result.engine}: "
                f"{verdict} ({seconds:.1f}s)")
        if time.perf_counter() - self.started > 1.0:  # a long run: every line, the first ones too
            for held in self._held:
                self._line(held)
            self._held.clear()
            self._line(line)
        elif self.count == self.total:  # a run of a second or less: only its last line
            self._line(line)
        else:
            self._held.append(line)

    def _line(self, text: str) -> None:
        """Progress is a courtesy: a closed or full stderr must not end the run and
        lose its results (``2>/dev/full``, ``2>&1 >out | head -1``); it goes quiet."""
        if self.quiet:
            return
        try:
            print(text, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            self.quiet = True

    def __exit__(self, *exc):
        if self._rich is not None:
            self._rich.__exit__(*exc)
        return False
