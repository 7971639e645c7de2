"""JUnit XML for `audit --format junit`: one test case per kernel, the format CI dashboards
(and pytest's own junitxml) use.

A test suite per file, a test case per kernel (unit and function). A case fails when the
kernel has an error finding that is new (with a baseline) or any error finding (without); it is
an `<error>` when the unit could not be checked (does not parse, tool failure), `<skipped>`
when the budget ran out before the static rules finished. Warnings go to `system-out`. No
timings: the same tree gives the same bytes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any


def _case_name(row: dict[str, Any]) -> str:
    name = row.get("unit") or "file"
    if row.get("function"):
        name += f" @{row['function']}"
    return name


def _finding_text(f: dict[str, Any]) -> str:
    lines = ",".join(map(str, f["lines"])) or "-"
    return f"{f['severity'].upper()} {f['kind']} (line {lines}): {' '.join(f['message'].split())}"


def junit_xml(doc: dict[str, Any]) -> str:
    root = ET.Element("testsuites", name="barrier-viz audit")
    suites: dict[str, ET.Element] = {}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for row in doc["rows"]:
        if row["status"] == "no_ws":
            continue
        suite = suites.get(row["path"])
        if suite is None:
            suite = suites[row["path"]] = ET.SubElement(root, "testsuite", name=row["path"])
            suite.attrib.update(tests="0", failures="0", errors="0", skipped="0")
        case = ET.SubElement(suite, "testcase", classname=row["path"], name=_case_name(row))
        if row.get("start_line"):
            case.set("line", str(row["start_line"]))
        key = None
        failing = [f for f in row.get("findings", []) if f["severity"] == "error" and f.get("new", True)]
        if row["status"] == "error":
            ET.SubElement(case, "error", message=" ".join(str(row.get("error")).split())).text = row.get("error")
            key = "errors"
        elif failing:
            el = ET.SubElement(case, "failure", message=_finding_text(failing[0])[:500], type=failing[0]["kind"])
            el.text = "\n".join(_finding_text(f) for f in failing)
            key = "failures"
        elif row["status"] == "duplicate":
            ET.SubElement(case, "skipped", message=row.get("note") or "duplicate")
            key = "skipped"
        elif row["status"] == "bound_reached" and not row.get("findings") and "static rules finished" in (row.get("note") or ""):
            ET.SubElement(case, "skipped", message=row.get("note") or "bound reached")
            key = "skipped"
        others = [f for f in row.get("findings", []) if f not in failing]
        out = [_finding_text(f) for f in others]
        if row.get("note") and row["status"] != "duplicate":
            out.append(f"note: {row['note']}")
        if out:
            ET.SubElement(case, "system-out").text = "\n".join(out)
        for k in ([key] if key else []) + ["tests"]:
            suite.set(k, str(int(suite.get(k, "0")) + 1))
            totals[k] += 1
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
