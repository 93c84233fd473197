"""The authoring room: checks, key structure, scaffolding and agreement for rule authors.

The top room of the rule language: it may import every other room. See the package docstring.
"""
