"""capi-current's deployment updater against cloud_controller_ng's own RSpec examples at
3bbba9069894b1b74652c7b88fdfd4171136c8c4 (spec/unit/lib/cloud_controller/deployment_updater/):
the scale action and its scalers (cancel, finalize and the Updater's examples:
test_capi_upstream_rspec_updater.py; the API actions': test_capi_upstream_rspec_api.py).

Each test is one upstream ``it`` block (file:line in its docstring), translated to a
model state and a model action. Stubbed instance reports are mapped onto the model's
statuses as ``InstancesReporter#instance_count_summary`` counts them:
RUNNING+routable -> R (RUNNING); RUNNING not routable, STARTING -> S (STARTING);
FAILING, CRASHED, DOWN, and indices the stub leaves out of a process's range -> C (CRASHED;
the real reporter fills unreported indices with DOWN, which counts as unhealthy).
Processes are listed in the spec's ``created_at`` order (then id), which is the model's
creation order. Examples that test one Scale action (``Actions::Scale#call``, which returns
``finished`` and leaves Finalize/PAUSED to the Updater) call the model's ``scaling.scale``
with capi-current's rules; examples on the Updater or the API use ``VARIANTS['capi-current'].step``.
"""

from __future__ import annotations

from deployspec.reference.capi import VARIANTS, observe, rules, scaling
from deployspec.reference.capi.actions import Tick
from deployspec.reference.capi.instances import InstanceSummary

from .upstream_rspec import D, P, R, S, build, counts, statuses, step

CURRENT = VARIANTS["capi-current"]


def scale_action(state, did: int, target: int, interim: int | None = None, reports: bool = True):
    """``Actions::Scale.new(deployment, logger, target, interim).call`` -> (state, finished)."""
    return scaling.scale(
        state, state.deployments[did], reports,
        target=target, interim=target if interim is None else interim,
        scale_down=CURRENT.scale_down, cleanup=CURRENT.cleanup, stale_counts=CURRENT.down_counts_stale,
    )


def upscale(summary: InstanceSummary, n: int, mif: int, interim: int) -> int:
    """``UpScaler#scale_up`` on a deploying process of ``n`` instances: its new instance count."""
    from deployspec.reference.capi.state import Process

    p = Process(99, 0, (S,) * n)
    return scaling.scaled_up_to(summary, mif, interim) if scaling.can_scale_up(summary, p, mif) else n


# scale_spec.rb's default: the original web process P0 (6), the deploying P1 (0), DEPLOYING, target 6
def scale_spec_state(web=6, deploying=0, mif=1):
    return build([P(0, web), P(1, deploying)], [D(0, 1, max_in_flight=mif)])


# ================================================================ scale_spec.rb


def test_scale_after_a_new_instance_has_been_brought_up_scales_the_old_web_process_down_by_one():
    """scale_spec.rb:68"""
    after, _ = scale_action(scale_spec_state(deploying=1), 0, 6)
    assert counts(after)[0] == 5


def test_scale_scales_up_the_new_web_process_by_one():
    """scale_spec.rb:78"""
    after, _ = scale_action(scale_spec_state(), 0, 6)
    assert counts(after)[1] == 1


def test_scale_when_the_app_has_been_scaled_to_0_instances_finishes_scaling():
    """scale_spec.rb:90"""
    _, finished = scale_action(scale_spec_state(web=0), 0, 0)
    assert finished is True


def test_scale_max_in_flight_2_scales_up_the_new_web_process_by_two():
    """scale_spec.rb:103 (and :111: the old web process is not scaled down)"""
    after, _ = scale_action(scale_spec_state(mif=2), 0, 6)
    assert counts(after) == {0: 6, 1: 2}


def test_scale_max_in_flight_larger_than_remaining_scales_up_by_the_maximum_number():
    """scale_spec.rb:131 (and :139: the old web process keeps its 1 instance)"""
    after, _ = scale_action(scale_spec_state(web=1, deploying=5, mif=5), 0, 6)
    assert counts(after) == {0: 1, 1: 6}


def test_scale_max_in_flight_more_than_total_scales_up_by_the_maximum_number():
    """scale_spec.rb:156 (and :164, :698, :706: interim_desired_instance_count not passed)"""
    after, _ = scale_action(scale_spec_state(mif=100), 0, 6)
    assert counts(after) == {0: 6, 1: 6}


def test_scale_reached_interim_desired_instance_count_returns_true_and_leaves_the_deployment_deploying():
    """scale_spec.rb:196: web 6 (a day ago), an interim web process 1 (an hour ago), deploying 3
    all routable, target 6, interim 3 -> true, DEPLOYING, web 2, interim 1, deploying 3."""
    before = build([P(0, 6), P(1, 1), P(2, 3)], [D(0, 2)])
    after, finished = scale_action(before, 0, 6, 3)
    assert finished is True
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert counts(after) == {0: 2, 1: 1, 2: 3}


