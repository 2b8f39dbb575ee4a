// A datetime-local field holds a wall-clock time with no zone: the form says it was written in
// the instructor's own zone, and the server turns it into UTC (courses.forms.AssignmentForm).
// Without JavaScript the zone stays UTC and the page says so.
(function () {
  "use strict";
  let zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch (e) {
    return;
  }
  if (!zone) return;
  document.querySelectorAll("form[data-local-times]").forEach((form) => {
    form.elements.time_zone.value = zone;
    form.querySelectorAll("[data-zone-name]").forEach((node) => { node.textContent = zone; });
    form.querySelector("[data-zone-utc]").hidden = true;
    form.querySelector("[data-zone-local]").hidden = false;
  });
})();
