"""examples/capi-node: a controller in plain Node.js, checked over the protocol.

It carries the seed's bug (it behaves like the Cloud Controller before PR #3072),
so the contract run must find cloud_controller_ng #3019 in it, and it must
conform to the capi-2022 reference variant step by step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main

SERVER = Path(__file__).resolve().parents[1] / "examples" / "capi-node" / "server.js"
pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed: the example is a Node.js program")


def test_the_contract_run_catches_the_seeds_bug(capsys, tmp_path):
    status = main(["contract", "--exec", f"node {SERVER}", "--model", "capi", "--property", "app_stays_available",
                   "--examples", "10", "--seed", "0", "--out", str(tmp_path), "--name", "capi-node"])
    out = capsys.readouterr().out
    assert status == 1, out
    (path,) = tmp_path.glob("capi-node--app_stays_available--*.json")
    trace = traces.load(path)
    kinds = [s["action"]["type"] for s in trace["steps"]]  # the seed: see test_contract_cli.is_the_seed
    assert sorted(kinds) == sorted(["push", "runtime", "deploy", "cancel", "deploy", "tick"])
    assert [k for k in kinds if k != "runtime"] == ["push", "deploy", "cancel", "deploy", "tick"]
    assert trace["extra"]["implementation"]["name"] == "capi-node"
    assert "no routable web instance left after step 5 (tick())" in out


def test_it_conforms_to_capi_2022(capsys):
    status = main(["contract", "--exec", f"node {SERVER}", "--model", "capi", "--reference", "capi-2022",
                   "--property", "conforms_to_capi-2022", "--examples", "40", "--seed", "1"])
    out = capsys.readouterr().out
    assert status == 0, out


def test_it_conforms_to_capi_2022_with_rollbacks(capsys):
    """Its ``cf rollback`` (``deploy(revision=K)``, offered with the bound ``rollback``):
    the run without the bound never sends one, so nothing else checks that code."""
    status = main(["contract", "--exec", f"node {SERVER}", "--model", "capi", "--reference", "capi-2022",
                   "--property", "conforms_to_capi-2022", "--examples", "40", "--seed", "1",
                   "--bound", "rollback=true"])
    out = capsys.readouterr().out
    assert status == 0, out
