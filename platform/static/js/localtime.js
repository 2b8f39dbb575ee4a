// Times the server writes in UTC (<time datetime="…" data-local>) shown in the reader's own
// time zone and language; the UTC text stays as the tooltip and as what shows without JavaScript.
(function () {
  "use strict";
  const lang = document.documentElement.lang || undefined;
  let format;
  try {
    // dateStyle/timeStyle refuse timeZoneName, so the parts are named one by one.
    format = new Intl.DateTimeFormat(lang, { year: "numeric", month: "short", day: "numeric", hour: "2-digit",
                                             minute: "2-digit", timeZoneName: "short" });
  } catch (e) {
    return;
  }
  function localise(root) {
    root.querySelectorAll("time[data-local]:not([data-localised])").forEach((node) => {
      const when = new Date(node.getAttribute("datetime"));
      if (isNaN(when)) return;
      node.title = node.textContent.trim();
      node.textContent = format.format(when);
      node.dataset.localised = "";
    });
  }
  localise(document);
  document.body.addEventListener("htmx:afterSettle", (event) => localise(event.target));
})();
