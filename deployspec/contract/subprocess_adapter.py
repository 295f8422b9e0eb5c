"""A program under test, spoken to over the JSON-lines protocol.

One :class:`Program` (one process) serves a whole run: every example starts
with a ``reset``, so the process is started once, not per example. The process
runs in its own process group (a new session), and :meth:`Program.close` ends
the whole group, so a shell wrapper's children do not outlive the run.

Each step is one round trip: the reply to an ``action`` carries the
observation after it. An example starts with ``reset`` and ``observe`` sent
together (pipelined; the implementation reads one line at a time as usual).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import time
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is 3.11's; annotations are not evaluated
    from typing import Self

from deployspec.adapter import ImplementationError
from deployspec.contract import launchable, leftovers, protocol
from deployspec.files import MACHINE_LIMITS
from deployspec.text import printable_line, quoted

#: a reply line longer than this is garbage, not an observation
MAX_LINE = protocol.MAX_LINE
STARTUP_TIMEOUT = protocol.STARTUP_TIMEOUT
INTERRUPTED = "interrupted"
#: programs still running, ended at interpreter exit whatever path led there
_RUNNING: weakref.WeakSet = weakref.WeakSet()
atexit.register(lambda: [p.close() for p in list(_RUNNING)])


class Program:
    """A running implementation: framing, timeouts, and the process group."""

    def __init__(self, command: str, *, model, timeout: float = 10.0, cwd: str | None = None,
                 startup_timeout: float | None = None):
        self.command = command
        self.model = model
        self.timeout = timeout
        #: the first reply after starting may also wait for the program to load
        self.startup_timeout = STARTUP_TIMEOUT if startup_timeout is None else startup_timeout
        self._started = False
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.implementation: str | None = None
        self.dead: str | None = None  # the cause, once the program has failed
        self.checker = protocol.ObservationChecker(model)
        self._next_id = 0
        #: actions performed over the wire (every step, settling included)
        self.actions = 0
        self._buf = bytearray()
        self._stderr = None
        self._children_before: set[int] | None = None
        #: the last request this run of the program replied to (None: none yet), which a
        #: report of what went wrong after it names
        self._answered: dict | None = None

    # --- process lifecycle ----------------------------------------------------
    def start(self) -> None:
        self._stderr = leftovers.StderrTail()
        # before it starts: what it detaches at once is adopted after this, and so ended
        self._children_before = leftovers.children() if leftovers.adopting() else None
        self._reaped = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                launchable.exec_form(self.command),  # (the shell becomes the program)
                shell=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr.write_end,
                cwd=self.cwd,
                start_new_session=True,  # its own process group: close() kills all of it
                bufsize=0,
            )
        except OSError as exc:
            self._stderr.close()
            if exc.errno in MACHINE_LIMITS:  # this machine's, not the program's
                raise
            raise ImplementationError(f"cannot start {quoted(self.command)}: {exc.strerror}") from None
        finally:
            self._stderr.started()
        self._buf.clear()
        self.dead = None
        self._answered = None
        self._started = True
        _RUNNING.add(self)

    def close(self) -> None:
        """End the program: EOF on its stdin, a short grace, then kill its process group.
        A signal that cuts the grace short kills the group all the same, and leaves the
        program known (``_RUNNING``) until its end is seen: a Ctrl-C there left a hung
        program and its children running after the run."""
        proc = self.proc
        if proc is not None:
            try:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
                try:
                    proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    _killpg(proc.pid, signal.SIGTERM)
                    try:
                        proc.wait(timeout=0.5)
                    except subprocess.TimeoutExpired:
                        pass
            finally:
                _killpg(proc.pid, signal.SIGKILL)  # also whatever it left behind in its group
            proc.wait()
            self.proc = None
            _RUNNING.discard(self)
            proc.stdout.close()
            if self._children_before is not None:
                leftovers.end_escaped(self._children_before | {proc.pid})
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- requests -----------------------------------------------------------------
    def ask(self, *requests: dict) -> list[dict]:
        """Send requests (pipelined) and return their checked replies, in order."""
        if self.dead is not None:
            if self.dead == INTERRUPTED:  # e.g. a machine's teardown after Ctrl-C: do not wait again
                raise KeyboardInterrupt
            raise ImplementationError(self.dead)
        if self.proc is None:
            self.start()
        if self._children_before is not None and time.monotonic() - self._reaped > 1.0:
            self._reaped = time.monotonic()  # adopted descendants that ended: no zombies piling up
            leftovers.reap_exited(self._children_before | {self.proc.pid})
        try:
            data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in requests)
            self._write(data, requests[0])
            replies = []
            for request in requests:
                try:
                    reply = protocol.parse_reply(self._readline(request), request, self._answered)
                    if reply["type"] == "error":
                        raise ImplementationError(
                            f"the implementation reported an error on {protocol.describe(request)}: "
                            f"{printable_line(reply['message'])}"
                        )
                except ImplementationError as exc:
                    exc.during = request["type"]  # (one of several asked at once: its own)
                    raise
                self._answered = request
                replies.append(reply)
            return replies
        except ImplementationError as exc:
            self.dead = str(exc)
            self.close()
            raise
        except KeyboardInterrupt:
            self.dead = INTERRUPTED
            self.close()
            raise

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _write(self, data: bytes, request: dict) -> None:
        fd = self.proc.stdin.fileno()
        try:
            while data:
                n = os.write(fd, data)
                data = data[n:]
        except (BrokenPipeError, ConnectionResetError):
            # (it may have ended already, having written a reply with no newline: say so too)
            fd_out = self.proc.stdout.fileno()
            while len(self._buf) <= MAX_LINE and select.select([fd_out], [], [], 0)[0]:
                chunk = os.read(fd_out, 65536)
                if not chunk:
                    break
                self._buf += chunk
            unended = f"; {self._unended()}" if self._buf and b"\n" not in self._buf else ""
            raise ImplementationError(self._gone(request, "closed its stdin") + unended) from None

    def _readline(self, request: dict) -> bytes:
        # (a program that flushes in some branches only: its first replies came)
        timeout, hint = self.timeout, "hung? see --timeout; or its reply waits unflushed in its output buffer"
        if self._started:  # the first reply: the program may still be loading
            timeout, self._started = max(self.timeout, self.startup_timeout), False
            # the limit is the longer of the two: say so, or a user whose program loads
            # slowly would not know that a --timeout over it raises it
            hint = (f"hung, or its replies wait in its output buffer (flush after each line)? the first "
                    f"reply after start is given {self.startup_timeout:g} s, or --timeout if longer")
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            i = self._buf.find(b"\n")
            if i > MAX_LINE:  # (the same bound as serve's: the line without its newline)
                raise ImplementationError(
                    f"reply to {protocol.describe(request)} is a line of over {MAX_LINE} bytes"
                )
            if i >= 0:
                line = bytes(self._buf[: i + 1])
                del self._buf[: i + 1]
                return line
            if len(self._buf) > MAX_LINE:
                raise ImplementationError(
                    f"reply to {protocol.describe(request)} is a line of over {MAX_LINE} bytes"
                )
            remaining = deadline - time.monotonic()
            # wait in slices: a program that exits while a child of it holds its
            # stdout open sends no EOF, and should not be taken for a hang
            ready = select.select([fd], [], [], min(remaining, 0.2))[0] if remaining > 0 else []
            if not ready:
                if self.proc.poll() is not None:
                    if not select.select([fd], [], [], 0)[0]:  # (what it wrote before it ended is read first)
                        unended = f"; {self._unended()}" if self._buf else ""
                        raise ImplementationError(self._gone(request) + unended)
                elif remaining <= 0.2:
                    if self._stdin_closed():  # it stopped reading: the request may never have reached it
                        raise ImplementationError(self._gone(request, "closed its stdin"))
                    if self._buf:  # not hung: the reply came, but its line was never ended
                        hint = self._unended()
                    raise ImplementationError.no_answer(  # (its last words: often what it waits for)
                        f"no reply to {protocol.describe(request)} within {timeout:g} s ({hint})"
                        f"{self._stderr_tail()}"
                    )
                else:
                    continue
            chunk = os.read(fd, 65536)
            if not chunk:
                if self._buf:
                    raise ImplementationError(
                        f"reply to {protocol.describe(request)} is not a full line "
                        f"(no newline before end of output): {protocol._clip(bytes(self._buf))}"
                    )
                raise ImplementationError(self._gone(request))
            self._buf += chunk

    def _unended(self) -> str:
        """What it wrote since its last reply, which no newline ended: a reply sent without
        its ``\\n`` (``write(json.dumps(r))``) looks like no reply at all."""
        return (f"the {len(self._buf)} bytes it wrote since its last reply end without a newline: "
                f"{protocol._clip(bytes(self._buf))}; every reply ends with \\n")

    def _stdin_closed(self) -> bool:
        """The program closed the pipe deployspec writes to (POSIX poll: POLLERR on our
        end). A request written before it did so sat in the pipe, unread, so no write
        failed; only a timed-out wait asks."""
        if not hasattr(select, "poll") or self.proc.stdin is None or self.proc.stdin.closed:
            return False
        poller = select.poll()
        poller.register(self.proc.stdin.fileno(), 0)  # POLLERR and POLLHUP are always reported
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))

    def _gone(self, request: dict, closed: str = "closed its stdout") -> str:
        """Why no reply can come: the program ended, or (still running) it ``closed``
        the pipe deployspec reads (stdout) or writes (stdin)."""
        what = protocol.describe(request)
        try:
            status = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return f"the implementation {closed} before replying to {what}{self._after(request)}{self._stderr_tail()}"
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}{_by_signal(status)}"
        return f"the implementation {how} before replying to {what}{self._after(request)}{self._stderr_tail()}"

    def _after(self, request: dict) -> str:
        """What it last replied to, if ``request`` is a reset: a program that ends right after
        a reply is reported at the next request, and the steps since the reset (which a
        report lists) are none then; the example it ended on is gone from view."""
        if request["type"] != "reset" or self._answered is None:
            return ""
        return f", after its reply to {protocol.describe(self._answered)}"

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        text = self._stderr.tail(settle=self.proc is None or self.proc.poll() is not None)
        # (lines as the program wrote them: str.splitlines also breaks at a form feed and
        # other separators, and the part before one was dropped)
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        return f"{STDERR_TAIL}{printable_line(lines[-1], 200, both_ends=True)}" if lines else ""


#: how a fault's cause gives the last line the program wrote to stderr (which may differ
#: from run to run: a timestamp, a pid, while the fault is the same)
STDERR_TAIL = "; its stderr ends with: "


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class SubprocessAdapter:
    """The adapter seam over a :class:`Program`; closing it keeps the program for the next example."""

    def __init__(self, program: Program):
        self.program = program
        self._observation: dict | None = None

    def reset(self, config: Any) -> None:
        p = self.program
        ok, obs = p.ask(protocol.reset(p.next_id(), p.model.name, config.to_json()),
                        protocol.observe(p.next_id()))
        if ok["protocol"] != protocol.VERSION:  # pragma: no cover - the schema pins it
            raise ImplementationError(f"the implementation speaks protocol {ok['protocol']}")
        p.implementation = ok.get("implementation", p.implementation)
        try:
            self._observation = self._checked(obs)
        except ImplementationError as exc:  # asked with the reset, but it is the observation's
            exc.during = "observe"
            raise

    def perform(self, action) -> str | None:
        p = self.program
        (outcome,) = p.ask(protocol.action(p.next_id(), action.to_json()))
        p.actions += 1
        self._observation = self._checked(outcome)
        return printable_line(outcome["reason"]) if outcome["type"] == "rejected" else None

    def observe(self) -> dict:
        if self._observation is None:  # not right after reset or perform (never, in a Session): ask
            (obs,) = self.program.ask(protocol.observe(self.program.next_id()))
            self._observation = self._checked(obs)
        obs, self._observation = self._observation, None
        return obs

    def close(self) -> None:
        self._observation = None

    def _checked(self, reply: dict) -> dict:
        problem = self.program.checker.check(reply["observation"])
        if problem:
            self.program.dead = f"observation violates the {self.program.model.name} observation schema: {problem}"
            self.program.close()
            raise ImplementationError(self.program.dead)
        return reply["observation"]


def _by_signal(status: int) -> str:
    """`` (128+11: SIGSEGV?)`` for an exit status a shell gives a command a signal ended:
    ``--exec`` runs through ``sh -c``, which waits for the program and exits so."""
    import signal

    try:
        return f" (128+{status - 128}: {signal.Signals(status - 128).name}?)" if status > 128 else ""
    except ValueError:
        return ""
