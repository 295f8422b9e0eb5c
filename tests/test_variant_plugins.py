"""Designs of the user's own (deployspec.variant_plugins): handed in by DEPLOYSPEC_VARIANTS or
an entry point, known to every command, and refused in one line when they are not variants."""

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from deployspec import models, variant_plugins

from .cli_runs import run

DESIGNS = Path(__file__).parent / "designs"
FINDINGS = Path(__file__).parent.parent / "counterexamples" / "capi"
MINE = "capi-current-finalize-in-txn"


@pytest.fixture
def outside(monkeypatch):
    """Models loaded afresh, with the designs folder importable; returns a setter for the variable."""
    monkeypatch.setattr(models, "_CACHE", {})
    monkeypatch.syspath_prepend(str(DESIGNS))
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [])  # the machine's own stay out

    def use(modules: str) -> None:
        monkeypatch.setenv(variant_plugins.ENV, modules)
        models._CACHE.clear()

    return use


def test_a_design_of_ones_own_is_listed_with_where_it_came_from(capsys, outside):
    outside("finalize_in_txn")
    status, out, _ = run(capsys, "variants", "--json")
    (mine,) = [v for v in json.loads(out)["capi"]["variants"] if v["name"] == MINE]
    assert status == 0 and mine["source"] == "DEPLOYSPEC_VARIANTS module finalize_in_txn"
    assert mine["declares"] == ["app_stays_available", "capacity_within_bound", "user_scale_not_lost"]
    shipped = [v for v in json.loads(out)["capi"]["variants"] if v["name"] == "capi-current"]
    assert shipped[0]["source"] is None


def test_it_replays_what_broke_the_design_it_changes(capsys, outside):
    """The one change removes the finding it was made for; capi-current keeps it."""
    outside("finalize_in_txn")
    finding = str(next(FINDINGS.glob("capi-current--single_active_deployment--*.json")))
    status, out, _ = run(capsys, "replay", finding, "--variant", MINE)
    assert status == 0 and out.endswith(f"does not reproduce on {MINE}: single_active_deployment holds\n")
    assert run(capsys, "replay", finding)[0] == 1


def test_check_judges_it_by_what_it_declares(capsys, outside):
    outside("finalize_in_txn")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", MINE, "--engine", "explore",
                         "--property", "single_active_deployment", "--json")
    (result,) = json.loads(out)["results"]
    assert status == 0 and result["variant"] == MINE and result["verdict"] == "holds"
    assert result["stats"]["complete"] is True


def test_an_entry_point_hands_in_the_same(capsys, outside, monkeypatch):
    point = EntryPoint("mine", "finalize_in_txn:VARIANTS", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point] if group == variant_plugins.GROUP else [])
    status, out, _ = run(capsys, "variants")
    assert status == 0 and "from: entry point mine (finalize_in_txn:VARIANTS)" in out


#: a module handing in capi-current changed by ``{}`` (keyword arguments of attrs.evolve)
EVOLVED = ("import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
           "VARIANTS = [attrs.evolve(CAPI_CURRENT, {})]\n")
BAD = {
    "absent": ("", "cannot load: ModuleNotFoundError: No module named 'absent'"),
    "raising": ("raise RuntimeError('no database')\n", "cannot load: RuntimeError: no database"),
    "novariants": ("x = 1\n", "the module has no VARIANTS (a list of variants)"),
    "notalist": ("VARIANTS = 3\n", "VARIANTS must be a list of variants, not int"),
    "notavariant": ("VARIANTS = ['capi-safe']\n", "str 'capi-safe' is not a variant (attrs.evolve one of"),
    "taken": (EVOLVED.format("name='capi-safe'"),
              "the name 'capi-safe' is taken (a shipped variant); give yours its own"),
    "slashed": (EVOLVED.format("name='../x'"),
                "name '../x' must be 1-64 letters, digits, '.', '_' or '-' (it names trace files)"),
    "unknownproperty": (EVOLVED.format("name='x', declares=frozenset({'fast'})"),
                        "x declares unknown properties fast (known: app_stays_available,"),
}


@pytest.mark.parametrize("module", BAD)
def test_what_is_not_a_variant_is_one_line_exit_2(capsys, outside, tmp_path, monkeypatch, module):
    source, message = BAD[module]
    if source:
        (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    outside(module)
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "capi-safe")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"deployspec: error: variants from DEPLOYSPEC_VARIANTS module {module}: {message}")
