"""Behaviour of the IR reader on small hand-written snippets, one parser feature per test.

Each snippet is written the way Triton/MLIR prints IR (or the way lit tests write it), and each
test states what the model must say about it: names, operands, results, regions, block
arguments, attributes, locations and positions.
"""

from __future__ import annotations

import pytest

from barrier_viz.ir.model import Operation, ParsedIR
from barrier_viz.ir.parse import IRSyntaxError, parse_ir

MD = "!ttg.memdesc<1xi64, #shared, #smem, mutable>"


def parse(text: str, line_offset: int = 0) -> ParsedIR:
    return parse_ir(text, line_offset=line_offset)


def ops_named(ir: ParsedIR, name: str) -> list[Operation]:
    return [op for op in ir.walk() if op.name == name]


def one(ir: ParsedIR, name: str) -> Operation:
    found = ops_named(ir, name)
    assert len(found) == 1, f"expected one {name}, found {len(found)}"
    return found[0]


def in_func(body: str, args: str = "%c: i1, %bar: " + MD + ", %n: i32") -> str:
    """Wrap op lines in a module and a function, the way every printed unit looks."""
    return f"module {{\n  tt.func @k({args}) {{\n{body}\n    tt.return\n  }}\n}}\n"


# -- operation forms -------------------------------------------------------------------------------
def test_generic_and_custom_forms_read_alike() -> None:
    ir = parse(
        in_func(
            f'    "ttng.wait_barrier"(%bar, %n) : ({MD}, i32) -> ()\n'
            f"    ttng.wait_barrier %bar, %n : {MD}"
        )
    )
    generic, custom = ops_named(ir, "ttng.wait_barrier")
    assert (generic.name, generic.operands) == (custom.name, custom.operands) == ("ttng.wait_barrier", ["%bar", "%n"])
    assert generic.generic and not custom.generic
    assert generic.results == custom.results == []


def test_generic_form_properties_results_and_regions() -> None:
    text = (
        '"builtin.module"() ({\n'
        '  "tt.func"() <{function_type = (i32) -> (), sym_name = "g", sym_visibility = "public"}> ({\n'
        "  ^bb0(%arg0: i32):\n"
        '    %0 = "arith.constant"() <{value = 1 : i32}> : () -> i32\n'
        '    %1 = "tt.reduce"(%x) <{axis = 1 : i32}> ({\n'
        "    ^bb0(%a: f32, %b: f32):\n"
        "      %s = arith.addf %a, %b : f32\n"
        "      tt.reduce.return %s : f32\n"
        "    }) : (tensor<4x4xf32>) -> tensor<4xf32>\n"
        '    "tt.return"() : () -> ()\n'
        "  }) : () -> ()\n"
        "}) : () -> ()\n"
    )
    ir = parse(text)
    assert [op.name for op in ir.operations] == ["builtin.module"]
    fn = ir.function("g")
    assert fn is not None and fn.generic
    assert fn.regions[0].arguments[0].name == "%arg0" and fn.regions[0].arguments[0].type == "i32"
    const = one(ir, "arith.constant")
    assert const.results == ["%0"] and const.attr("value") == 1 and const.result_types == ["i32"]
    reduce = one(ir, "tt.reduce")
    assert reduce.operands == ["%x"] and reduce.attr("axis") == 1
    assert [a.name for a in reduce.regions[0].arguments] == ["%a", "%b"]
    assert [op.name for op in reduce.regions[0].operations()] == ["arith.addf", "tt.reduce.return"]
    assert reduce.result_types == ["tensor<4xf32>"]
    assert one(ir, "tt.return").parent_op is fn


def test_multiple_results_are_listed_and_packs_are_expanded() -> None:
    ir = parse(
        in_func(
            '    %x, %y = "foo.two"() : () -> (i32, i32)\n'
            "    %r:3 = foo.three : i32, i32, i32\n"
            "    %s = arith.addi %r#1, %x : i32"
        )
    )
    assert one(ir, "foo.two").results == ["%x", "%y"]
    assert one(ir, "foo.two").result_types == ["i32", "i32"]
    assert one(ir, "foo.three").results == ["%r#0", "%r#1", "%r#2"]
    assert one(ir, "arith.addi").operands == ["%r#1", "%x"]