def test_scale_oldest_web_process_at_zero_and_type_web_does_not_destroy_it_but_scales_it_to_0():
    """scale_spec.rb:223 (and :242 with max_in_flight 10)"""
    for mif in (1, 10):
        before = build([P(0, 1), P(1, 3), P(2, 3)], [D(0, 2, max_in_flight=mif)])
        after, _ = scale_action(before, 0, 6)
        assert counts(after)[0] == 0


def test_scale_destroys_the_oldest_web_process_with_instances_and_ignores_the_original_web_process():
    """scale_spec.rb:272: original 0, oldest-with-instances 1, other 10, deploying 3 routable."""
    before = build([P(0, 0), P(1, 1), P(2, 10), P(3, 3)], [D(0, 3)])
    after, _ = scale_action(before, 0, 6)
    assert 0 in counts(after) and counts(after)[0] == 0
    assert 1 not in counts(after)


def test_scale_scales_down_interim_processes_so_all_instances_equal_original_count_plus_max_in_flight():
    """scale_spec.rb:306 (and :318: the original stays, the first interim is destroyed, the other stays)"""
    before = build([P(0, 10), P(1, 10), P(2, 10), P(3, 10)], [D(0, 3, owic=20, max_in_flight=4)])
    after, _ = scale_action(before, 0, 20)
    c = counts(after)
    assert sum(n for pid, n in c.items() if pid != 3) == 10 and c[3] == 14
    assert 0 in c and 1 not in c and 2 in c


def test_scale_when_all_in_flight_instances_are_not_up_scales_down_interim_processes():
    """scale_spec.rb:341: deploying RUNNING x6, STARTING x2, DOWN, FAILING -> RRRRRRSSCC."""
    before = build([P(0, 10), P(1, 10), P(2, 10), P(3, "RRRRRRSSCC")], [D(0, 3, owic=20, max_in_flight=4)])
    after, _ = scale_action(before, 0, 20)
    c = counts(after)
    assert sum(n for pid, n in c.items() if pid != 3) == 14 and c[3] == 10


def test_scale_fewer_instances_in_interim_processes_doesnt_try_to_scale_up_or_down_the_interim_processes():
    """scale_spec.rb:381"""
    before = build([P(0, 1), P(1, 1), P(2, 1), P(3, 10)], [D(0, 3, owic=20, max_in_flight=4)])
    after, _ = scale_action(before, 0, 20)
    assert counts(after) == {0: 1, 1: 1, 2: 1, 3: 14}


def test_scale_when_some_instances_are_missing_doesnt_upscale():
    """scale_spec.rb:407: deploying 9, one reported (RUNNING); the 8 unreported mapped to C
    (the stub leaves them out; the real reporter reports them DOWN). web 10 -> 9, deploying 9."""
    before = build([P(0, 10), P(1, "R" + "C" * 8)], [D(0, 1, owic=10, max_in_flight=5)])
    after, _ = scale_action(before, 0, 10)
    assert counts(after) == {0: 9, 1: 9}


def test_scale_when_some_but_not_all_instances_have_finished_scales_more_instances_to_match_max_in_flight():
    """scale_spec.rb:435: R, R, STARTING, RUNNING-not-routable, STARTING -> RRSSS."""
    before = build([P(0, 10), P(1, "RRSSS")], [D(0, 1, owic=10, max_in_flight=5)])
    after, _ = scale_action(before, 0, 10)
    assert counts(after) == {0: 8, 1: 7}


def test_scale_when_max_in_flight_instances_are_starting_downscales_the_original_and_not_the_deploying():
    """scale_spec.rb:457, :465 (starting: RSS), :485, :493 (RUNNING not routable: RSS),
    :513, :521 (FAILING, CRASHED: RCC)"""
    for report in ("RSS", "RCC"):
        before = build([P(0, 6), P(1, report)], [D(0, 1, max_in_flight=2)])
        after, _ = scale_action(before, 0, 6)
        assert counts(after) == {0: 5, 1: 3}, report


def test_scale_when_the_deployment_is_deploying_and_all_instances_run_it_stays_deploying():
    """scale_spec.rb:538 (the state/status part; last_healthy_at is not modelled)"""
    after, _ = scale_action(scale_spec_state(), 0, 6)
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")


def test_scale_when_some_instances_are_crashing_changes_nothing_of_the_deployment():
    """scale_spec.rb:558: the stub reports R, FAILING, FAILING (mapped to a 3-instance RCC
    deploying process); the deployment stays DEPLOYING/ACTIVE/DEPLOYING."""
    before = build([P(0, 6), P(1, "RCC")], [D(0, 1)])
    after, _ = scale_action(before, 0, 6)
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert counts(after)[1] == 3


