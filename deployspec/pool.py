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
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from deployspec import check, interruption, save_log
from deployspec.engines.result import Result


def run(tasks: list[tuple[str, str, str, str]], options: dict, jobs: int, *,
        on_start: Callable[[str], None], on_result: Callable[[Result], None],
        on_found: Callable[[tuple, list[Result]], None]) -> list[Result]:
    """Every task (a search of :func:`deployspec.check.searches`) judged in ``jobs``
    processes; the callbacks as for :func:`deployspec.check.run`.

    A process that dies (killed: out of memory?) breaks the pool: the search it was
    running is an error saying how it died, and those not yet judged run again in a new
    pool (:func:`_after_a_death`)."""
    done: list[list[Result]] = [[] for _ in tasks]
    on_start(f"{len(tasks)} searches in {jobs} processes")
    todo, rounds = list(range(len(tasks))), 0
    while todo:
        rounds += 1
        last = rounds > len(tasks)  # (each round judges one search at least, but for deaths that go on)
        again = _round(todo, tasks, options, jobs, done, on_result, on_found, last=last)
        if again and last:  # (a round ended with searches "not begun": their processes were ending)
            _given_up(again, tasks, done, on_result, on_found)
            again = []
        if again:
            on_start(f"a search process died; {len(again)} searches not judged begun again in new processes")
        todo = again
    return [r for found in done for r in found]


def _round(todo: list[int], tasks, options, jobs, done, on_result, on_found, *, last: bool) -> list[int]:
    """The searches ``todo`` in a pool; the ones to run again if a process of it died."""
    started = time.time() - 1.0  # (a file's time may be a little behind the clock's)
    ctx = mp.get_context("spawn")
    begun = ctx.Array("i", len(tasks), lock=False)  # the pid each search began in (0: not begun)
    ended = ctx.SimpleQueue()  # a process's last resort: the line and status that end the program
    pool = cf.ProcessPoolExecutor(min(jobs, len(todo)), mp_context=ctx, initializer=_pool_worker,
                                  initargs=(begun, ended, interruption.OWN_PROCESS))
    futures: dict = {}

    def heard(i: int, answer) -> None:
        if isinstance(answer, _Stopped) and not answer.begun:  # its process was ending: begun again
            return
        _judged(tasks, done, i, _verdicts(tasks[i], answer), on_result, on_found)

    try:
        with _signals_held():  # a process spawned holds Ctrl-C, SIGUSR1 and SIGTERM until it can take them (_pool_worker)
            futures = {pool.submit(_judge_at, i, *tasks[i], **options): i for i in todo}
        for future in cf.as_completed(futures):
            try:
                answer = future.result()
            except cf.process.BrokenProcessPool:
                procs = list((getattr(pool, "_processes", None) or {}).values())  # (shutdown forgets them)
                dead = _the_dead(procs)  # before the others are ended
                for p in procs:  # the others' searches run again: they need not finish their step first
                    if p.exitcode is None:
                        p.kill()
                if not ended.empty():  # a rule that would not let go: the program ends, as without --jobs
                    from deployspec.contract import last_resort

                    last_resort.end(*ended.get())
                pool.shutdown()
                for f, i in futures.items():  # answers in before the break, not yet heard
                    if not done[i] and f.done() and not f.cancelled() and f.exception() is None:
                        heard(i, f.result())
                return _after_a_death(dead, begun, tasks, done, on_result, on_found, last=last)
            heard(futures[future], answer)
    except BaseException as stop:
        workers = list((getattr(pool, "_processes", None) or {}).values())  # no public way to stop a busy worker
        pool.shutdown(wait=False, cancel_futures=True)
        try:
            if isinstance(stop, KeyboardInterrupt):
                _collect_stopped(workers, futures, tasks, done, on_found)
        finally:
            for w in workers:  # all they had to say is heard: ended at once (SIGTERM: 4 s, _ended)
                w.kill()
            for w in workers:
                w.join(5)
        if isinstance(stop, KeyboardInterrupt):  # (once none of them can write any more)
            _heard_from_disk(tasks, done, on_found, options.get("out_dir"), started)
        raise
    pool.shutdown()
    return [i for i in todo if not done[i]]  # (answered "not begun" by a process that was ending)


