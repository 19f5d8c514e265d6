"""The statistics both tracks report with."""
