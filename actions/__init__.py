"""actions package."""
