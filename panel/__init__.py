"""The local web panel: a client of the control socket in a process of its own (docs/panel.md).

It may import ``control`` (the client, the command table, the views) and ``policies`` (the
catalog), never the daemon, the store, the sandbox or the actions: everything it shows or
changes goes through the same commands as alma-ctl.
"""
