"""Stopping a skill for its caller: cancel requests and deadlines."""
