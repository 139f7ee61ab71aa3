"""The words of the panel's pages, marked for the catalog (policies/locale/es.po).

Templates hold no text of their own: they show ``w.KEY``, these words in the person's language
(:func:`words`), so one catalog serves alma-ctl, alma chat and the panel.
"""

from __future__ import annotations

from policies.i18n import N_, _

WORDS: dict[str, str] = {
    "title": N_("ALMA"),
    "nav": N_("Sections"),
    "today": N_("Today"),
    "suggestions": N_("Suggestions"),
    "history": N_("History"),
    "memory": N_("Memory"),
    "chat": N_("Chat"),
    "backups": N_("Backups"),
    "model": N_("Model"),
    "autonomy": N_("Autonomy"),
    "system": N_("Backups, model and autonomy"),
    "login_title": N_("Open the panel from your terminal"),
    "login_text": N_(
        "This page opens with a one-time link: run `alma-ctl web` in a terminal and open the "
        "address it prints (or run `alma-ctl web --open`)."
    ),
    "report": N_("The day's report"),
    "plots": N_("The last 14 days"),
    "chart_hours": N_("Working hours per day"),
    "chart_messages": N_("Messages per hour of the day"),
    "chart_mood": N_("Mood"),
    "chart_kinds": N_("Suggestions by kind and what became of them"),
    "chart_empty": N_("No plot yet."),
    "pending": N_("Pending"),
    "decided": N_("Decided"),
    "none_pending": N_("No pending suggestions."),
    "none_decided": N_("No decided suggestions."),
    "accept": N_("Accept"),
    "reject": N_("Reject"),
    "reason": N_("Reason (optional)"),
    "evidence": N_("Evidence"),
    "plan": N_("Plan, op by op"),
    "plan_empty": N_("This suggestion changes no file: accepting it acknowledges it."),
    "diffs": N_("Changes to files"),
    "kind": N_("Kind"),
    "status": N_("Status"),
    "target": N_("Target"),
    "files": N_("Files"),
    "created": N_("Created"),
    "action": N_("Action"),
    "from_suggestion": N_("Suggestion"),
    "who": N_("Decided by"),
    "by_alma": N_("ALMA on its own"),
    "by_person": N_("you"),
    "finished": N_("Finished"),
    "ops": N_("Ops"),
    "undo": N_("Undo"),
    "no_actions": N_("No actions yet."),
    "more": N_("Older actions"),
    "search": N_("Search"),
    "memory_query": N_("Search your memories"),
    "principles": N_("Principles"),
    "recent": N_("Recent memories"),
    "results": N_("Results"),
    "archived": N_("Forgotten memories"),
    "show_archived": N_("Show the forgotten ones"),
    "no_memories": N_("No memories found."),
    "content": N_("Text"),
    "tags": N_("Tags (separated by commas)"),
    "tags_shown": N_("Tags"),
    "importance": N_("Importance"),
    "memory_type": N_("Type"),
    "save": N_("Save"),
    "forget": N_("Forget"),
    "restore": N_("Restore"),
    "edit": N_("Edit"),
    "edit_missing": N_(
        "This daemon cannot edit memories yet (it has no `memory.edit` command); update ALMA."
    ),
    "message": N_("Your message"),
    "send": N_("Send"),
    "you": N_("You"),
    "knows": N_("What ALMA knows"),
    "backup_now": N_("Back up now"),
    "restore_to": N_("Restore into a new folder"),
    "snapshot": N_("Snapshot"),
    "folder": N_("New folder (outside the root)"),
    "model_path": N_("A GGUF model file"),
    "use_model": N_("Use this model"),
    "pause": N_("Pause autonomy"),
    "resume": N_("Resume autonomy"),
    "lower": N_("Lower the level"),
    "level": N_("Level"),
    "raise_note": N_("Raising the level is done by editing system/autonomy.conf, never from here."),
    "live_note": N_("This page updates itself when JavaScript is on."),
}


def words() -> dict[str, str]:
    """Every word of the pages in the current language."""
    return {key: _(text) for key, text in WORDS.items()}
