"""The panel's way to the daemon: alma-ctl's client, one connection a command, each with the
command table's own wait (a long accept waits as long as alma-ctl would)."""

from __future__ import annotations

from control.client import Client, Stream
from control.commands import COMMANDS
from control.protocol import daemon_start_hint, socket_name_for


class Daemon:
    def __init__(self, root: str) -> None:
        self.root = root
        self.socket = socket_name_for(root)
        self.hint = daemon_start_hint(root)

    def _client(self, cmd: str) -> Client:
        command = COMMANDS.get(cmd)
        timeout = command.timeout if command is not None else 30.0
        return Client(self.socket, timeout, start_hint=self.hint)

    def call(self, cmd: str, **args: object) -> object:
        return self._client(cmd).call(cmd, **args)

    def stream(self, cmd: str, **args: object) -> Stream:
        return self._client(cmd).stream(cmd, **args)

    @staticmethod
    def offers(cmd: str) -> bool:
        """Whether this build's command table has ``cmd`` (the panel shows what it may ask)."""
        return cmd in COMMANDS
