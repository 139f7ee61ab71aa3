"""What a request may ask for: the one table of limits.

The socket's command table (:mod:`control.commands`) reads these numbers; alma-ctl checks a
request against it before sending, the daemon on receipt, and the memory service checks its
callers inside the daemon (the chat, the loop) with the same table; the control server reads
its bounds on connections and their time from here too. Standard library only: alma-ctl
imports it on every start.
"""

from __future__ import annotations

#: Longest text a short argument (an id, a kind) may carry.
SHORT_TEXT = 200
#: Items of one list argument (tags); the request's size limit bounds everything else.
MAX_TAGS = 30
#: A tag, a project, a memory type.
TAG_CHARS = 60
PROJECT_CHARS = 80
TYPE_CHARS = 40
#: A memory's area of life (``salud``) and what it is about (a person, a thing, a project).
THEME_CHARS = 60
RELATED_CHARS = 80
#: A person's note to a suggestion or a feedback (why it was rejected, say).
REASON_CHARS = 2_000
#: A path a person names (a folder, a model file): Linux's PATH_MAX.
PATH_CHARS = 4_096
#: One chat message: a person types it; a pasted page fits, a pasted book does not.
MESSAGE_CHARS = 32_000
#: A memory's content, and the prompt the chat's context is built for.
CONTENT_CHARS = 20_000
#: A search query.
QUERY_CHARS = 4_000
#: How many rows one answer may list (memories, actions) and how many search hits.
LIST_MAX = 1_000
SEARCH_MAX = 100
#: Tokens of memory context for one chat message (``memory.context_budget`` in alma.toml too).
CONTEXT_BUDGET_DEFAULT = 1_500
CONTEXT_BUDGET_MIN = 50
CONTEXT_BUDGET_MAX = 32_000
#: A configuration file (the policy, ``alma.toml``): a few commented lines; anything larger
#: is not one, and is never read whole.
CONFIG_BYTES = 1 << 20
#: An error's sentence as the journal and the settings store it: a sentence and restic's last
#: line fit; a sentence quoting a whole file does not.
ERROR_CHARS = 2_000
#: A file that holds a password (the backup repository's): a passphrase, never more.
SECRET_BYTES = 4_096
#: The new content an ``edit`` op carries in its plan (a configuration file, not a data file):
#: the plan, the journal and ``suggestions show`` all hold it whole.
EDIT_BYTES = 256 << 10

# The control socket (control.server; docs/protocol.md, "Resources"). Every client runs as the
# owner, so these keep the owner's programs from crowding out the owner's own `alma-ctl`.
#: Connections open at once; at the cap the longest idle one is closed to make room.
CONNECTIONS_MAX = 128
#: Connections open at once from one peer process (SO_PEERCRED's pid).
CONNECTIONS_PER_PROCESS = 8
#: Requests dispatched at once; a whole request waits at most REQUEST_SECONDS for a slot.
ANSWERING_MAX = 16
#: How long a new connection may send nothing: a client connects to ask something at once.
FIRST_REQUEST_SECONDS = 5.0
#: Quiet allowed between two requests of one connection.
IDLE_SECONDS = 60.0
#: Once a request's first byte has come, the time for the whole line.
REQUEST_SECONDS = 10.0
