// Polls status.json every second and draws it. Rates come from the
// difference between two polls of the rows counters.
"use strict";
const history = { rate: [], lag: [] };
const HISTORY = 120;
let last = null;

function text(id, value) { document.getElementById(id).textContent = value; }

function draw(canvasId, values, color) {
  const c = document.getElementById(canvasId);
  const g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (values.length < 2) return;
  const max = Math.max(1, ...values);
  g.strokeStyle = color;
  g.lineWidth = 2;
  g.beginPath();
  values.forEach((v, i) => {
    const x = (i / (Math.max(values.length, 30) - 1)) * c.width;
    const y = c.height - 2 - (v / max) * (c.height - 4);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
}

function total(rows) { return Object.values(rows || {}).reduce((a, b) => a + b, 0); }

function duration(seconds) {
  const s = Math.round(seconds);
  if (s >= 3600) return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
  if (s >= 60) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return s + "s";
}

// snapshotCell draws a table's snapshot (live.backfills): a determinate
// bar once the database gave an estimate of the table's size.
function snapshotCell(s) {
  if (s.done) return '<span class="bar"><span style="width:100%"></span></span>done';
  if (!s.started) return '<span class="bar"></span>queued';
  const rate = s.rows_per_second ? " · " + Math.round(s.rows_per_second).toLocaleString("en") + " rows/s" : "";
  if (s.estimated_rows > 0) {
    const pct = Math.min(99, Math.floor(s.rows * 100 / s.estimated_rows));
    const eta = s.eta_seconds ? " · " + duration(s.eta_seconds) + " left" : "";
    return '<span class="bar"><span style="width:' + pct + '%"></span></span>' + pct + "%" + rate + eta;
  }
  return '<span class="bar active"><span></span></span>' + s.rows.toLocaleString("en") + " rows" + rate;
}

function backfillCell(report, table) {
  const s = ((report.live || {}).backfills || []).find(x => x.table === table.table);
  if (s) return snapshotCell(s);
  const b = report.backfill;
  const read = (table.rows && table.rows.r) || 0;
  if (b && (b.done || (b.tables_done || []).includes(table.table))) {
    return '<span class="bar"><span style="width:100%"></span></span>done';
  }
  if (b && b.table === table.table) {
    return '<span class="bar active"><span></span></span>reading';
  }
  return read > 0 ? '<span class="bar active"><span></span></span>reading' : "—";
}

// sourceText says whether the source connection streams or is riding out
// an outage (since when, attempts, the last error and its class).
function sourceText(s) {
  if (!s) return "—";
  let t = s.state + (s.since ? " since " + s.since : "");
  if (s.state === "reconnecting") t += ", " + (s.attempts || 0) + " failed attempts (outage window " + s.outage_window + ")";
  if (s.last_error) t += " · last error " + s.last_error_at + " (" + s.last_error_class + "): " + s.last_error;
  return t;
}

function render(r, now) {
  text("pipeline", r.pipeline);
  const state = document.getElementById("state");
  state.textContent = r.state;
  state.className = "state " + r.state;
  text("owner", r.owner ? "owner " + r.owner + (r.epoch ? " (epoch " + r.epoch + ")" : "") : "");
  text("position", r.checkpoint ? r.checkpoint.summary || JSON.stringify(r.checkpoint.position) : "no checkpoint yet");
  const live = r.live || {};
  text("version", live.version ? "version " + live.version : "");
  const rows = live.rows || {};
  text("rows", ["r", "c", "u", "d"].map(op => op + " " + (rows[op] || 0)).join(" · "));

  // A rate needs two polls: the first frame says so rather than 0.
  const sum = total(rows);
  let rate = null;
  if (last && now > last.at) rate = Math.max(0, (sum - last.sum) / ((now - last.at) / 1000));
  last = { at: now, sum: sum };
  if (rate !== null) history.rate.push(rate);
  history.lag.push(live.lag_seconds || 0);
  for (const k in history) if (history[k].length > HISTORY) history[k].shift();
  text("rate", rate === null ? "–" : Math.round(rate).toLocaleString("en"));
  text("lag", (live.lag_seconds || 0).toFixed(1));
  draw("rate-chart", history.rate, "#3b82f6");
  draw("lag-chart", history.lag, "#d97706");

  const body = document.querySelector("#tables tbody");
  body.innerHTML = "";
  const tables = (live.tables || []).slice();
  for (const s of live.backfills || []) {
    if (!tables.some(t => t.table === s.table)) tables.push({ table: s.table, rows: {} });
  }
  for (const t of tables) {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td></td>" + ["r", "c", "u", "d"].map(() => '<td class="num"></td>').join("");
    tr.children[0].textContent = t.table;
    tr.children[1].innerHTML = backfillCell(r, t);
    ["r", "c", "u", "d"].forEach((op, i) => { tr.children[2 + i].textContent = (t.rows[op] || 0).toLocaleString("en"); });
    body.appendChild(tr);
  }

  text("source", sourceText(live.source));
  text("error", live.last_error ? live.last_error.at + " " + live.last_error.message : "none");
  document.getElementById("error").className = live.last_error ? "failed" : "none";
  text("skipped-count", live.skipped_rows || 0);
  const ul = document.getElementById("skipped");
  ul.innerHTML = "";
  for (const s of (live.recent_skipped || []).slice().reverse()) {
    const li = document.createElement("li");
    li.textContent = s.at + " " + s.table + ": " + s.size_bytes + " bytes, " + s.reason;
    ul.appendChild(li);
  }
}

async function poll() {
  try {
    const res = await fetch("status.json", { cache: "no-store" });
    if (res.ok) render(await res.json(), Date.now());
    else text("state", "status.json: " + res.status);
  } catch (e) {
    const state = document.getElementById("state");
    state.textContent = "unreachable";
    state.className = "state stopped";
  }
  setTimeout(poll, 1000);
}
poll();
