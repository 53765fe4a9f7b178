package report

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"

	"github.com/ibtool/ibtool/internal/diagnose"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/topology"
)

// The HTML page is one file that needs nothing else: its style, its
// script and the report's data are in it, and the script draws the rest
// (the summary, the findings table and its filter, the drawing of the
// switch tiers as SVG). It loads nothing from the network.

// pageData is what the page's script draws from.
type pageData struct {
	Report   *diagnose.Report `json:"report"`
	Switches []pageSwitch     `json:"switches"`
	Links    []pageLink       `json:"links"`
}

// pageSwitch is a switch in the drawing: its tier is its distance in
// switch hops from the switches with hosts (tier 0), as internal/topology
// levels them for Slurm.
type pageSwitch struct {
	GUID mad.GUID `json:"node_guid"`
	Name string   `json:"node_name"`
	Tier int      `json:"tier"`
}

// pageLink is the links between two switches (parallel links count).
type pageLink struct {
	A     mad.GUID `json:"a_guid"`
	B     mad.GUID `json:"b_guid"`
	Count int      `json:"count"`
}

// WriteHTML writes the report as one self-contained page. f is the
// fabric the report judged (the drawing's switches and links).
func WriteHTML(out io.Writer, r *diagnose.Report, f *discovery.Fabric, names *nodename.Map) error {
	d := pageData{Report: r, Switches: []pageSwitch{}, Links: []pageLink{}}
	for _, s := range topology.Build(f, names).Switches {
		d.Switches = append(d.Switches, pageSwitch{GUID: s.GUID, Name: s.Name, Tier: s.Level})
	}
	type pair struct{ a, b uint64 }
	counts := map[pair]int{}
	for _, n := range f.NodesOfType(discovery.NodeSwitch) {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != discovery.NodeSwitch {
				continue
			}
			if a, b := n.GUID, p.Remote.Node.GUID; a < b || a == b && p.Num < p.Remote.Num {
				counts[pair{a, b}]++
			}
		}
	}
	for k, c := range counts {
		d.Links = append(d.Links, pageLink{A: mad.GUID(k.a), B: mad.GUID(k.b), Count: c})
	}
	sort.Slice(d.Links, func(i, j int) bool {
		if d.Links[i].A != d.Links[j].A {
			return d.Links[i].A < d.Links[j].A
		}
		return d.Links[i].B < d.Links[j].B
	})
	// json.Marshal escapes <, > and &: the data cannot end its script
	// element.
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	w.WriteString(pageHead)
	w.Write(data)
	w.WriteString(pageTail)
	return w.Flush()
}

