"""Answers and what travels with a call: the reply and its storing (replier), call events, questions to the client."""
