"""Progress on stderr for runs longer than a second: a bar on a terminal, lines otherwise."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int):
        self.total = total
        self.count = 0
        self.started = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self._rich = None

    def __enter__(self):
        if self.tty:
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(
                TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                TimeElapsedColumn(), transient=True, redirect_stdout=False,
            )
            self._rich.__enter__()
            self._task = self._rich.add_task("checking", total=self.total)
        return self

    def start(self, label: str) -> None:
        if self._rich is not None:
            self._rich.update(self._task, description=label)

    def done(self, result) -> None:
        self.count += 1
        if self._rich is not None:
            self._rich.advance(self._task)
        elif time.perf_counter() - self.started > 1.0 or self.count == self.total:
            print(
                f"[{self.count}/{self.total}] {result.variant} · {result.property} · {result.engine}: "
                f"{result.verdict} ({result.stats.get('seconds', 0):.1f}s)",
                file=sys.stderr, flush=True,
            )

    def __exit__(self, *exc):
        if self._rich is not None:
            self._rich.__exit__(*exc)
        return False
