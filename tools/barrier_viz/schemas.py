"""JSON shapes the CLI prints (and the agent's tools return). One pydantic model per shape.

Every document starts with `schema` ("barrier-viz/<command>/v1") and `input`; keys are
snake_case; lists are in IR order.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputRef(_Model):
    path: str
    unit: str | None = None
    unit_index: int | None = None
    function: str | None = None


class InputSummary(_Model):
    path: str
    kind: str = Field(description="file | directory | stdin")
    bytes: int
    compressed: bool


class UnitInfo(_Model):
    index: int
    kind: str = Field(description="file | split | snapshot | module")
    label: str
    path: str
    start_line: int
    end_line: int
    bytes: int
    functions: list[str]
    flags: list[str]
    default: bool = False
    compilation: dict | None = Field(None, description="a tritonparse trace's compilation: kernel, hash, target, stages, config")


class InputsDoc(_Model):
    schema_: str = Field("barrier-viz/inputs/v1", alias="schema")
    input: InputSummary
    units: list[UnitInfo]
    launches: list[dict] | None = Field(None, description="a tritonparse trace's launches: index, unit, grid, scalar arguments")

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class OpInfo(_Model):
    name: str
    line: int
    column: int
    end_line: int
    results: list[str]
    result_types: list[str]
    operands: list[str]
    attributes: dict[str, Any]
    key_attributes: dict[str, str] = Field(default_factory=dict, description="the attributes and literal operands that "
                                           "matter for the op (count, bytes, useD, isAsync, pendings, ...), as MLIR text")
    loc_name: str | None
    regions: int
    loop_depth: int
    function: str | None
    partition: str | None = None
    mechanism: str | None = None


class OpsDoc(_Model):
    schema_: str = Field("barrier-viz/ops/v1", alias="schema")
    input: InputRef
    ops: list[OpInfo]
    warnings: list[str] = []

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


def dump(doc: BaseModel) -> str:
    """Serialise a document: stable key order, `schema` first, no trailing spaces."""
    return doc.model_dump_json(by_alias=True, indent=2) + "\n"