def test_consecutive_ops_without_locations_keep_their_own_results() -> None:
    """tree-sitter's token-bag rule can hand the next line's `%r =` to the previous op."""
    ir = parse(in_func("    ttng.fence_async_shared {bCluster = false}\n    %v = arith.addi %n, %n : i32"))
    assert one(ir, "ttng.fence_async_shared").results == []
    assert one(ir, "arith.addi").results == ["%v"]


def test_attribute_dictionary_is_not_mistaken_for_a_region() -> None:
    ir = parse(
        in_func(
            f"    %m = ttg.local_alloc {{buffer.copy = 1 : i32, buffer.id = 3 : i32}} : () -> {MD}\n"
            f"    %a = ttg.local_alloc {{ttg.ws_generated_barrier}} : () -> {MD}\n"
            f"    ttng.init_barrier %m, 1 : {MD}"
        )
    )
    first, second = ops_named(ir, "ttg.local_alloc")
    assert first.regions == [] and second.regions == []
    assert first.attrs == {"buffer.copy": 1, "buffer.id": 3}
    assert second.attrs == {"ttg.ws_generated_barrier": True}
    assert first.result_types == [MD]
    init = one(ir, "ttng.init_barrier")
    assert init.parent_op is not None and init.parent_op.name == "tt.func"
    assert init.operands == ["%m"]


def test_attributes_between_operands() -> None:
    """barrier_expect prints its dict between the byte count and the predicate; scf.yield before
    its operands."""
    ir = parse(
        in_func(
            f"    ttng.barrier_expect %bar, 16384 {{async_task_id = array<i32: 1>}}, %c : {MD}\n"
            "    %r = scf.for %i = %n to %n step %n iter_args(%acc = %n) -> (i32) : i32 {\n"
            "      scf.yield {async_task_id = array<i32: 2>} %acc : i32\n"
            "    }"
        )
    )
    expect = one(ir, "ttng.barrier_expect")
    assert expect.operands == ["%bar", "%c"]
    assert expect.attr("async_task_id") == [1]
    yld = one(ir, "scf.yield")
    assert yld.operands == ["%acc"] and yld.attr("async_task_id") == [2]


def test_attribute_values_are_decoded() -> None:
    ir = parse(
        in_func(
            "    %t = foo.op {a = 7 : i32, b = -2 : i64, c = true, d = \"s\", e = array<i32: 1, 2>, "
            "f = [1, 2], g = {h = 0 : i32}, u, w = #ttg.blocked<{order = [0]}>} : i32"
        )
    )
    op = one(ir, "foo.op")
    assert op.attrs == {
        "a": 7, "b": -2, "c": True, "d": "s", "e": [1, 2], "f": [1, 2], "g": {"h": 0}, "u": True,
        "w": "#ttg.blocked<{order = [0]}>",
    }
    assert op.attr("missing", "dflt") == "dflt"


# -- regions, blocks and block arguments ----------------------------------------------------------
def test_block_labels_with_arguments_and_successors() -> None:
    ir = parse(
        in_func(
            "    cf.br ^bb1(%n : i32)\n"
            '  ^bb1(%z: i32 loc("zed")):  // pred: ^bb0\n'
            "    cf.cond_br %c, ^bb1(%z : i32), ^bb2\n"
            "  ^bb2:"
        )
    )
    fn = ir.functions()[0]
    blocks = fn.regions[0].blocks
    assert [b.label for b in blocks] == [None, "^bb1", "^bb2"]
    assert [(a.name, a.type, a.loc_name) for a in blocks[1].arguments] == [("%z", "i32", "zed")]
    assert blocks[1].arguments[0].block is blocks[1]
    cond = one(ir, "cf.cond_br")
    assert cond.successors == ["^bb1", "^bb2"] and cond.operands == ["%c", "%z"]
    assert cond.block is blocks[1]
    assert one(ir, "tt.return").block is blocks[2]
    assert one(ir, "cf.br").successors == ["^bb1"]


