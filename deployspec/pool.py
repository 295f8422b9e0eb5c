"""``check --jobs``: the searches in a pool of processes, and how an interrupted pool
stops them and hears what they had found.

The searches are :func:`deployspec.check.judge`, each independent and seeded, so the
verdicts are those of a serial run (save for budget-bound searches on a loaded machine).
Spawned, not forked: the parent may run a progress thread. The processes ignore Ctrl-C:
an interrupted parent asks each to stop (SIGUSR1), keeps for :data:`STOP_GRACE` seconds
the violations they answer with, and ends them.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable

import attrs

from deployspec import check, interruption
from deployspec.engines.result import Result


def run(tasks: list[tuple[str, str, str, str]], options: dict, jobs: int, *,
        on_start: Callable[[str], None], on_result: Callable[[Result], None],
        on_found: Callable[[tuple, list[Result]], None]) -> list[Result]:
    """Every task (a search of :func:`deployspec.check.searches`) judged in ``jobs``
    processes; the callbacks as for :func:`deployspec.check.run`.

    A process that dies (killed: out of memory?) breaks the pool, which ends the others:
    the searches that ran in it are errors saying so, the others not yet judged run
    again in a new pool."""
    done: list[list[Result]] = [[] for _ in tasks]
    on_start(f"{len(tasks)} searches in {jobs} processes")
    todo = list(range(len(tasks)))
    while todo:
        again = _round(todo, tasks, options, jobs, done, on_result, on_found)
        if again:
            on_start(f"a search process died; {len(again)} searches not judged begun again in new processes")
        todo = again
    return [r for found in done for r in found]


def _round(todo: list[int], tasks, options, jobs, done, on_result, on_found) -> list[int]:
    """The searches ``todo`` in a pool; the ones to run again if a process of it died."""
    ctx = mp.get_context("spawn")
    begun = ctx.SimpleQueue()  # (pid, task) as each search begins: which one a dead process ran
    pool = cf.ProcessPoolExecutor(min(jobs, len(todo)), mp_context=ctx, initializer=_pool_worker,
                                  initargs=(begun,))
    futures: dict = {}
    try:
        with _signals_held():  # a process spawned holds Ctrl-C and SIGUSR1 until it can take them (_pool_worker)
            futures = {pool.submit(_judge_in_pool, *tasks[i], **options): i for i in todo}
        for future in cf.as_completed(futures):
            try:
                found = future.result()
            except cf.process.BrokenProcessPool:
                procs = list((getattr(pool, "_processes", None) or {}).values())  # (shutdown forgets them)
                pool.shutdown()  # each process ended and joined: their exit codes are in
                return _after_a_death(procs, _begun_in(begun), tasks, done, on_result, on_found)
            done[futures[future]] = found
            on_found(tasks[futures[future]], found)
            on_result(found[0])
    except BaseException as stop:
        workers = list((getattr(pool, "_processes", None) or {}).values())  # no public way to stop a busy worker
        pool.shutdown(wait=False, cancel_futures=True)
        try:
            if isinstance(stop, KeyboardInterrupt):
                _collect_stopped(workers, futures, tasks, done, on_found)
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                w.join(5)
                if w.is_alive():  # (stopped, or in a call that will not let go): not to outlive the run
                    w.kill()
                    w.join(1)
        raise
    pool.shutdown()
    return []


def _begun_in(begun) -> dict[int, list[tuple]]:
    """The tasks each process began, by its pid, in order."""
    by_pid: dict[int, list[tuple]] = {}
    with contextlib.suppress(OSError, EOFError):
        while not begun.empty():
            pid, task = begun.get()
            by_pid.setdefault(pid, []).append(tuple(task))
    return by_pid


def _after_a_death(procs, by_pid: dict, tasks, done, on_result, on_found) -> list[int]:
    """A process of the pool died: the search it was running (begun there, not judged)
    is an error saying how it died; the others not judged are to run again. A death no
    search can be blamed for (between two searches) blames them all, as one that may
    come again would loop for ever."""
    ended_by_pool = {0, 128 + signal.SIGTERM, -signal.SIGTERM}
    blamed = {}
    for p in procs:
        if p.exitcode not in ended_by_pool and p.exitcode is not None:
            for task in by_pid.get(p.pid, []):
                blamed[task] = p.exitcode
    culprits = [i for i, task in enumerate(tasks) if not done[i] and tuple(task) in blamed]
    again = [i for i, _ in enumerate(tasks) if not done[i] and i not in culprits]
    if not culprits:
        culprits, again = again, []
    for i in culprits:
        done[i] = [_lost(*tasks[i], exitcode=blamed.get(tuple(tasks[i])))]
        on_found(tasks[i], done[i])
        on_result(done[i][0])
    return again


#: whether an interrupted pool can stop its searches and hear what they found
#: (POSIX: SIGUSR1); elsewhere they are ended and what they found is lost
STOPS_A_SEARCH = hasattr(signal, "SIGUSR1") and hasattr(signal, "pthread_sigmask")
#: seconds an interrupted ``--jobs`` run waits for its running searches to stop and
#: hand back what they found (a search stops at its next step; a solver call may not)
STOP_GRACE = 3.0


@attrs.frozen
class _Stopped:
    """What a search of the pool found before the parent stopped it."""

    found: list[Result]


#: (a ``--jobs`` process) the parent asked it to stop: the searches queued for it are not begun
_stopping = False
#: whether this search process's cyclic collector ran when it started (``check.collector_for``)
_collecting = True


#: (a ``--jobs`` process) SIGTERM came during a search: it stops as at SIGUSR1, answers, and ends
_ending = False
#: seconds a process ended by SIGTERM during a search gives its answer to be sent before it exits
ANSWER_GRACE = 1.0


def _stop_in_pool(signum: int = 0, *args) -> None:
    global _stopping, _ending
    _stopping = True
    _ending = _ending or signum == signal.SIGTERM


def _ended(signum, frame) -> None:
    """SIGTERM to an idle ``--jobs`` process (the pool's own ending of it, or the whole
    process group's: a CI job's timeout): it has nothing to say, it ends."""
    os._exit(128 + signum)


def _judge_in_pool(*task, **options) -> list[Result] | _Stopped:
    """:func:`deployspec.check.judge` in a ``--jobs`` process: SIGUSR1 from the
    interrupted parent stops it as Ctrl-C stops a serial run, and the violations found
    by then come back (saved under --out, they are verdicts all the same). A search
    that ended is complete, whenever the stop came."""
    found = None
    if _begun is not None:
        with contextlib.suppress(OSError):  # (the parent gone: it hears nothing more anyway)
            _begun.put((os.getpid(), task))
    check.collector_for(task[2], _collecting)  # (this process runs nothing else in between)
    try:
        with interruption.kept([signal.SIGUSR1, signal.SIGTERM] if STOPS_A_SEARCH else [], on_signal=_stop_in_pool,
                               once=True):
            if _stopping:  # (asked before the handler above was in place)
                return _Stopped([])
            found = check.judge(*task, **options)
    except KeyboardInterrupt as stop:
        return found if found is not None else _Stopped(getattr(stop, "found", None) or [])
    finally:
        if _ending:  # SIGTERM, to the whole group (the parent hears the answer) or from the pool
            # ending it (no one does): the answer goes out as this returns, then the process ends
            ending = threading.Timer(ANSWER_GRACE, os._exit, (128 + signal.SIGTERM,))
            ending.daemon = True
            ending.start()
    return found


#: what a ``--jobs`` process holds from its spawning until ``_pool_worker`` takes it over
HELD_AT_SPAWN = {signal.SIGINT, signal.SIGUSR1, signal.SIGTERM} if STOPS_A_SEARCH else set()


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C and SIGUSR1 held while ``--jobs`` processes are spawned, until each takes
    them over (``_pool_worker`` ignores Ctrl-C, takes the stop, and unblocks both):
    :func:`deployspec.interruption.held_while_starting`."""
    from multiprocessing import resource_tracker

    # started first if it is not running (quiet_resource_tracker starts it): starting it
    # unblocks Ctrl-C in this thread (``resource_tracker.ensure_running``), which would
    # leave the processes spawned after it to take Ctrl-C by its default
    if HELD_AT_SPAWN:
        resource_tracker.ensure_running()
    with interruption.held_while_starting(HELD_AT_SPAWN):
        yield


