"""``--json``: what check, contract, replay and variants print is what deployspec/output.schema.json
says (docs/json.md), field for field: a field added to the output without the schema
fails here, so scripts can rely on the schema."""

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from deployspec import validation

from .cli_runs import run


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(resources.files("deployspec").joinpath("output.schema.json").read_text())


def _valid(schema: dict, doc: dict, part: str) -> None:
    """``doc`` is valid against the whole schema and is the ``part`` it should be."""
    validation.validator(schema).validate(doc)
    validation.validator({**schema, "oneOf": [{"$ref": f"#/$defs/{part}"}]}).validate(doc)


def _json(capsys, *argv) -> tuple[int, dict]:
    status, out, _ = run(capsys, *argv, "--json")
    return status, json.loads(out)


def test_the_schema_is_a_schema(schema):
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_stats_field_the_docs_call_stable_is_one_the_schema_types(schema):
    """docs/json.md lists the stable ``stats`` fields; the schema lets engines add others, so
    one the docs name and the schema does not (z3's ``selection``, the explorer's
    ``bfs_depth``) could change type unseen."""
    import re

    text = (Path(__file__).parent.parent / "docs" / "json.md").read_text()
    table = text[text.index("| `stats` field |"):].split("\n\n")[0]
    named = {f for line in table.splitlines()[2:] for f in re.findall(r"`(\w+)`", line.split("|")[1])}
    assert named >= {"seconds", "bfs_depth", "counterexample"}  # the table was read
    assert named <= set(schema["$defs"]["stats"]["properties"]), named - set(schema["$defs"]["stats"]["properties"])


def test_the_matrix(capsys, schema):
    status, doc = _json(capsys, "check", "--model", "slots", "--engine", "explore", "--property", "no_latent_drift")
    assert status == 0 and doc["matches_declarations"] is True
    assert {r["variant"] for r in doc["results"]} >= {"slots-webhook-tag", "slots-pipeline-immutable"}
    _valid(schema, doc, "check")


def test_a_close_look_with_every_engine(capsys, schema):
    """hypothesis, z3 (n/a for this property) and the explorer's causes, each with its stats."""
    status, doc = _json(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "all",
                        "--property", "single_active_deployment", "--budget", "0.5")
    assert status == 1 and "matches_declarations" not in doc
    assert {r["engine"] for r in doc["results"]} == {"hypothesis", "z3", "explore"}
    _valid(schema, doc, "check")
    status, doc = _json(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "z3",
                        "--property", "app_stays_available")
    assert status == 1 and doc["results"][0]["stats"]["of"] == "selection rule"
    _valid(schema, doc, "check")


def test_a_proof_and_its_statistics(capsys, schema):
    status, doc = _json(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-immutable",
                        "--engine", "explore", "--property", "slot_runs_one_version")
    (result,) = doc["results"]
    assert status == 0 and result["verdict"] == "holds" and result["stats"]["complete"] is True
    _valid(schema, doc, "check")


def test_a_contract_run_with_a_reference(capsys, schema):
    status, doc = _json(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                        "--reference", "capi-2022", "--property", "conforms_to_capi-2022",
                        "--property", "capacity_within_bound", "--examples", "5")
    assert status == 1 and doc["fault"] is None
    assert doc["target"] == {"python": "deployspec.contract.examples:capi_2022", "name": "implementation",
                             "implementation": None}
    _valid(schema, doc, "contract")
    # stats may carry fields the schema does not name (an engine's own), but a contract
    # run's are all named: sweep_seconds was printed and documented, yet not in the schema
    named = set(schema["$defs"]["stats"]["properties"])
    assert set().union(*(r["stats"] for r in doc["results"])) <= named