def test_function_arguments_name_and_visibility() -> None:
    ir = parse(
        "module attributes {\"ttg.num-warps\" = 4 : i32} {\n"
        f'  tt.func public @kern(%a: i32 loc("a"), %b: {MD}) attributes {{noinline = false}} {{\n'
        "    tt.return\n"
        "  }\n"
        "}\n"
    )
    module = ir.operations[0]
    assert module.name == "builtin.module" and module.attr("ttg.num-warps") == 4
    fn = ir.function("@kern")
    assert fn is not None and fn.attr("sym_visibility") == "public" and fn.attr("noinline") is False
    assert [(a.name, a.type, a.loc_name) for a in fn.regions[0].arguments] == [("%a", "i32", "a"), ("%b", MD, None)]


def test_scf_for_iter_args_become_block_arguments() -> None:
    ir = parse(
        in_func(
            "    %r:2 = scf.for %i = %n to %n step %n iter_args(%a = %n, %b = %bar) -> (i32, " + MD + ")  : i32 {\n"
            "      scf.yield %a, %b : i32, " + MD + "\n"
            "    } {tt.warp_specialize}"
        )
    )
    loop = one(ir, "scf.for")
    assert loop.results == ["%r#0", "%r#1"]
    assert loop.operands == ["%n", "%n", "%n", "%n", "%bar"]  # lb, ub, step, inits; not %i/%a/%b
    args = loop.regions[0].arguments
    assert [(a.name, a.type, a.index) for a in args] == [("%i", "i32", 0), ("%a", "i32", 1), ("%b", MD, 2)]
    assert loop.result_types == ["i32", MD]
    assert loop.attr("tt.warp_specialize") is True
    assert one(ir, "scf.yield").parent_op is loop


def test_scf_while_before_and_after_regions() -> None:
    ir = parse(
        in_func(
            "    %w:2 = scf.while (%x = %n, %y = %n) : (i32, i32) -> (i32, i32) {\n"
            "      %cond = arith.cmpi slt, %x, %y : i32\n"
            "      scf.condition(%cond) %x, %y : i32, i32\n"
            "    } do {\n"
            "    ^bb0(%p: i32, %q: i32):\n"
            "      scf.yield %p, %q : i32, i32\n"
            "    }"
        )
    )
    loop = one(ir, "scf.while")
    before, after = loop.regions
    assert loop.operands == ["%n", "%n"] and loop.results == ["%w#0", "%w#1"]
    assert [(a.name, a.type) for a in before.arguments] == [("%x", "i32"), ("%y", "i32")]
    assert after.label == "do"
    assert [(a.name, a.type) for a in after.arguments] == [("%p", "i32"), ("%q", "i32")]
    assert [op.name for op in before.operations()] == ["arith.cmpi", "scf.condition"]
    assert one(ir, "scf.condition").operands == ["%cond", "%x", "%y"]
    assert one(ir, "arith.cmpi").result_types == ["i1"]


def test_scf_if_else_and_trailing_attributes() -> None:
    ir = parse(
        in_func(
            "    %v = scf.if %c -> (i32) {\n"
            "      scf.yield %n : i32\n"
            "    } else {\n"
            "      %z = arith.addi %n, %n : i32\n"
            "      scf.yield %z : i32\n"
            "    } {some.attr = 1 : i32}\n"
            "    scf.if %c {\n"
            f"      ttng.arrive_barrier %bar, 1 : {MD}\n"
            "    }"
        )
    )
    with_else, without_else = ops_named(ir, "scf.if")
    assert [r.label for r in with_else.regions] == [None, "else"]
    assert with_else.results == ["%v"] and with_else.result_types == ["i32"]
    assert with_else.operands == ["%c"] and with_else.attr("some.attr") == 1
    assert [op.name for op in with_else.regions[1].operations()] == ["arith.addi", "scf.yield"]
    assert len(without_else.regions) == 1
    assert one(ir, "ttng.arrive_barrier").parent_op is without_else


