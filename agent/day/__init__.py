"""The day: the daily analysis and report, ALMA's own writing, reminders, notifications."""
