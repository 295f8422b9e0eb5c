"""Designs handed in that deployspec refuses, each in one line with exit status 2 before any
command runs: modules that are no design (the BAD table), bounds the search cannot take,
file names given for module names, entry points whose value is no module."""

from importlib.metadata import EntryPoint

import pytest

from deployspec import variant_plugins

from .cli_runs import run
from .designs_handed_in import EVOLVED, EVOLVED_SLOTS


def refused(capsys, message: str, where: str) -> None:
    """``deployspec variants`` ends with one line, exit 2, saying ``message`` of ``where``."""
    status, out, err = run(capsys, "variants")
    assert (status, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith(f"deployspec: error: variants from {where}: {message}"), err


def test_an_entry_point_whose_value_is_no_module_says_what_it_must_be(capsys, monkeypatch, outside):
    """It read "cannot load: AttributeError: 'NoneType' object has no attribute 'group'"."""
    point = EntryPoint("odd", "not a :: valid ref", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point] if group == variant_plugins.GROUP else [])
    status, out, err = run(capsys, "variants")
    assert (status, out) == (2, "")
    assert err == ("deployspec: error: variants from entry point odd (not a :: valid ref): its value must be a module "
                   "name, or MODULE:ATTRIBUTE (a list of variants in the module)\n")


def test_an_entry_point_whose_module_is_not_found_is_the_installed_package_s_to_fix(capsys, monkeypatch, outside):
    """It said modules are found from the current folder or PYTHONPATH: an installed
    package's entry point is fixed by installing the package again, or removing it."""
    point = EntryPoint("mydesigns", "mypkg.designz", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point] if group == variant_plugins.GROUP else [])
    status, out, err = run(capsys, "variants")
    assert (status, out) == (2, "")
    assert err == ("deployspec: error: variants from entry point mydesigns (mypkg.designz): cannot load: "
                   "ModuleNotFoundError: No module named 'mypkg' (an entry point of the installed package: install "
                   "it again, or pip uninstall it; until then every command refuses to start)\n")


