"""Programs that misbehave over the protocol at their N-th action: crash, hang, garbage, wrong ids, bad schemas…"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.server import Server

MODES = ("crash", "hang", "garbage", "wrong-id", "bad-schema", "bad-reply", "error", "spawn-and-crash", "deep",
         "big-number", "error-flood", "big-id", "closes-stdin", "closes-stdin-late", "dirty-refusal",
         "double-reply", "exit-after-reply", "bad-initial-observation", "error-initial-observation",
         "hangs-scaling-to-zero")


def misbehave(mode: str, request: dict, out, pidfile: str | None, server=None) -> None:
    rid = request["id"]
    obs = {"app": None, "droplets": [], "processes": [], "deployments": []}
    if mode == "crash":
        print("fake: simulated crash (TypeError: cannot read 'instances' of undefined)", file=sys.stderr)
        sys.exit(1)
    if mode == "spawn-and-crash":
        # a child in our process group that would outlive us
        child = subprocess.Popen(["sleep", "600"])
        _note(pidfile, child.pid)
        sys.exit(1)
    if mode == "hang":
        child = subprocess.Popen(["sleep", "600"])
        _note(pidfile, child.pid)
        print("fake: waiting for the database lock", file=sys.stderr, flush=True)
        time.sleep(600)
    if mode in ("closes-stdin", "closes-stdin-late"):  # answers, then stops reading and goes on running
        out.write(json.dumps(server.reply_to(json.dumps(request).encode())).encode() + b"\n")
        out.flush()
        if mode == "closes-stdin-late":  # the next request is in the pipe by then: no write fails
            time.sleep(0.3)
        os.close(0)
        time.sleep(600)
    line = {
        "garbage": "DEBUG: deploying app now\n",
        "wrong-id": json.dumps({"id": rid + 100, "type": "performed", "observation": obs}) + "\n",
        "bad-schema": json.dumps({"id": rid, "type": "performed", "observation": {
            "app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
            "processes": [{"id": 0, "droplet": 0, "instances": ["UP"]}], "deployments": []}}) + "\n",
        "bad-reply": json.dumps({"id": rid, "type": "performed"}) + "\n",
        "error": json.dumps({"id": rid, "type": "error", "message": "database is locked"}) + "\n",
        # a whole traceback, and a terminal escape that would clear the screen
        "error-flood": json.dumps({"id": rid, "type": "error", "message": "\x1b[2JTraceback (most recent call "
                                   "last):\n" + "  File x\n" * 2000}) + "\n",
        # an id no action can name (at most 10,000): a schema violation, not a harness crash
        "big-id": json.dumps({"id": rid, "type": "performed", "observation": {
            "app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
            "processes": [{"id": 20000, "droplet": 0, "instances": ["RUNNING"]}], "deployments": []}}) + "\n",
        # JSON, but more than Python reads: nested past the recursion limit, a 5,000-digit number
        "deep": "[" * 100_000 + "]" * 100_000 + "\n",
        "big-number": f'{{"id": {rid}, "type": "performed", "observation": {{"app": {"9" * 5000}}}}}\n',
        # a refusal of the cancel before the push, yet a droplet appears: the state changed
        "dirty-refusal": json.dumps({"id": rid, "type": "rejected", "reason": "nothing to cancel", "observation": {
            **obs, "droplets": [{"id": 0, "healthy": True}]}}) + "\n",
    }[mode]
    out.write(line.encode())
    out.flush()
    time.sleep(600)  # whatever happens next, the harness must end us


def _note(pidfile: str | None, pid: int) -> None:
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{pid}\n")


def serve_then_misbehave(argv: list[str]) -> int:
    """``VARIANT MODE N [PIDFILE]``: serves the reference VARIANT over the protocol until the
    N-th action request, then misbehaves as MODE says. Every process it starts writes its
    pid to PIDFILE, so a test can check that none outlives the run."""
    variant, mode, n = argv[0], argv[1], int(argv[2])
    pidfile = argv[3] if len(argv) > 3 else None
    _note(pidfile, os.getpid())
    server = Server(ReferenceImplementation("capi", variant), "capi")
    out = sys.stdout.buffer
    actions, pushed = 0, False
    for line in sys.stdin.buffer:
        request = json.loads(line)
        pushed = request.get("type") != "reset" and (pushed or request.get("action", {}).get("type") == "push")
        if mode.endswith("initial-observation") and request.get("type") == "observe":
            reply = ({"type": "observation", "observation": {"app": None}} if mode.startswith("bad") else
                     {"type": "error", "message": "observe not ready"})
            out.write(json.dumps({"id": request["id"], **reply}).encode() + b"\n")
            out.flush()
            continue
        reply = json.dumps(server.reply_to(line)).encode() + b"\n"
        if request.get("type") == "action":
            actions += 1
            if actions == n and mode == "double-reply":  # the N-th action's reply, twice
                out.write(reply)
            elif actions == n and mode == "exit-after-reply":
                out.write(reply)
                out.flush()
                sys.exit(0)
            elif actions == n and mode != "hangs-scaling-to-zero":
                misbehave(mode, request, out, pidfile, server)
            elif mode == "hangs-scaling-to-zero" and pushed and request["action"] == {"type": "scale", "instances": 0}:
                misbehave("hang", request, out, pidfile, server)  # (whenever the app is there: a bug of a state)
        out.write(reply)
        out.flush()
    return 0
