"""A second web benchmark as a plugin, from outside benchwright's package: the `toy` suite, its
one site (`toyshop`, served on loopback) and its own evaluator (issue 28 point 3).

`plugin.py` is what a distribution would declare in the entry-point groups
`benchwright.web_suites` (toy = tests.helpers.toy_web_suite.plugin:open_toy) and
`benchwright.web_sites` (toyshop = tests.helpers.toy_web_suite.plugin:TOYSHOP);
test_toy_suite_e2e.py declares them the same way (a `.dist-info` folder on the path) and runs
`benchwright run web --suite toy` through the CLI.
"""
