"""HLO modules in every layout XLA's lexer and parser read, and modules they reject.

Built from the rules of XLA's ``hlo_lexer.cc`` and ``hlo_parser.cc``: blanks, line ends (``\\n``,
``\\r\\n``, a lone ``\\r``) and ``/* */`` or ``//`` comments may stand between any two tokens; an
identifier directly followed by ``=`` is an attribute name; an instruction ends where its
attribute list ends; shapes and ``%`` may be left out. Shared by ``test_xla_syntax.py`` (our
reading, jax-free) and ``test_xla_syntax_oracle.py`` (the same cases read by XLA).

``READS`` maps a case id to ``(text, skeleton)``: the skeleton is
``{computation: ([(name, opcode, [operands])...], root name)}``, what both must read.
``REJECTS`` maps a case id to ``(text, message part, line, column)``; ``XLA_BUGS`` lists the
rejected cases XLA's parser accepts only through a flaw of its own (``docs/decisions.md``).
"""

from __future__ import annotations

ADD = ([("x", "parameter", []), ("y", "parameter", []), ("s", "add", ["x", "y"])], "s")

def _send_recv_pair(recv_attributes: str, send_attributes: str) -> str:
    """A send/recv pair on channel 1 whose send and recv carry the attribute text given after
    their channel_id."""
    return ("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  t = token[] after-all()\n"
            f"  r = (f32[8], u32[], token[]) recv(t), channel_id=1{recv_attributes}\n"
            f"  s = (f32[8], u32[], token[]) send(p, t), channel_id=1{send_attributes}\n"
            "  rd = (f32[8], token[]) recv-done(r), channel_id=1\n  sd = token[] send-done(s), channel_id=1\n"
            "  ROOT d = f32[8] get-tuple-element(rd), index=0\n}\n")


SEND_RECV_PAIR = {"e": ([("p", "parameter", []), ("t", "after-all", []), ("r", "recv", ["t"]), ("s", "send", ["p", "t"]),
                         ("rd", "recv-done", ["r"]), ("sd", "send-done", ["s"]), ("d", "get-tuple-element", ["rd"])],
                        "d")}


