/* Lesson pages: run code blocks in the sandbox, and the visualisations (each reads its data
   from the #viz-data JSON the server recorded from our engines). Strings go through Django's
   JavaScript catalogue (gettext), so every label comes in both languages. */
(function () {
  "use strict";
  var _ = window.gettext || function (s) { return s; };
  var fmt = window.interpolate || function (s) { return s; };
  var ngettext = window.ngettext || function (one, many, n) { return n === 1 ? one : many; };
  var lang = (document.documentElement.lang || "en").toLowerCase().indexOf("zh") === 0 ? "zh-hans" : "en";
  var data = JSON.parse((document.getElementById("viz-data") || { textContent: "{}" }).textContent);

  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  }
  function post(url, fields) {
    var body = new URLSearchParams(fields);
    return fetch(url, { method: "POST", body: body, credentials: "same-origin",
                        headers: { "X-CSRFToken": csrf() } })
      .then(function (r) { return r.json().catch(function () { return { ok: false, error: _("The server answered with an error.") }; }); });
  }
  function local(text) { return text && typeof text === "object" ? (text[lang] || text.en || "") : (text || ""); }

  /* ---- running code: the server queues the run, a worker runs it, the page polls ---------- */
  var POLL_MS = 700;
  function stateText(run) {
    return run.state === "running" ? _("Running in the sandbox…") : _("Queued: waiting for a free sandbox…");
  }
  /* POST, then poll the run's status until it is finished; onState(run) on every answer while it
     waits, onDone(run) once (a run with result or error, or a refusal with error). */
  function startRun(url, fields, onState, onDone) {
    post(url, fields).then(function (run) {
      if (!run.status_url) { onDone(run); return; }
      (function poll(current) {
        if (current.finished) { onDone(current); return; }
        onState(current);
        setTimeout(function () {
          fetch(current.status_url, { credentials: "same-origin", headers: { Accept: "application/json" } })
            .then(function (r) { return r.json(); })
            .then(poll)
            .catch(function () { onDone({ error: _("The run could not be sent; check your connection.") }); });
        }, POLL_MS);
      })(run);
    }).catch(function () { onDone({ error: _("The run could not be sent; check your connection.") }); });
  }
  function runInto(url, code, bar, output) {
    var state = bar.querySelector(".run-state");
    var button = bar.querySelector("button");
    button.disabled = true;
    output.hidden = true;
    state.textContent = _("Sending…");
    bar.dataset.state = "sending";
    startRun(url, { code: code }, function (run) {
      state.textContent = stateText(run);
      bar.dataset.state = run.state;
    }, function (run) {
      button.disabled = false;
      bar.dataset.state = run.state || "refused";
      output.hidden = false;
      var result = run.result;
      output.classList.toggle("failed", !result || !result.ok);
      if (!result) {
        state.textContent = run.state === "failed" ? _("Could not run") : "";
        output.textContent = run.error || _("The server answered with an error.");
        return;
      }
      var text = result.stdout || "";
      if (result.stderr) text += (text ? "\n" : "") + result.stderr;
      if (result.truncated) text += "\n" + _("[output cut short]");
      output.textContent = text || _("(no output)");
      var what = result.ok ? _("finished") : result.status === "timeout" ? _("ran out of time")
        : result.status === "memory" ? _("ran out of memory") : fmt(_("exited with %s"), [result.exit_code]);
      state.textContent = fmt(_("%(what)s in %(s)s s"), { what: what, s: result.wall_s.toFixed(2) }, true);
    });
  }

  var article = document.querySelector("article.lesson");
  document.querySelectorAll("figure.runnable").forEach(function (figure) {
    figure.querySelector(".run-code").addEventListener("click", function () {
      runInto(article.dataset.runUrl, figure.querySelector("pre code").textContent,
              figure.querySelector(".run-bar"), figure.querySelector(".run-output"));
    });
  });
  var playground = document.getElementById("playground");
  if (playground) {
    playground.addEventListener("submit", function (event) {
      event.preventDefault();
      runInto(playground.dataset.runUrl, playground.querySelector("textarea").value,
              playground.querySelector(".run-bar"), playground.querySelector(".run-output"));
    });
  }

  /* ---- a step player: play, pause, step, reset ------------------------------------- */
  function Player(root, total, render) {
    var self = this, timer = null;
    self.position = 0;
    function show() {
      render(self.position);
      root.querySelector(".step-counter").textContent = fmt(_("step %(n)s of %(total)s"), { n: self.position, total: total() }, true);
      root.querySelector("[data-action=step]").disabled = self.position >= total();
    }
    self.step = function () { if (self.position < total()) { self.position += 1; show(); } else self.pause(); };
    self.pause = function () { if (timer) { clearInterval(timer); timer = null; } root.classList.remove("playing"); };
    self.play = function () {
      if (self.position >= total()) self.position = 0;
      self.pause(); root.classList.add("playing"); timer = setInterval(self.step, 900);
    };
    self.reset = function () { self.pause(); self.position = 0; show(); };
    ["play", "pause", "step", "reset"].forEach(function (action) {
      root.querySelector("[data-action=" + action + "]").addEventListener("click", function () { self[action](); });
    });
    self.show = show;
  }

  /* ---- static versus dynamic execution ------------------------------------------------ */
  function executionViz(root, viz) {
    var traces = viz.traces, select = root.querySelector(".program-select");
    traces.forEach(function (trace, index) {
      var option = document.createElement("option");
      var name = trace.program === "seed" ? _("The article's demo") : _("A data-dependent branch");
      option.value = index;
      option.textContent = name + ": " + Object.keys(trace.inputs).map(function (k) { return k + " = " + trace.inputs[k]; }).join(", ");
      select.appendChild(option);
    });
    var current, views = {};

    function staticGraph(steps) {
      var nodes = [], edges = [];
      steps.forEach(function (s) {
        if (s.phase !== "define") return;
        var constant = s.op === "constant";
        nodes.push({ id: s.node, label: constant ? GraphView.formatValue(s.value) : s.node, sub: s.op });
        s.inputs.forEach(function (i) { edges.push([i, s.node]); });
      });
      return { nodes: nodes, edges: edges };
    }
    function eagerGraph(steps) {
      var nodes = [], edges = [];
      steps.forEach(function (s) {
        nodes.push({ id: s.node, label: s.node, sub: s.phase === "leaf" ? _("leaf") : s.op });
        (s.inputs || []).forEach(function (input, k) {
          var known = steps.some(function (o) { return o.node === input; });
          if (!known) { var id = s.node + ":" + k; nodes.push({ id: id, label: input, sub: _("constant") }); input = id; }
          edges.push([input, s.node]);
        });
      });
      return { nodes: nodes, edges: edges };
    }

    function load(index) {
      current = traces[index];
      ["static", "eager"].forEach(function (engine) {
        var column = root.querySelector("[data-engine=" + engine + "]");
        var steps = current[engine].steps;
        var graph = engine === "static" ? staticGraph(steps) : eagerGraph(steps);
        views[engine] = { column: column, steps: steps,
          drawn: GraphView.draw(column.querySelector(".graph"), graph.nodes, graph.edges,
                                { title: engine === "static" ? _("Static graph") : _("Eager tape") }) };
        column.querySelector(".source").textContent = current[engine].source;
      });
      player.reset();
    }

    function renderStatic(view, n) {
      var shown = view.steps.slice(0, n), values = {}, defined = {}, plan = null, last = shown[shown.length - 1];
      shown.forEach(function (s) {
        if (s.phase === "define") defined[s.node] = true;
        if (s.phase === "compile") plan = s;
        if (s.phase === "run") values[s.node] = s.value;
      });
      Object.keys(view.drawn.nodes).forEach(function (id) {
        var g = view.drawn.nodes[id];
        g.classList.toggle("hidden", !defined[id]);
        g.classList.toggle("symbolic", !!defined[id] && !(id in values));
        g.classList.toggle("removed", !!plan && plan.plan.indexOf(id) < 0);
        g.classList.toggle("computed", id in values);
        g.classList.toggle("current", !!last && last.node === id);
        g.querySelector(".sub").textContent = id in values ? "= " + GraphView.formatValue(values[id]) : g.dataset.sub;
      });
      view.drawn.edges.forEach(function (e) { e.classList.toggle("hidden", !defined[e.dataset.to]); });
      var state = !n ? _("No graph yet: press Step or Play.") : !plan ? _("The graph is being described: nodes exist, values do not.")
        : fmt(_("Compiled and frozen: a plan of %(k)s kernels; no op may be added now."), { k: plan.kernels }, true);
      view.column.querySelector(".graph-state").textContent = state;
      view.column.querySelector(".step-text").textContent = !last ? "" : last.phase === "define" && last.op === "constant"
        ? fmt(_("define %(node)s = the constant %(value)s, known before any run"), { node: last.node, value: GraphView.formatValue(last.value) }, true)
        : last.phase === "define"
        ? fmt(_("define %(node)s = %(op)s(%(inputs)s): no value yet"), { node: last.node, op: last.op, inputs: last.inputs.join(", ") }, true)
        : last.phase === "compile"
        ? fmt(ngettext("compile: %(passes)s passes; %(removed)s node left out of the plan",
                     "compile: %(passes)s passes; %(removed)s nodes left out of the plan",
                     Object.keys(defined).length - last.plan.length), { passes: last.passes.length,
            removed: Object.keys(defined).length - last.plan.length }, true)
        : fmt(_("run %(node)s → %(value)s"), { node: last.node, value: GraphView.formatValue(last.value) }, true);
      view.column.dataset.phase = last ? last.phase : "";
    }

    function renderEager(view, n) {
      var shown = view.steps.slice(0, n), present = {}, last = shown[shown.length - 1], taped = 0;
      shown.forEach(function (s) { present[s.node] = s; if (s.taped) taped += 1; });
      Object.keys(view.drawn.nodes).forEach(function (id) {
        var owner = id.indexOf(":") > 0 ? id.split(":")[0] : id, g = view.drawn.nodes[id];
        g.classList.toggle("hidden", !present[owner]);
        g.classList.toggle("computed", !!present[owner]);
        g.classList.toggle("current", !!last && last.node === owner && owner === id);
        if (present[id]) g.querySelector(".sub").textContent = "= " + GraphView.formatValue(present[id].value);
      });
      view.drawn.edges.forEach(function (e) { e.classList.toggle("hidden", !present[e.dataset.to.split(":")[0]]); });
      view.column.querySelector(".graph-state").textContent = !n ? _("No graph yet: press Step or Play.")
        : fmt(ngettext("The tape holds %(k)s op so far; it grows as each line runs.",
                     "The tape holds %(k)s ops so far; it grows as each line runs.", taped), { k: taped }, true);
      view.column.querySelector(".step-text").textContent = !last ? "" : last.phase === "leaf"
        ? fmt(_("%(node)s = tensor(%(value)s): the value exists at once"), { node: last.node, value: GraphView.formatValue(last.value) }, true)
        : fmt(_("%(node)s = %(op)s(%(inputs)s) → %(value)s%(tape)s"), { node: last.node, op: last.op, inputs: last.inputs.join(", "),
            value: GraphView.formatValue(last.value), tape: last.taped ? _(", recorded on the tape") : "" }, true);
      view.column.dataset.phase = last ? last.phase : "";
    }

    var player = new Player(root, function () {
      return Math.max(views.static.steps.length, views.eager.steps.length);
    }, function (n) { renderStatic(views.static, n); renderEager(views.eager, n); });
    select.addEventListener("change", function () { load(+select.value); });
    load(0);
  }

  /* ---- the first lesson's picture: one tiny expression as the static engine built it ----- */
  function expressionViz(root, viz) {
    var nodes = viz.nodes.map(function (n) { return { id: n.node, label: n.node, sub: n.op }; });
    var edges = [];
    viz.nodes.forEach(function (n) { n.inputs.forEach(function (i) { edges.push([i, n.node]); }); });
    var drawn = GraphView.draw(root.querySelector(".graph"), nodes, edges, { title: root.querySelector("h2").textContent });
    var button = root.querySelector("[data-action=run]");
    function show(ran) {
      viz.nodes.forEach(function (n) {
        var g = drawn.nodes[n.node];
        g.classList.toggle("symbolic", !ran);
        g.classList.toggle("computed", ran);
        g.querySelector(".sub").textContent = ran ? n.op + " = " + GraphView.formatValue(viz.values[n.node]) : n.op;
      });
      root.querySelector("[data-state=defined]").hidden = ran;
      root.querySelector("[data-state=ran]").hidden = !ran;
      button.setAttribute("aria-pressed", ran ? "true" : "false");
      root.dataset.ran = ran ? "true" : "false";
    }
    button.addEventListener("click", function () { show(root.dataset.ran !== "true"); });
    show(false);
  }

  /* ---- build -> compile flow ------------------------------------------------------------ */
  function flowViz(root, viz) {
    var flow = viz.flow, index = 0;
    var list = root.querySelector(".pass-list"), counts = root.querySelector(".flow-counts tbody");
    var PASS_NAMES = {
      order: _("order (topological sort)"), dead_code: _("dead code"), infer_shapes: _("shape inference"),
      fold_constants: _("constant folding"), simplify: _("simplification"), common_subexpressions: _("common subexpressions"),
      dead_code_after_optimize: _("dead code, again"), fuse_elementwise: _("fusion"), plan_memory: _("memory plan")
    };
    var PASS_HELP = {
      order: _("Sort the nodes so that each comes after its inputs; refuse cycles and missing inputs."),
      dead_code: _("Drop every node that no requested output needs."),
      infer_shapes: _("Give every node its shape and dtype, so mistakes surface before any run."),
      fold_constants: _("Compute at compile time what depends on constants only."),
      simplify: _("Remove ops that leave their input unchanged, such as x * 1 or x + 0."),
      common_subexpressions: _("Merge nodes that repeat an earlier computation on the same inputs."),
      dead_code_after_optimize: _("Drop what the optimisations left unused."),
      fuse_elementwise: _("Turn chains of elementwise ops into one kernel that reads each value once."),
      plan_memory: _("Give intermediate values pooled buffers, reusing memory whose value is no longer needed.")
    };
    function signature(n) { return [n.op, n.inputs.join(","), (n.body || []).map(function (b) { return b.op; }).join(">"), n.buffer].join("|"); }
    function render() {
      var stage = flow.stages[index], before = index ? flow.stages[index - 1] : null, old = {};
      (before ? before.nodes : []).forEach(function (n) { old[n.name] = n; });
      var nodes = stage.nodes.map(function (n) {
        var sub = n.body ? n.body.map(function (b) { return b.op; }).join("→") : n.op;
        if (n.buffer !== null && n.buffer !== undefined) sub += " #" + n.buffer;
        return { id: n.name, label: n.name, sub: sub };
      });
      var edges = [];
      stage.nodes.forEach(function (n) { n.inputs.forEach(function (i) { edges.push([i, n.name]); }); });
      var drawn = GraphView.draw(root.querySelector(".graph"), nodes, edges, { title: PASS_NAMES[stage.pass] || stage.pass });
      var changed = 0;
      stage.nodes.forEach(function (n) {
        var g = drawn.nodes[n.name];
        if (stage.outputs.indexOf(n.name) >= 0) g.classList.add("output");
        if (before && (!old[n.name] || signature(old[n.name]) !== signature(n))) { g.classList.add("changed"); changed += 1; }
      });
      var removed = before ? before.nodes.filter(function (n) { return !stage.nodes.some(function (m) { return m.name === n.name; }); }) : [];
      root.querySelector(".pass-title").textContent = fmt(_("After pass %(k)s of %(n)s: %(name)s"),
        { k: index + 1, n: flow.stages.length, name: PASS_NAMES[stage.pass] || stage.pass }, true);
      // The engine's own note (with its counts) is English; the explanation comes in both languages.
      root.querySelector(".pass-notes").textContent = (PASS_HELP[stage.pass] || "") +
        (lang === "en" && stage.notes.length ? " (" + stage.notes.join("; ") + ")" : "");
      root.querySelector(".pass-diff").textContent = !before ? _("The graph as you built it, in execution order.")
        : fmt(ngettext("Changed or new: %(c)s node. Removed: %(r)s.", "Changed or new: %(c)s nodes. Removed: %(r)s.", changed), { c: changed,
            r: removed.length ? removed.map(function (n) { return n.name; }).join(", ") : _("none") }, true);
      root.querySelector("[data-action=prev]").disabled = index === 0;
      root.querySelector("[data-action=next]").disabled = index === flow.stages.length - 1;
      list.querySelectorAll("button").forEach(function (b, k) { b.setAttribute("aria-pressed", k === index ? "true" : "false"); });
      counts.querySelectorAll("tr").forEach(function (row, k) { row.classList.toggle("selected", k === index); });
      root.dataset.pass = stage.pass;
    }
    function load(newFlow) {
      flow = newFlow; index = 0;
      list.textContent = ""; counts.textContent = "";
      flow.stages.forEach(function (stage, k) {
        var item = document.createElement("li"), button = document.createElement("button");
        button.type = "button"; button.className = "link"; button.textContent = (k + 1) + ". " + (PASS_NAMES[stage.pass] || stage.pass);
        button.addEventListener("click", function () { index = k; render(); });
        item.appendChild(button); list.appendChild(item);
        var row = document.createElement("tr");
        [PASS_NAMES[stage.pass] || stage.pass, stage.node_count, stage.kernel_count, stage.peak_bytes].forEach(function (v) {
          var cell = document.createElement("td"); cell.textContent = v; row.appendChild(cell);
        });
        counts.appendChild(row);
      });
      render();
    }
    root.querySelector("[data-action=prev]").addEventListener("click", function () { if (index > 0) { index -= 1; render(); } });
    root.querySelector("[data-action=next]").addEventListener("click", function () { if (index < flow.stages.length - 1) { index += 1; render(); } });
    var form = root.querySelector("form.flow-editor"), state = form.querySelector(".run-state");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      button.disabled = true; state.textContent = _("Sending…");
      startRun(root.dataset.flowUrl, { source: form.querySelector("textarea").value }, function (run) {
        state.textContent = run.state === "running" ? _("Compiling in the sandbox…") : stateText(run);
      }, function (run) {
        button.disabled = false;
        var result = run.result;
        if (result && result.ok && result.flow) { state.textContent = _("Compiled. Step through the passes above."); load(result.flow); }
        else state.textContent = (result && result.error) || run.error || _("The program could not be compiled.");
      });
    });
    load(flow);
  }

  /* ---- performance-flexibility radar ----------------------------------------------------- */
  function wrapWords(text, width) {
    if (text.indexOf(" ") < 0) return text;
    var lines = [], line = "";
    text.split(" ").forEach(function (word) {
      if (line && (line + " " + word).length > width) { lines.push(line); line = word; } else { line = line ? line + " " + word : word; }
    });
    lines.push(line);
    return lines;
  }

  function radarViz(root, viz) {
    // Long axis names in lines of a few words (Chart.js draws an array as lines), or a phone
    // cuts "Deployment outside Python" at the canvas edge.
    var axes = viz.axes.map(function (a) { return wrapWords(local(a.name), 14); });
    var palette = ["#3657d6", "#c0392b", "#1f8a4c", "#b7791f", "#7a3fb0"];
    var datasets = viz.frameworks.map(function (f, k) {
      return { label: local(f.name), data: f.scores, borderColor: palette[k % 5], backgroundColor: palette[k % 5] + "22",
               pointRadius: 3, borderWidth: 2 };
    });
    if (window.Chart) {
      new Chart(root.querySelector("canvas"), { type: "radar", data: { labels: axes, datasets: datasets },
        // Axis names at 12 px and the legend below: at 390 px the labels took the chart's room.
        options: { animation: false, responsive: true, maintainAspectRatio: true, aspectRatio: 1,
                   plugins: { legend: { position: "bottom", labels: { boxWidth: 12, font: { size: 12 } } } },
                   scales: { r: { min: 0, max: 5, ticks: { stepSize: 1, font: { size: 11 } },
                                  pointLabels: { font: { size: 12 } } } } } });
    }
  }

  /* ---- selection guide ------------------------------------------------------------------------ */
  function guideViz(root, viz) {
    var form = root.querySelector("form"), out = root.querySelector(".recommendation");
    viz.questions.forEach(function (q) {
      var fieldset = document.createElement("fieldset"), legend = document.createElement("legend");
      legend.textContent = local(q.text); fieldset.appendChild(legend);
      q.answers.forEach(function (a, k) {
        var label = document.createElement("label"), input = document.createElement("input");
        input.type = "radio"; input.name = q.id; input.value = k; input.required = true;
        label.className = "option"; label.appendChild(input); label.appendChild(document.createTextNode(" " + local(a.text)));
        fieldset.appendChild(label);
      });
      form.insertBefore(fieldset, form.querySelector(".guide-submit"));
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var scores = {}, reasons = {}, allowed = null;
      viz.options.forEach(function (o) { scores[o.id] = 0; reasons[o.id] = []; });
      viz.questions.forEach(function (q) {
        var picked = form.querySelector("input[name=" + q.id + "]:checked");
        if (!picked) return;
        var answer = q.answers[+picked.value];
        Object.keys(answer.scores || {}).forEach(function (id) {
          scores[id] += answer.scores[id];
          if (answer.scores[id] > 0 && answer.reason) reasons[id].push(local(answer.reason));
        });
        /* A hard constraint (code that must run outside Python) rules options out, whatever
           they score on the other answers. */
        if (answer.requires) {
          allowed = (allowed || answer.requires).filter(function (id) { return answer.requires.indexOf(id) >= 0; });
        }
      });
      var candidates = viz.options.filter(function (o) { return !allowed || allowed.indexOf(o.id) >= 0; });
      var top = Math.max.apply(null, candidates.map(function (o) { return scores[o.id]; }));
      /* Options with the same top score are all shown, in the file's order: a tie is not
         decided by whichever option happens to come first. */
      var best = candidates.filter(function (o) { return scores[o.id] === top; });
      var list = out.querySelector(".rec-options"), template = root.querySelector(".rec-option-template");
      list.textContent = "";
      best.forEach(function (option) {
        var block = template.content.firstElementChild.cloneNode(true);
        block.dataset.option = option.id;
        block.querySelector(".rec-title").textContent = local(option.name);
        block.querySelector(".rec-summary").textContent = local(option.summary);
        function fill(selector, items, link) {
          var ul = block.querySelector(selector);
          items.forEach(function (item) {
            var li = document.createElement("li");
            if (link) { var a = document.createElement("a"); a.href = item.href; a.textContent = local(item.text); li.appendChild(a); }
            else li.textContent = item;
            ul.appendChild(li);
          });
        }
        fill(".rec-reasons", reasons[option.id].length ? reasons[option.id] : [local(option.summary)]);
        fill(".rec-pitfalls", option.pitfalls, true);
        fill(".rec-next", option.next, true);
        list.appendChild(block);
      });
      out.querySelector(".rec-tie").hidden = best.length < 2;
      out.hidden = false;
      out.dataset.choice = best.map(function (o) { return o.id; }).join(" ");
      out.focus();
    });
  }

  var controllers = { "expression-graph": expressionViz, "static-vs-dynamic": executionViz, "compile-flow": flowViz, radar: radarViz, "selection-guide": guideViz };
  document.querySelectorAll("[data-viz]").forEach(function (root) {
    var name = root.dataset.viz;
    if (controllers[name] && data[name]) controllers[name](root, data[name]);
  });
})();
