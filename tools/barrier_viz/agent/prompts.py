"""The agent's prompts: Markdown templates in `barrier_viz/prompts/`, filled from the registry.

Prompts are files, not strings in code, so they can be reviewed and edited as prose; the code
only fills in what changes with the build: the tool list and which tool feeds which report
section. Templates use `string.Template` placeholders (`${name}`) because the prose is full of
braces and brackets that `str.format` would trip over; a missing or unknown placeholder raises.
"""

from __future__ import annotations

from importlib import resources
from string import Template

from .registry import REGISTRY, Registry

# Report sections in report order, with the key a tool's `feeds` uses to name them.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("partitions", "1. Partition summary"),
    ("graph", "2. Barrier dependency graph"),
    ("phases", "3. Index and phase analysis"),
    ("shared_data", "4. Shared data map"),
    ("aliases", "5. SSA value to barrier alias map"),
    ("coverage", "Coverage"),
    ("findings", "Findings"),
)


def template(name: str) -> Template:
    """A prompt template shipped in the package (works from a checkout and from a wheel)."""
    return Template(resources.files("barrier_viz").joinpath("prompts", name).read_text(encoding="utf-8"))


def tool_list(registry: Registry = REGISTRY) -> str:
    return "\n".join(f"- `{t.name}`: {t.description}" for t in registry.tools.values())


def section_sources(registry: Registry = REGISTRY) -> str:
    """One line per report section naming the tools that feed it, or saying that none does
    yet, so the prompt never promises a tool the build lacks."""
    lines = []
    fallback = "the other tools' facts" + (" (`ops` lists every barrier-relevant operation)" if "ops" in registry.tools else "")
    for key, title in SECTIONS:
        feeders = [f"`{t.name}`" for t in registry.tools.values() if key in t.feeds]
        if feeders:
            lines.append(f"- {title}: {', '.join(feeders)}.")
        else:
            lines.append(f"- {title}: no dedicated tool in this build; derive it from {fallback}, citing lines, and say it was derived.")
    return "\n".join(lines)


def system_prompt(registry: Registry = REGISTRY) -> str:
    report = template("report.md").substitute(section_sources=section_sources(registry))
    return template("system.md").substitute(tool_list=tool_list(registry), report_instructions=report.strip())


def task_message(input: str, unit: str | None, func: str | None) -> str:
    return template("task.md").substitute(
        input=input,
        unit=f"`{unit}`" if unit else "the default (call `inputs` if the file holds several units)",
        func=f"`{func}`" if func else "all functions of the unit",
    )


def reminder_message() -> str:
    return template("reminder.md").substitute()
