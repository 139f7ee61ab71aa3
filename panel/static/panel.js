// ALMA's panel: live updates only. Every decision is a plain form that works without this
// script. Text from the daemon is set with textContent, never parsed as markup.
"use strict";

function chatForm(form) {
  const turns = document.getElementById("turns");
  form.addEventListener("submit", async (event) => {
    const data = new URLSearchParams(new FormData(form));
    const message = (data.get("message") || "").trim();
    if (!message) return;
    event.preventDefault();
    const turn = document.createElement("div");
    turn.className = "turn";
    const you = document.createElement("p");
    you.className = "you";
    const who = document.createElement("strong");
    who.textContent = form.dataset.you + ": ";
    you.append(who, document.createTextNode(message));
    const known = document.createElement("blockquote");
    known.className = "known";
    known.setAttribute("aria-label", form.dataset.knows);
    known.hidden = true;
    const answer = document.createElement("div");
    answer.className = "answer";
    answer.dataset.testid = "chat-answer";
    answer.setAttribute("data-testid", "chat-answer");
    answer.setAttribute("aria-busy", "true");
    const note = document.createElement("p");
    note.className = "note";
    turn.append(you, known, answer, note);
    turns.append(turn);
    form.querySelector("textarea").value = "";
    const response = await fetch(form.dataset.stream, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    if (!response.ok || !response.body) {
      note.textContent = response.statusText || String(response.status);
      answer.setAttribute("aria-busy", "false");
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 1);
        if (!line) continue;
        const item = JSON.parse(line);
        if (item.type === "known") {
          known.hidden = false;
          known.textContent += item.text;
        } else if (item.type === "token") {
          answer.textContent += item.text;
        } else if (item.type === "note") {
          note.textContent = item.text;
        }
      }
    }
    answer.setAttribute("aria-busy", "false");
  });
}

function liveSuggestions(section) {
  const shown = (section.dataset.pending || "").trim();
  setInterval(async () => {
    const response = await fetch("/suggestions/pending.json", { credentials: "same-origin" });
    if (!response.ok) return;
    const ids = (await response.json()).ids.join(" ");
    if (ids === shown) return;
    // Never under the person's hands: a reason being typed waits for the next round.
    const typing = [...document.querySelectorAll("main input[type=text]")].some(
      (field) => field.value || field === document.activeElement,
    );
    if (typing) return;
    const page = await fetch(location.pathname, { credentials: "same-origin" });
    const doc = new DOMParser().parseFromString(await page.text(), "text/html");
    const fresh = doc.querySelector("main");
    if (fresh) {
      document.querySelector("main").replaceWith(fresh);
      const again = fresh.querySelector("[data-live=suggestions]");
      if (again) liveSuggestions(again);
    }
  }, 4000);
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("chat-form");
  if (form) chatForm(form);
  const section = document.querySelector("[data-live=suggestions]");
  if (section) liveSuggestions(section);
});
