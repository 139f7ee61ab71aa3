"""Backups of the root with restic: the runs, the snapshots, the restore as an undoable action."""
