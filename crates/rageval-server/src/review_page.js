// The review page's script (rageval label TESTSET.jsonl): shows one generated item at a
// time from /api/state and saves each decision with POST /api/decisions. Data is set as
// text, never as markup. <main>'s data-position (1-based; items + 1 when done) and
// data-state (loading, undecided, editing, saving, saved, error, done) say where it is.
(function () {
  "use strict";
  var main = document.getElementById("review");
  var state = null;
  var position = 0;
  var busy = false;
  var statusText = "";

  function el(id) {
    return document.getElementById(id);
  }

  function decidedCount() {
    return state.items.filter(function (entry) { return entry.decision !== null; }).length;
  }

  function list(id, texts, prefixes) {
    var node = el(id);
    node.replaceChildren();
    texts.forEach(function (text, index) {
      var li = document.createElement("li");
      li.className = "text";
      li.textContent = prefixes && prefixes[index] ? "[" + prefixes[index] + "] " + text : text;
      node.appendChild(li);
    });
  }

  function closeForms() {
    el("edit-form").hidden = true;
    el("reject-form").hidden = true;
  }

  function describe(decision) {
    if (decision.decision === "reject") return "rejected: " + decision.reason;
    if (decision.decision === "edit") return "edited (as generated: " + state.items[position].item.reference.join(" ") + ")";
    return "accepted";
  }

  function show() {
    var total = state.items.length;
    var done = position >= total;
    main.dataset.position = String(position + 1);
    main.dataset.decided = String(decidedCount());
    el("item").hidden = done;
    document.querySelector(".panel").hidden = done;
    el("done").hidden = !done;
    el("progress").textContent = "Item " + Math.min(position + 1, total) + " of " + total +
      " · " + decidedCount() + " decided";
    el("status").textContent = statusText;
    closeForms();
    if (done) {
      el("done-heading").textContent = "All " + total + " items have a decision.";
      el("done-file").textContent = state.review_file;
      el("done-command").textContent = state.summary_command;
      main.dataset.state = "done";
      return;
    }
    var entry = state.items[position];
    var item = entry.item;
    el("category").textContent = "Category: " + item.category + " · " + item.id;
    // An item kept with a gate failed (`testset --closed-book mark`) says so.
    var failedGates = el("failed-gates");
    failedGates.hidden = item.failed_gates.length === 0;
    failedGates.textContent = item.failed_gates.length === 0 ? "" :
      "Kept with a failed gate: " + item.failed_gates.join("; ");
    // A follow-up question shows the conversation it follows, each turn with its speaker.
    el("history").hidden = item.history.length === 0;
    list("history-turns", item.history.map(function (turn) {
      return (turn[0] === "user" ? "User: " : turn[0] === "assistant" ? "Assistant: " : turn[0] + ": ") + turn[1];
    }));
    // An edited item shows its edit; the status line keeps the generated reference.
    var edited = entry.decision && entry.decision.decision === "edit" ? entry.decision : null;
    el("question").textContent = edited && edited.question ? edited.question : item.question;
    el("reference").textContent = edited ? edited.reference : item.reference.join("\n");
    list("key-points", item.key_points);
    list("contexts", item.contexts, item.context_ids);
    var chosen = entry.decision ? entry.decision.decision : null;
    document.querySelectorAll("[data-decision]").forEach(function (button) {
      button.setAttribute("aria-pressed", button.dataset.decision === chosen ? "true" : "false");
    });
    if (entry.decision && !statusText) el("status").textContent = "Decided: " + describe(entry.decision);
    main.dataset.state = entry.decision === null ? "undecided" : "saved";
  }

  function save(body) {
    if (busy || position >= state.items.length) return;
    var entry = state.items[position];
    body.id = entry.item.id;
    busy = true;
    main.dataset.state = "saving";
    fetch("/api/decisions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    })
      .then(function (response) {
        return response.json().then(function (answer) {
          if (!response.ok) throw new Error(answer.error || response.statusText);
          return answer;
        });
      })
      .then(function (answer) {
        entry.decision = answer.decision;
        busy = false;
        statusText = "Saved: " + describe(answer.decision);
        position += 1;
        show();
        window.scrollTo(0, 0);
      })
      .catch(function (error) {
        busy = false;
        el("status").textContent = "Not saved: " + error.message;
        main.dataset.state = "error";
      });
  }

  function openForm(which) {
    if (position >= state.items.length) return;
    var entry = state.items[position];
    closeForms();
    if (which === "edit") {
      var earlier = entry.decision && entry.decision.decision === "edit" ? entry.decision : null;
      el("edit-reference").value = earlier ? earlier.reference : entry.item.reference.join("\n");
      el("edit-question").value = earlier && earlier.question ? earlier.question : entry.item.question;
      el("edit-form").hidden = false;
      el("edit-reference").focus();
    } else {
      var reason = entry.decision && entry.decision.decision === "reject" ? entry.decision.reason : "";
      el("reject-reason").value = reason;
      el("reject-form").hidden = false;
      el("reject-reason").focus();
    }
    main.dataset.state = "editing";
  }

  function saveEdit() {
    var item = state.items[position].item;
    var question = el("edit-question").value.trim();
    var body = { decision: "edit", reference: el("edit-reference").value };
    if (question && question !== item.question) body.question = question;
    save(body);
  }

  function go(step) {
    if (busy) return;
    position = Math.max(0, Math.min(state.items.length, position + step));
    statusText = "";
    show();
    window.scrollTo(0, 0);
  }

  el("edit-form").addEventListener("submit", function (event) {
    event.preventDefault();
    saveEdit();
  });
  el("reject-form").addEventListener("submit", function (event) {
    event.preventDefault();
    save({ decision: "reject", reason: el("reject-reason").value });
  });

  document.addEventListener("keydown", function (event) {
    if (!state) return;
    var inForm = event.target && event.target.closest && event.target.closest("form");
    if (inForm) {
      if (event.key === "Escape") {
        closeForms();
        main.dataset.state = "undecided";
        event.preventDefault();
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        inForm.requestSubmit();
        event.preventDefault();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key.toLowerCase();
    if (key === "a") save({ decision: "accept" });
    else if (key === "e") openForm("edit");
    else if (key === "r") openForm("reject");
    else if (key === "n" || event.key === "ArrowRight") go(1);
    else if (key === "b" || event.key === "ArrowLeft") go(-1);
    else return;
    event.preventDefault();
  });

  document.querySelectorAll("[data-decision]").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!state) return;
      if (button.dataset.decision === "accept") save({ decision: "accept" });
      else openForm(button.dataset.decision);
    });
  });
  el("back").addEventListener("click", function () { if (state) go(-1); });
  el("next").addEventListener("click", function () { if (state) go(1); });

  fetch("/api/state")
    .then(function (response) { return response.json(); })
    .then(function (body) {
      state = body;
      position = body.start;
      show();
    })
    .catch(function (error) {
      el("progress").textContent = String(error);
      main.dataset.state = "error";
    });
})();
