"""Reading the model's final message: the report, the INSIGHT lines, or a NEEDS_CONTEXT line.

The format is defined in `prompts/system.md` ("How to finish"); this module is its parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .outputs import INSIGHT_PREFIX

# Tool results reach the model inside this element (`data_block`); the system prompt says that
# everything inside it is data read from an untrusted IR file, never instructions.
DATA_TAG = "barrier_viz_data"


def data_block(tool: str, text: str, *, json: bool = True) -> str:
    """A tool's output (a JSON document, or text: an error line, a truncated document) as one
    delimited data field.

    IR-derived strings (locations, attribute values, function and value names) can say
    anything, including the closing tag. `<`, `>` and `&` are escaped inside (`\\u003c` in
    JSON, which decodes to the same document; `&lt;` in text), so the only closing tag in the
    field is the one written here and no IR text can end the data early."""
    if json:
        body = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    else:
        body = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    kind = "json" if json else "text"
    return f'<{DATA_TAG} tool="{tool}" format="{kind}">\n{body}\n</{DATA_TAG}>'


def data_body(block: str) -> str:
    """The inside of a `data_block` (for tests and transcripts): the JSON text as sent."""
    start = block.index(">") + 2
    end = block.rindex(f"\n</{DATA_TAG}>")
    return block[start:end]


_REPORT = re.compile(r"^[ \t]*<report>[ \t]*\n(.*?)^[ \t]*</report>[ \t]*$", re.S | re.M)
NEEDS_CONTEXT_PREFIX = "NEEDS_CONTEXT:"


@dataclass(frozen=True)
class FinalAnswer:
    report: str | None
    insights: list[str] = field(default_factory=list)
    needs_context: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the answer can be written as a finished run (success or needs_context)."""
        return self.needs_context is not None or (self.report is not None and bool(self.insights))


def parse_final(text: str) -> FinalAnswer:
    """Split a final message into report, insights and needs-context request.

    INSIGHT and NEEDS_CONTEXT lines count only outside the report block, so a report that
    quotes the format does not smuggle in findings.
    """
    match = _REPORT.search(text)
    report = match.group(1).strip("\n") if match else None
    rest = (text[: match.start()] + text[match.end() :]) if match else text
    insights: list[str] = []
    needs: str | None = None
    for raw in rest.splitlines():
        line = raw.strip()
        if line.startswith(INSIGHT_PREFIX.strip()):
            body = line[len(INSIGHT_PREFIX.strip()) :].strip()
            if body:
                insights.append(INSIGHT_PREFIX + body)
        elif line.startswith(NEEDS_CONTEXT_PREFIX):
            needs = line[len(NEEDS_CONTEXT_PREFIX) :].strip() or "the model asked for more context"
    return FinalAnswer(report=report, insights=insights, needs_context=needs)
