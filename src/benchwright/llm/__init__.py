"""Model traffic recorded and replayed (`--llm-record DIR`, `--llm-replay DIR`): a loopback proxy
in front of an agent's endpoint, the cassette files it writes and reads, and how a replayed
request is matched to a recorded one. Base layer: both tracks and the judge use it."""