def _the_dead(procs, wait: float = 1.0) -> dict[int, int]:
    """The processes of a broken pool that died, by pid, with their exit codes. A process
    closes its pipes as it dies, a moment before it can be reaped, so the pool may break
    before any has an exit code: waited for (the others, asked to end by SIGTERM, live
    on for ANSWER_GRACE seconds)."""
    deadline = time.monotonic() + wait
    while True:
        ended = {p.pid: p.exitcode for p in procs if p.exitcode is not None}
        if ended or not procs or time.monotonic() > deadline:
            return ended
        time.sleep(0.005)


def _verdicts(task: tuple, answer) -> list[Result]:
    """A search's results; for one stopped by a SIGTERM to its process alone (an operator,
    a memory watchdog such as earlyoom), the violations it had found, or an error."""
    if not isinstance(answer, _Stopped):
        return answer
    found = [r for r in answer.found if r.verdict == "violated"]
    return found or [Result(task[0], task[1], task[3], task[2], "error",
                            message="its search process was stopped (SIGTERM) before it ended")]


def _after_a_death(ended: dict[int, int], begun, tasks, done, on_result, on_found, *, last: bool) -> list[int]:
    """A process of the pool died (``ended``: pid -> exit code): the search it was
    running (begun there, not judged) is an error saying how it died; the others not
    judged are to run again. A process that ended itself after a SIGTERM (its search
    answered) is no one's death. On the ``last`` round every search not judged is an
    error: deaths that go on would loop for ever."""
    own_end = 128 + signal.SIGTERM
    culprits = [i for i in range(len(tasks))
                if not done[i] and begun[i] in ended and ended[begun[i]] != own_end]
    again = [i for i in range(len(tasks)) if not done[i] and i not in culprits]
    for i in culprits:
        _judged(tasks, done, i, [_lost(*tasks[i], exitcode=ended[begun[i]])], on_result, on_found)
    if not last:
        return again
    _given_up(again, tasks, done, on_result, on_found)
    return []


def _given_up(todo: list[int], tasks, done, on_result, on_found) -> None:
    """Searches not run again (deaths went on for as many rounds as there are searches): errors."""
    for i in todo:
        model, variant, engine, prop = tasks[i]
        _judged(tasks, done, i, [Result(model, variant, prop, engine, "error",
                                        message="not judged: its search processes kept dying")], on_result, on_found)


def _judged(tasks, done, i: int, found: list[Result], on_result, on_found) -> None:
    # on_found first: a stop before done[i] is set makes _collect_stopped hear it again
    # (the command hears a search once) rather than never
    on_found(tasks[i], found)
    done[i] = found
    on_result(found[0])


#: whether an interrupted pool can stop its searches and hear what they found
#: (POSIX: SIGUSR1); elsewhere they are ended and what they found is lost
STOPS_A_SEARCH = hasattr(signal, "SIGUSR1") and hasattr(signal, "pthread_sigmask")
#: seconds an interrupted ``--jobs`` run waits for its running searches to stop and
#: hand back what they found (a search stops at its next step; a solver call may not)
STOP_GRACE = 3.0
#: seconds a ``--jobs`` process lives on after a SIGTERM: its answer goes out, and the
#: parent, stopped by the same signal, hears every process for STOP_GRACE seconds first
ANSWER_GRACE = STOP_GRACE + 1.0


@attrs.frozen
class _Stopped:
    """What a search of the pool found before the parent stopped it (``begun``: False for
    one stopped before it began, which a run that goes on begins again elsewhere)."""

    found: list[Result]
    begun: bool = True


#: (a ``--jobs`` process) the parent asked it to stop: the searches queued for it are not begun
_stopping = False
#: whether this search process's cyclic collector ran when it started (``check.collector_for``)
_collecting = True


#: (a ``--jobs`` process) SIGTERM came during a search: it stops as at SIGUSR1, answers, and ends
_ending = False


def _stop_in_pool(signum: int = 0, *args) -> None:
    global _stopping, _ending
    _stopping = True
    _ending = _ending or signum == signal.SIGTERM


def _ended(signum, frame) -> None:
    """SIGTERM to a ``--jobs`` process between searches (the whole process group's: a CI
    job's timeout): the searches queued for it are not begun, and it ends once the parent
    has had time to hear the others (ending at once broke the pool, and the answers of
    the searches still running were lost)."""
    _stop_in_pool(signum)
    _end_later()


def _end_later() -> None:
    ending = threading.Timer(ANSWER_GRACE, os._exit, (128 + signal.SIGTERM,))
    ending.daemon = True
    ending.start()


