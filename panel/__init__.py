"""The local web panel (docs/operations.md)."""
