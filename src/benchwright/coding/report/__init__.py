"""The coding track's report: figures with confidence intervals, failures, markdown."""
