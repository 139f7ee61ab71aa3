"""The loop and the suggestions' life: the analysis (analysis.py), a decision on one suggestion
(decision.py), the agent the daemon calls (lifecycle.py), autonomy and the track record."""