READS: dict[str, tuple[str, dict]] = {
    # XLA's pass-test style: no '%', attributes continued after a trailing comma
    "trailing_comma_continues": (
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY main {\n  p = f32[8] parameter(0)\n"
        "  ar = f32[8] all-reduce(p), replica_groups={},\n      to_apply=add\n"
        "  ROOT ag = f32[64] all-gather(ar), replica_groups={},\n    dimensions={0}\n}\n",
        {"add": ADD, "main": ([("p", "parameter", []), ("ar", "all-reduce", ["p"]),
                               ("ag", "all-gather", ["ar"])], "ag")},
    ),
    # a buffer shape: one array shape in b(...), wherever a shape stands (bf16 is no 'b(')
    "buffer_shapes": (
        "HloModule m, entry_computation_layout={(b(f32[2]{0}), bf16[2]{0})->b(f32[2]{0})}\n\n"
        "ENTRY e (p: b(f32[2]), q: bf16[2]) -> b(f32[2]) {\n  p = b(f32[2]{0}) parameter(0)\n"
        "  q = bf16[2]{0} parameter(1)\n  t = (b(f32[2]), b( bf16[2] )) tuple(p, q)\n"
        "  ROOT r = b(f32[2]{0}) copy(b(f32[2]{0}) p)\n}\n",
        {"e": ([("p", "parameter", []), ("q", "parameter", []), ("t", "tuple", ["p", "q"]), ("r", "copy", ["p"])], "r")},
    ),
    # a layout's section left open before its '}': XLA reads each section as far as it goes
    "layout_sections_left_open": (
        "HloModule m\n\nENTRY e (p: f32[8,128]{1,0:T(8,128}) -> f32[8,128] {\n"
        "  p = f32[8,128]{1,0:T(8,128)(2,1} parameter(0)\n"
        "  n = f32[8,128]{1,0:S(1} negate(f32[8,128]{1,0:E(4} p)\n  ROOT c = f32[8,128]{1,0:T(8,} copy(n)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"]), ("c", "copy", ["n"])], "c")},
    ),
    # ... with a comment or a line end between the shape's ']' and its layout's '{'
    "layout_sections_left_open_after_comments": (
        "HloModule m\n\nENTRY e {\n  p = f32[2,3]/*index=3*/{1,0:S(1} parameter(0)\n"
        "  ROOT c = f32[2,3] // c\n    {1,0:T(2,3} copy(p)\n}\n",
        {"e": ([("p", "parameter", []), ("c", "copy", ["p"])], "c")},
    ),
    # a layout's dimension order may hold a negative number (XLA's parser reads and prints it)
    "negative_layout_dimension": (
        "HloModule m, entry_computation_layout={(f32[2,3]{-1,0})->f32[2,3]{1,0}}\n\n"
        "ENTRY e (p: f32[2,3]{-1,0}) -> f32[2,3] {\n  p = f32[2,3]{ -1 , 0 } parameter(0)\n"
        "  n = f32[2,3]{0,-5} negate(f32[2,3]{-1,0} p)\n  ROOT c = f32[2,3]{-1,0:T(2)} copy(n)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"]), ("c", "copy", ["n"])], "c")},
    ),
    "attribute_value_on_the_next_line": (
        "HloModule m\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
        "  ROOT r = f32[3,2]{1,0} transpose(p), dimensions=\n    {1,0}\n}\n",
        {"e": ([("p", "parameter", []), ("r", "transpose", ["p"])], "r")},
    ),
    "operands_split_over_lines": (
        "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
        "  ROOT t = (f32[2], f32[2]) tuple(a,\n      b)\n}\n",
        {"e": ([("a", "parameter", []), ("b", "parameter", []), ("t", "tuple", ["a", "b"])], "t")},
    ),
    # the header's name on the next line, after a blank the header line ends with
    "module_name_on_the_next_line": (
        "  HloModule \nModule, is_scheduled=true\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
        {"e": ([("p", "parameter", [])], "p")},
    ),
    "every_token_on_its_own_line": (
        "HloModule\nm\nENTRY\ne\n{\nROOT\nc\n=\nf32[]\nconstant(\n1\n)\n}\n",
        {"e": ([("c", "constant", [])], "c")},
    ),
    "brace_on_its_own_line": (
        "HloModule m\n\nENTRY e (p: f32[2]) -> f32[2]\n{\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "whole_module_on_one_line": (
        "HloModule m ENTRY e { p = f32[2] parameter(0) ROOT n = f32[2] negate(p) }",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "two_instructions_on_one_line": (
        "HloModule m\nENTRY e {\n  p = f32[10]{0} parameter(0) ROOT neg = f32[10]{0} negate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("neg", "negate", ["p"])], "neg")},
    ),
    "second_instruction_after_an_attribute": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0), sharding={replicated} n = f32[] negate(p)\n"
        "  ROOT a = f32[] add(p, n)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"]), ("a", "add", ["p", "n"])], "a")},
    ),
    "instruction_after_a_root_on_its_line": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p) q = f32[] add(p, p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"]), ("q", "add", ["p", "p"])], "n")},
    ),
    "comment_in_module_header": (
        "HloModule /*name follows*/ m, /*c*/ is_scheduled=false\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
        {"e": ([("c", "constant", [])], "c")},
    ),
    "comment_in_computation_header": (
        "HloModule m\nENTRY /*comment*/ c1 {\n  ROOT c = /*foo*/f32[1]{0} constant({1 /*bar*/})\n}\n",
        {"c1": ([("c", "constant", [])], "c")},
    ),
    "comment_spanning_lines_in_a_body": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  /* not read:\n  q = f32[] negate(p)\n  */\n"
        "  ROOT n = f32[] negate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "comments_between_every_token": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  /*a*/ROOT/*b*/n/*c*/=/*d*/f32[/*e*/2/*f*/]/*g*/{0}/*h*/negate/*i*/(/*j*/p/*k*/)/*l*/"
        ",/*m*/metadata={op_name=\"x\"}/*n*/\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "line_comment_at_line_ends": (
        "HloModule m // the module\nENTRY e { // the entry\n  p = f32[] parameter(0) // a parameter\n"
        "  ROOT n = f32[] negate(p) // the root, ROOT x = f32[] negate(p)\n} // done\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "crlf_line_ends": (
        "HloModule m\r\n\r\nENTRY e {\r\n  p = f32[] parameter(0)\r\n  ROOT n = f32[] negate(p),\r\n"
        "    metadata={op_name=\"n\"}\r\n}\r\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "lone_cr_line_ends": (
        "HloModule m\rENTRY e {\r  p = f32[] parameter(0) // a comment ends at a lone CR\r"
        "  ROOT n = f32[] negate(p)\r}\r",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "tabs_between_tokens": (
        "HloModule m\nENTRY e {\n\tp\t=\tf32[]\tparameter(0)\n\tROOT\tn\t=\tf32[]\tnegate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "percent_names_with_signatures": (
        "HloModule m\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
        "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n}\n\nENTRY %e (p: f32[4]) -> f32[] {\n"
        "  %p = f32[4]{0} parameter(0)\n  %z = f32[] constant(0)\n"
        "  ROOT %r = f32[] reduce(f32[4]{0} %p, f32[] %z), dimensions={0}, to_apply=%add\n}\n",
        {"add": ADD, "e": ([("p", "parameter", []), ("z", "constant", []), ("r", "reduce", ["p", "z"])], "r")},
    ),
    "shape_left_out": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = negate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "comment_between_opcode_and_parenthesis": (
        "HloModule m\nENTRY e {\n  p = f32[2 /*d*/]{0} parameter(0)\n  ROOT n = f32[2]{0} negate /*x*/ (p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "attributes_newer_xla_prints": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0), origin={{\"v1\"}}\n"
        "  ROOT n = f32[] negate(p), statistics={visualizing_index=1,stat-1=33}\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "value_spanning_lines": (
        "HloModule m\nENTRY e {\n  %c = f32[] constant(0), backend_config={\n  %d = f32[] add(%c, %c)}\n"
        "  ROOT %r = f32[] negate(%c)\n}\n",
        {"e": ([("c", "constant", []), ("r", "negate", ["c"])], "r")},
    ),
    "brackets_that_do_not_pair_inside_a_braced_value": (
        "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<\"x\"=8]>}}\n\nENTRY e {\n"
        "  ROOT c = f32[] constant(1), frontend_attributes={a={b[}}\n}\n",
        {"e": ([("c", "constant", [])], "c")},
    ),
    "blanks_and_comments_inside_shapes": (
        "HloModule m\nENTRY e {\n  p = f32/*a*/[/*b*/2/*c*/]/*d*/{/*e*/0/*f*/} parameter(0)\n"
        "  ROOT n = f32 [2] {0} negate(f32 /*x*/ [2] /*y*/ {0} p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    # a string inside a comment is the comment's: what follows it is read again
    "quotes_in_line_comments_inside_shapes": (
        "HloModule m\nENTRY e {\n  p = f32[2 // \"{ \"{\n]{0} parameter(0)\n"
        "  ROOT n = f32[2 /* \"a\" */]{0} negate(f32[2 // \"\"\r\n] p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "brackets_that_do_not_pair_inside_backend_config": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  ROOT n = f32[2]{0} custom-call(p), custom_call_target=\"x\", backend_config={a=[(}\n}\n",
        {"e": ([("p", "parameter", []), ("n", "custom-call", ["p"])], "n")},
    ),
    "a_comment_inside_braces_hides_its_brackets": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0), metadata={op_name=\"a\" /* } */}\n"
        "  q = f32[2]{0} negate(p), frontend_attributes={a=\"1\", // b=\"2\"}\n    c=\"3\"}\n"
        "  ROOT n = f32[2]{0} negate(q), sharding={replicated /* ] { */}\n}\n",
        {"e": ([("p", "parameter", []), ("q", "negate", ["p"]), ("n", "negate", ["q"])], "n")},
    ),
    "a_comment_inside_backend_config_is_text": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  c = f32[2]{0} custom-call(p), custom_call_target=\"x\", backend_config={\"a\":1 // }\n"
        "  ROOT n = f32[2]{0} custom-call(c), custom_call_target=\"x\", backend_config={b /* c */}\n}\n",
        {"e": ([("p", "parameter", []), ("c", "custom-call", ["p"]), ("n", "custom-call", ["c"])], "n")},
    ),
    "root_at_the_end_of_the_line_before": (
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY e {\n  p = f32[8] parameter(0)\n  ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add   ROOT\n"
        "  n = f32[8] negate(ar)\n  q = f32[8] negate(n)\n}\n",
        {"add": ADD, "e": ([("p", "parameter", []), ("ar", "all-reduce", ["p"]), ("n", "negate", ["ar"]),
                            ("q", "negate", ["n"])], "n")},
    ),
    "a_quote_in_a_line_comment_before_the_first_computation": (
        " // \"{\nr {\n  a = u32[] parameter(0)\n  ROOT o = u32[] negate(a)  }\n"
        "ENTRY e {\n  p = u32[4]{0} parameter(0), frontend_attributes={x=\"{\\\"x\\\"}\"}\n}\n",
        {"r": ([("a", "parameter", []), ("o", "negate", ["a"])], "o"), "e": ([("p", "parameter", [])], "p")},
    ),
    "a_header_value_after_a_line_comment": (
        "HloModule m, entry_computation_layout= // \"{\n{(f32[2]{0})->f32[2]{0}}, num_partitions= // 1\n2\n\n"
        "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "a_name_left_out_of_a_stack_frame_table": (
        "HloModule m\n\nFileNames\n1 \"a.py\"\n2\n\nFunctionNames\n1 \"f\"\n2\n3 \"g\"\n\nFileLocations\n"
        "1 {file_name_id=1 function_name_id=3 line=1 end_line=1 column=1 end_column=1}\n\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=0}\n\n"
        "ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={stack_frame_id=1}\n}\n",
        {"e": ([("p", "parameter", [])], "p")},
    ),
    "a_name_left_out_of_a_stack_frame_table_read_token_by_token": (
        "HloModule m\n\nFileNames\n1 \"a.py\"\n2\n\nFunctionNames\n1 \"f\"\n2\n3 \"g\"\n\nFileLocations\n"
        "1 {file_name_id=1 function_name_id=3 line=1 end_line=1 column=1 end_column=1}\n\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=0}\n\n"
        "ENTRY e {\n  ROOT p = f32[] parameter(0), /* c */ metadata={stack_frame_id=1}\n}\n",
        {"e": ([("p", "parameter", [])], "p")},
    ),
    "a_line_comment_inside_an_operand_shape_with_lone_cr_line_ends": (
        "HloModule m\rENTRY e {\r  p = f32[3,8]{1,0} parameter(0)\r"
        "  ROOT n = f32[3,8]{1,0} negate(f32[3,\r // \"{\r8]{1,0} p)\r}\r",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"])], "n")},
    ),
    "instructions_glued_after_a_braced_value": (
        "HloModule m\nENTRY e {\n  %p = f32[2]{0} parameter(0), metadata={op_name=\"a\"}%n = f32[2]{0} negate(%p)\n"
        "  %q = f32[2]{0} negate(%n), sharding={replicated}q2 = f32[2]{0} negate(%q)\n"
        "  ROOT %r = f32[2]{0} negate(q2)\n}\n",
        {"e": ([("p", "parameter", []), ("n", "negate", ["p"]), ("q", "negate", ["n"]),
                ("q2", "negate", ["q"]), ("r", "negate", ["q2"])], "r")},
    ),
    "instructions_glued_after_a_string_or_a_word": (
        "HloModule m\nENTRY e {\n  %p = f32[2]{0} parameter(0)\n"
        "  %q = f32[2]{0} custom-call(%p), custom_call_target=\"x\"%n = f32[2]{0} negate(%q)\n"
        "  %s = f32[2]{0} custom-call(%n), custom_call_target=\"y\", api_version=API_VERSION_ORIGINAL%t = "
        "f32[2]{0} negate(%s)\n  ROOT %r = f32[2]{0} negate(%t)\n}\n",
        {"e": ([("p", "parameter", []), ("q", "custom-call", ["p"]), ("n", "negate", ["q"]),
                ("s", "custom-call", ["n"]), ("t", "negate", ["s"]), ("r", "negate", ["t"])], "r")},
    ),
    "iota_groups_with_their_tokens_apart": (
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = f32[8] parameter(0)\n"
        "  q = f32[8] all-reduce(p), replica_groups=[2,4]<=[4,2]\n\n    T(1,0), to_apply=add\n"
        "  r = f32[8] all-reduce(q), replica_groups=[2,4] /* c */ <=\n    [8], to_apply=add\n"
        "  ROOT s = f32[8] all-reduce(r), to_apply=add, replica_groups=[4,2]<=[2,4]/* c */T\n    (1,0)\n"
        "  T = f32[] parameter(1)\n}\n",
        {"add": ([("a", "parameter", []), ("b", "parameter", []), ("c", "add", ["a", "b"])], "c"),
         "e": ([("p", "parameter", []), ("q", "all-reduce", ["p"]), ("r", "all-reduce", ["q"]),
                ("s", "all-reduce", ["r"]), ("T", "parameter", [])], "s")},
    ),
    # a comment between an attribute's ',' and its name; inside frontend attributes a comment and
    # its line end are text of the value (a pass copying the value keeps them)
    "comments_in_the_attributes_of_a_send_and_recv": (
        _send_recv_pair(", /* c */frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},// c\n{1,0}}}",
                        ",// c\n frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},// c\n{1,0}}}"),
        SEND_RECV_PAIR,
    ),
    # metadata whose values stand after line ends and comments (the passes read it on the
    # instructions they rewrite)
    "metadata_values_after_line_ends_and_comments": (
        _send_recv_pair(', metadata={op_name="a" source_file=\n  "f.py" /* c */ source_line=\n 10}',
                        ', metadata={ /* c */ op_name=// c\n"b"\n}'),
        SEND_RECV_PAIR,
    ),
    # a custom-call's literal: a shape, then a literal, which may stand apart (and a layout
    # after the shape, which XLA's parser reads as the shape's)
    "literal_attribute_over_lines": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  c = f32[2]{0} custom-call(p), custom_call_target=\"x\", literal=f32[] /* c */\n    0.1\n"
        "  ROOT d = f32[2]{0} custom-call(c), custom_call_target=\"y\", literal=f32[2]{0}\n    {1, 2}\n}\n",
        {"e": ([("p", "parameter", []), ("c", "custom-call", ["p"]), ("d", "custom-call", ["c"])], "d")},
    ),
    "outfeed_shape_over_lines": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  t = token[] after-all()\n"
        "  ROOT o = token[] outfeed(p, t), outfeed_shape=f32 /* c */[2]\n    {0}, outfeed_config=\"x\"\n}\n",
        {"e": ([("p", "parameter", []), ("t", "after-all", []), ("o", "outfeed", ["p", "t"])], "o")},
    ),
    # XLA's own comment where XLA never prints it: the line reader hands such a module over
    "index_comment_between_an_opcode_and_its_operands": (
        "HloModule m\nENTRY %e {\n  %p = f32[4] parameter(0)\n  %t = token[] after-all()\n"
        "  ROOT %o = token[] outfeed/*index=3*/(%p, %t), outfeed_config=\"x\"\n}\n",
        {"e": ([("p", "parameter", []), ("t", "after-all", []), ("o", "outfeed", ["p", "t"])], "o")},
    ),
    # XLA's lexer reads a word spelt like an opcode as a name wherever a name stands
    "operands_named_like_opcodes_after_their_shapes": (
        "HloModule m\nENTRY e {\n  add = f32[] parameter(0)\n  recv = f32[] negate(f32[] add)\n"
        "  constant = (f32[]) tuple(f32[] recv)\n  ROOT r = f32[] get-tuple-element((f32[]) constant), index=0\n}\n",
        {"e": ([("add", "parameter", []), ("recv", "negate", ["add"]), ("constant", "tuple", ["recv"]),
                ("r", "get-tuple-element", ["constant"])], "r")},
    ),
    # in a frontend attribute's JSON text '//' is text: its braces still close on that line
    "line_comment_text_inside_frontend_attributes": (
        _send_recv_pair(", frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},// {1,0}}}, "
                        "sharding={replicated}",
                        ", frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},// {1,0}}}"),
        SEND_RECV_PAIR,
    ),
    "module_name_with_a_colon_then_comments": (
        "HloModule m: /* the name token may end in ':' */, is_scheduled=false\nENTRY e {\n"
        "  ROOT p = f32[] parameter(0)\n}\n",
        {"e": ([("p", "parameter", [])], "p")},
    ),
    "execution_thread_after_a_computation": (
        "HloModule m\n\n%c {\n  ROOT p = f32[] parameter(0)\n} /*x*/ , execution_thread=\"parallel_thread\"\n\n"
        "ENTRY e {\n  q = f32[] parameter(0)\n  ROOT r = f32[] call(q), to_apply=%c\n}, execution_thread=\"main_thread\"\n",
        {"c": ([("p", "parameter", [])], "p"), "e": ([("q", "parameter", []), ("r", "call", ["q"])], "r")},
    ),
    "stack_frames_then_comments": (
        "HloModule m\n\nFileNames\n1 \"a.py\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n"
        "1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=2}\n\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n/* between */\nENTRY e {\n"
        "  ROOT c = f32[] constant(1), metadata={stack_frame_id=1}\n}\n",
        {"e": ([("c", "constant", [])], "c")},
    ),
    # XLA's "non-roundtrip" form: an operand written as a whole instruction, without a name or
    # attributes and with its shape left out where XLA works it out; XLA names it opcode.anon
    "operands_written_as_instructions": (
        "HloModule m\nENTRY e {\n"
        "  ROOT root = add(f32[10] parameter(0), multiply(f32[10] parameter(1), f32[10] parameter(2)))\n}\n",
        {"e": ([("parameter.anon", "parameter", []), ("parameter.anon.1", "parameter", []),
                ("parameter.anon.2", "parameter", []),
                ("multiply.anon", "multiply", ["parameter.anon.1", "parameter.anon.2"]),
                ("root", "add", ["parameter.anon", "multiply.anon"])], "root")},
    ),
    "instruction_written_as_an_operand_beside_names": (
        "HloModule m\nENTRY e {\n  negate = f32[] parameter(0)\n  negate.anon = f32[] negate(negate)\n"
        "  ROOT r = (f32[], f32[]) tuple(negate.anon, f32[] negate(negate))\n}\n",
        {"e": ([("negate", "parameter", []), ("negate.anon", "negate", ["negate"]),
                ("negate.anon.1", "negate", ["negate"]),
                ("r", "tuple", ["negate.anon", "negate.anon.1"])], "r")},
    ),
    "instruction_written_as_an_operand_over_lines_with_comments": (
        "HloModule m\n\nc {\n  ROOT r = f32[2] sqrt(f32[2] /* in */ broadcast(\n    f32[] parameter(0)))\n}\n\n"
        "ENTRY e {\n  p = f32[] parameter(0)\n"
        "  ROOT t = f32[2] call(f32[] /* in */ negate(\n    p) // here\n  ), to_apply=c\n}\n",
        {"c": ([("parameter.anon", "parameter", []), ("broadcast.anon", "broadcast", ["parameter.anon"]),
                ("r", "sqrt", ["broadcast.anon"])], "r"),
         "e": ([("p", "parameter", []), ("negate.anon", "negate", ["p"]),
                ("t", "call", ["negate.anon"])], "t")},
    ),
    # a text that is one instruction: XLA's parser makes a module of it, ENTRY '_' with that
    # instruction as its root and a parameter for each operand it names with a shape
    "one_instruction": (
        "%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)",
        {"_": ([("broadcast", "parameter", []), ("x", "parameter", []),
                ("multiply", "multiply", ["broadcast", "x"])], "multiply")},
    ),
    "one_instruction_without_a_name_or_operand_names": (
        "// canonical\nf32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})\n",
        {"_": ([("_0", "parameter", []), ("_1", "parameter", []), ("_", "multiply", ["_0", "_1"])], "_")},
    ),
    "one_instruction_with_an_operand_written_as_an_instruction": (
        "ROOT m = f32[2] add(f32[2] negate(f32[2] x), x)",
        {"_": ([("negate", "parameter", []), ("x", "parameter", []), ("negate.anon", "negate", ["x"]),
                ("m", "add", ["negate.anon", "x"])], "m")},
    ),
    # a computation opened and closed on its header's line, another computation after it (on the
    # next line, or on the same line after the '}')
    "computation_on_its_header_line_before_another": (
        "ENTRY c1 { ROOT r = f32[] parameter(0) }\nc2 {\n  ROOT q = f32[] parameter(0)\n}\n",
        {"c1": ([("r", "parameter", [])], "r"), "c2": ([("q", "parameter", [])], "q")},
    ),
    "computation_closed_where_the_next_one_opens": (
        "HloModule m\nc1 {\tc = f32[1]{0} constant({1})  } c2 {\n  ROOT d = f32[1]{0} constant({2})\n}\n"
        "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
        {"c1": ([("c", "constant", [])], "c"), "c2": ([("d", "constant", [])], "d"),
         "e": ([("p", "parameter", [])], "p")},
    ),
    # blanks, a line end or a comment between a bounded dimension's '<=' and its bound
    "bounded_dimension_with_trivia_after_its_leq": (
        "HloModule m\nENTRY e {\n  p = f32[1,<= /* } */16]{0,1} parameter(0)\n"
        "  ROOT a = f32[1,<=\n    16]{0,1} abs(p)\n}\n",
        {"e": ([("p", "parameter", []), ("a", "abs", ["p"])], "a")},
    ),
    # ENTRY at the end of the HloModule line: the computation named on the next line is ENTRY
    # (not the last one, as it would be with no ENTRY at all)
    "entry_at_the_end_of_the_module_line": (
        "HloModule m, is_scheduled=true  ENTRY\n  c1 {\n  ROOT a = f32[] constant(1)\n}\n"
        "c2 {\n  ROOT b = f32[] constant(2)\n}\n",
        {"c1": ([("a", "constant", [])], "a"), "c2": ([("b", "constant", [])], "b")},
    ),
    # the header's value after blank lines
    "module_attribute_value_after_blank_lines": (
        "HloModule m, entry_computation_layout=\n\n{()->f32[]}\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
        {"e": ([("c", "constant", [])], "c")},
    ),
    # a header written with layouts, its body on the next lines
    "header_with_layouts": (
        "HloModule m\nENTRY e (p: f32[2]{0}) -> f32[2]{0} {\n  ROOT p = f32[2]{0} parameter(0)\n}\n",
        {"e": ([("p", "parameter", [])], "p")},
    ),
    # a line of JSON text that starts with '//' (text, no comment) holds a brace, and the line
    # reader stops at a '}' after the last instruction on its line: the token reader reads it
    "json_text_line_like_a_comment_after_a_line_reader_stop": (
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\t}\n\n"
        "ENTRY e {\n  p = f32[] parameter(0)\n"
        '  ROOT c = f32[] custom-call(p), custom_call_target="x", backend_config={"a":{"n":"10"},\n'
        '      // "b":{"c":"2"}}\n}\n',
        {"add": ADD, "e": ([("p", "parameter", []), ("c", "custom-call", ["p"])], "c")},
    ),
    # a computation written inline as a callee's value: a computation of its own, named '_'
    # (then '_.1', ...) in the order its body ends, its names in a scope of their own
    "inline_reducer_over_lines_with_comments": (
        "HloModule m\nENTRY main {\n  p = f32[4] parameter(0)\n  c = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=\n  // the reducer\n  {\n"
        "    x = f32[] parameter(0) /* first */\n    y = f32[] parameter(1)\n    ROOT s = f32[] add(x, y)\n"
        "  } // done\n}\n",
        {"_": ADD, "main": ([("p", "parameter", []), ("c", "constant", []), ("r", "reduce", ["p", "c"])], "r")},
    ),
    "inline_computations_nested_on_one_line": (
        "HloModule m\nENTRY main {\n  p = s32[] parameter(0)\n"
        "  ROOT w = s32[] call(p), to_apply={ a = s32[] parameter(0) ROOT c = s32[] call(a), "
        "to_apply={ b = s32[] parameter(0) ROOT n = s32[] negate(b) } }\n}\n",
        {"_": ([("b", "parameter", []), ("n", "negate", ["b"])], "n"),
         "_.1": ([("a", "parameter", []), ("c", "call", ["a"])], "c"),
         "main": ([("p", "parameter", []), ("w", "call", ["p"])], "w")},
    ),
    "inline_computations_in_a_list_and_a_loop": (
        "HloModule m\nneg {\n  a0 = s32[] parameter(0)\n  ROOT n0 = s32[] negate(a0)\n}\n"
        "ENTRY main {\n  p = s32[] parameter(0)\n  i = s32[] parameter(1)\n"
        "  f = s32[] conditional(i, p, p), branch_computations={%neg, { a1 = s32[] parameter(0), "
        "metadata={op_name=\"}\"} ROOT n1 = s32[] abs(a1) }}\n"
        "  ROOT w = s32[] while(f), condition={ a2 = s32[] parameter(0) ROOT lt = pred[] compare(a2, a2), "
        "direction=LT }, body={ a3 = s32[] parameter(0) ROOT n3 = s32[] negate(a3) }\n}\n",
        {"neg": ([("a0", "parameter", []), ("n0", "negate", ["a0"])], "n0"),
         "_": ([("a1", "parameter", []), ("n1", "abs", ["a1"])], "n1"),
         "_.1": ([("a2", "parameter", []), ("lt", "compare", ["a2", "a2"])], "lt"),
         "_.2": ([("a3", "parameter", []), ("n3", "negate", ["a3"])], "n3"),
         "main": ([("p", "parameter", []), ("i", "parameter", []), ("f", "conditional", ["i", "p", "p"]),
                   ("w", "while", ["f"])], "w")},
    ),
}

