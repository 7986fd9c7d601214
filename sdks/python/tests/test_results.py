"""What a skill returns, as the content of an agent_reply."""

from __future__ import annotations

import pytest

from mcpgw_agent import Result
from mcpgw_agent.results import holds_unstorable_text, normalize, text


def test_a_string_is_one_text_item() -> None:
    assert normalize("hi") == Result([{"type": "text", "text": "hi"}])


def test_a_list_is_content_items() -> None:
    items = [{"type": "image", "mimeType": "image/png", "data": "AA=="}, "and text"]
    assert normalize(items).content == [items[0], text("and text")]


def test_a_result_is_kept() -> None:
    result = normalize(Result(content=[text("42")], structured={"sum": 42}))
    assert result == Result([text("42")], {"sum": 42}, False)
    assert normalize(Result(content="oops", is_error=True)) == Result([text("oops")], None, True)  # type: ignore[arg-type]


def test_a_dict_with_the_result_keys() -> None:
    assert normalize({"content": [text("x")], "structured": {"a": 1}, "is_error": True}) == Result(
        [text("x")], {"a": 1}, True
    )
    assert normalize({"structured_content": {"a": 1}}) == Result([], {"a": 1}, False)
    assert normalize({"content": "x", "isError": True}) == Result([text("x")], None, True)


def test_none_is_no_content() -> None:
    assert normalize(None) == Result()


@pytest.mark.parametrize(
    "output",
    [
        42,
        b"bytes",
        {"text": "a dict that is not a result"},
        [{"type": "video"}],
        [42],
        {"content": [], "structured": "not a dict"},
    ],
)
def test_anything_else_is_a_type_error(output: object) -> None:
    with pytest.raises(TypeError):
        normalize(output)


def test_unstorable_text() -> None:
    assert holds_unstorable_text([text("a\x00b")])
    assert holds_unstorable_text({"k\ud800": 1})
    assert holds_unstorable_text({"deep": [{"x": "\udfff"}]})
    assert not holds_unstorable_text([text("fine 😀 é \\u0000 as text")])
    assert not holds_unstorable_text(None)
