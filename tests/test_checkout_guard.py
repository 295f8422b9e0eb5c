"""The suite refuses to run when deployspec's spec and models come from another checkout
than its tests (conftest.py at the checkout's root): a second clone's tests would
otherwise judge the first clone's code through its editable install."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_test_folder_run_alone_in_another_checkout_is_refused(tmp_path):
    """``pytest stateful_tests`` in a clone whose package is installed from elsewhere (here:
    this checkout): exit 4, naming where the spec comes from; no test runs."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "stateful_tests").mkdir()
    (tmp_path / "stateful_tests" / "test_anything.py").write_text("def test_anything():\n    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "stateful_tests"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"deployspec.spec is imported from {ROOT / 'spec'}, not from this checkout ({tmp_path})" in run.stderr
    assert "1 passed" not in run.stdout
