// Draws the analytics page's charts from the JSON the server embedded (no requests).
(function () {
  const data = JSON.parse(document.getElementById("chart-data").textContent);
  const bar = (id, labels, counts, color) => {
    const canvas = document.getElementById(id);
    if (!canvas || !labels.length) return;
    new Chart(canvas, {
      type: "bar",
      data: { labels, datasets: [{ data: counts, backgroundColor: color }] },
      options: { plugins: { legend: { display: false } }, animation: false, maintainAspectRatio: false,
                 scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
  };
  for (const ex of data) {
    bar(`${ex.id}-verdicts`, ex.verdicts.map((v) => v[0]), ex.verdicts.map((v) => v[1]), "#3657d6");
    bar(`${ex.id}-minutes`, ex.minutes.labels, ex.minutes.counts, "#1f8a4c");
    bar(`${ex.id}-ratios`, ex.ratios.labels, ex.ratios.counts, "#b7791f");
  }
})();