#: modules that are no design, each with the start of what deployspec says of it
BAD = {
    "absent": ("", "cannot load: ModuleNotFoundError: No module named 'absent' (modules are found from the current folder, "),
    "raisesatimport": ("raise RuntimeError('no database')\n", "cannot load: RuntimeError: no database"),
    "novariants": ("x = 1\n", "the module has no VARIANTS (a list of variants)"),
    "notalist": ("VARIANTS = 3\n", "VARIANTS must be a list of variants, not int"),
    "notavariant": ("VARIANTS = ['capi-safe']\n", "str 'capi-safe' is not a variant (attrs.evolve one of"),
    "taken": (EVOLVED.format("name='capi-safe'"),
              "the name 'capi-safe' is taken (a shipped variant); give yours its own at taken.py:3\n"),
    "slashed": (EVOLVED.format("name='../x'"),
                ("name '../x' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, with "
                 "no '--' and no '-' at the end (trace files are named NAME--PROPERTY--HASH.json) at slashed.py:3\n")),
    # all name characters, but read as an option on a command line (--variant -x)
    "leadingdash": (EVOLVED.format("name='-x'"), "name '-x' must be 1-64 letters, digits, '.', '_' or '-', starting"),
    # all name characters, but running into the file name's separator: a--b--p--h.json,
    # x--p--p--h.json, and capi-current---p--h.json matching capi-current--*.json
    "doubledash": (EVOLVED.format("name='a--b'"), "name 'a--b' must be 1-64 letters, digits, '.', '_' or '-', "),
    "propertyinname": (EVOLVED.format("name='x--cancel_restores_last_good'"), "name 'x--cancel_restores_last_good' must"),
    "trailingdash": (EVOLVED.format("name='capi-current-'"), "name 'capi-current-' must be 1-64 letters"),
    "unknownproperty": (EVOLVED.format("name='x', declares=frozenset({'fast'})"),
                        "x's declares names unknown properties fast (known: app_stays_available,"),
    "declaresastring": (EVOLVED.format("name='x', declares='single_active_deployment'"),
                        "x's declares must be a set of property names, not str at declaresastring.py:3\n"),
    "beyondnotbeyond": (EVOLVED.format("name='x', violates_beyond={'single_active_deployment': 'somewhere'}"),
                        "x's violates_beyond must map property names to Beyond(...)"),
    # what `deployspec variants` (and --json, whose schema promises the types) shows of it
    "nosummary": (EVOLVED.format("name='x', summary=None"), "x's summary must be text"),
    "noconfig": (EVOLVED.format("name='x', config=None"), "x's config must be a dict"),
    "beyondwithoutwhy": (("from deployspec.reference.core import Beyond\n" + EVOLVED.format(
        "name='x', violates_beyond={'single_active_deployment': Beyond(config={}, trace='t.json', why=None)}")),
        "x's violates_beyond['single_active_deployment'] must be Beyond(config=dict, trace=text or None, why=text)"),
    "beyondapath": (("from pathlib import Path\nfrom deployspec.reference.core import Beyond\n" + EVOLVED.format(
        "name='x', violates_beyond={'single_active_deployment': Beyond(config={}, trace=Path('t.json'), why='w')}")),
        "x's violates_beyond['single_active_deployment'] must be Beyond("),
    # bounds, checked as --bound checks them, over the model's defaults (and exploration bounds)
    "unknownstart": (EVOLVED_SLOTS.format("name='x', config={'start': 'prod'}"),
                     "x's config: start must be one of empty, release, release-unbuilt, webhook, webhook-staging, got 'prod'"),
    "boundoftext": (EVOLVED.format("name='x', config={'max_instances': 'three'}"),
                    'x\'s config max_instances: expected int like 3, got "three" at boundoftext.py:3\n'),
    "boundoutofrange": (EVOLVED.format("name='x', config={'max_instances': 0}"),
                        "x's config: max_instances must be a positive integer, got 0"),
    "exploretypo": (EVOLVED.format("name='x', explore={'max_instnces': 3}"),
                    "x's explore: unknown configuration field(s): max_instnces: did you mean 'max_instances'? (known: max_instances, "),
    "exploreaset": (EVOLVED.format("name='x', explore={'max_in_flight': {1}}"),
                    "x's explore max_in_flight: {1} is not a value a bound takes (numbers, true/false, text, lists)"),
    "notunderexplore": (EVOLVED_SLOTS.format("name='x', config={'instances': 3}"),
                        ("x's config with the exploration bounds (max_instances=2, max_pushes=3): "
                         "need 1 <= instances <= max_instances, got instances=3, max_instances=2")),
    # rules, switches and sets of states of their kinds (the variant classes' validators), said
    # at the line that made the variant: "DEPLOYING" was searched for substrings, "no" read as on
    "textforstates": (EVOLVED.format("name='x', scale_blocked_in='DEPLOYING'"),
                      ("x's scale_blocked_in must be a set of states, some of DEPLOYING, PREPAUSED, PAUSED, "
                       "DEPLOYED, CANCELING, CANCELED, not str 'DEPLOYING' at textforstates.py:3")),
    "unknownstate": (EVOLVED.format("name='x', cancelable_states=frozenset({'DEPLOYING', 'canceling'})"),
                     "x's cancelable_states has unknown states 'canceling' (known: DEPLOYING, PREPAUSED, "),
    "textforflag": (EVOLVED.format("name='x', recheck_under_lock='no'"),
                    "x's recheck_under_lock must be True or False, not str 'no' at textforflag.py:3"),
    "textforrule": (EVOLVED.format("name='x', select_prior='oldest'"),
                    "x's select_prior must be a function (a rule), not str 'oldest' at textforrule.py:3"),
    "slotsflag": (EVOLVED_SLOTS.format("name='x', terraform_webhook=1"),
                  "x's terraform_webhook must be True or False, not int 1 at slotsflag.py:3"),
    # (was taken for a rule's fault: "in deployspec's core.py: does a rule of yours take ...")
    "declaredandbeyond": (EVOLVED.format("name='x', declares=frozenset({'single_active_deployment'})"),
                          ("x: single_active_deployment both declared and violated beyond (attrs.evolve keeps the "
                          "violates_beyond of the design it changes: pass violates_beyond without them, e.g. "
                          "violates_beyond={}) at declaredandbeyond.py:3\n")),
    # a field the class has not, e.g. a capi rule: the names it takes
    "slotsrule": (EVOLVED_SLOTS.format("name='x', select_prior=None"),
                  ("cannot load: TypeError: SlotsVariant.__init__() got an unexpected keyword argument "
                   "'select_prior' at slotsrule.py:3 (a SlotsVariant's fields: name, summary, upstream, declares, "
                   "reference, terraform_webhook, doc, model, config, explore, violates_beyond; "
                   "docs/variants.md)\n")),
    # a rule taking other arguments than the one it replaces: refused where the design is made
    # (it was a search's error only once called, after `deployspec variants` had listed it)
    "wrongargs": (("import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
                   "def start_two(state, action):\n    return 2\n"
                   "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='x', starting_instances=start_two)]\n"),
                  ("x's starting_instances must take the 3 arguments the rule it replaces takes: "
                   "start_two(state, action) (it takes 2; the comment on "
                   "CapiVariant.starting_instances gives them) at wrongargs.py:5")),
    # named as it is written (a class was 'type(a, b)'); a decorator's own arguments count, not what it wraps
    "wrongargsclass": (("import attrs, functools\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
                        "class K:\n    def __init__(self, a, b):\n        pass\n"
                        "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='x', starting_instances=K)]\n"),
                       "x's starting_instances must take the 3 arguments the rule it replaces takes: K(a, b) "),
    "wrongargsslots": (EVOLVED_SLOTS.format("name='x', reference=lambda: None"),
                       "x's reference must take the 1 argument the rule it replaces takes: <lambda>() (it takes none;"),
    # said of the rule: Python's "too many positional arguments" read as if it took too many
    "moreargs": (EVOLVED_SLOTS.format("name='x', reference=lambda a, b: None"),
                 "x's reference must take the 1 argument the rule it replaces takes: <lambda>(a, b) (it needs 2;"),
    "keywordarg": (EVOLVED_SLOTS.format("name='x', reference=lambda a, *, k: None"),
                   ("x's reference must take the 1 argument the rule it replaces takes: <lambda>(a, *, k) (its "
                    "keyword-only k has no default;")),
    # a misspelt field: the closest name first (the list of 22 capi fields is cut in its middle)
    "misspelt": (EVOLVED.format("name='x', select_priors=None"),
                 ("cannot load: TypeError: CapiVariant.__init__() got an unexpected keyword argument "
                  "'select_priors' at misspelt.py:3 (did you mean select_prior? a CapiVariant's fields: ")),
    "exits": ("import sys\nsys.exit(0)\n", "cannot load: it called sys.exit(0)"),
    "lazy": ("def made():\n    yield from []\n    raise RuntimeError('lazy boom')\nVARIANTS = made()\n",
             "cannot load: RuntimeError: lazy boom"),
    "othermodel": (("import attrs\nfrom deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE\n"
                   "VARIANTS = [attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, name='capi-safe')]\n"),
                   "the name 'capi-safe' is taken (a shipped variant)"),
    "wrongkey": (("import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
                 "VARIANTS = {'a': attrs.evolve(CAPI_CURRENT, name='b')}\n"),
                 "VARIANTS maps 'a' to a variant of another name (keys must be the names)"),
    "asksforamodel": ("from deployspec.models import get_model\nget_model('capi')\nVARIANTS = []\n",
                      "a supplier asked for a model while its own variants were being loaded"),
    # it ended deployspec with status 0, nothing checked and no --junit report: a pass in CI
    "endsdeployspec": ("import os\nos._exit(0)\n", "cannot load: it called os._exit(0)"),
    # a name that is not text: it names trace files, and a regular expression of it raised TypeError
    "numbername": (EVOLVED.format("name=3"), "name 3 must be 1-64 letters"),
    # text is iterable: its letters were each said not to be a variant
    "variantsastext": ("VARIANTS = 'capi-safe'\n", "VARIANTS must be a list of variants, not str"),
    # a capi design claiming to be of the slots model would run slots' rules on capi's state
    "wrongmodel": (EVOLVED.format("name='x', model='slots'"), "CapiVariant "),
    "beyondalist": (EVOLVED.format("name='x', violates_beyond=[]"),
                    "x's violates_beyond must map property names to Beyond(...)"),
    "noupstream": (EVOLVED.format("name='x', upstream=None"), "x's upstream must be text"),
    "noexplore": (EVOLVED.format("name='x', explore=None"), "x's explore must be a dict"),
    "beyondconfignone": (("from deployspec.reference.core import Beyond\n" + EVOLVED.format(
        "name='x', violates_beyond={'single_active_deployment': Beyond(config=None, trace='t.json', why='w')}")),
        "x's violates_beyond['single_active_deployment'] must be Beyond(config=dict"),
    "beyondunknown": (("from deployspec.reference.core import Beyond\n" + EVOLVED.format(
        "name='x', violates_beyond={'fast': Beyond(config={}, trace='t.json', why='w')}")),
        "x's violates_beyond names unknown properties fast (known: "),
    # the bounds a violation beyond the default search was found with: check's matrix compares
    # a proof's bounds with them (declarations.covers), where a dict raised TypeError
    "beyondbound": (("from deployspec.reference.core import Beyond\n" + EVOLVED.format(
        "name='x', violates_beyond={'single_active_deployment': Beyond(config={'max_instances': {'a': 1}}, "
        "trace=None, why='w')}")),
        "x's violates_beyond['single_active_deployment'] config max_instances: expected int like 3, got {\"a\": 1}"),
    "boundnumbername": (EVOLVED.format("name='x', config={1: 2}"), "x's config: 1 is not a bound's name"),
    "boundnan": (EVOLVED.format("name='x', config={'max_instances': float('nan')}"),
                 "x's config max_instances: nan is not a value a bound takes"),
    # a design's own objects where plain ones are read: their methods raised through
    # deployspec variants as a traceback (declares iterated, config's items read)
    "declaresiter": ("class Stop(BaseException):\n    pass\nclass Props(frozenset):\n    def __iter__(self):\n"
                     "        raise Stop('no iterating')\n"
                     + EVOLVED.format("name='x', declares=Props({'app_stays_available'})"),
                     "reading x raised Stop: no iterating at declaresiter.py:5"),
    "configitems": ("class Bounds(dict):\n    def items(self):\n        raise RuntimeError('no items')\n"
                    + EVOLVED.format("name='x', config=Bounds(max_instances=2)"),
                    "reading x raised RuntimeError: no items at configitems.py:3"),
    # names are unique across models: a capi design may not take a slots design's name
    "slotsname": (EVOLVED.format("name='slots-pipeline-immutable'"),
                  "the name 'slots-pipeline-immutable' is taken (a shipped variant); give yours its own"),
}


