"""The graph of langgraph.yaml: greet, then say how long the conversation is."""

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def greet(state: MessagesState) -> dict[str, list[BaseMessage]]:
    """Answer the last message."""
    return {"messages": [AIMessage(content=f"Hello! You said: {state['messages'][-1].text}")]}


def count(state: MessagesState) -> dict[str, list[BaseMessage]]:
    """Say how many messages the conversation has."""
    return {"messages": [AIMessage(content=f"({len(state['messages'])} messages so far)")]}


builder = StateGraph(MessagesState)
builder.add_node("greet", greet)
builder.add_node("count", count)
builder.add_edge(START, "greet")
builder.add_edge("greet", "count")
builder.add_edge("count", END)
graph = builder.compile()
