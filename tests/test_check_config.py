"""``deployspec check --config``: bounds overridden for one run, bad input refused."""

from __future__ import annotations

import pytest

from deployspec import check
from deployspec.cli import main
from deployspec.models import get_model


@pytest.mark.parametrize("text", [
    "[1]", "{bad", '{"nope": 1}', '{"max_in_flight": []}', '{"max_in_flight": "x"}',
    '{"canary_plans": [[50, 20]]}', '{"canary_plans": [[0]]}', '{"max_instances": 0}',
])
def test_bad_config_is_a_usage_error(text: str, capsys) -> None:
    assert main(["check", "--model", "capi", "--config", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deployspec: error:") and len(err.strip().splitlines()) == 1


def test_overrides_apply_on_top_of_the_variant_config() -> None:
    model = get_model("capi")
    configs = check.configs([(model, "capi-current")], {"max_deployments": 1})
    config = configs[("capi", "capi-current")]
    assert config.max_deployments == 1
    assert config.max_in_flight == (1, 2)  # capi-current's own bound is kept
