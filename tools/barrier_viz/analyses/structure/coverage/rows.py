"""The coverage tables as JSON-ready rows: one `PackedTable` per packed TMEM owner (its
`PackedRow`s, one per aliased column range), one `AccumulatorRow` per MMA accumulator, and
`Coverage`, both tables of one selection.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


# -- JSON-ready results ---------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConsumerInfo(_Frozen):
    partition: str
    line: int
    loop_depth: int
    cadence: str = Field(description="inner (the writer's loop) | outer (a loop around the writer's)")


class PackedRow(_Frozen):
    """One aliased column range the owner's writer overwrites."""

    label: str
    owner: bool
    columns: tuple[int, int]
    line: int
    consumers: list[ConsumerInfo]
    cadence: str | None
    status: str = Field(description="same_partition | ordered | ordered_by_channel | no_reader | no_overwrite | "
                                    "required | missing | missing_incidental | cadence_mismatch")
    ok: bool
    reason: str
    evidence: list[int] = Field(default_factory=list, description="IR lines of the edge (or of the reads)")
    writer_line: int | None = Field(None, description="the overwrite this row's verdict is about")


class WriterInfo(_Frozen):
    op: str
    line: int
    partition: str
    use_d: str
    loop_line: int | None
    columns: tuple[int, int]


class PackedTable(_Frozen):
    buffer_id: int | None
    owner: str
    owner_line: int
    owner_type: str
    stage: str = Field(description="pre-partition (edges to create) | post-partition (edges verified) | single")
    writers: list[WriterInfo]
    rows: list[PackedRow]


class AccumulatorRow(_Frozen):
    buffer_id: int | None
    name: str
    line: int
    type: str
    mma_lines: list[int]
    mma_partitions: list[str]
    use_d: str = Field(description="false | false-first | true | dynamic (of the MMA writers, joined)")
    self_zeroing: bool
    zero_store_lines: list[int]
    store_partitions: list[str]
    same_partition: bool | None
    persistent_loop: str | None
    persistent_loop_line: int | None
    barriers: int | None
    commits: int | None
    status: str = Field(description="clean | explicit_init | redundant_same_partition | redundant_ordered | "
                                    "redundant_unordered | redundant_single_tile | redundant_pre_partition")
    ok: bool
    verdict: str
    evidence: list[int] = Field(default_factory=list)
    init_condition: str | None = Field(None, description="when the self-zeroing MMA runs in a tile (None: always); "
                                                         "without it the zero store is the accumulator's only init")


@dataclass(frozen=True)
class Coverage:
    """Both tables of one selection."""

    packed: tuple[PackedTable, ...]
    accumulators: tuple[AccumulatorRow, ...]
