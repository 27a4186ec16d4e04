// ctxframe serve: search -> hits -> card + neighbourhood picture; hubs; boundaries.
// Talks only to this server's /api/ (the verbs' JSON); builds the DOM with textContent only.
"use strict";
// -- shared with the notebook pictures (ctxframe/_render/templates/focus.js; a test keeps them equal)
// Frame a vis-network picture around its focus node(s): once the layout settles (or at once
// when every node has its place), and again whenever the frame changes size, every node is
// inside the frame and the focus is in the middle. `done` is called after each framing.
function ctxframeFocus(net, centre, done) {
  function frame() {
    var box = net.body.container;
    var w = box.clientWidth, h = box.clientHeight;
    if (w < 20 || h < 20) return;  // not laid out yet (a hidden tab); the resize comes later
    var pos = net.getPositions();
    var ids = Object.keys(pos);
    if (!ids.length) return;
    var focus = centre.filter(function (id) { return pos[id]; });
    if (!focus.length) focus = ids;
    var cx = 0, cy = 0;
    focus.forEach(function (id) { cx += pos[id].x; cy += pos[id].y; });
    cx /= focus.length; cy /= focus.length;
    var dx = 1, dy = 1;
    ids.forEach(function (id) {
      var b = net.getBoundingBox(id);
      if (!b) return;
      dx = Math.max(dx, Math.abs(b.left - cx), Math.abs(b.right - cx));
      dy = Math.max(dy, Math.abs(b.top - cy), Math.abs(b.bottom - cy));
    });
    var scale = Math.min((w / 2 - 12) / dx, (h / 2 - 12) / dy, 1.25);
    net.moveTo({ position: { x: cx, y: cy }, scale: scale });
    box.setAttribute("data-framed", "1");
    if (done) done();
  }
  if (net.physics.options.enabled === false) {
    net.once("afterDrawing", function () { setTimeout(frame, 0); });
  } else {
    net.once("stabilizationIterationsDone", function () {
      net.setOptions({ physics: false });
      frame();
    });
  }
  net.on("resize", function () { setTimeout(frame, 0); });
  if (window.ResizeObserver) {  // shown after being hidden (a tab, a scrolled-away cell)
    var watch = new ResizeObserver(function () {
      if (!net.canvas || !net.body) { watch.disconnect(); return; }  // destroyed meanwhile
      net.canvas.setSize();
      frame();
    });
    watch.observe(net.body.container);
  }
  net.ctxframeFrame = frame;
  return frame;
}
// -- end of shared part
(function () {
  var style = null;
  var network = null;
  var current = { query: "", selected: null };
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  function api(path, params) {
    var qs = new URLSearchParams(params || {}).toString();
    return fetch("/api/" + path + (qs ? "?" + qs : ""), { headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); });
  }

  function badge(kind) {
    var b = el("span", { cls: "badge", text: kind || "?" });
    var colour = (style && style.kinds[kind]) || (style ? style.default : "#888");
    b.style.background = colour;
    b.style.color = style && style.dark_text.indexOf(kind) >= 0 ? "#222" : "#fff";
    return b;
  }

  function where(n) {
    if (!n.path) return el("i", { text: "outside the repo" });
    var loc = n.path;
    if (n.line_start !== null && n.line_start !== undefined) loc += ":L" + n.line_start + "-L" + (n.line_end || n.line_start);
    return el("code", { text: loc });
  }

  function conf(c) {
    if (c === "EXTRACTED") return null;
    return el("span", { cls: "conf " + (c || ""), text: " (" + (c || "unresolved").toLowerCase() + ")" });
  }

  function table(head, rows) {
    var t = el("table");
    if (head.length) t.appendChild(el("tr", {}, head.map(function (h) { return el("th", { text: h }); })));
    rows.forEach(function (r) { t.appendChild(r); });
    return t;
  }

  function td() { return el("td", {}, Array.prototype.slice.call(arguments)); }

  // -- search ------------------------------------------------------------------------------------
  function search() {
    var q = $("q").value.trim();
    if (!q) return;
    current.query = q;
    $("status").textContent = "searching…";
    api("query", { q: q, rule: $("rule").value, limit: 20 }).then(function (res) {
      if (q !== current.query) return;  // a newer query is on its way
      if (res.error) { $("status").textContent = typeof res.error === "string" ? res.error : res.error.message; return; }
      showHits(res);
    });
  }

  function showHits(res) {
    var box = $("hits");
    box.textContent = "";
    $("status").textContent = res.hits.length + " of " + res.total + " hits for “" + res.query + "” · rule " + res.rule;
    if (!res.hits.length) { box.appendChild(el("p", { cls: "muted", text: "no matches" })); return; }
    var rows = res.hits.map(function (h) {
      var sig = h.signature ? el("div", { cls: "sig", text: h.signature.slice(0, 100) }) : null;
      var tr = el("tr", { cls: "hit", "data-id": h.id }, [
        td(String(h.rank)),
        td(el("b", { text: h.label }), " ", badge(h.kind), sig),
        td(where(h)),
      ]);
      tr.addEventListener("click", function () { select(h.id); });
      return tr;
    });
    box.appendChild(table(["#", "name · signature", "where"], rows));
  }

  function select(id) {
    current.selected = id;
    document.querySelectorAll("tr.hit").forEach(function (tr) {
      tr.classList.toggle("selected", tr.getAttribute("data-id") === id);
    });
    api("card", { name: id }).then(function (c) { if (current.selected === id) showCard(c); });
    $("net").setAttribute("data-state", "loading");
    api("neighbourhood", { name: id, depth: $("depth").value }).then(function (nb) {
      if (current.selected === id) draw(nb);
    });
  }

  var SECTIONS = [
    ["callers", "in", ["calls"], "←"], ["callees", "out", ["calls"], "→"],
    ["members", "out", ["contains"], "→"], ["extends/implements", "out", ["extends", "implements"], "→"],
    ["subtypes", "in", ["extends", "implements"], "←"], ["imports", "out", ["imports"], "→"],
    ["imported by", "in", ["imports"], "←"], ["mentioned by", "in", ["mentions"], "←"],
  ];

  function showCard(c) {
    var box = $("card");
    box.textContent = "";
    if (c.status !== "ok") {
      box.appendChild(el("p", { text: c.error ? c.error.message : c.status }));
      (c.error ? c.error.candidates : []).forEach(function (n) {
        var p = el("p", { cls: "pick" }, [el("b", { text: n.qualname || n.label || n.id }), " ", badge(n.kind), " ", where(n)]);
        p.addEventListener("click", function () { select(n.id); });
        box.appendChild(p);
      });
      return;
    }
    var n = c.node;
    box.appendChild(el("p", {}, [el("b", { text: n.qualname || n.label }), " ", badge(n.kind), " ", where(n)]));
    var facts = [el("tr", {}, [td("id"), td(el("code", { text: n.id }))])];
    if (n.signature) facts.push(el("tr", {}, [td("signature"), td(el("span", { cls: "sig", text: n.signature }))]));
    if (n.doc) facts.push(el("tr", {}, [td("doc"), td(n.doc.split("\n")[0])]));
    box.appendChild(table([], facts));
    SECTIONS.forEach(function (s) {
      var rows = c.arrows.filter(function (a) { return a.direction === s[1] && s[2].indexOf(a.edge_kind) >= 0; });
      if (!rows.length) return;
      box.appendChild(el("h3", { text: s[0] + " (" + rows.length + ")" }));
      box.appendChild(table([], rows.map(function (a) {
        var name = el("span", { text: a.other_label });
        var tr = el("tr", { cls: a.other_id ? "pick" : "" }, [
          td(s[3] + " " + a.edge_kind), td(a.other_kind ? badge(a.other_kind) : ""), td(name, conf(a.confidence)),
        ]);
        if (a.other_id) tr.addEventListener("click", function () { select(a.other_id); });
        return tr;
      })));
    });
  }

  function draw(nb) {
    var box = $("net");
    var legend = $("legend");
    legend.textContent = "";
    if (network) { network.destroy(); network = null; }
    if (nb.error) { box.setAttribute("data-state", "error"); return; }
    var counts = {};
    nb.nodes.forEach(function (n) { counts[n.kind] = (counts[n.kind] || 0) + 1; });
    legend.appendChild(el("b", { text: "neighbourhood of " + nb.name + " · depth " + nb.depth }));
    Object.keys(counts).sort().forEach(function (k) { legend.appendChild(badge(k)); legend.lastChild.textContent += " " + counts[k]; });
    legend.appendChild(el("span", { text: "── extracted" }));
    legend.appendChild(el("span", { cls: "conf", text: "── inferred" }));
    legend.appendChild(el("span", { cls: "conf AMBIGUOUS", text: "- - ambiguous" }));
    var more = nb.more.reduce(function (s, m) { return s + m.count; }, 0);
    if (more) legend.appendChild(el("span", { cls: "more", text: "+" + more + " more not drawn" }));
    var data = { nodes: new vis.DataSet(nb.vis.nodes), edges: new vis.DataSet(nb.vis.edges) };
    network = new vis.Network(box, data, nb.vis.options);
    box.setAttribute("data-nodes", String(nb.vis.nodes.length));
    box.setAttribute("data-state", "drawing");
    ctxframeFocus(network, nb.centre, function () { box.setAttribute("data-state", "drawn"); });
    network.on("doubleClick", function (p) {
      if (p.nodes.length && String(p.nodes[0]).indexOf("more:") !== 0) select(p.nodes[0]);
    });
    window.ctxframeNetwork = network;
  }

  // -- hubs and boundaries -------------------------------------------------------------------------
  function pickRow(cells, id) {
    var tr = el("tr", { cls: "pick" }, cells);
    tr.addEventListener("click", function () {
      // the hits of an earlier search no longer belong to what is shown: clear them
      current.query = "";
      $("q").value = "";
      $("hits").textContent = "";
      $("status").textContent = "picked from " + (tr.closest("[id^=tab-]") || { id: "tab-hubs" }).id.slice(4) + ": " + id;
      showTab("search");
      select(id);
    });
    return tr;
  }

  function showHubs(h) {
    var box = $("tab-hubs");
    box.textContent = "";
    box.appendChild(el("h3", { text: "most depended-on (in-degree, PageRank)" }));
    box.appendChild(table(["in", "rank", "kind", "name", "where"], h.depended.map(function (r) {
      return pickRow([td(String(r.in_degree)), td(r.pagerank.toFixed(4)), td(badge(r.kind)), td(el("b", { text: r.qualname || r.label })), td(where(r))], r.id);
    })));
    box.appendChild(el("h3", { text: "largest files" }));
    box.appendChild(table(["lines", "path"], h.largest_files.map(function (r) {
      return pickRow([td(String(r.lines)), td(el("code", { text: r.path }))], r.path);
    })));
    box.appendChild(el("h3", { text: "entry points" }));
    box.appendChild(table(["why", "kind", "name", "where"], h.entry_points.map(function (r) {
      return pickRow([td(r.why), td(badge(r.kind)), td(el("b", { text: r.qualname || r.label })), td(where(r))], r.id);
    })));
    box.appendChild(el("h3", { text: "directories by size" }));
    box.appendChild(table(["directory", "files", "lines", "symbols"], h.directories.map(function (r) {
      return el("tr", {}, [td(el("code", { text: r.directory })), td(String(r.files)), td(String(r.lines)), td(String(r.symbols))]);
    })));
  }

  function showBoundaries(b) {
    var box = $("tab-boundaries");
    box.textContent = "";
    if (b.status !== "ok") { box.appendChild(el("p", { cls: "muted", text: b.error ? b.error.message : b.status })); return; }
    // Any boundaries result: each list of records becomes a table.
    Object.keys(b).forEach(function (key) {
      var v = b[key];
      if (!Array.isArray(v) || !v.length || typeof v[0] !== "object") return;
      var cols = Object.keys(v[0]);
      box.appendChild(el("h3", { text: key + " (" + v.length + ")" }));
      box.appendChild(table(cols, v.map(function (r) {
        return el("tr", {}, cols.map(function (c) { return td(r[c] === null ? "" : String(r[c])); }));
      })));
    });
    if (!box.childNodes.length) box.appendChild(el("p", { cls: "muted", text: "no boundaries found" }));
  }

  var loaded = {};
  function showTab(name) {
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.classList.toggle("active", b.getAttribute("data-tab") === name);
    });
    ["search", "hubs", "boundaries"].forEach(function (t) { $("tab-" + t).hidden = t !== name; });
    if (name === "hubs" && !loaded.hubs) { loaded.hubs = true; api("hubs", { top: 10 }).then(showHubs); }
    if (name === "boundaries" && !loaded.boundaries) { loaded.boundaries = true; api("boundaries").then(showBoundaries); }
  }

  // -- start ---------------------------------------------------------------------------------------
  var timer = null;
  $("qform").addEventListener("submit", function (ev) { ev.preventDefault(); clearTimeout(timer); search(); });
  $("q").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 300); });
  $("rule").addEventListener("change", search);
  $("depth").addEventListener("change", function () { if (current.selected) select(current.selected); });
  document.querySelectorAll("#tabs button").forEach(function (b) {
    b.addEventListener("click", function () { showTab(b.getAttribute("data-tab")); });
  });
  Promise.all([api("style"), api("summary")]).then(function (got) {
    style = got[0];
    var s = got[1];
    $("repo").textContent = (s.root || "") + " · " + s.files + " files · " + s.nodes_total + " nodes · " + s.edges_total + " edges";
    s.rules.forEach(function (r) { $("rule").appendChild(el("option", { value: r, text: r })); });
    document.body.setAttribute("data-ready", "1");
  });
})();
