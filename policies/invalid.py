"""How a pydantic ValidationError reads for a person: the key path of the first problem, what
is wrong with it, and the fix. Configuration files, socket arguments and the model's output all
turn a rejected value into words here; each caller only says where the value came from.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import ValidationError

from policies.i18n import N_, _

_FIXES = {
    "extra_forbidden": N_("remove it or fix its spelling"),
    "literal_error": N_("use one of the values named"),
    "int_type": N_("write a whole number without quotes"),
    "bool_type": N_("write true or false without quotes"),
    "string_type": N_("write text in double quotes"),
    "list_type": N_('write a list such as ["user"]'),
    "greater_than_equal": N_("use a larger number"),
    "less_than_equal": N_("use a smaller number"),
    "model_type": N_("write it as a [section] table"),
}


class Problem(NamedTuple):
    loc: tuple[str | int, ...]  # where the value sits: ("monitor", "settle_seconds")
    key: str  # the same, dotted; "" when the whole input is wrong
    msg: str  # what is wrong: our validators' sentences (translated), pydantic's as written
    fix: str  # what to do, "" when the message says it already
    more: int  # how many other problems the same input has


def first_problem(exc: ValidationError) -> Problem:
    errors = exc.errors()
    first = errors[0]
    loc = tuple(first["loc"])
    kind = str(first["type"])
    msg = _("unknown key") if kind == "extra_forbidden" else str(first["msg"])
    msg = msg.removeprefix("Value error, ")
    fix = _(_FIXES[kind]) if kind in _FIXES else ""
    return Problem(
        loc, ".".join(str(k) for k in loc), msg, "" if fix in msg else fix, len(errors) - 1
    )