def test_a_contract_run_that_ends_in_a_fault(capsys, schema, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder
    status, doc = _json(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                        "--examples", "5", "--name", "mine")
    assert status == 3 and doc["fault"]["cause"].startswith("perform() raised KeyError")
    _valid(schema, doc, "contract")
    status, doc = _json(capsys, "contract", "--exec", "echo garbage", "--model", "capi")
    assert status == 3 and doc["target"]["exec"] == "echo garbage"
    _valid(schema, doc, "contract")


def test_the_variants(capsys, schema):
    status, doc = _json(capsys, "variants")
    assert status == 0 and set(doc) == {"capi", "slots"}
    assert any(v["violates_beyond"] for v in doc["capi"]["variants"])  # the part with the most structure
    _valid(schema, doc, "variants")


@pytest.mark.parametrize("damage", [
    lambda d: d.pop("exit_status"),
    lambda d: d.update(surprise=1),
    lambda d: d["results"][0].update(surprise=1),
    lambda d: d["results"][0].pop("verdict"),
    lambda d: d["results"][0].update(verdict="maybe"),
    lambda d: d["results"][0]["stats"].update(complete="yes"),
])
def test_the_schema_tells_a_field_it_does_not_know_or_a_wrong_one(capsys, schema, damage):
    status, doc = _json(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-immutable",
                        "--engine", "explore", "--property", "no_latent_drift")
    assert status == 0
    validation.validator(schema).validate(doc)
    damage(doc)
    with pytest.raises(jsonschema.ValidationError):
        validation.validator(schema).validate(doc)


def test_a_rate_of_a_search_that_took_no_measurable_time_is_null(capsys, schema):
    """The engines write ``round(n / seconds) if seconds else None``: null is part of the promise."""
    status, doc = _json(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-immutable",
                        "--engine", "explore", "--property", "no_latent_drift")
    assert status == 0
    doc["results"][0]["stats"]["states_per_second"] = None
    _valid(schema, doc, "check")


def test_a_replay_of_a_regression_folder(capsys, schema):
    """Each file's verdict in the order replayed, its step and cause where it reproduces."""
    from .cli_runs import SEED

    files = sorted(SEED.parent.glob("capi-2022--*.json"))
    status, doc = _json(capsys, "replay", str(SEED.parent))
    assert status == 1 and doc["exit_status"] == 1 and doc["fault"] is None
    assert doc["on"] == "each file's recorded variant"
    assert [f["file"] for f in doc["files"] if "capi-2022--" in f["file"]] == [str(f) for f in files]
    seed = next(f for f in doc["files"] if f["file"] == str(SEED))
    assert (seed["outcome"], seed["step"], seed["cause"], seed["property"]) == \
        ("reproduces", 5, "cancel-keeps-unstarted", "app_stays_available")
    _valid(schema, doc, "replay")
    status, doc = _json(capsys, "replay", str(SEED), "--variant", "capi-safe")
    assert status == 0 and [(f["outcome"], f["step"], f["cause"]) for f in doc["files"]] == \
        [("does_not_reproduce", None, None)]
    _valid(schema, doc, "replay")


def test_a_replay_the_implementation_fails_names_the_fault_and_the_files_left(capsys, schema):
    from .cli_runs import SEED

    status, out, _ = run(capsys, "replay", str(SEED), str(SEED), "--exec", "echo garbage", "--json")
    doc = json.loads(out)
    assert status == 3 and doc["exit_status"] == 3 and doc["fault"]["where"] and doc["fault"]["cause"]
    assert [f["outcome"] for f in doc["files"]] == ["fault", "not_replayed"]  # (at its first reply)
    _valid(schema, doc, "replay")


def test_a_replay_s_lines_go_to_stderr_beside_its_document(capsys):
    from .cli_runs import SEED

    status, out, err = run(capsys, "replay", str(SEED), "--json")
    assert status == 1 and json.loads(out)["files"][0]["message"] in err


def test_a_replay_of_oddly_named_files_is_still_json_and_says_their_names_as_they_are(capsys, schema, tmp_path):
    """A name that is not UTF-8 made the document invalid JSON (a raw escape); a tab in a
    name was escaped in `message` and not in `file`, so one could not be matched to the other."""
    import os

    from .cli_runs import SEED

    folder = tmp_path / "odd"
    folder.mkdir()
    tabbed = folder / "a\tb.json"
    tabbed.write_bytes(SEED.read_bytes())
    os.makedirs(os.fsencode(folder) + b"/x\xffy", exist_ok=True)
    with open(os.fsencode(folder) + b"/x\xffy/t.json", "wb") as f:
        f.write(SEED.read_bytes())
    status, out, _ = run(capsys, "replay", str(folder), "--json")
    doc = json.loads(out)
    assert status == 1 and len(doc["files"]) == 2
    _valid(schema, doc, "replay")
    entry = next(f for f in doc["files"] if f["file"] == str(tabbed))
    assert entry["message"].startswith(f"{tabbed}: reproduces on capi-2022")
