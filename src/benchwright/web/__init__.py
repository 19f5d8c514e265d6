"""The web track: WebArena Verified tasks, site environments and offline scoring.

The official evaluator (`webarena-verified`) pins its own pydantic, so it lives in an environment of
its own and is driven as one long-lived subprocess (`evaluation/evaluator.py`,
`evaluation/evaluator_worker.py`).
"""