def test_scale_when_diego_is_unavailable_does_not_scale_the_process():
    """scale_spec.rb:603"""
    before = scale_spec_state(deploying=3)
    after, finished = scale_action(before, 0, 6, reports=False)
    assert after == before and not finished
    assert observe(step(CURRENT, before, Tick(reports_unavailable=(0,)))) == observe(before)


def test_scale_legacy_webish_process_scales_up_the_coerced_web_process():
    """scale_spec.rb:627 (by one) and :643 (max_in_flight 10: by 6); the legacy type is
    not modelled, the process is a web process"""
    assert counts(scale_action(scale_spec_state(), 0, 6)[0])[1] == 1
    assert counts(scale_action(scale_spec_state(mif=10), 0, 6)[0])[1] == 6


def test_scale_interim_deployment_superseded_canceled_scales_the_canceled_web_process_to_zero():
    """scale_spec.rb:667"""
    before = build([P(0, 6), P(1, 1), P(2, 0)],
                   [D(0, 1, "CANCELED", reason="SUPERSEDED"), D(1, 2)])
    after, _ = scale_action(before, 1, 6)
    assert counts(after)[1] == 0


def test_scale_deployment_got_superseded_skips_execution():
    """scale_spec.rb:680"""
    before = build([P(0, 6), P(1, 0)], [D(0, 1, "DEPLOYED", reason="SUPERSEDED")])
    after, finished = scale_action(before, 0, 6)
    assert after == before and finished is False


def test_scale_interim_not_passed_with_routable_instances_does_scale_down_the_old_web_process():
    """scale_spec.rb:717 (6 -> 0)"""
    after, _ = scale_action(scale_spec_state(deploying=6, mif=100), 0, 6)
    assert counts(after)[0] == 0


def test_scale_interim_passed_scales_up_the_new_web_process_to_the_interim_desired_instance_count():
    """scale_spec.rb:733 (and :741: the old web process is not scaled down)"""
    after, _ = scale_action(scale_spec_state(mif=100), 0, 6, 3)
    assert counts(after) == {0: 6, 1: 3}


def test_scale_interim_passed_with_routable_instances_does_scale_down_the_old_web_process():
    """scale_spec.rb:752 (6 -> 3)"""
    after, _ = scale_action(scale_spec_state(deploying=3, mif=100), 0, 6, 3)
    assert counts(after)[0] == 3


# ================================================================ up_scaler_spec.rb
# The spec stubs the instance summary with doubles, most of which no instance list can
# produce (routable + starting + unhealthy differs from the process's instances): those
# are checked on the model's UpScaler functions; the consistent ones also on a state.


def test_up_scaler_can_scale():
    """up_scaler_spec.rb:53 (true with room), :59 (false: an unhealthy instance),
    :65 (false: starting >= max_in_flight)"""
    from deployspec.reference.capi.state import Process

    p = Process(3, 0, (S,) * 4)
    assert scaling.can_scale_up(InstanceSummary(5, 1, 0), p, 2) is True
    assert scaling.can_scale_up(InstanceSummary(5, 1, 1), p, 2) is False
    assert scaling.can_scale_up(InstanceSummary(5, 2, 0), p, 2) is False


def test_up_scaler_finished_scaling():
    """up_scaler_spec.rb:82 (true), :88 (false: target 6), :94 (false: 4 routable),
    :100 (true despite an unhealthy instance), :106 (true despite a starting one)"""
    from deployspec.reference.capi.state import Process

    p = Process(3, 0, (R,) * 5)
    assert scaling.finished_scaling(InstanceSummary(5, 0, 0), p, 5) is True
    assert scaling.finished_scaling(InstanceSummary(5, 0, 0), p, 6) is False
    assert scaling.finished_scaling(InstanceSummary(4, 0, 0), p, 5) is False
    assert scaling.finished_scaling(InstanceSummary(5, 0, 1), p, 5) is True
    assert scaling.finished_scaling(InstanceSummary(5, 1, 0), p, 5) is True


def test_up_scaler_scale_up_function_level():
    """up_scaler_spec.rb:117 (4 -> 6), :125 (stays 4), :133 (-> 5), :144 (max_in_flight 20 -> 10),
    :153 (corrects: -> 8), :161 (unhealthy: stays 4), :169 (routable missing: stays 4)"""
    assert upscale(InstanceSummary(4, 0, 0), 4, 2, 10) == 6
    assert upscale(InstanceSummary(5, 2, 0), 4, 2, 10) == 4
    assert upscale(InstanceSummary(3, 1, 0), 4, 2, 10) == 5
    assert upscale(InstanceSummary(9, 0, 0), 4, 20, 10) == 10
    assert upscale(InstanceSummary(6, 1, 0), 4, 2, 10) == 8
    assert upscale(InstanceSummary(3, 0, 1), 4, 2, 10) == 4
    assert upscale(InstanceSummary(1, 0, 0), 4, 2, 10) == 4


