// Counts down to deadlines the server set. The server stays the authority: when a clock
// reaches zero the page reloads and the server closes what is due.
(function () {
  const clocks = document.querySelectorAll("[data-deadline-ms]");
  if (!clocks.length) return;
  const skew = Number(clocks[0].dataset.serverNowMs) - Date.now();
  let reloading = false;
  function pad(n) { return String(n).padStart(2, "0"); }
  function tick() {
    const now = Date.now() + skew;
    clocks.forEach(function (clock) {
      const left = Math.max(0, Math.round((Number(clock.dataset.deadlineMs) - now) / 1000));
      const out = clock.querySelector(".remaining") || clock;
      out.textContent = Math.floor(left / 60) + ":" + pad(left % 60);
      clock.classList.toggle("low", left <= 60);
      clock.dataset.left = String(left);
      if (left === 0 && !reloading) {
        reloading = true;
        setTimeout(function () { window.location.reload(); }, 700);
      }
    });
  }
  tick();
  setInterval(tick, 250);
})();
