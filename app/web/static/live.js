// Live refresh: while the server marks <main data-refresh="N">, fetch the page again every N
// seconds and swap its <main> in place. Unlike a reload, this keeps the scroll position of each
// artifact (and keeps a log scrolled to its end following new lines). Stops once a fetched page
// has no data-refresh: the runs have finished.
(function () {
  "use strict";

  function scrollState(main) {
    const state = {};
    for (const pre of main.querySelectorAll("pre[id]")) {
      state[pre.id] = { top: pre.scrollTop, atEnd: pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4 };
    }
    return state;
  }

  function restoreScroll(main, state) {
    for (const pre of main.querySelectorAll("pre[id]")) {
      const saved = state[pre.id];
      if (saved) pre.scrollTop = saved.atEnd ? pre.scrollHeight : saved.top;
    }
  }

  async function refresh() {
    const main = document.querySelector("main[data-refresh]");
    if (!main) return;
    const seconds = Number(main.dataset.refresh) || 5;
    try {
      const response = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
      if (response.ok) {
        const page = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = page.querySelector("main");
        if (fresh) {
          const state = scrollState(main);
          main.replaceWith(document.adoptNode(fresh));
          restoreScroll(fresh, state);
          document.title = page.title;
          if (!fresh.hasAttribute("data-refresh")) return;
        }
      }
    } catch (error) {
      // The server is restarting or the network blinked: try again on the next tick.
    }
    setTimeout(refresh, seconds * 1000);
  }

  const main = document.querySelector("main[data-refresh]");
  if (main) setTimeout(refresh, (Number(main.dataset.refresh) || 5) * 1000);
})();