def _judge_in_pool(*task, **options) -> list[Result] | _Stopped:
    """:func:`deployspec.check.judge` in a ``--jobs`` process: SIGUSR1 from the
    interrupted parent stops it as Ctrl-C stops a serial run, and the violations found
    by then come back (saved under --out, they are verdicts all the same). A search
    that ended is complete, whenever the stop came."""
    found = None
    check.collector_for(task[2], _collecting)  # (this process runs nothing else in between)
    try:
        with save_log.noting(), interruption.kept([signal.SIGUSR1, signal.SIGTERM] if STOPS_A_SEARCH else [],
                                                  on_signal=_stop_in_pool, once=True):
            if _stopping:  # (asked before the handler above was in place)
                return _Stopped([], begun=False)
            try:
                found = check.judge(*task, **options)
            except KeyboardInterrupt as stop:
                found = _Stopped(save_log.at_stop(stop, None))  # (found is set only once judge returned)
                raise
    except KeyboardInterrupt:
        return found if found is not None else _Stopped([])
    finally:
        if _ending:  # SIGTERM (a CI job's timeout, to the whole group): the answer goes out as
            _end_later()  # this returns, and the process ends once the parent has heard
    return found


def _judge_at(at: int, *task, **options):
    """:func:`_judge_in_pool`, the pid of the process it runs in noted at ``at`` first (if a
    process dies, which search it was running)."""
    if _stopping:  # (stopped between searches: not begun, nor noted as begun here)
        return _Stopped([], begun=False)
    if _begun is not None:
        _begun[at] = os.getpid()
    return _judge_in_pool(*task, **options)


#: what a ``--jobs`` process holds from its spawning until ``_pool_worker`` takes it over
HELD_AT_SPAWN = {signal.SIGINT, signal.SIGUSR1, signal.SIGTERM} if STOPS_A_SEARCH else set()


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C, SIGUSR1 and SIGTERM held while ``--jobs`` processes are spawned, until each
    takes them over (``_pool_worker`` ignores Ctrl-C, takes the stop and the end, and
    unblocks all three):
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
                on_found(tasks[i], found)  # (heard, then done: as _judged)
                done[i] = found
    except (cf.TimeoutError, KeyboardInterrupt):
        pass  # what did not answer in time is lost, as before


def _heard_from_disk(tasks, done, on_found, out_dir: str | None, since: float) -> None:
    """An interrupted pool, once its processes ended: the counterexamples saved under
    ``out_dir`` since ``since`` that no answer reported, each heard as its search's (the
    first not judged of that variant and property, by that engine or a random search's,
    whose close look explores too). A process that saved one and answered after the
    parent stopped listening (a loaded machine) had left it unreported."""
    reported = {Path(r.counterexample).name for found in done for r in found if r.counterexample}
    heard: dict[int, list[Result]] = {}
    for r in save_log.found_on_disk(out_dir, since, reported):
        # (a random search's close look explores too: its task may have saved an explorer's trace)
        i = next((i for i, t in enumerate(tasks) if not done[i] and (t[1], t[3]) == (r.variant, r.property)
                  and r.engine in (t[2], "explore")), None)
        if i is not None:
            heard.setdefault(i, []).append(r)  # (each cause its file)
    for i, found in heard.items():
        on_found(tasks[i], found)
        done[i] = found


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


def _lost(model: str, variant: str, engine: str, prop: str, exitcode: int) -> Result:
    """The error of a search whose process died, saying how."""
    if exitcode < 0:
        how = f"killed by {signal.Signals(-exitcode).name}" if -exitcode in signal.valid_signals() else \
            f"killed by signal {-exitcode}"
        how += "; out of memory?" if exitcode == -signal.SIGKILL else ""
    else:
        how = f"exit code {exitcode}"
    return Result(model, variant, prop, engine, "error",
                  message=f"its search process stopped without answering ({how})")


#: (a ``--jobs`` process) where it notes the searches it begins (``_judge_at``)
_begun = None


def _pool_worker(begun=None, ended=None, own_process: bool = False) -> None:
    """A search process of ``--jobs``: Ctrl-C is the parent's to handle, and it
    ends when the parent dies (killed: otherwise it would wait for ever on the
    task queue, whose write end it holds itself). In the ``deployspec`` program
    (``own_process``), a rule that will not let go ends it as in one process: its
    last resort hands the line to the parent through ``ended``, then ends this process
    (spawned, it would not know the program's, and waited for ever on such a rule)."""
    from deployspec.contract import last_resort
    from deployspec.partition_worker import die_with_parent

    interruption.OWN_PROCESS = own_process
    if ended is not None:
        last_resort.relay = lambda line, status: ended.put((line, status))

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
