// dogana show: draws the page from the JSON in #dogana-data. Every text from the data is
// written with textContent or as an attribute value, never parsed as markup.
(function () {
  "use strict";
  var t0 = performance.now();
  var DATA = JSON.parse(document.getElementById("dogana-data").textContent);
  var STATES = ["unknown", "expired", "patched", "complete"];
  // Times arrive without the "+00:00" every one of them ends with.
  function utc(s) { return /[+-]\d\d:\d\d$/.test(s) ? s : s + "+00:00"; }
  var TIMES = DATA.times;
  // Receipts arrive as columns of indices into the table's texts. Each gets a small object
  // now (number, outcome, time, step) and the rest when it is first shown (full()).
  DATA.tables.forEach(function (tb) {
    var R = tb.receipts, S = tb.strs, out = [];
    for (var i = 0; i < R.o.length; i++) {
      out.push({ seq: i + 1, o: S[R.o[i]], rt: Date.parse(utc(R.ra[i])) / 1000, step: R.step[i], i: i });
    }
    tb.cols = R;
    tb.receipts = out;
  });
  function full(tb, r) {
    if (r.checks) return r;
    var R = tb.cols, S = tb.strs, i = r.i;
    function o(k) { return k < 0 ? null : S[k]; }
    var ck = R.checks[i], checks = [];
    for (var j = 0; j < ck.length; j += 3) checks.push([S[ck[j]], ck[j + 1], S[ck[j + 2]]]);
    r.shape = S[R.shape[i]]; r.cov = S[R.cov[i]]; r.pa = utc(R.pa[i]); r.ra = utc(R.ra[i]);
    r.src = o(R.src[i]); r.plan = o(R.plan[i]); r.since = o(R.since[i]); r.rows = R.rows[i];
    r.tomb = R.tomb[i]; r.pid = R.pid[i]; r.base = R.base[i]; r.checks = checks;
    return r;
  }
  // Integer windows send their values as numbers alone.
  DATA.tables.forEach(function (tb) {
    if (tb.vals === null) {
      tb.vals = tb.x.map(String);
      tb.ends = tb.x.map(function (n) { return (n - 1) + "]"; });
    }
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function time(i) { return i < 0 ? "unknown" : TIMES[i] + "+00:00"; }

  // ---- regions ---------------------------------------------------------------------------
  function interval(tb, P, i) {
    var low = P[i] === -1 ? "(-inf" : "[" + tb.vals[P[i]];
    var high = i + 1 < P.length ? tb.ends[P[i + 1]] : "+inf)";
    return low + ", " + high;
  }
  // The line `dogana claims` prints for a region, without the table.
  function regionText(tb, L, i) {
    return interval(tb, L.p, i) + ": " + STATES[L.s[i]] + "; complete as of " + time(L.c[i]) +
      "; deletions as of " + time(L.d[i]);
  }
  function gapText(L, i) {
    if (L.c[i] < 0 || L.d[i] === L.c[i]) return "";
    return "patched gap: deletions as of " + time(L.d[i]) + ", complete as of " + time(L.c[i]) +
      ": rows deleted in between may still be here";
  }

  function axis(tb, width) {
    var xs = tb.x, n = xs.length;
    if (!tb.type || n === 0) return function (p) { return p === -1 ? 0 : width; };
    var stub = Math.max(12, Math.round(width * 0.04));
    var lo = xs[0], hi = xs[n - 1], inner = width - 2 * stub;
    return function (p) {
      if (p === -1) return 0;
      if (p === -2) return width;
      return stub + (hi > lo ? (xs[p] - lo) / (hi - lo) : 0.5) * inner;
    };
  }

  // One band per region at least a pixel wide; narrower neighbours share one aggregate band
  // per pixel column, drawn with the worst state among them.
  function drawBands(row, status, tb, L) {
    row.textContent = "";
    var width = BW;
    var X = axis(tb, width);
    var n = L.p.length, frag = document.createDocumentFragment(), agg = null;
    function flush() {
      if (!agg) return;
      if (agg.n === 1) band(agg.first, agg.col, agg.col + 1, 1);
      else band(agg.first, agg.col, agg.col + 1, agg.n, agg.worst, agg.last);
      agg = null;
    }
    function band(i, a, b, count, worst, last) {
      var d = el("div", "band s" + (count > 1 ? worst : L.s[i]));
      d.style.left = a + "px";
      d.style.width = Math.max(1, b - a) + "px";
      d.dataset.i = i;
      if (count > 1) {
        d.className += " agg";
        d.dataset.n = count;
        d.title = count + " regions from " + interval(tb, L.p, i).split(",")[0] + " to " +
          interval(tb, L.p, last).split(", ")[1] + "; the worst is " + STATES[worst];
      } else {
        var gap = gapText(L, i);
        d.title = regionText(tb, L, i) + (gap ? "\n" + gap : "");
      }
      frag.appendChild(d);
    }
    for (var i = 0; i < n; i++) {
      var a = Math.round(X(L.p[i])), b = Math.round(i + 1 < n ? X(L.p[i + 1]) : width);
      if (b > a) { flush(); band(i, a, b, 1); continue; }
      if (agg && agg.col === a) {
        agg.n++; agg.last = i; if (L.s[i] < agg.worst) agg.worst = L.s[i];
      } else { flush(); agg = { col: a, n: 1, first: i, last: i, worst: L.s[i] }; }
    }
    flush();
    row.appendChild(frag);
    row.onmouseover = function (ev) {
      var t = ev.target;
      if (!t.classList || !t.classList.contains("band")) return;
      status.textContent = t.title;
    };
  }

  // ---- history ---------------------------------------------------------------------------
  function newLedger() { return { k: -1, p: [-1], c: [-1], d: [-1], s: [0] }; }
  function copy(L) { return { k: L.k, p: L.p.slice(), c: L.c.slice(), d: L.d.slice(), s: L.s.slice() }; }
  function lowerBound(a, v) { var l = 0, h = a.length; while (l < h) { var m = (l + h) >> 1; if (a[m] < v) l = m + 1; else h = m; } return l; }
  function upperBound(a, v) { var l = 0, h = a.length; while (l < h) { var m = (l + h) >> 1; if (a[m] <= v) l = m + 1; else h = m; } return l; }
  // A step replaces the points from lo to hi inclusive (hi -2: to the end) with its own.
  function apply(L, st) {
    var i0 = lowerBound(L.p, st.lo), i1 = st.hi === -2 ? L.p.length : upperBound(L.p, st.hi);
    ["p", "c", "d", "s"].forEach(function (f) {
      if (st[f].length < 512) L[f].splice.apply(L[f], [i0, i1 - i0].concat(st[f]));
      else L[f] = L[f].slice(0, i0).concat(st[f], L[f].slice(i1));
    });
  }
  function History(tb) {
    this.tb = tb; this.snaps = [];
    // When the last step leaves the ledger drawn above, start there rather than replay.
    this.cur = tb.last_is_now
      ? { k: tb.steps.length - 1, p: tb.now.p.slice(), c: tb.now.c.slice(), d: tb.now.d.slice(), s: tb.now.s.slice() }
      : newLedger();
  }
  var SNAP = 128;
  History.prototype.at = function (k) {
    var steps = this.tb.steps;
    if (k < this.cur.k) {
      var s = Math.floor((k + 1) / SNAP) - 1;
      this.cur = s >= 0 && this.snaps[s] ? copy(this.snaps[s]) : newLedger();
    }
    while (this.cur.k < k) {
      this.cur.k++;
      apply(this.cur, steps[this.cur.k]);
      if ((this.cur.k + 1) % SNAP === 0) this.snaps[(this.cur.k + 1) / SNAP - 1] = copy(this.cur);
    }
    return this.cur;
  };

  // ---- page --------------------------------------------------------------------------------
  var app = document.getElementById("app");
  app.textContent = "";
  var reader = document.getElementById("reader");
  reader.textContent = "States at " + DATA.at + "; " +
    (DATA.limit ? "regions complete as of more than " + DATA.limit + " before it are expired" : "no freshness limit: nothing expires") +
    ". Hover a band for its region's claim.";

  var legend = el("p", "legend");
  STATES.forEach(function (s, i) {
    var k = el("span", "key"); k.appendChild(el("span", "sw s" + i)); k.appendChild(document.createTextNode(s));
    legend.appendChild(k);
  });
  app.appendChild(legend);

  var EVENTS = DATA.events, NT = DATA.tables.length;
  // Where each receipt sits on the time axis; never before the one stored before it.
  var evTime = [], last = -Infinity;
  EVENTS.forEach(function (e) { last = Math.max(last, DATA.tables[e[0]].receipts[e[1]].rt); evTime.push(last); });
  // For each table, the step in force after each event.
  var stepAt = DATA.tables.map(function (tb, t) {
    var out = new Int32Array(EVENTS.length), k = -1;
    for (var e = 0; e < EVENTS.length; e++) {
      if (EVENTS[e][0] === t) { var st = tb.receipts[EVENTS[e][1]].step; if (st >= 0) k = st; }
      out[e] = k;
    }
    return out;
  });
  var views = [];

  DATA.tables.forEach(function (tb, t) {
    var sec = el("section", "table"); sec.id = "table-" + t;
    sec.appendChild(el("h2", null, tb.name));
    sec.appendChild(el("p", "summary", tb.summary));
    var v = el("p", "verify " + (tb.problems.length ? "bad" : "ok"), tb.verify);
    sec.appendChild(v);
    if (tb.problems.length) {
      var ul = el("ul", "problems");
      tb.problems.forEach(function (p) { ul.appendChild(el("li", null, p)); });
      sec.appendChild(ul);
    }
    tb.notes.forEach(function (n) { sec.appendChild(el("p", "note", n)); });
    var dom = tb.column ? "window column " + tb.column + " (" + tb.type + ")" : "no window column: the whole table is one region";
    sec.appendChild(el("h3", null, "The ledger at " + DATA.at + ": " + tb.now.p.length + " region" + (tb.now.p.length === 1 ? "" : "s") + ", along the " + dom));
    var now = el("div", "bands now"); now.id = "now-" + t; sec.appendChild(now);
    var ends = el("div", "ends"); ends.id = "axis-" + t;
    sec.appendChild(ends);
    var status = el("p", "hover"); status.id = "hover-" + t; status.textContent = "\u00a0";
    sec.appendChild(status);
    var cap = el("h3", "step-caption"); cap.id = "caption-" + t; sec.appendChild(cap);
    var hist = el("div", "bands hist"); hist.id = "hist-" + t; sec.appendChild(hist);
    app.appendChild(sec);
    views.push({ tb: tb, now: now, hist: hist, status: status, cap: cap, history: new History(tb) });
  });

  // The timeline: every receipt of every table on one time axis, and the exact instant.
  var tl = el("section", "timeline"); tl.id = "timeline";
  tl.appendChild(el("h2", null, NT > 1 ? "History of " + NT + " tables on one time axis (received at)" : "History (received at)"));
  var groupNow = el("p", "group-now"); groupNow.id = "group-now";
  var g = DATA.group;
  groupNow.textContent = NT > 1
    ? (g.ok ? "The group at " + DATA.at + ": " + (g.exact ? "exact at " + g.exact : "exact at no single instant") : "These tables cannot form a group (two names differ only in case)")
    : "The table at " + DATA.at + ": " + (g.exact ? "exact at " + g.exact : "exact at no single instant");
  tl.appendChild(groupNow);
  var canvas = el("canvas"); canvas.id = "timeline-canvas"; tl.appendChild(canvas);
  var controls = el("div", "controls");
  var prev = el("button", null, "\u2190 previous"); var next = el("button", null, "next \u2192");
  var scrub = el("input"); scrub.type = "range"; scrub.id = "scrub"; scrub.min = 0; scrub.max = Math.max(0, EVENTS.length - 1); scrub.value = EVENTS.length - 1;
  controls.appendChild(prev); controls.appendChild(scrub); controls.appendChild(next);
  tl.appendChild(controls);
  var groupStep = el("p", "group-step"); groupStep.id = "group-step"; tl.appendChild(groupStep);
  app.insertBefore(tl, app.children[1] || null);
  var selSec = el("section", "selected"); selSec.id = "selected";
  selSec.appendChild(el("h2", null, "The selected receipt and its neighbours"));
  var nearby = el("ol", "nearby"); nearby.id = "nearby"; selSec.appendChild(nearby);
  var panel = el("div", "receipt"); panel.id = "receipt"; selSec.appendChild(panel);
  app.appendChild(selSec);

  function receiptOf(e) { var ev = EVENTS[e], tb = DATA.tables[ev[0]]; return { t: ev[0], r: full(tb, tb.receipts[ev[1]]) }; }
  function label(e) {
    var x = receiptOf(e), r = x.r;
    return DATA.tables[x.t].name + " #" + r.seq + " " + r.o + " " + r.shape + " produced at " + r.pa;
  }

  var selected = EVENTS.length - 1;
  function select(e, focusChecks) {
    if (e < 0 || e >= EVENTS.length) return;
    selected = e; scrub.value = e;
    views.forEach(function (v, t) {
      var k = stepAt[t][e];
      var L = v.history.at(k);
      v.cap.textContent = k < 0
        ? "Replayed: no receipt accepted yet: the new ledger, one unknown region"
        : "Replayed: the ledger after receipt #" + v.tb.receipts[v.tb.steps[k].r].seq + " (" + L.p.length + " region" + (L.p.length === 1 ? "" : "s") + ")";
      v.hist.dataset.step = k;
      drawBands(v.hist, v.status, v.tb, L);
    });
    var gx = DATA.gx[e];
    groupStep.textContent = "After " + label(e) + ": " + (NT > 1 ? "the group is " : "the table is ") +
      (gx >= 0 ? "exact at " + time(gx) : "exact at no single instant");
    groupStep.className = "group-step " + (gx >= 0 ? "exact" : "none");
    showReceipt(e);
    showNearby(e);
    drawTimeline();
    if (focusChecks) { var c = document.getElementById("checks"); if (c) c.scrollIntoView(); }
  }

  function field(dl, k, v) {
    if (v === null || v === undefined || v === "") return;
    dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v));
  }
  function showReceipt(e) {
    var x = receiptOf(e), r = x.r;
    panel.textContent = "";
    panel.dataset.table = DATA.tables[x.t].name; panel.dataset.seq = r.seq;
    panel.appendChild(el("h3", "o-" + r.o, DATA.tables[x.t].name + " receipt #" + r.seq + ": " + r.o));
    var dl = el("dl");
    field(dl, "shape", r.shape); field(dl, "coverage", r.cov); field(dl, "produced at", r.pa);
    field(dl, "received at", r.ra); field(dl, "source", r.src === null ? "none" : r.src);
    field(dl, "since", r.since); field(dl, "rows", r.rows + " live, " + r.tomb + " tombstones");
    field(dl, "plan", r.plan === null ? "none: nothing published" : r.plan);
    field(dl, "publication", r.pid); field(dl, "after", r.base === null ? "none (the table's first)" : r.base);
    panel.appendChild(dl);
    var ul = el("ul", "checks"); ul.id = "checks";
    r.checks.forEach(function (c) {
      var li = el("li", c[1] ? "pass" : "fail");
      li.appendChild(el("b", null, c[0]));
      li.appendChild(document.createTextNode(": " + (c[1] ? "passed" : "FAILED") + (c[2] ? ": " + c[2] : "")));
      ul.appendChild(li);
    });
    panel.appendChild(el("h4", null, "Checks"));
    panel.appendChild(ul);
  }
  function showNearby(e) {
    nearby.textContent = "";
    var a = Math.max(0, e - 6), b = Math.min(EVENTS.length, e + 7);
    for (var i = a; i < b; i++) {
      var li = el("li", i === e ? "sel" : ""), btn = el("button", "step", label(i));
      btn.dataset.e = i;
      btn.onclick = (function (j) { return function () { select(j); }; })(i);
      var x = receiptOf(i), r = x.r;
      var more = el("span", "meta", " · " + r.cov + " · received " + r.ra + " · source " + (r.src === null ? "none" : r.src) + " · plan " + (r.plan === null ? "none" : r.plan) + " ");
      var link = el("a", "to-checks", r.checks.length + " checks"); link.href = "#checks";
      link.onclick = (function (j) { return function (ev) { ev.preventDefault(); select(j, true); }; })(i);
      li.value = i + 1;
      li.appendChild(btn); li.appendChild(more); li.appendChild(link);
      nearby.appendChild(li);
    }
  }

  // ---- timeline canvas ---------------------------------------------------------------------
  var tmin = DATA.atsec, tmax = DATA.atsec;
  evTime.forEach(function (x) { if (x < tmin) tmin = x; if (x > tmax) tmax = x; });
  var ROW = 18, PAD = 8, LEFT = 110;
  function tx(s, w) { return LEFT + (tmax > tmin ? (s - tmin) / (tmax - tmin) : 0.5) * (w - LEFT - PAD); }
  function drawTimeline() {
    var w = CW, h = (NT + 1) * ROW + 24;
    var dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); canvas.style.height = h + "px"; }
    var c = canvas.getContext("2d");
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    c.font = "11px sans-serif"; c.textBaseline = "middle";
    DATA.tables.forEach(function (tb, t) {
      c.fillStyle = "#333"; c.fillText(tb.name.length > 16 ? tb.name.slice(0, 15) + "\u2026" : tb.name, 4, t * ROW + ROW / 2);
      c.fillStyle = "#eee"; c.fillRect(LEFT, t * ROW + 2, w - LEFT - PAD, ROW - 4);
    });
    for (var e = 0; e < EVENTS.length; e++) {
      var r = DATA.tables[EVENTS[e][0]].receipts[EVENTS[e][1]];
      c.fillStyle = r.o === "rejected" ? "#c0392b" : "#2c7a4b";
      c.fillRect(Math.round(tx(evTime[e], w)), EVENTS[e][0] * ROW + 3, 1.5, ROW - 6);
    }
    var gy = NT * ROW;
    c.fillStyle = "#333"; c.fillText(NT > 1 ? "group exact" : "exact", 4, gy + ROW / 2);
    c.fillStyle = "#ddd"; c.fillRect(LEFT, gy + 4, w - LEFT - PAD, ROW - 8);
    for (var k = 0; k < EVENTS.length; k++) {
      if (DATA.gx[k] < 0) continue;
      var x0 = tx(evTime[k], w), x1 = k + 1 < EVENTS.length ? tx(evTime[k + 1], w) : w - PAD;
      c.fillStyle = "#1f6fb2"; c.fillRect(x0, gy + 4, Math.max(1, x1 - x0), ROW - 8);
    }
    var ax = tx(DATA.atsec, w);
    c.strokeStyle = "#888"; c.setLineDash([3, 3]); c.beginPath(); c.moveTo(ax, 0); c.lineTo(ax, gy + ROW); c.stroke(); c.setLineDash([]);
    if (selected >= 0 && EVENTS.length) {
      var sx = tx(evTime[selected], w);
      c.strokeStyle = "#000"; c.lineWidth = 2; c.beginPath(); c.moveTo(sx, 0); c.lineTo(sx, gy + ROW); c.stroke(); c.lineWidth = 1;
    }
    c.fillStyle = "#555";
    function iso(sec) { return new Date(sec * 1000).toISOString().replace(".000Z", "Z"); }
    c.fillText(iso(tmin), LEFT, gy + ROW + 10);
    c.textAlign = "right"; c.fillText(iso(tmax), w - PAD, gy + ROW + 10); c.textAlign = "left";
  }
  canvas.onclick = function (ev) {
    var rect = canvas.getBoundingClientRect(), w = CW;
    var s = tmin + ((ev.clientX - rect.left - LEFT) / (w - LEFT - PAD)) * (tmax - tmin);
    var i = lowerBound(evTime, s);
    if (i >= EVENTS.length) i = EVENTS.length - 1;
    if (i > 0 && Math.abs(evTime[i - 1] - s) <= Math.abs(evTime[i] - s)) i--;
    // The last of the receipts at that instant.
    while (i + 1 < EVENTS.length && evTime[i + 1] === evTime[i]) i++;
    select(i);
  };
  scrub.oninput = function () { select(+scrub.value); };
  prev.onclick = function () { select(selected - 1); };
  next.onclick = function () { select(selected + 1); };
  document.addEventListener("keydown", function (ev) {
    if (ev.target && ev.target.tagName === "INPUT") return;
    if (ev.key === "ArrowLeft") select(selected - 1);
    if (ev.key === "ArrowRight") select(selected + 1);
  });

  // Widths are read once, before the bands and lists are added, so that drawing forces no
  // layout of a large page (and again on resize).
  var BW = 1000, CW = 1000;
  function measure() { BW = views.length ? views[0].now.clientWidth || 1000 : 1000; CW = canvas.clientWidth || 1000; }
  measure();

  // ---- refusals ----------------------------------------------------------------------------
  var MAXR = 200;
  var eventOf = {};
  EVENTS.forEach(function (ev, e) { eventOf[ev[0] + ":" + ev[1]] = e; });
  DATA.tables.forEach(function (tb, t) {
    var sec = el("section", "refusals"); sec.id = "refusals-" + t;
    var rej = [];
    tb.receipts.forEach(function (r, i) { if (r.o === "rejected") rej.push(i); });
    sec.appendChild(el("h2", null, tb.name + ": " + (rej.length ? rej.length + " refusal" + (rej.length === 1 ? "" : "s") : "no refusals")));
    var ul = el("ul");
    rej.slice(0, MAXR).forEach(function (i) {
      var r = full(tb, tb.receipts[i]), li = el("li", "refusal"); li.dataset.seq = r.seq;
      var b = el("button", "step", "#" + r.seq);
      b.onclick = function () { select(eventOf[t + ":" + i], true); };
      li.appendChild(b);
      li.appendChild(document.createTextNode(" " + r.shape + " produced at " + r.pa + ", received at " + r.ra + ", source " + (r.src === null ? "none" : r.src) + ", " + r.cov));
      var fl = el("ul", "failed");
      r.checks.forEach(function (c) { if (!c[1]) { var f = el("li"); f.appendChild(el("b", null, c[0])); f.appendChild(document.createTextNode(": " + c[2])); fl.appendChild(f); } });
      li.appendChild(fl);
      ul.appendChild(li);
    });
    sec.appendChild(ul);
    if (rej.length > MAXR) sec.appendChild(el("p", null, (rej.length - MAXR) + " more refusals: select them on the timeline"));
    app.appendChild(sec);
  });

  // Labels under the band: -inf, the least and greatest values any step names, +inf, and a
  // few values between, at their places on the axis.
  function drawAxis(v, t) {
    var box = document.getElementById("axis-" + t), tb = v.tb, n = tb.vals.length;
    box.textContent = "";
    if (!tb.type || !n) return;
    var width = BW, X = axis(tb, width), last = -1e9;
    function label(x, text, cls) {
      var s = el("span", cls, text); s.style.left = Math.round(x) + "px"; box.appendChild(s);
    }
    label(0, "-inf", "tick lo");
    label(width, "+inf", "tick hi");
    var end = X(n - 1);
    label(X(0), tb.vals[0], "tick lo"); last = X(0) + 90;
    for (var k = 1; k < 5; k++) {
      var i = Math.round(k * (n - 1) / 5), x = X(i);
      if (x - last < 90 || end - x < 150) continue;
      label(x, tb.vals[i], "tick"); last = x;
    }
    if (n > 1) label(end, tb.vals[n - 1], "tick hi");
  }
  function drawNow() { views.forEach(function (v, t) { drawBands(v.now, v.status, v.tb, v.tb.now); drawAxis(v, t); }); }
  drawNow();
  if (EVENTS.length) select(EVENTS.length - 1);
  var resizing = null;
  window.addEventListener("resize", function () { clearTimeout(resizing); resizing = setTimeout(function () { measure(); drawNow(); select(selected); }, 100); });

  var ms = performance.now() - t0;
  performance.mark("dogana-rendered");
  document.body.dataset.renderMs = ms.toFixed(1);
  // Since navigation started: reading the file, parsing it, and this script.
  document.body.dataset.loadedMs = performance.now().toFixed(1);
  document.body.dataset.ready = "1";
  window.doganaShow = { select: select, regionText: regionText, data: DATA };
})();