WARP_SPECIALIZE = f"""\
module {{
  tt.func @k(%n: i32, %bar: {MD}) {{
    %ws:2 = ttg.warp_specialize(%n, %bar) attributes {{requestedRegisters = array<i32: 24, 24>}}
    default {{
      ttg.warp_yield %n, %n : i32, i32 loc(#loc)
    }}
    partition0(%arg5: i32 loc("cap"(#loc)), %arg6: {MD} loc(#loc1)) num_warps(1) {{
      ttng.wait_barrier %arg6, %arg5 : {MD} loc(#loc2)
      ttg.warp_return loc(#loc)
    }}
    partition1(%arg7: i32, %arg8: {MD}) num_warps(4) {{
      ttg.warp_return
    }} : (i32, {MD}) -> (i32, i32) loc(#loc)
    tt.return
  }}
}}
#loc = loc(unknown)
#loc1 = loc("bar"(#loc))
#loc2 = loc(callsite(#loc1 at #loc))
"""


def test_warp_specialize_default_and_partition_regions() -> None:
    ir = parse(WARP_SPECIALIZE)
    ws = one(ir, "ttg.warp_specialize")
    assert ws.operands == ["%n", "%bar"] and ws.results == ["%ws#0", "%ws#1"]
    assert ws.result_types == ["i32", "i32"]
    assert ws.attr("requestedRegisters") == [24, 24]
    assert [(r.label, r.header) for r in ws.regions] == [
        ("default", ""), ("partition0", "num_warps(1)"), ("partition1", "num_warps(4)")
    ]
    default, p0, p1 = ws.regions
    assert default.arguments == []
    assert [(a.name, a.type, a.loc_name) for a in p0.arguments] == [("%arg5", "i32", "cap"), ("%arg6", MD, "bar")]
    assert [(a.name, a.type) for a in p1.arguments] == [("%arg7", "i32"), ("%arg8", MD)]
    wait = one(ir, "ttng.wait_barrier")
    assert wait.parent_region is p0 and wait.operands == ["%arg6", "%arg5"]
    assert [op.name for op in ws.walk()] == [
        "ttg.warp_specialize", "ttg.warp_yield", "ttng.wait_barrier", "ttg.warp_return", "ttg.warp_return"
    ]
    assert one(ir, "tt.return").parent_op is ir.functions()[0]


# -- locations and positions ----------------------------------------------------------------------
def test_locations_inline_alias_after_module_and_callsite() -> None:
    ir = parse(WARP_SPECIALIZE)
    wait = one(ir, "ttng.wait_barrier")
    assert wait.loc == "loc(#loc2)"
    assert wait.loc_name == "bar"  # callsite(callee at caller): the callee names it
    assert one(ir, "ttg.warp_yield").loc_name is None  # loc(unknown) carries no name
    assert ir.aliases["#loc1"] == 'loc("bar"(#loc))'


def test_inline_name_location_and_file_location() -> None:
    ir = parse(
        "#loc = loc(\"/src/k.py\":10:5)\n"
        + in_func(
            '    %a = arith.addi %n, %n : i32 loc("acc"(#loc))\n'
            '    %b = arith.addi %n, %n : i32 loc("/src/k.py":11:7)\n'
            "    %d = arith.addi %n, %n : i32 loc(#loc)"
        )
    )
    a, b, d = ops_named(ir, "arith.addi")
    assert a.loc_name == "acc"
    assert b.loc_name is None and d.loc_name is None


def test_lines_and_columns_are_one_based_and_offset() -> None:
    text = in_func("      %v = arith.addi %n, %n : i32")
    ir = parse(text)
    add = one(ir, "arith.addi")
    assert (add.line, add.column) == (3, 7)
    assert (ir.operations[0].line, ir.operations[0].column) == (1, 1)
    fn = ir.functions()[0]
    assert (fn.line, fn.column, fn.end_line) == (2, 3, 5)
    shifted = parse(text, line_offset=100)
    assert (one(shifted, "arith.addi").line, one(shifted, "arith.addi").column) == (103, 7)
    assert shifted.functions()[0].regions[0].arguments[0].line == 102


