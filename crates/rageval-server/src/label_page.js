// The labelling page's script (rageval label): shows one item at a time from
// /api/state, saves each label with POST /api/labels, and shows the judge's outcome only
// once the label is saved. Data is set as text, never as markup. <main>'s data-position
// (1-based; items + 1 when done) and data-state (loading, unlabelled, saving, saved,
// error, done) say where the page is.
(function () {
  "use strict";
  var main = document.getElementById("labelling");
  var state = null;
  var words = {};
  var position = 0;
  var busy = false;
  var statusText = "";

  function el(id) {
    return document.getElementById(id);
  }

  function fill(template, values) {
    return String(template).replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  function labelText(label) {
    if (label === true) return words.yes;
    if (label === false) return words.no;
    return String(label);
  }

  function labelledCount() {
    return state.items.filter(function (entry) { return entry.label !== null; }).length;
  }

  function setText(id, value) {
    el(id).textContent = value === null || value === undefined || value === "" ? words.none : value;
  }

  function renderJudge(outcome) {
    var score = el("judge-score");
    if (outcome.status === "score") {
      score.textContent = fill(words.score, { value: Number(outcome.value).toFixed(4) });
    } else if (outcome.status === "undefined") {
      score.textContent = fill(words.undefined, { reason: outcome.reason });
    } else {
      score.textContent = fill(words.failed, { error: outcome.error });
    }
    var list = el("judge-verdicts");
    list.replaceChildren();
    var verdicts = (outcome.evidence && outcome.evidence.verdicts) || [];
    verdicts.forEach(function (verdict) {
      var item = document.createElement("li");
      var target = verdict.target ? verdict.target.kind + " " + (verdict.target.index + 1) : "";
      var parts = [target + ": " + (verdict.label || verdict.value)];
      if (verdict.text) parts.push("“" + verdict.text + "”");
      if (verdict.reason) parts.push(verdict.reason);
      item.textContent = parts.join(" — ");
      list.appendChild(item);
    });
  }

  function show() {
    var total = state.items.length;
    main.dataset.position = String(position + 1);
    main.dataset.labelled = String(labelledCount());
    var done = position >= total;
    el("item").hidden = done;
    document.querySelector(".choices").hidden = done;
    el("done").hidden = !done;
    el("progress").textContent = fill(words.progress, {
      position: Math.min(position + 1, total),
      total: total,
      labelled: labelledCount()
    });
    el("status").textContent = statusText;
    if (done) {
      el("done-heading").textContent = fill(words.done, { total: total });
      el("done-file").textContent = fill(words.done_file, { file: state.labels_file });
      el("done-commands").textContent = state.next_commands.join("\n");
      el("judge").hidden = true;
      el("judge-hidden").hidden = true;
      main.dataset.state = "done";
      return;
    }
    var entry = state.items[position];
    var item = entry.item;
    setText("question", item.question);
    setText("answer", item.answer);
    setText("reference", item.reference);
    var stratum = el("stratum");
    stratum.hidden = !item.stratum;
    stratum.textContent = item.stratum ? fill(words.stratum, { stratum: item.stratum }) : "";
    var contexts = el("contexts");
    contexts.replaceChildren();
    item.contexts.forEach(function (text) {
      var li = document.createElement("li");
      li.className = "text";
      li.textContent = text;
      contexts.appendChild(li);
    });
    document.querySelectorAll("[data-label]").forEach(function (button) {
      var pressed = entry.label !== null && JSON.stringify(entry.label) === button.dataset.label;
      button.setAttribute("aria-pressed", pressed ? "true" : "false");
    });
    var labelled = entry.label !== null && entry.judge;
    el("judge").hidden = !labelled;
    el("judge-hidden").hidden = !!labelled;
    if (labelled) renderJudge(entry.judge);
    main.dataset.state = entry.label === null ? "unlabelled" : "saved";
  }

  function save(label) {
    if (busy || position >= state.items.length) return;
    var entry = state.items[position];
    busy = true;
    main.dataset.state = "saving";
    fetch("/api/labels", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: entry.item.id, label: label })
    })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.error || response.statusText);
          return body;
        });
      })
      .then(function (body) {
        entry.label = body.label;
        entry.judge = body.judge;
        statusText = fill(words.saved, { label: labelText(body.label) });
        busy = false;
        show();
      })
      .catch(function (error) {
        busy = false;
        statusText = fill(words.not_saved, { error: error.message });
        el("status").textContent = statusText;
        main.dataset.state = "error";
      });
  }

  function go(step) {
    if (busy) return;
    position = Math.max(0, Math.min(state.items.length, position + step));
    statusText = "";
    show();
    window.scrollTo(0, 0);
    el("contexts").scrollTop = 0;
  }

  document.addEventListener("keydown", function (event) {
    if (!state || event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key;
    var graded = state.scale === "graded";
    if (graded && /^[1-9]$/.test(key) && Number(key) <= state.top_grade) {
      save(Number(key));
    } else if (!graded && (key === "y" || key === "Y")) {
      save(true);
    } else if (!graded && (key === "n" || key === "N")) {
      save(false);
    } else if (key === "ArrowRight" || (graded && (key === "n" || key === "N"))) {
      go(1);
    } else if (key === "ArrowLeft" || key === "b" || key === "B") {
      go(-1);
    } else {
      return;
    }
    event.preventDefault();
  });

  document.querySelectorAll("[data-label]").forEach(function (button) {
    button.addEventListener("click", function () {
      if (state) save(JSON.parse(button.dataset.label));
    });
  });
  el("back").addEventListener("click", function () { if (state) go(-1); });
  el("next").addEventListener("click", function () { if (state) go(1); });

  fetch("/api/state")
    .then(function (response) { return response.json(); })
    .then(function (body) {
      state = body;
      words = body.text;
      position = body.start;
      show();
    })
    .catch(function (error) {
      el("progress").textContent = String(error);
      main.dataset.state = "error";
    });
})();
