"""The quick readings of attribute text agree with the full attribute splitter, and its cut by one
expression with its walk."""

from __future__ import annotations

import re

import pytest
from conftest import read_exact
from hypothesis import given, settings
from hypothesis import strategies as st
from test_roundtrip import COMPLETE

import hlo_rewrite.attributes as attributes
from hlo_rewrite import parse_module
from hlo_rewrite.attributes import called_computation_names, quick_called_computations, split_attributes


def _corpus_attribute_texts():
    """``(file, instruction name, attribute text)`` of every instruction of the corpus."""
    for path in COMPLETE:
        module = parse_module(read_exact(path), str(path))
        for comp in module.computations:
            for instr in comp.instructions:
                yield path, instr.name, instr.attrs_text or ""


def test_quick_callees_agree_with_splitter_on_corpus(corpus):
    checked = 0
    for path, name, text in _corpus_attribute_texts():
        quick = quick_called_computations(text)
        full = called_computation_names(split_attributes(text))
        if quick is not None:
            assert quick == full, (path, name)
            checked += bool(full)
    assert checked > 1000


def test_quick_callees_refuse_what_they_cannot_vouch_for():
    assert quick_called_computations(", calls=%a, %b") is None
    assert quick_called_computations(', metadata={op_name="x, to_apply=%y"}, to_apply=%add') is None
    assert quick_called_computations(', metadata={op_name="calls=%x"}') is None
    assert quick_called_computations(", condition=%c, body=%b") == ["c", "b"]
    assert quick_called_computations(", branch_computations={%a, %b}") == ["a", "b"]
    assert quick_called_computations(", dimensions={0}") == []


def test_comments_and_line_ends_between_a_comma_and_the_next_name_are_skipped():
    assert split_attributes(", a=1, /* c */b={2}") == [("a", "1"), ("b", "{2}")]
    assert split_attributes(", a=1,// c\n  b=2") == [("a", "1"), ("b", "2")]
    # and a comment between the '=' and the value; inside a frontend attribute's JSON text a
    # '//' is text (its braces close on that line)
    assert split_attributes(", a=/* c */{1}") == [("a", "{1}")]
    assert split_attributes(", k=/* c */{{0,1// },{1,0}}", json_from=1) == [("k", "{{0,1// },{1,0}}")]


# ------------------------------------------------------------ the one-expression cut


def _walked(text: str):
    """What the character walk alone makes of ``text`` (a list, or the error's message)."""
    fast = attributes._PLAIN_ATTRS_RE
    attributes._PLAIN_ATTRS_RE = re.compile(r"(?!)")  # never matches: the walk reads everything
    try:
        return split_attributes(text)
    except Exception as exc:  # noqa: BLE001 - the outcome compared, whatever it is
        return f"{type(exc).__name__}: {exc}"
    finally:
        attributes._PLAIN_ATTRS_RE = fast


def _cut(text: str):
    try:
        return split_attributes(text)
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("text, by_one_expression", [
    (", channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=%add", True),
    (', metadata={op_name="jit(f)/add" source_file="/a/b.py" source_line=3}', True),
    (', backend_config={"x":"}{,\\"y"}, frontend_attributes={_xla="a,b"}', True),
    (', custom_call_target="foo", api_version=API_VERSION_STATUS_RETURNING', True),
    (", sharding={devices=[2,1]0,1}, dimensions={0}", True),
    ("  , a=1 , b=2", True),
    ("", True),
    (", calls=%a, %b", False),  # several callees after one name: the walk reads them
    (", a={x}y, b=2", False),  # text after a braced value belongs to it
    (", a=1 /* note */, b=2", False),  # a comment
    (", a=\n1", False),
    (", a={{{{1}}}}", False),  # deeper than the expression reads
    (", a=(1, 2)", False),
    (", a=1,, b=2", False),  # an error: the walk names it
    (', a="open', False),
    (", a={1", False),
])
def test_attributes_as_xla_prints_them_are_cut_by_one_expression_as_the_walk_cuts_them(text, by_one_expression):
    assert (attributes._PLAIN_ATTRS_RE.fullmatch(text) is not None) == by_one_expression
    assert _cut(text) == _walked(text)


def test_every_attribute_text_of_the_corpus_is_cut_as_the_walk_cuts_it(corpus):
    fast = 0
    for path, name, text in _corpus_attribute_texts():
        fast += attributes._PLAIN_ATTRS_RE.fullmatch(text) is not None and text != ""
        assert _cut(text) == _walked(text), (path, name)
    assert fast > 1000


_PIECES = st.sampled_from([
    ", ", ",", " ", "\t", "\n", "a", "to_apply", "=", "%add", "1", "-2", "true", "{", "}", "{{0,1}}", "[", "]",
    "(", ")", '"', "'", '"x,}"', "\\", '\\"', "/*", "*/", "//", "calls=%a, %b", "op_name=", "x.y-z_0",
])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_any_text_is_cut_by_one_expression_only_as_the_walk_cuts_it(text):
    assert _cut(text) == _walked(text)
