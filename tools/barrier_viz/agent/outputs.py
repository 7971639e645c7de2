"""The three files debug_helper reads after a barrier_visualization investigation.

`report.md` (the report), `insights.log` (one `INSIGHT: ...` line per finding, or
`INSIGHT: no barrier issues found`) and `status.json` (`status`, `reason`, `report_path`,
`logs_path`, `suggested_next_modes`). Both the agent and the deterministic `report --out` write
them through `write_outputs`, so the contract lives in one place and one validator checks it.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

from ..safe_io import write_atomic
from pydantic import BaseModel, ConfigDict, Field, field_validator

REPORT_FILE = "report.md"
INSIGHTS_FILE = "insights.log"
STATUS_FILE = "status.json"
INSIGHT_PREFIX = "INSIGHT: "
NO_ISSUES = "INSIGHT: no barrier issues found"


class RunStatus(str, Enum):
    success = "success"
    failed = "failed"
    needs_context = "needs_context"


class Mode(str, Enum):
    """Ways barrier-viz can investigate an input; `suggested_next_modes` names these."""

    deterministic = "deterministic"  # `barrier-viz report --out`: tools only, no model
    agent = "agent"  # `barrier-viz agent`: a model composes the report from the tools


class StatusDoc(BaseModel):
    """status.json, exactly the keys debug_helper expects and no others."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True)

    status: RunStatus
    reason: str
    report_path: str
    logs_path: str
    suggested_next_modes: list[Mode] = Field(default_factory=list)


class Outputs(BaseModel):
    """What one investigation produced, before it is written."""

    status: RunStatus
    reason: str
    report: str
    insights: list[str]
    suggested_next_modes: list[Mode] = Field(default_factory=list)

    @field_validator("insights")
    @classmethod
    def _one_line_each(cls, value: list[str]) -> list[str]:
        for line in value:
            if not line.startswith(INSIGHT_PREFIX) or "\n" in line:
                raise ValueError(f"an insight must be one line starting with {INSIGHT_PREFIX!r}: {line!r}")
        return value


def write_outputs(out_dir: Path, outputs: Outputs) -> StatusDoc:
    """Write report.md, insights.log and status.json into `out_dir` (created if needed).

    A successful run always has at least one insight line: findings, or the explicit
    no-issues line, so a reader can tell "nothing found" from "nothing written". Each file is
    written whole or not at all, never through a symlink (`safe_io`), status.json last: a
    reader that finds status.json finds the other two complete.
    """
    insights = list(outputs.insights)
    if outputs.status == RunStatus.success and not insights:
        insights = [NO_ISSUES]
    report_path = out_dir / REPORT_FILE
    logs_path = out_dir / INSIGHTS_FILE
    write_atomic(out_dir, REPORT_FILE, outputs.report.rstrip("\n") + "\n")
    write_atomic(out_dir, INSIGHTS_FILE, "".join(line + "\n" for line in insights))
    status = StatusDoc(
        status=outputs.status,
        reason=outputs.reason,
        report_path=str(report_path),
        logs_path=str(logs_path),
        suggested_next_modes=outputs.suggested_next_modes,
    )
    write_atomic(out_dir, STATUS_FILE, json.dumps(status.model_dump(mode="json"), indent=2) + "\n")
    return status


def validate_outputs(out_dir: Path) -> StatusDoc:
    """Check a directory against the contract; raises ValueError naming the first problem."""
    status = StatusDoc.model_validate_json((out_dir / STATUS_FILE).read_text(encoding="utf-8"))
    for key in ("report_path", "logs_path"):
        if not Path(getattr(status, key)).is_file():
            raise ValueError(f"status.json {key} {getattr(status, key)!r} is not a file")
    lines = Path(status.logs_path).read_text(encoding="utf-8").splitlines()
    bad = [line for line in lines if not line.startswith(INSIGHT_PREFIX)]
    if bad:
        raise ValueError(f"insights.log line without {INSIGHT_PREFIX!r}: {bad[0]!r}")
    if status.status == RunStatus.success.value and not lines:
        raise ValueError("insights.log is empty for a successful run")
    return status
