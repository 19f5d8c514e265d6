"""The `mini` agent's runs against the fake LLM server: the key it is given and its problem."""

FAKE_KEY = "sk-benchwright-fake-9f3c2a7e51d04b8c"
PROBLEM = "ledger_cli"