#: id -> (text, a part of the message, line, column)
REJECTS: dict[str, tuple[str, str, int, int]] = {
    # a computation written inline reads only its own instructions, and has no name to be
    # called by elsewhere; it has instructions, and no signature
    "inline_computation_using_an_outer_instruction": (
        "HloModule m\nENTRY main {\n  p = f32[4] parameter(0)\n  c = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply={ x = f32[] parameter(0) ROOT s = f32[] add(x, c) }\n}\n",
        "operand 'c' of 's' is not defined in the computation written inline as the value of to_apply=", 5, 104,
    ),
    "inline_computation_called_by_its_name": (
        "HloModule m\nENTRY main {\n  p = s32[] parameter(0)\n"
        "  c = s32[] call(p), to_apply={ a = s32[] parameter(0) ROOT n = s32[] negate(a) }\n"
        "  ROOT d = s32[] call(c), to_apply=_\n}\n",
        "calls computation '_', which is not defined", 5, 36,
    ),
    "inline_computation_without_instructions": (
        "HloModule m\nENTRY main {\n  p = s32[] parameter(0)\n  ROOT w = s32[] call(p), to_apply={}\n}\n",
        "the computation written inline as the value of to_apply= has no instructions", 4, 36,
    ),
    "inline_computation_with_a_signature": (
        "HloModule m\nENTRY main {\n  p = s32[] parameter(0)\n"
        "  ROOT w = s32[] call(p), to_apply=(a: s32[]) -> s32[] { a = s32[] parameter(0) ROOT n = s32[] negate(a) }\n}\n",
        "calls computation '(a: s32[])", 4, 36,
    ),
    # a header without a name: the next word is the entry computation's keyword
    "header_without_a_module_name": (
        "HloModule   \n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
        "expected a module name", 3, 1,
    ),
    # a layout's numbers have one ',' between each two: the line reader, the token reader and
    # a pass's new lines (which copy an operand's shape) read the same layouts
    "layout_with_two_commas": (
        "HloModule m\nENTRY e {\n  p = f32[2,4]{1,,0} parameter(0)\n  ROOT r = f32[2,4] copy(p)\n}\n",
        "expects integer", 3, 18,
    ),
    "layout_without_commas": (
        "HloModule m\nENTRY e {\n  p = f32[2,4]{1 0} parameter(0)\n  ROOT r = f32[2,4] copy(p)\n}\n",
        "expects layout to end with '}'", 3, 18,
    ),
    "layout_with_a_trailing_comma_in_a_pass_operand": (
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = f32[2,4]{1,0,} parameter(0)\n"
        "  ROOT rs = f32[1,4] reduce-scatter(f32[2,4]{1,0,} p), replica_groups={}, dimensions={0}, to_apply=add\n}\n",
        "expects integer", 10, 20,
    ),
    # an empty body on the header's line: the next computation's instructions are not its own
    "empty_computation_before_another_on_its_line": (
        "HloModule m\nc1 { } c2 {\n  ROOT r = f32[] parameter(0)\n}\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
        "computation 'c1' has no instructions", 2, 1,
    ),
    # the header's value after blank lines is no error: the one further down is
    "error_after_a_module_attribute_value_after_blank_lines": (
        "HloModule m, entry_computation_layout=\n\n{()->f32[]}\n\nENTRY e {\n  ROOT c = f32[] negate(q)\n}\n",
        "operand 'q' of 'c' is not defined", 6, 25,
    ),
    "buffer_shape_of_a_tuple": (
        "HloModule m\nENTRY e {\n  ROOT p = b((f32[2])) parameter(0)\n}\n", "a buffer shape holds one array shape", 3, 14,
    ),
    "buffer_shape_of_a_token": (
        "HloModule m\nENTRY e {\n  ROOT p = b(token[]) parameter(0)\n}\n", "a buffer shape holds one array shape", 3, 14,
    ),
    "buffer_shape_not_closed": (
        "HloModule m\nENTRY e {\n  ROOT p = b(f32[2] parameter(0)\n}\n", "expects ')' at the end of buffer shape.", 3, 21,
    ),
    "unknown_opcode": (
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT ar = f32[8] allreduce(p), to_apply=add\n}\n",
        "unknown opcode 'allreduce'; did you mean 'all-reduce'?", 11, 20,
    ),
    "a_brace_in_a_line_comment_closes_nothing": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  n = f32[2]{0} negate(p), metadata={op_name=\"a\" // }\n  ROOT r = f32[2]{0} negate(n)\n}\n",
        "computation 'e' is not closed", 2, 1,
    ),
    "a_brace_in_a_comment_inside_backend_config_counts": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
        "  ROOT n = f32[2]{0} custom-call(p), custom_call_target=\"x\", backend_config={b /* } */}\n}\n",
        "expected an instruction name, found '*'", 4, 85,
    ),
    "an_empty_dimension_size_first": (
        "HloModule m\nENTRY e {\n  ROOT p = f32[,3] parameter(0)\n}\n",
        "expected dimension sizes", 3, 15,
    ),
    "an_empty_dimension_size_last": (
        "HloModule m\nENTRY e {\n  ROOT p = f32[3,] parameter(0)\n}\n",
        "expected dimension sizes", 3, 15,
    ),
    "unknown_opcode_over_lines": (
        "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8]\n    le(p,\n      p)\n}\n",
        "unknown opcode 'le'", 5, 5,
    ),
    "unknown_element_type_in_layout": (
        "HloModule m, entry_computation_layout={(f33[2]{0})->f32[2]{0}}\n\nENTRY e {\n"
        "  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n",
        "error parsing attribute entry_computation_layout: unknown element type 'f33'", 1, 41,
    ),
    "bad_flag_in_header": (
        "HloModule m, is_scheduled=maybe\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
        "expected 'true' or 'false' as the value of 'is_scheduled'", 1, 27,
    ),
    "empty_operand": (
        "HloModule m\nENTRY e {\n  p0 = f32[2] parameter(0)\n  ROOT a = f32[2] add(p0,, p0)\n}\n",
        "expected an operand after ','", 4, 26,
    ),
    "instruction_named_like_an_element_type": (
        "HloModule m\nENTRY e {\n  %s4 = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%s4)\n}\n",
        "illegal instruction name: s4; suggest renaming to: s4_", 3, 3,
    ),
    "instruction_named_like_an_element_type_in_a_called_computation": (
        "HloModule m\n\n%c {\n  %p = f32[2]{0} parameter(0)\n  ROOT %bf16 = f32[2]{0} negate(%p)\n}\n\n"
        "ENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  ROOT %r = f32[2]{0} call(%p), to_apply=%c\n}\n",
        "illegal instruction name: bf16; suggest renaming to: bf16_", 5, 8,
    ),
    "instruction_name_kept_for_xla": (
        "HloModule m\n\n%c {\n  %p = f32[2]{0} parameter(0)\n  ROOT %__neg = f32[2]{0} negate(%p)\n}\n\n"
        "ENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  ROOT %r = f32[2]{0} call(%p), to_apply=%c\n}\n",
        "illegal instruction name: __neg; suggest renaming to: a_neg", 5, 8,
    ),
    "instruction_named_like_an_element_type_over_lines": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT /*x*/ token\n    = f32[2]{0} negate(p)\n}\n",
        "illegal instruction name: token; suggest renaming to: token_", 4, 14,
    ),
    "operand_named_like_an_element_type": (
        "HloModule m\nENTRY e {\n  e = f32[] parameter(0)\n  c = f32[] constant(1)\n"
        "  ROOT t = (f32[], f32[]) tuple(e, c, s32)\n}\n",
        "operand 's32' is spelled like an element type", 5, 39,
    ),
    "trailing_comma_in_operands": (
        "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} concatenate(p, ), dimensions={0}\n}\n",
        "expected an operand after ','", 4, 37,
    ),
    "operand_with_a_shape_but_no_name": (
        "HloModule m\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
        "  ROOT c = f32[2,6]{1,0} concatenate(f32[2,3]{1,0} , f32[2,3]{1,0} p), dimensions={1}\n}\n",
        "operand has a shape but no name", 4, 52,
    ),
    "junk_after_the_operands": (
        "HloModule m\n\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter()1\n  ROOT s = f32[] add(a, b)\n}\n\n"
        "ENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
        "expected an instruction name, found '1'", 5, 24,
    ),
    "layout_section_closed_by_a_square_bracket": (
        "HloModule m\n\nENTRY e {\n  p = f32[8,128]{1,0:T(8,128]} parameter(0)\n  ROOT c = f32[8,128]{1,0} copy(p)\n}\n",
        "']' where ')' was expected", 4, 17,
    ),
    "name_glued_to_equals": (
        "HloModule m\nENTRY e {\n  p=f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n",
        "'p=' reads as an attribute name", 3, 4,
    ),
    "unterminated_comment": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0) /* never closed\n  ROOT n = f32[] negate(p)\n}\n",
        "unterminated comment", 3, 26,
    ),
    "trailing_comma_before_close": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p),\n}\n",
        "expected an attribute name", 5, 1,
    ),
    "second_root_on_one_line": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p) ROOT q = f32[] negate(p)\n}\n",
        "a second ROOT", 4, 28,
    ),
    "use_before_definition_over_lines": (
        "HloModule m\nENTRY e { ROOT n = f32[] negate(\n p) p = f32[] parameter(0) }\n",
        "operand 'p' of 'n' is used before its definition", 3, 2,
    ),
    "attribute_on_an_instruction_written_as_an_operand": (
        'HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(f32[] negate(p), metadata={op_name="x"})\n}\n',
        "expected an operand name, found 'metadata=", 4, 39,
    ),
    "collective_written_as_an_operand": (
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(f32[4] all-reduce(f32[4] p))\n}\n",
        "attribute to_apply is expected but not seen", 4, 53,
    ),
    "name_taken_by_an_instruction_written_as_an_operand": (
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  n = f32[] negate(f32[] negate(p))\n"
        "  ROOT negate.anon = f32[] negate(n)\n}\n",
        "instruction 'negate.anon' is defined twice", 5, 3,
    ),
    "one_instruction_with_an_operand_without_its_shape": (
        "%multiply = f32[2,4]{1,0} multiply(%broadcast, %x)",
        "operand 'broadcast' has no shape", 1, 37,
    ),
    "two_instructions_without_a_computation": (
        "param = f32[2,5,1,3] parameter(0)\ntranspose = f32[1,5,2,3] transpose(param), dimensions={2,1,0,3}\n",
        "expected the end of the input after the instruction", 2, 1,
    ),
}

#: rejected cases XLA's parser accepts through a flaw of its own
XLA_BUGS = frozenset({"empty_operand", "trailing_comma_in_operands", "operand_named_like_an_element_type", "operand_with_a_shape_but_no_name"})


def skeleton(module) -> dict:
    """What a module read: ``{computation: ([(name, opcode, [operands])...], root name)}``."""
    return {
        comp.name: ([(i.name, i.opcode, list(i.operands)) for i in comp.instructions], comp.root.name)
        for comp in module.computations
    }
