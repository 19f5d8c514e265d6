"""Web runs: tasks x trials through a trial runner, crash-safe and resumable, then scored.

    RUN_DIR/manifest.json                 what the run is (config, tasks, site URLs), versioned
    RUN_DIR/journal.jsonl                 one record per finished trial (append + fsync)
    RUN_DIR/tasks/<task_id>/trial_<n>/    agent_response.json, network.har, metrics.json,
                                          history.json, eval_result.json
    RUN_DIR/tasks/eval_summary.json       scoring's summary; RUN_DIR/report.md, result.json

Modules: `models` (files and the trial interface), `layout`, `suites` (local, WebArena, a tasks
file), `scheduling` (site workers, locks, resets), `trial` (one trial and its files), `runner`
(create, resume, run, score), `fake_runner` and `browser_runner` (the registered trial runners),
`extraction` (the adapter's optional LLM step).
"""
