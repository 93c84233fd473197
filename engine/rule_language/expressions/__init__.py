"""The expressions room: the rule expression language (parse, evaluate, generated fast path).

Imports only the reading room (the parse-tree nodes expressions read). See the package docstring.
"""
