"""The rules room: a TOML rule file loaded and validated into a :class:`~.rule.Rule`.

Imports the reading and expressions rooms, never scoring or authoring. See the package docstring.
"""