const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ibtool diagnose</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; }
.incomplete { color: #b03a2e; font-weight: bold; }
.sev-error { color: #b03a2e; font-weight: bold; }
.sev-warning { color: #b9770e; font-weight: bold; }
.sev-info { color: #2e6da4; }
.filters { margin-bottom: .6em; }
.filters input { width: 24em; }
#drawing { overflow: auto; border: 1px solid #ddd; max-height: 70vh; }
svg text { font: 11px system-ui, sans-serif; }
.switch rect { fill: #eef3f8; stroke: #567; }
.switch.marked-error rect { fill: #f6d5d1; stroke: #b03a2e; stroke-width: 2; }
.switch.marked-warning rect { fill: #fbeed5; stroke: #b9770e; stroke-width: 2; }
.switch.marked-info rect { stroke: #2e6da4; stroke-width: 2; }
.link { stroke: #9aa; stroke-width: 1.2; }
.link.marked-error { stroke: #b03a2e; stroke-width: 3; }
.link.marked-warning { stroke: #b9770e; stroke-width: 3; }
.link.marked-info { stroke: #2e6da4; stroke-width: 2; }
.host circle { fill: #fff; stroke: #567; }
.host.marked-error circle { stroke: #b03a2e; fill: #f6d5d1; stroke-width: 2; }
.host.marked-warning circle { stroke: #b9770e; fill: #fbeed5; stroke-width: 2; }
.host.marked-info circle { stroke: #2e6da4; }
.marked-error, .marked-warning, .marked-info { cursor: pointer; }
.legend span { margin-right: 1.2em; }
</style>
</head>
<body>
<h1>Fabric diagnosis</h1>
<p id="fabric"></p>
<noscript><p>This page draws its tables and its drawing with JavaScript.</p></noscript>
<h2>Summary</h2>
<table id="summary"><thead><tr><th>check</th><th>errors</th><th>warnings</th><th>infos</th><th>note</th></tr></thead><tbody></tbody></table>
<h2>Switch tiers</h2>
<p class="legend">Tier 0 are the switches with hosts, each tier above one switch hop further.
Links and nodes with findings are marked: <span class="sev-error">error</span><span class="sev-warning">warning</span><span class="sev-info">info</span>
(hosts are drawn only where their link has a finding; click a mark to filter the findings).</p>
<div id="drawing"></div>
<h2>Findings</h2>
<div class="filters">
<input id="filter" type="search" placeholder="filter: node name, GUID, code, text">
<select id="severity"><option value="">every severity</option><option>error</option><option>warning</option><option>info</option></select>
<select id="check"><option value="">every check</option></select>
<span id="shown"></span>
</div>
<table id="findings"><thead><tr><th>severity</th><th>check</th><th>code</th><th>node</th><th>port</th><th>remote</th><th>message</th></tr></thead><tbody></tbody></table>
<script type="application/json" id="data">`

const pageTail = `</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const rep = data.report;
const rank = {error: 0, warning: 1, info: 2};
const svgNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(svgNS, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fabricLine() {
  const f = rep.fabric, p = document.getElementById("fabric");
  p.textContent = f.nodes + " nodes (" + f.switches + " switches, " + f.cas + " CAs, " + f.routers + " routers), " + f.links + " links. ";
  if (!rep.complete) p.appendChild(el("span", {class: "incomplete"}, "The sweep is incomplete: see the walk check."));
}

function summary() {
  const body = document.querySelector("#summary tbody");
  for (const s of rep.summary) {
    const tr = el("tr");
    tr.appendChild(el("td", {}, s.check));
    for (const n of [s.errors, s.warnings, s.infos]) tr.appendChild(el("td", {class: "num"}, s.skipped ? "-" : String(n)));
    tr.appendChild(el("td", {}, s.skipped ? "not run: " + s.skipped : ""));
    body.appendChild(tr);
    document.getElementById("check").appendChild(el("option", {}, s.check));
  }
}

// worst keeps, per key, the worst severity of the findings marking it.
function worst(map, key, sev) {
  if (!(key in map) || rank[sev] < rank[map[key]]) map[key] = sev;
}

function drawing() {
  const box = document.getElementById("drawing");
  if (data.switches.length === 0) { box.textContent = "No switches."; return; }
  const sw = {}, tiers = {};
  let top = 0;
  for (const s of data.switches) {
    sw[s.node_guid] = s;
    (tiers[s.tier] = tiers[s.tier] || []).push(s);
    top = Math.max(top, s.tier);
  }
  // What the findings mark: links between switches, switches, host links.
  const linkMark = {}, nodeMark = {}, hosts = {};
  for (const f of rep.findings) {
    if (!f.node_guid) continue;
    const here = f.node_guid, there = f.remote ? f.remote.node_guid : null;
    if (sw[here] && there && sw[there]) {
      worst(linkMark, [here, there].sort().join("-"), f.severity);
    } else if (there && (sw[here] || sw[there])) {
      const s = sw[here] ? here : there, h = sw[here] ? f.remote : f;
      const key = s + "-" + h.node_guid;
      hosts[key] = hosts[key] || {sw: s, guid: h.node_guid, name: h.node_name};
      worst(hosts[key], "sev", f.severity);
    } else if (sw[here]) {
      worst(nodeMark, here, f.severity);
    }
  }
  const W = 120, H = 26, GAP = 16, ROW = 110, M = 20;
  let widest = 0;
  for (const t in tiers) widest = Math.max(widest, tiers[t].length);
  const width = Math.max(widest * (W + GAP) + 2 * M, 400);
  const hostRows = Object.keys(hosts).length ? 60 : 0;
  const height = M + top * ROW + H + M + hostRows;
  const svg = el("svg:svg", {id: "tiers", width: width, height: height, viewBox: "0 0 " + width + " " + height});
  const pos = {};
  for (let t = 0; t <= top; t++) {
    const row = tiers[t] || [];
    const x0 = (width - row.length * (W + GAP) + GAP) / 2;
    row.forEach((s, i) => { pos[s.node_guid] = {x: x0 + i * (W + GAP), y: M + (top - t) * ROW}; });
    svg.appendChild(el("svg:text", {x: 4, y: M + (top - t) * ROW - 4}, "tier " + t));
  }
  const links = el("svg:g", {id: "links"});
  for (const l of data.links) {
    const a = pos[l.a_guid], b = pos[l.b_guid];
    if (!a || !b) continue;
    const up = a.y <= b.y ? [a, b] : [b, a];
    const line = el("svg:line", {class: "link", "data-a": l.a_guid, "data-b": l.b_guid,
      x1: up[0].x + W / 2, y1: up[0].y + (up[0].y === up[1].y ? H / 2 : H), x2: up[1].x + W / 2, y2: up[1].y + (up[0].y === up[1].y ? H / 2 : 0)});
    const sev = linkMark[[l.a_guid, l.b_guid].sort().join("-")];
    if (sev) {
      line.classList.add("marked-" + sev);
      line.addEventListener("click", () => setFilter(l.a_guid));
    }
    line.appendChild(el("svg:title", {}, (sw[l.a_guid].node_name + " - " + sw[l.b_guid].node_name) + (l.count > 1 ? " (" + l.count + " links)" : "")));
    links.appendChild(line);
  }
  svg.appendChild(links);
  const perSwitch = {};
  for (const key in hosts) {
    const h = hosts[key], p = pos[h.sw];
    if (!p) continue;
    const i = perSwitch[h.sw] = (perSwitch[h.sw] || 0) + 1;
    const cx = p.x + 10 + ((i - 1) % 6) * 20, cy = p.y + H + 30 + Math.floor((i - 1) / 6) * 16;
    const g = el("svg:g", {class: "host marked-" + h.sev, "data-guid": h.guid});
    g.appendChild(el("svg:line", {class: "link marked-" + h.sev, "data-a": h.sw, "data-b": h.guid, x1: cx, y1: p.y + H, x2: cx, y2: cy - 5}));
    g.appendChild(el("svg:circle", {cx: cx, cy: cy, r: 5}));
    g.appendChild(el("svg:title", {}, h.name));
    g.addEventListener("click", () => setFilter(h.guid));
    svg.appendChild(g);
  }
  for (const s of data.switches) {
    const p = pos[s.node_guid];
    const g = el("svg:g", {class: "switch", "data-guid": s.node_guid, transform: "translate(" + p.x + "," + p.y + ")"});
    if (nodeMark[s.node_guid]) {
      g.classList.add("marked-" + nodeMark[s.node_guid]);
      g.addEventListener("click", () => setFilter(s.node_guid));
    }
    g.appendChild(el("svg:rect", {width: W, height: H, rx: 4}));
    const name = s.node_name.length > 18 ? s.node_name.slice(0, 17) + "\u2026" : s.node_name;
    g.appendChild(el("svg:text", {x: 6, y: 17}, name));
    g.appendChild(el("svg:title", {}, s.node_name + " " + s.node_guid));
    svg.appendChild(g);
  }
  box.appendChild(svg);
}

function text(f) {
  const parts = [f.check, f.code, f.severity, f.message, f.node_name || "", f.node_guid || ""];
  if (f.remote) parts.push(f.remote.node_name || "", f.remote.node_guid);
  return parts.join(" ").toLowerCase();
}

function where(f) {
  return f.node_guid ? (f.node_name ? f.node_name + " " : "") + f.node_guid : "";
}

function table() {
  const q = document.getElementById("filter").value.toLowerCase().trim();
  const sev = document.getElementById("severity").value, chk = document.getElementById("check").value;
  const body = document.querySelector("#findings tbody");
  body.replaceChildren();
  let n = 0;
  for (const f of rep.findings) {
    if ((sev && f.severity !== sev) || (chk && f.check !== chk) || (q && !text(f).includes(q))) continue;
    n++;
    const tr = el("tr", {class: "finding", "data-code": f.code});
    tr.appendChild(el("td", {class: "sev-" + f.severity}, f.severity));
    tr.appendChild(el("td", {}, f.check));
    tr.appendChild(el("td", {}, f.code));
    tr.appendChild(el("td", {}, where(f)));
    tr.appendChild(el("td", {class: "num"}, f.port === undefined ? "" : String(f.port)));
    tr.appendChild(el("td", {}, f.remote ? where(f.remote) + " port " + f.remote.port : ""));
    tr.appendChild(el("td", {}, f.message));
    body.appendChild(tr);
  }
  document.getElementById("shown").textContent = n + " of " + rep.findings.length + " findings";
}

function setFilter(q) {
  document.getElementById("filter").value = q;
  table();
}

fabricLine();
summary();
drawing();
// The address may carry a first filter: page.html#links.port_init
document.getElementById("filter").value = decodeURIComponent(location.hash.slice(1));
for (const id of ["filter", "severity", "check"]) document.getElementById(id).addEventListener("input", table);
table();
</script>
</body>
</html>
`