def test_up_scaler_scale_up_on_states():
    """up_scaler_spec.rb:117 (RRRR -> 6), :133 (RRRS -> 5), :161 (RRRC: stays 4), through the
    whole Scale action (target 10: nothing to scale down among original 3, interims 1 and 2)"""
    for report, want in (("RRRR", 6), ("RRRS", 5), ("RRRC", 4)):
        before = build([P(0, 3), P(1, 1), P(2, 2), P(3, report)], [D(0, 3, owic=10, max_in_flight=2)])
        after, _ = scale_action(before, 0, 10)
        assert counts(after) == {0: 3, 1: 1, 2: 2, 3: want}, report


# ================================================================ down_scaler_spec.rb
def down_scaler_state():
    # original 3 (a day ago), interim 1 (3 h ago), interim-2 2 (2 h ago), deploying 4
    return build([P(0, 3), P(1, 1), P(2, 2), P(3, 4)], [D(0, 3)])


def test_down_scaler_can_downscale():
    """down_scaler_spec.rb:49 (routable 5: keep 5, true), :55 (routable 4: keep 6, false)"""
    s = down_scaler_state()
    keep5 = scaling.old_instances_to_keep(10, InstanceSummary(5, 0, 0))
    keep6 = scaling.old_instances_to_keep(10, InstanceSummary(4, 0, 0))
    assert (keep5, keep6) == (5, 6)
    assert scaling.old_instances(s, 3) > keep5
    assert not scaling.old_instances(s, 3) > keep6


def test_down_scaler_scales_down_to_desired_non_deploying_instances_starting_with_the_oldest():
    """down_scaler_spec.rb:63 (routable 5: original 3 -> 2, interim 1 stays)"""
    after = CURRENT.scale_down(down_scaler_state(), 3, 5)
    assert counts(after) == {0: 2, 1: 1, 2: 2, 3: 4}


def test_down_scaler_does_not_delete_the_original_web_process():
    """down_scaler_spec.rb:78 (routable 7: original 0, kept; interim 1)"""
    after = CURRENT.scale_down(down_scaler_state(), 3, 3)
    assert counts(after) == {0: 0, 1: 1, 2: 2, 3: 4}


def test_down_scaler_does_delete_interim_web_processes():
    """down_scaler_spec.rb:93 (routable 8: original 0, interim destroyed)"""
    after = CURRENT.scale_down(down_scaler_state(), 3, 2)
    assert counts(after) == {0: 0, 2: 2, 3: 4}


# ================================================================ scale_down_old_process_spec.rb
def sdop_state():
    # oldest (2 days ago), interim (1 hour ago), deploying (now): 3 each
    return build([P(0, 3), P(1, 3), P(2, 3)], [D(0, 2, owic=3)])


def test_scale_down_old_process_scales_a_web_process_to_the_passed_amount():
    """scale_down_old_process_spec.rb:40 (interim -> 1; the model's down-scaler loop given
    only the interim, as DownScaler hands ScaleDownOldProcess a non-zero count)"""
    s = sdop_state()
    after = scaling._scale_down_in_order(s, [s.process(1)], 1)
    assert counts(after) == {0: 3, 1: 1, 2: 3}


def test_scale_down_old_process_deletes_interim_processes_scaled_to_0():
    """scale_down_old_process_spec.rb:45"""
    s = sdop_state()
    after = scaling.scale_down_old_process(s, s.process(1), s.oldest_process)
    assert 1 not in counts(after)


def test_scale_down_old_process_does_not_delete_the_apps_oldest_web_process_scaled_to_0():
    """scale_down_old_process_spec.rb:50 (the example asserts the interim is still there)"""
    s = sdop_state()
    after = scaling.scale_down_old_process(s, s.process(0), s.oldest_process)
    assert counts(after) == {0: 0, 1: 3, 2: 3}


# ================================================================ scale_down_canceled_processes_spec.rb
def test_scale_down_canceled_processes_scales_the_canceled_web_process_to_zero():
    """scale_down_canceled_processes_spec.rb:44"""
    s = build([P(0, 1), P(1, 3)], [D(0, 0, "CANCELED", reason="SUPERSEDED"), D(1, 1, owic=3)])
    after = rules.zero_canceled_superseded(s, s.deployments[1])
    assert counts(after) == {0: 0, 1: 3}
