"""A seed gives the same search whatever else the process has loaded (engines/seeding.py).

Each run is a fresh interpreter: Hypothesis gathers local constants once per
process from ``sys.modules``, so only a new process shows what a user sees
when running the CLI, then pytest, then the CLI after editing their own code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_RUN = textwrap.dedent(
    """
    import contextlib, json, sys
    if sys.argv[1] == "user-module":
        sys.path.insert(0, sys.argv[2])
        import users_controller  # noqa: F401  a local module full of literals
    from deployspec.engines import hypothesis_engine
    if sys.argv[3] == "unpinned":
        hypothesis_engine.fixed_constants = contextlib.nullcontext
    from deployspec.models import get_model
    model = get_model("capi")
    r = hypothesis_engine.check_property(
        model, "capi-2022", model.property("user_scale_not_lost"), max_examples=100, seed=0)
    steps = [s["action"] for s in r.trace["steps"]] if r.trace else None
    print(json.dumps({"verdict": r.verdict, "tried": r.stats["steps"], "trace": steps}))
    """
)


def _search(tmp_path, loaded: str, pinning: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, loaded, str(tmp_path), pinning],
        capture_output=True, text=True, timeout=300, check=True,
    )
    return json.loads(out.stdout)


@pytest.fixture
def user_dir(tmp_path):
    # Hypothesis leaves out small ints like 0-3 as too common; these it keeps
    literals = ", ".join(str(i) for i in range(150, 6000, 97))
    (tmp_path / "users_controller.py").write_text(f"TIMEOUTS = [{literals}]\nNAMES = ['web', 'worker']\n")
    return tmp_path


def test_a_users_local_module_does_not_change_the_search(user_dir):
    bare = _search(user_dir, "bare", "pinned")
    with_user_code = _search(user_dir, "user-module", "pinned")
    assert bare["verdict"] == "violated"
    assert with_user_code == bare


def test_without_the_pin_the_same_seed_searches_differently(user_dir):
    """The control: what ``fixed_constants`` prevents still happens without it."""
    bare = _search(user_dir, "bare", "unpinned")
    with_user_code = _search(user_dir, "user-module", "unpinned")
    if with_user_code == bare:
        pytest.skip("this Hypothesis draws no constants from local modules: nothing to pin")
    assert with_user_code["tried"] != bare["tried"]


def test_nested_blocks_keep_the_pin_until_the_outer_one_ends():
    from hypothesis.internal.conjecture import providers

    from deployspec.engines.seeding import fixed_constants

    original = providers._get_local_constants
    with fixed_constants():
        pinned = providers._get_local_constants
        assert pinned is not original and len(pinned()) == 0
        with fixed_constants():
            assert providers._get_local_constants is pinned
        assert providers._get_local_constants is pinned  # the inner block did not unpin
    assert providers._get_local_constants is original
    with pytest.raises(KeyboardInterrupt), fixed_constants():
        raise KeyboardInterrupt
    assert providers._get_local_constants is original
