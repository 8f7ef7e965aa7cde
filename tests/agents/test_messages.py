from agenthost.agents import Message, TextPart, to_messages
from agenthost.agents.messages import DataPart, last_user_text


def test_inputs_are_normalised_to_messages() -> None:
    system = Message.system("be brief")
    assert to_messages("hi") == [Message.user("hi")]
    assert to_messages(system) == [system]
    assert to_messages(["a", system, "b"]) == [Message.user("a"), system, Message.user("b")]


def test_text_joins_text_parts_only_a_blank_line_apart() -> None:
    message = Message(
        role="user", parts=[TextPart(text="a"), DataPart(data={"x": 1}), TextPart(text="b")]
    )
    assert message.text == "a\n\nb"
    assert Message(role="user", parts=[DataPart(data=1)]).text == ""
    assert Message(role="user", parts=[]).text == ""
    assert Message.assistant("one part").text == "one part"


def test_text_constructors_make_one_text_part() -> None:
    for make, role in ((Message.system, "system"), (Message.user, "user")):
        assert make("hi") == Message(role=role, parts=[TextPart(text="hi")])
    assert Message.assistant("") == Message(role="assistant", parts=[TextPart(text="")])


def test_last_user_text() -> None:
    messages = [Message.user("first"), Message.assistant("reply"), Message.user("second")]
    assert last_user_text(messages) == "second"
    assert last_user_text([Message.assistant("x")]) is None


def test_messages_round_trip_through_json() -> None:
    message = Message(role="user", parts=[TextPart(text="a"), DataPart(data=[1, 2])])
    assert Message.model_validate_json(message.model_dump_json()) == message
