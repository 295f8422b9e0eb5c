"""app_stays_available's cause: how the last routable instance went, named from the step that lost it."""

from deployspec.spec import capi as spec

from .helpers import app, dep, proc
from .property_traces import DEPLOYING, NOTHING, SCALED_AWAY, SERVING, run


def loss_cause(before, after, kind="tick", **args):
    """The cause app_stays_available names for a step from a serving app to ``after``."""
    v = run(spec.app_stays_available, [before, after], [("push", {"instances": 1}), (kind, args)],
            before=NOTHING)
    assert v is not None and v.step == 1, "the step should lose the last routable instance"
    return v.cause


def canceling(*processes, owic=1):
    """d0, deploying P1, is CANCELING; its cancel step has not run yet."""
    return app(list(processes), [dep(0, "CANCELING", "CANCELING", 1, owic)])


def canceled(*processes, owic=1):
    return app(list(processes), [dep(0, "CANCELED", "CANCELED", 1, owic)])


def test_loss_on_a_tick_with_no_cancel_pending_is_the_scale_step():
    assert loss_cause(DEPLOYING, SCALED_AWAY) == "scale-step"


def test_loss_on_a_tick_whose_cancel_step_failed_is_not_the_cancel():
    # two active deployments (before PR #3072): d0's cancel step fails, d1's scale step takes P0
    d1 = dep(1, "DEPLOYING", "DEPLOYING", 2, 1)
    before = app([proc(0, 1), proc(1, 1, running=0, starting=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 1, 1), d1])
    after = app([proc(0, 0), proc(1, 1, running=0, starting=1), proc(2, 1, running=0, starting=1)],
                [dep(0, "CANCELING", "CANCELING", 1, 1), d1])
    assert loss_cause(before, after, failed=[0]) == "scale-step"


def test_loss_on_a_tick_where_another_deployment_failed_is_still_the_cancel():
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, canceled(proc(1, 1, running=0, starting=1)), failed=[1]) == "cancel-keeps-unstarted"


def test_cancel_that_keeps_a_process_scaled_to_zero_restarts_it_from_zero():
    """docs-dev-guide #563: a canary canceled after a 100 % step."""
    before = canceling(proc(0, 0), proc(1, 1))
    after = canceled(proc(0, 1, running=0, starting=1))
    assert loss_cause(before, after) == "cancel-restarts-from-zero"


def test_cancel_that_keeps_a_serving_process_scales_it_down():
    # capi-pr3084: the user scaled to 0, deployed, and scaled the canceling deployment's process
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1), owic=0)
    after = canceled(proc(0, 0), owic=0)
    assert loss_cause(before, after) == "cancel-scales-down-serving"


def test_cancel_that_keeps_crashed_instances_and_destroys_the_serving_process():
    # capi-2022: the kept process is an earlier deployment's, on an unhealthy droplet
    before = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 2, 1, droplet=1)], droplets=(True, False))
    after = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                [dep(0, "CANCELED", "CANCELED", 2, 1, droplet=1)], droplets=(True, False))
    assert loss_cause(before, after) == "cancel-keeps-crashed"


def test_cancel_that_keeps_unstarted_instances_and_destroys_the_serving_and_crashed_ones():
    before = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, False))
    after = app([proc(2, 1, running=0, starting=1)], [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)],
                droplets=(True, False))
    assert loss_cause(before, after) == "cancel-keeps-unstarted"


def test_cancel_that_keeps_no_web_process_is_named_so():
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, canceled()) == "cancel-keeps-nothing"


def test_a_kept_process_left_at_zero_is_not_a_restart_from_zero():
    before = canceling(proc(0, 0), proc(1, 1, running=0, starting=1), proc(2, 1))
    after = canceled(proc(0, 0), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, after) == "cancel-keeps-unstarted"


def test_a_cancel_that_keeps_only_a_process_at_zero_is_named_so():
    """A design that lets a scale reach the deploying process while canceling: the cancel
    keeps the original process, at 0 before and after (a helper's design; it was
    named cancel-keeps-unstarted, though nothing had been starting)."""
    before = canceling(proc(0, 0), proc(1, 1))
    assert loss_cause(before, canceled(proc(0, 0))) == "cancel-keeps-zero"


def test_loss_on_a_user_action_is_named_by_its_verb():
    # a deployment create that scaled the serving process down at once
    assert loss_cause(SERVING, SCALED_AWAY, kind="deploy") == "deploy"
    assert loss_cause(SERVING, app([proc(0, 1, running=0, starting=1)], []), kind="restart") == "restart"


def test_an_instance_crashing_on_its_own_while_a_cancel_is_pending_is_not_the_cancel_step():
    """Only the updater's tick runs a cancel (or scale) step: Diego reporting the last
    routable instance crashed (a runtime step, the platform's too) is named by its verb."""
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    after = canceling(proc(0, 1, running=0, crashed=1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, after, kind="runtime", process=0) == "runtime"


def test_a_process_the_cancel_step_creates_is_not_one_it_kept():
    """An implementation may replace the web processes on a cancel: a process that did
    not exist before the step survived nothing, and is judged apart from the kept ones."""
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, canceled(proc(2, 1, running=0, starting=1))) == "cancel-keeps-nothing"
    after = canceled(proc(1, 1, running=0, starting=1), proc(2, 1, running=0, starting=1))
    assert loss_cause(before, after) == "cancel-keeps-unstarted"


def test_with_several_kept_processes_any_one_of_them_names_the_cause():
    """The first mechanism that applies to some kept process names the loss, in the
    order restart from zero, scaled-down serving, crashed, unstarted."""
    zero_and_unstarted = canceling(proc(0, 0), proc(1, 1, running=0, starting=1), proc(2, 1))
    assert loss_cause(zero_and_unstarted, canceled(proc(0, 1, running=0, starting=1),
                                                   proc(1, 1, running=0, starting=1))) == "cancel-restarts-from-zero"
    serving_and_unstarted = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(serving_and_unstarted, canceled(proc(0, 0), proc(1, 1, running=0, starting=1))) == (
        "cancel-scales-down-serving")
    crashed_and_unstarted = canceling(proc(0, 1), proc(1, 1, running=0, crashed=1), proc(2, 1, running=0, starting=1))
    assert loss_cause(crashed_and_unstarted, canceled(proc(1, 1, running=0, crashed=1),
                                                      proc(2, 1, running=0, starting=1))) == "cancel-keeps-crashed"
    serving_and_crashed = canceling(proc(0, 1), proc(1, 1, running=0, crashed=1), proc(2, 1, running=0, starting=1))
    assert loss_cause(serving_and_crashed, canceled(proc(0, 0), proc(1, 1, running=0, crashed=1))) == (
        "cancel-scales-down-serving")
