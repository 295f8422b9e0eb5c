"""A signal that lands after a search wrote its counterexample under --out and before the
search returned it (``deployspec.save_log``). Under CI's load, SIGTERM to the whole group
of a ``check --jobs 2 --out`` run left 9 files on disk and said "8 counterexamples
saved", that property "not judged" in the JUnit report (session 58, twice)."""

import json
import signal

import pytest

from deployspec import check, pool, save_log, traces
from deployspec.engines.result import Result
from deployspec.models import get_model

from .cli_runs import SEED, run
from .junit_reports import cases_of, outcome_of


@pytest.fixture
def stopped_once_saved(monkeypatch):
    """The first counterexample saved, then the stop: a KeyboardInterrupt raised as the
    file is written (after ``traces.save`` returns, before the search can return it)."""
    real = traces.save

    def save(trace, directory):
        real(trace, directory)
        raise KeyboardInterrupt

    monkeypatch.setattr(traces, "save", save)


def test_a_serial_check_stopped_after_saving_reports_the_file(capsys, tmp_path, stopped_once_saved):
    from deployspec import junit

    out, report = tmp_path / "found", tmp_path / "check.xml"
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
            "--property", "app_stays_available", "--out", str(out), "--junit", str(report))
    assert len(list(out.glob("*.json"))) == 1
    err = capsys.readouterr().err
    assert f"1 counterexample saved under {out}" in err and "violated: capi-2022 · app_stays_available" in err
    assert outcome_of(cases_of(report)["app_stays_available"]) == junit.FAILURE


def test_a_jobs_process_stopped_after_saving_hands_the_file_back(tmp_path, monkeypatch, stopped_once_saved):
    monkeypatch.setattr(pool, "_stopping", False)
    previous = signal.signal(signal.SIGUSR1, pool._stop_in_pool)
    try:
        answer = pool._judge_in_pool("capi", "capi-2022", "explore", "app_stays_available", budget=30, seed=0,
                                     out_dir=str(tmp_path), bounds=None, distinct=True, engines=("explore",))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    (saved,) = tmp_path.glob("*.json")
    assert isinstance(answer, pool._Stopped)
    (r,) = answer.found
    assert (r.verdict, r.property, r.counterexample, r.engine) == \
        ("violated", "app_stays_available", str(saved), "explore")
    assert r.trace_length == len(r.trace["steps"]) and r.cause == r.trace["violation"].get("cause")


def test_what_is_noted_but_not_on_disk_is_not_reported(tmp_path):
    """Noted before it is written: a stop before the write leaves no file, and nothing is
    said of it; a file another finding took is not this one's."""
    seed = traces.load(SEED)
    other = traces.load(sorted(SEED.parent.glob("*.json"))[1])
    with save_log.noting():
        save_log.note(seed, tmp_path / traces.name_of(seed))
        assert save_log.unreported([]) == []
        (tmp_path / traces.name_of(seed)).write_text(json.dumps(other))  # another finding's, under its name
        assert save_log.unreported([]) == []
        (tmp_path / traces.name_of(seed)).unlink()
        path = traces.save(seed, tmp_path)
        (r,) = save_log.unreported([])
        assert r.counterexample == str(path)
        assert save_log.unreported([Result("capi", "capi-2022", "x", "explore", "violated", trace=seed)]) == []
        assert save_log.unreported([Result("capi", "capi-2022", "x", "explore", "violated",
                                           counterexample=str(path))]) == []
    assert save_log._noted is None  # (nothing kept past the task: a host process runs on)


def test_a_violation_that_could_not_be_saved_is_reported_with_why(tmp_path):
    """A save that failed, or no --out at all: the verdict stands (unsaved, exit 2), as when
    the search returns it."""
    seed = traces.load(SEED)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with save_log.noting():
        traces.keep(seed, blocked)  # a file where the folder should be
        traces.keep(dict(seed), None)  # (another search's)
        unsaved, unnamed = save_log.unreported([])
    assert unsaved.unsaved.startswith("cannot save") and unsaved.counterexample is None
    assert (unnamed.verdict, unnamed.counterexample, unnamed.unsaved) == ("violated", None, None)


def test_a_jobs_process_that_answered_too_late_is_heard_from_the_folder(tmp_path):
    """The parent waits STOP_GRACE seconds for its stopped processes, then ends them: a
    file one saved and did not answer for in time is heard from --out, as its search's."""
    import os
    import time

    seed = traces.load(SEED)
    path = traces.save(seed, tmp_path)
    old = traces.save(traces.load(sorted(SEED.parent.glob("*.json"))[1]), tmp_path)
    os.utime(old, (time.time() - 60, time.time() - 60))  # before this run: not its
    (tmp_path / "notes.json").write_text("{}")  # not a trace
    tasks = [("capi", "capi-2022", seed["engine"], "app_stays_available"), ("capi", "capi-2022", "explore", "x")]
    done, heard = [[], []], []
    pool._heard_from_disk(tasks, done, lambda task, found: heard.append((task, found)), str(tmp_path),
                          time.time() - 10)
    ((task, (r,)),) = heard
    assert task == tasks[0] and done[0] == [r] and done[1] == []
    assert (r.verdict, r.counterexample, r.property) == ("violated", str(path), seed["property"])
    heard.clear()
    pool._heard_from_disk(tasks, done, lambda task, found: heard.append(task), str(tmp_path), time.time() - 10)
    assert heard == []  # reported already


def test_a_late_random_search_s_causes_are_heard_each_with_their_explorer_traces(tmp_path):
    """A close look's random search explores each cause too: its task ("hypothesis") may
    have saved explorer traces, several (one per cause)."""
    import time

    seed = traces.load(SEED)
    first = dict(seed, engine="explore")
    second = dict(first, steps=seed["steps"][:-1] + [seed["steps"][-1]] * 2)  # another finding's steps
    paths = {str(traces.save(first, tmp_path)), str(traces.save(second, tmp_path))}
    tasks = [("capi", "capi-2022", "hypothesis", seed["property"])]
    done, heard = [[]], []
    pool._heard_from_disk(tasks, done, lambda task, found: heard.append(found), str(tmp_path), time.time() - 10)
    ((a, b),) = heard
    assert {a.counterexample, b.counterexample} == paths and done[0] == [a, b]


def test_a_pool_answer_interrupted_while_heard_is_heard_again():
    """The parent hears an answer (``on_found``) before it marks the search done: a stop
    between the two left it done and never reported (``_collect_stopped`` skips a done one)."""
    done = [None]

    def on_found(task, found):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pool._judged([("capi", "capi-2022", "explore", "p")], done, 0, [object()], lambda r: None, on_found)
    assert done == [None]


def test_check_runs_each_task_noting_its_saves(monkeypatch):
    """Each task's search runs with a note of its own (the last task's saves are not this one's)."""
    notes = []

    def judge(*task, **options):
        notes.append(save_log._noted)
        save_log._noted.append("a save of this task")
        return [Result("capi", task[1], task[3], task[2], "holds")]

    monkeypatch.setattr(check, "judge", judge)
    check.run([(get_model("capi"), "capi-2022")],
              ["explore"], budget=5, seed=0, out_dir=None, properties=["app_stays_available", "single_active_deployment"])
    assert notes == [["a save of this task"], ["a save of this task"]] and notes[0] is not notes[1]
    assert save_log._noted is None
