"""The coding track's run loop: attempts of checkpoints, their records, resume and regrading."""
