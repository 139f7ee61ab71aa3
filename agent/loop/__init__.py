"""The loop and the suggestions' life: analysis, approval, action, learning, autonomy."""