@pytest.mark.parametrize("module", BAD)
def test_what_is_not_a_variant_is_one_line_exit_2(capsys, outside, tmp_path, monkeypatch, module):
    """A design refused must be refused in one line naming what to fix: a traceback, or a
    design run as another, would be read as deployspec's fault or as a verdict on it."""
    source, message = BAD[module]
    if source:  # ("absent": no module at all)
        (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    outside(module)
    refused(capsys, message, "outside" if module == "asksforamodel" else f"DEPLOYSPEC_VARIANTS module {module}")


def test_a_design_with_bounds_the_search_cannot_take_is_refused_before_it(capsys, hand_in):
    """Its unknown start ran as the empty one (and "held"), a misspelt exploration bound
    ended the search as an error of its rules: refused as ``--bound start=prod`` is, at
    the line where the design's name is written (no traceback places a refusal found
    after the module loaded)."""
    hand_in("slotsstart", EVOLVED_SLOTS.format("name='sc', config={'start': 'prod'}"))
    status, out, err = run(capsys, "check", "--model", "slots", "--variant", "sc", "--engine", "explore",
                           "--property", "no_latent_drift")
    assert (status, out) == (2, "") and err == (
        "deployspec: error: variants from DEPLOYSPEC_VARIANTS module slotsstart: sc's config: start must be one "
        "of empty, release, release-unbuilt, webhook, webhook-staging, got 'prod' at slotsstart.py:3\n")


@pytest.mark.parametrize("given", ["./finalize_in_txn.py", "finalize_in_txn.py", "absent.py"])
def test_a_file_name_is_not_a_module_name(capsys, outside, given):
    """Also one that reads as a dotted name (module ``py`` of a package), which is not found:
    it got Python's "No module named 'finalize_in_txn.py'; 'finalize_in_txn' is not a package"."""
    outside(given)
    status, _, err = run(capsys, "variants")
    assert (status, err) == (2, (f"deployspec: error: DEPLOYSPEC_VARIANTS: {given!r} is not a module "
                                "name (a dotted name importable from the current folder or PYTHONPATH, without "
                                ".py or a path)\n"))


def test_two_suppliers_handing_in_one_name_are_refused_naming_the_first(capsys, hand_in, tmp_path, outside):
    """Two designs of one name: the later would silently replace the earlier in every command."""
    (tmp_path / "first.py").write_text(EVOLVED.format("name='twin'"))
    hand_in("second", EVOLVED.format("name='twin'"))
    outside("first,second")
    refused(capsys, "the name 'twin' is taken (DEPLOYSPEC_VARIANTS module first); give yours its own",
            "DEPLOYSPEC_VARIANTS module second")


def test_a_refusal_after_loading_names_the_line_of_the_designs_name_argument(capsys, hand_in):
    """Not a docstring that mentions the name first (a reviewer's case named line 1)."""
    hand_in("docv", ('"""My designs: \'mine\' is the one with three instances."""\n'
                     "import attrs\nfrom deployspec.reference.capi.variants import CAPI_SAFE\n"
                     "VARIANTS = [attrs.evolve(CAPI_SAFE,\n"
                     "                         name='mine', config={'max_instances': 'three'})]\n"))
    refused(capsys, "mine's config max_instances: expected int like 3, got \"three\" at docv.py:5\n",
            "DEPLOYSPEC_VARIANTS module docv")


def test_a_package_handing_in_its_modules_designs_names_the_module(capsys, tmp_path, monkeypatch, outside):
    (tmp_path / "pkgx").mkdir()
    (tmp_path / "pkgx" / "__init__.py").write_text('"""Designs."""\nfrom .designs import VARIANTS\n')
    (tmp_path / "pkgx" / "designs.py").write_text(EVOLVED.format("name='pk', declares='x'"))
    monkeypatch.syspath_prepend(str(tmp_path))
    outside("pkgx")
    refused(capsys, "pk's declares must be a set of property names, not str at designs.py:3\n",
            "DEPLOYSPEC_VARIANTS module pkgx")


def test_a_subclass_of_a_variant_is_refused_in_words_that_say_what_to_do_instead(capsys, hand_in):
    hand_in("subclassed", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT, CapiVariant\n"
                          "@attrs.frozen\nclass Waiting(CapiVariant):\n    pass\n"
                          "VARIANTS = [Waiting(**{**attrs.asdict(CAPI_CURRENT, recurse=False), 'name': 'waits'})]\n")
    status, out, err = run(capsys, "variants")
    assert (status, out) == (2, "") and err == (
        "deployspec: error: variants from DEPLOYSPEC_VARIANTS module subclassed: 'waits': a subclass of CapiVariant "
        "(Waiting) is not taken: a design differs by its rules and sets of states, each a field: attrs.evolve a "
        "shipped design with yours (docs/variants.md lists them)\n")
