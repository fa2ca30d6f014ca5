// Live updates over server-sent events. <main data-events="URL"> names the stream:
// - a run page (`/runs/N/events`): each `update` carries the page's `data-live` parts (#live:
//   header, buttons, timeline; #live-log: the log), each swapped in place by id; the log stays
//   scrolled to its end if it was.
//   On `finished` the page fetches itself once (the report and repros have landed) and stops.
// - the run list (`/events/runs`): each `changed` fetches the page again and swaps <main>.
// The fragments are the server's autoescaped templates; the CSP forbids inline script anyway.
(function () {
  "use strict";

  const main = document.querySelector("main[data-events]");
  if (!main || !window.EventSource) return;

  function parse(html) {
    return new DOMParser().parseFromString(html, "text/html");
  }

  function followLog(oldLive, newLive) {
    const before = oldLive.querySelector("#content-log");
    const after = newLive.querySelector("#content-log");
    if (!before || !after) return () => {};
    const atEnd = before.scrollTop + before.clientHeight >= before.scrollHeight - 4;
    const top = before.scrollTop;
    return () => { after.scrollTop = atEnd ? after.scrollHeight : top; };
  }

  async function reloadMain() {
    try {
      const response = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
      if (!response.ok) return false;
      const page = parse(await response.text());
      const fresh = page.querySelector("main");
      if (!fresh) return false;
      document.querySelector("main").replaceWith(document.adoptNode(fresh));
      document.title = page.title;
      return true;
    } catch (error) {
      return false;
    }
  }

  const source = new EventSource(main.dataset.events);
  source.addEventListener("update", (event) => {
    const fresh = parse(event.data);
    for (const part of fresh.querySelectorAll("[data-live][id]")) {
      const current = document.getElementById(part.id);
      if (!current) continue;
      const restore = followLog(current, part);
      current.replaceWith(document.adoptNode(part));
      restore();
    }
    const badge = document.querySelector("#live h1 .badge");
    if (badge) document.title = document.title.replace(/\(([^)]*)\)/, "(" + badge.innerText + ")");
  });
  source.addEventListener("finished", async () => {
    source.close();
    await reloadMain();
  });
  source.addEventListener("gone", () => source.close());
  source.addEventListener("changed", async () => {
    const fresh = await reloadMain();
    if (fresh && !document.querySelector("main[data-events]")) source.close();
  });
})();