# -- robustness -----------------------------------------------------------------------------------
def test_ten_thousand_nested_regions_parse_and_walk_iteratively() -> None:
    depth = 10_000
    lines = ["module {", "  tt.func @deep(%c: i1) {"]
    lines += ["scf.if %c {"] * depth
    lines.append(f"ttng.arrive_barrier %bar, 1 : {MD}")
    lines += ["}"] * depth
    lines += ["    tt.return", "  }", "}"]
    ir = parse("\n".join(lines) + "\n")
    ops = list(ir.walk())
    assert len(ops) == depth + 4  # module, func, the ifs, the arrive, the return
    arrive = next(op for op in ops if op.name == "ttng.arrive_barrier")
    assert sum(1 for _ in arrive.ancestors()) == depth + 2
    assert arrive.line == depth + 3
    assert ops[-1].name == "tt.return"


def test_alias_only_text_is_an_empty_unit() -> None:
    ir = parse("#blocked = #ttg.blocked<{sizePerThread = [1], order = [0]}>\n")
    assert ir.operations == [] and "#blocked" in ir.aliases


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("module {\n  tt.func @f() {\n    tt.return\n  }\n", 4),  # truncated: region not closed
        ("module {\n}\n}\n", 3),  # one `}` too many
        ("hello world\n", 1),  # no operations at all
    ],
)
def test_unreadable_text_raises_with_position(text: str, line: int) -> None:
    with pytest.raises(IRSyntaxError) as info:
        parse(text)
    assert info.value.line == line and info.value.column >= 1


def test_columns_count_characters_not_bytes() -> None:
    header = '  tt.func @k(%a: i32 loc("ü→é"), %b: i32) {'
    ir = parse(f"module {{\n{header}\n    tt.return\n  }}\n}}\n")
    b = ir.functions()[0].regions[0].arguments[1]
    assert (b.name, b.line, b.column) == ("%b", 2, header.index("%b") + 1)


# -- the type-body mask the lexer applies before tree-sitter -------------------------------------
def test_mask_blanks_dialect_type_bodies_and_keeps_offsets() -> None:
    from barrier_viz.ir.lexer import mask_type_bodies

    text = (
        b'%a = foo.op %x : !llvm.struct<(f32, f32)>, !tt.ptr<!tt.ptr<f16>>, !x.fn<(i32) -> i64>, '
        b'!s.str<"a>b\\"c">, tensor<4xf32, #blocked>, !open.type<i32\n!next.ty<i8>'
    )
    masked = mask_type_bodies(text)
    assert len(masked) == len(text) and masked.count(b"\n") == text.count(b"\n")
    assert b"!llvm.struct<" + b" " * 10 + b">" in masked
    assert b"!tt.ptr<" + b" " * len(b"!tt.ptr<f16>") + b">" in masked  # nested brackets: the outer body
    assert b"!x.fn<" + b" " * 12 + b">" in masked  # `->` does not close the body
    assert b"!s.str<" + b" " * 8 + b">" in masked  # `>` and `\"` inside a string do not either
    assert b"tensor<4xf32, #blocked>" in masked  # builtin types are read as they are
    assert b"!open.type<i32\n!next.ty<  >" in masked  # an unclosed body is left alone
    assert mask_type_bodies(b"module {\n}\n") == b"module {\n}\n"
    quoted = b'foo.op {s = "!x.y<", t = "z>"}'  # a type-like text inside a string is text
    assert mask_type_bodies(quoted) == quoted


def test_mask_does_not_change_atoms_on_snippets() -> None:
    from barrier_viz.ir.lexer import lex

    for text in (WARP_SPECIALIZE, in_func(f'    %s = llvm.insertvalue %n, %u[1] : !llvm.struct<({", ".join(["f32"] * 64)})>')):
        data = text.encode()
        assert lex(data) == lex(data, mask=False)
