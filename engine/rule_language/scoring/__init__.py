"""The scoring room: one answer scored against one key, and batches of them in workers.

Imports the rooms below it (reading, expressions, rules), never authoring. See the package
docstring.
"""