def _collect_stopped(workers, futures: dict, tasks: list, done: list, on_found) -> None:
    """An interrupted ``--jobs`` run: stop each running search (SIGUSR1) and hear, for
    :data:`STOP_GRACE` seconds at most, what each had found (a second Ctrl-C ends the wait)."""
    if not STOPS_A_SEARCH:
        return
    for f in futures:  # the queued ones now (shutdown cancels them later, unheard by as_completed)
        f.cancel()
    running = {f: i for f, i in futures.items() if not f.cancelled() and not done[i]}
    for w in workers:
        if w.is_alive():
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.kill(w.pid, signal.SIGUSR1)
    try:
        for future in cf.as_completed(running, timeout=STOP_GRACE):
            if future.cancelled() or future.exception() is not None:  # a process lost: nothing to hear
                continue
            answer = future.result()
            i = running[future]
            # stopped: what it had found that is a verdict; ended meanwhile: all it found
            found = [r for r in answer.found if r.verdict == "violated"] if isinstance(answer, _Stopped) else answer
            if found:
                done[i] = found
                on_found(tasks[i], found)
    except (cf.TimeoutError, KeyboardInterrupt):
        pass  # what did not answer in time is lost, as before


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (the ``--jobs`` pool needs it) with
    its stderr on /dev/null. When an interrupted run ends the pool's processes, the
    tracker removes the semaphores they leave behind, which is its job, and warns
    about each one on stderr, after deployspec's last line. Call it before any other
    thread runs: for an instant, this process's own stderr is /dev/null too."""
    from multiprocessing import resource_tracker

    if os.name != "posix":  # elsewhere the tracker is not a process of its own
        return
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(2)
    try:
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _lost(model: str, variant: str, engine: str, prop: str, exitcode: int | None = None) -> Result:
    if exitcode is not None and exitcode < 0:
        how = f"killed by {signal.Signals(-exitcode).name}" if -exitcode in signal.valid_signals() else \
            f"killed by signal {-exitcode}"
        how += "; out of memory?" if exitcode == -signal.SIGKILL else ""
    elif exitcode is not None:
        how = f"exit code {exitcode}"
    else:
        how = "killed: out of memory?"
    return Result(model, variant, prop, engine, "error",
                  message=f"its search process stopped without answering ({how})")


#: (a ``--jobs`` process) where it says which search it begins (``pool._round``)
_begun = None


def _pool_worker(begun=None) -> None:
    """A search process of ``--jobs``: Ctrl-C is the parent's to handle, and it
    ends when the parent dies (killed: otherwise it would wait for ever on the
    task queue, whose write end it holds itself)."""
    from deployspec.partition_worker import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a Ctrl-C held since spawned is dropped)
    # the parent's stop (SIGUSR1) stops the search in progress (_judge_in_pool) and those
    # queued for this process
    if STOPS_A_SEARCH:
        signal.signal(signal.SIGUSR1, _stop_in_pool)
        # SIGTERM (a CI job's timeout goes to the whole group): a search stops and answers
        # as at SIGUSR1, then the process ends (_judge_in_pool); between searches it ends
        signal.signal(signal.SIGTERM, _ended)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_AT_SPAWN)  # held since spawned (_signals_held)
    die_with_parent()
    global _collecting, _begun
    _collecting = gc.isenabled()
    _begun = begun
    sys.stdout = sys.stderr  # what a design of one's own prints: stdout is the parent's report
