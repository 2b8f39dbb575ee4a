/* Draws a small computation graph as SVG, laid out by dagre (vendored). Nodes keep their
   place while their state changes, so a step-by-step player only restyles them. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  /* nodes: [{id, label, sub}], edges: [[from, to]]. Returns {svg, nodes: {id: <g>}, edges: [...]} */
  function draw(container, nodes, edges, options) {
    options = options || {};
    var g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: options.rankdir || "TB", nodesep: 18, ranksep: 28, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(function () { return {}; });
    nodes.forEach(function (n) {
      var width = Math.max(64, 7.2 * Math.max(String(n.label).length, String(n.sub || "").length) + 18);
      g.setNode(n.id, { width: width, height: 40 });
    });
    edges.forEach(function (e) { if (g.hasNode(e[0]) && g.hasNode(e[1])) g.setEdge(e[0], e[1]); });
    dagre.layout(g);
    var info = g.graph();
    container.textContent = "";
    // Drawn at its natural size, one unit a pixel: labels stay 11 px on a phone (the frame
    // scrolls sideways instead), and two graphs side by side share one scale.
    var svg = el("svg", { viewBox: "0 0 " + Math.ceil(info.width) + " " + Math.ceil(info.height),
                          width: Math.ceil(info.width), height: Math.ceil(info.height),
                          class: "graph-svg", role: "img" }, container);
    if (options.title) el("title", {}, svg).textContent = options.title;
    var defs = el("defs", {}, svg);
    var marker = el("marker", { id: "arrow-" + container.id, viewBox: "0 0 10 10", refX: 9, refY: 5,
                                markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, defs);
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }, marker);
    var drawn = { svg: svg, nodes: {}, edges: [] };
    g.edges().forEach(function (e) {
      var points = g.edge(e).points.map(function (p) { return p.x.toFixed(1) + "," + p.y.toFixed(1); });
      var line = el("polyline", { points: points.join(" "), class: "edge", "data-from": e.v, "data-to": e.w,
                                  "marker-end": "url(#arrow-" + container.id + ")" }, svg);
      drawn.edges.push(line);
    });
    nodes.forEach(function (n) {
      var box = g.node(n.id);
      var group = el("g", { class: "node", "data-node": n.id, "data-sub": n.sub || "",
                            transform: "translate(" + (box.x - box.width / 2) + "," + (box.y - box.height / 2) + ")" }, svg);
      el("rect", { width: box.width, height: box.height, rx: 7 }, group);
      var label = el("text", { x: box.width / 2, y: 16, class: "label" }, group);
      label.textContent = n.label;
      var sub = el("text", { x: box.width / 2, y: 32, class: "sub" }, group);
      sub.textContent = n.sub || "";
      drawn.nodes[n.id] = group;
    });
    return drawn;
  }

  function formatValue(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(+value.toPrecision(4));
    if (Array.isArray(value)) return JSON.stringify(value).slice(0, 24);
    if (value.shape) return value.dtype + "[" + value.shape.join("×") + "]";
    return String(value);
  }

  window.GraphView = { draw: draw, formatValue: formatValue };
})();
