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


#: the attributes Jenkins xUnit's junit-10.xsd allows each element (that plugin skips a
#: report its schema refuses; GitLab and GitHub's reporters read a subset of these)
ALLOWED = {
    "testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "group", "time", "disabled", "skipped", "timestamp",
                  "hostname", "id", "package", "file", "log", "url"},
    "testcase": {"name", "time", "classname", "group"},
    "failure": {"type", "message"}, "error": {"type", "message"}, "skipped": {"type", "message"},
    "properties": set(), "property": {"name", "value"}, "system-out": set(), "system-err": set(),
}


def totals_agree(path) -> ET.Element:
    """The counts each level carries are those of its cases (a viewer trusts them), and
    every element and attribute is one junit-10.xsd allows."""
    root = ET.parse(path).getroot()
    for el in root.iter():
        assert el.tag in ALLOWED and set(el.attrib) <= ALLOWED[el.tag], (el.tag, set(el.attrib))
    for level in [root, *root.iter("testsuite")]:
        cases = list(level.iter("testcase"))
        assert int(level.get("tests")) == len(cases)
        for kind, attr in ((junit.FAILURE, "failures"), (junit.ERROR, "errors"), (junit.SKIPPED, "skipped")):
            if level is root and attr == "skipped":  # junit-10.xsd: not on <testsuites>
                assert level.get(attr) is None
                continue
            assert int(level.get(attr)) == sum(outcome_of(c) == kind for c in cases), attr
    return root
