"""The Python API's implementation (internal: the public names are `benchwright.__all__`).

The CLI's commands parse their options and call these same functions, so a notebook and a shell
get one behaviour.
"""
