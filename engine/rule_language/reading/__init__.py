"""The reading room: answer and key text into parse trees, claims and components.

The lowest room of the rule language: it imports no other room. See the package docstring.
"""
