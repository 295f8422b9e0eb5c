"""Reading a --junit report in tests: its cases by name, each one's outcome, and the
totals each level carries checked against its cases."""

import xml.etree.ElementTree as ET

from deployspec import junit


def cases_of(path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {c.get("name"): c for c in root.iter("testcase")}


def outcome_of(case: ET.Element) -> str:
    for kind in (junit.FAILURE, junit.ERROR, junit.SKIPPED):
        if case.find(kind) is not None:
            return kind
    return junit.PASSED


def totals_agree(path) -> ET.Element:
    """The counts each level carries are those of its cases (a viewer trusts them)."""
    root = ET.parse(path).getroot()
    for level in [root, *root.iter("testsuite")]:
        cases = list(level.iter("testcase"))
        assert int(level.get("tests")) == len(cases)
        for kind, attr in ((junit.FAILURE, "failures"), (junit.ERROR, "errors"), (junit.SKIPPED, "skipped")):
            assert int(level.get(attr)) == sum(outcome_of(c) == kind for c in cases), attr
    return root
