// The page of an xpu-asm capture (report.html) or of a comparison of two
// (diff A B --html): the kernels table, and per kernel, built when opened,
// its figures, mix, ISA with source lines, control-flow graph and register
// pressure. Everything shown comes from the data element (JSON) and the ISA
// elements (gzip, base64); every name and text is set as text, never as
// markup. No network, no library.
"use strict";
(() => {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const CLASSES = DATA.classes || [];
  const SVGNS = "http://www.w3.org/2000/svg";

  // ---- small helpers -------------------------------------------------------

  /** An element with properties (class, text, on*, attributes) and children. */
  /** Shapes kept per kernel and process (xpu_asm_record::shapes::MAX_SHAPES). */
  const MAX_SHAPES = 256;

  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    setProps(e, props);
    for (const k of kids.flat(Infinity)) if (k != null && k !== false) e.append(k);
    return e;
  }
  function svg(tag, props, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    setProps(e, props);
    for (const k of kids.flat(Infinity)) if (k != null && k !== false) e.append(k);
    return e;
  }
  function setProps(e, props) {
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.setAttribute("class", v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    }
  }
  const fmt = (v) => (v == null ? "-" : String(v));
  const plural = (n, w, ws) => `${n} ${n === 1 ? w : ws || w + "s"}`;
  /** Sorted integers as ranges: 0-3,5,7-8. */
  function ranges(list) {
    const out = [];
    for (let i = 0; i < list.length; i++) {
      let j = i;
      while (j + 1 < list.length && list[j + 1] === list[j] + 1) j++;
      out.push(j > i ? `${list[i]}-${list[j]}` : `${list[i]}`);
      i = j;
    }
    return out.join(",");
  }
  /** The base name of a path. */
  const base = (p) => (p || "").split("/").pop();

  // ---- names: data, shown with what would hide in them marked ------------------

  /**
   * The characters a name shows as marked escapes, as the terminal escapes
   * them (names.rs's `invisible`, and the controls): they show nothing, or
   * reorder the text around them.
   */
  const HIDDEN =
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;
  const ESCAPES = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
  /** A hidden character as the terminal writes it: `\n`, `\u{202e}`. */
  const escapeOf = (c) => ESCAPES[c] || `\\u{${c.codePointAt(0).toString(16)}}`;
  /** How the page names the kernel whose name is empty (styled apart from any name). */
  const EMPTY = "(empty name)";
  /**
   * `s` as nodes: each hidden character (and, in the name of bytes that are
   * not UTF-8, each `\xff` standing for such a byte) a marked span of its
   * escape, set as text; the rest text.
   */
  function marked(s, bytes, tabs) {
    const re = bytes ? new RegExp(`${HIDDEN.source}|\\\\x[0-9a-f]{2}`, "gu") : HIDDEN;
    const out = [];
    let at = 0;
    for (const m of s.matchAll(re)) {
      // In an ISA text or a source line (`tabs`), a tab is a tab.
      if (tabs && m[0] === "\t") continue;
      if (m.index > at) out.push(s.slice(at, m.index));
      const esc = m[0].startsWith("\\x") && m[0].length === 4 ? m[0] : escapeOf(m[0]);
      out.push(h("span", { class: "esc", title: "a character that shows nothing or reorders the text, or a byte that is not UTF-8", text: esc }));
      at = m.index + m[0].length;
    }
    if (at < s.length) out.push(s.slice(at));
    return out;
  }
  /** A line of an ISA text or a source file as nodes: what hides in it (a name, a Trojan Source line) marked, tabs kept. */
  const textNodes = (s) => marked(s, false, true);
  /** `s` with each hidden character as its escape (for a tooltip, which holds text only). */
  const escaped = (s) => s.replace(HIDDEN, escapeOf);
  /** Whether `k`'s name is the empty one. */
  const isEmpty = (k) => k.name === "" && !k.name_hex;
  /** The text of bytes (hex) with each byte that is not UTF-8 as `\xff`, as the terminal shows it. */
  function fromHex(hex) {
    const b = (hex.match(/../g) || []).map((x) => parseInt(x, 16));
    const dec = new TextDecoder();
    let s = "";
    for (let i = 0; i < b.length; ) {
      const c = b[i];
      const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      let ok = n > 0 && i + n <= b.length;
      for (let j = 1; ok && j < n; j++) ok = (b[i + j] & 0xc0) === 0x80;
      if (ok && n === 3) ok = !(c === 0xe0 && b[i + 1] < 0xa0) && !(c === 0xed && b[i + 1] > 0x9f);
      if (ok && n === 4) ok = !(c === 0xf0 && b[i + 1] < 0x90) && !(c === 0xf4 && b[i + 1] > 0x8f);
      if (ok) {
        s += dec.decode(new Uint8Array(b.slice(i, i + n)));
        i += n;
      } else {
        s += `\\x${c.toString(16).padStart(2, "0")}`;
        i += 1;
      }
    }
    return s;
  }
  /** A kernel's name as a person reads it: demangled; not UTF-8, from its bytes; the empty one as such. */
  const readable = (k) => (k.name_hex && k.demangled === k.name ? fromHex(k.name_hex) : isEmpty(k) ? EMPTY : k.demangled || k.name);
  /** A kernel's name as nodes: `text` (its readable name, or what the table shows of it) marked. */
  const nameNodes = (k, text) => (isEmpty(k) && text.startsWith(EMPTY) ? [h("span", { class: "empty-name", text: EMPTY }), ...marked(text.slice(EMPTY.length), false)] : marked(text, !!k.name_hex));

  // ---- a kernel's ISA text ---------------------------------------------------

  /** The ISA text of element `id`: base64, gzip, UTF-8 (invalid bytes replaced). */
  async function isaText(id) {
    const node = id && document.getElementById(id);
    if (!node) return null;
    const bin = atob(node.textContent);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    if (typeof DecompressionStream === "undefined") {
      throw new Error("this browser has no DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 have it)");
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  const WS = /^[ \t\n\f\r]+/;
  const WS_END = /[ \t\n\f\r]+$/;
  const BLOCK = /^\/\/ (B\d+): Preds:\{([^}]*)\},\s*Succs:\{([^}]*)\}/;

  /** One line of ISA text, as the collector reads it (collector/src/isa/line.rs). */
  function classify(raw) {
    const s = raw.replace(WS, "");
    if (!s) return { t: "other" };
    if (s.startsWith("//")) {
      const c = s.slice(2);
      const b = BLOCK.exec(s);
      if (b) return { t: "block", id: b[1], preds: list(b[2]), succs: list(b[3]) };
      if (!c.startsWith(" ")) return { t: "other" };
      if (c.startsWith(" File: ")) return { t: "file", file: c.slice(7).replace(WS_END, "") };
      if (c.startsWith(" Line ")) {
        const rest = c.slice(6);
        const p = rest.indexOf(":");
        if (p >= 0 && /^\+?\d+$/.test(rest.slice(0, p)) && Number(rest.slice(0, p)) <= 4294967295) {
          return { t: "line", line: Number(rest.slice(0, p)), text: rest.slice(p + 1).trim() };
        }
      }
      return { t: "other" };
    }
    const t = s.replace(WS_END, "");
    if (t.endsWith(":")) {
      const label = t.slice(0, -1);
      if (label && !label.startsWith("(") && !/\s/.test(label)) return { t: "label", label };
    }
    return { t: "ins", text: s };
  }
  const list = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);
  const lineKey = (file, line) => `${file}\n${line}`;

  /**
   * The listing of an ISA text: rows to show (files, source lines, labels,
   * blocks, instructions), the instructions with their source line, the
   * blocks IGC's comments name, and the other lines (header, declarations).
   */
  function parseIsa(text) {
    const rows = [];
    const ins = [];
    const blocks = [];
    const header = [];
    let file = null;
    let key = null;
    for (const raw of text.split("\n")) {
      const l = classify(raw);
      if (l.t === "other") {
        if (raw.trim()) header.push(raw);
        continue;
      }
      if (l.t === "file") file = l.file;
      if (l.t === "line") {
        if (file == null) file = "";
        key = lineKey(file, l.line);
        l.key = key;
        l.file = file;
      }
      if (l.t === "block") blocks.push({ id: l.id, start: ins.length, preds: l.preds, succs: l.succs });
      if (l.t === "ins") {
        l.i = ins.length;
        l.key = key;
        ins.push(l);
      }
      rows.push(l);
    }
    blocks.forEach((b, i) => (b.end = i + 1 < blocks.length ? blocks[i + 1].start : ins.length));
    return { rows, ins, blocks, header };
  }

  // ---- the analysis of a kernel (control flow, loops, pressure) --------------

  /**
   * A kernel's control flow, loops and register pressure: from its analysis
   * in the report when it has one, else its blocks from IGC's comments
   * (`// B003: Preds:{B002}, Succs:{B004}`) with loops from their back edges.
   */
  function flowOf(k, listing) {
    const a = k && k.flow;
    const flow = a && typeof a === "object" ? fromAnalysis(a) : null;
    if (flow && flow.blocks.length) return flow;
    if (!listing || !listing.blocks.length) return flow;
    const index = new Map(listing.blocks.map((b, i) => [b.id, i]));
    const blocks = listing.blocks.map((b) => ({
      id: b.id,
      start: b.start,
      end: b.end,
      succs: b.succs.map((s) => index.get(s)).filter((x) => x != null),
    }));
    return Object.assign(flow || {}, {
      blocks,
      loops: loopsOfBackEdges(blocks),
      from: "IGC's block comments (loops: back edges in block order)",
    });
  }

  /**
   * The kernel's `flow` in the report (schema 3: blocks with their first
   * instruction, count and successors by index; natural loops; live GRF
   * before each instruction; the peak), in the page's terms.
   */
  function fromAnalysis(a) {
    const blocks = (a.blocks || []).map((b, i) => {
      const start = Number(b.first ?? b.start ?? 0);
      return {
        id: typeof b.label === "string" && b.label ? b.label : `B${i}`,
        start,
        end: start + Number(b.instructions ?? 0),
        succs: (b.succs || []).filter((x) => typeof x === "number"),
      };
    });
    const loops = (a.loops || []).map((l) => ({
      head: l.header,
      blocks: (l.blocks || []).filter((x) => typeof x === "number"),
      depth: l.depth ?? 1,
      source: l.source,
      spills: l.mix ? l.mix.spill : undefined,
      fills: l.mix ? l.mix.fill : undefined,
      instructions: l.instructions,
      peak: l.peak_grf,
    }));
    const peak = a.peak && typeof a.peak === "object" ? a.peak : null;
    return {
      blocks,
      loops,
      live: Array.isArray(a.live_grf) ? a.live_grf : null,
      spilled: Array.isArray(a.spilled_grf) && a.spilled_grf.length === (a.live_grf || []).length ? a.spilled_grf : null,
      peakLive: peak ? peak.live : undefined,
      peakSpilled: peak ? peak.spilled : undefined,
      budget: a.budget,
      peak: peak ? peak.grf : undefined,
      peakAt: peak ? peak.instruction : undefined,
      from: `the report's flow (IGA's JSON ${a.iga_json || ""})`.replace(" )", ")"),
    };
  }

  /** Loops of `blocks` (in layout order): an edge to an earlier block or itself closes one. */
  function loopsOfBackEdges(blocks) {
    const loops = [];
    blocks.forEach((b, j) =>
      b.succs.forEach((i) => {
        if (i <= j) {
          const body = [];
          for (let x = i; x <= j; x++) body.push(x);
          loops.push({ head: i, latch: j, blocks: body });
        }
      })
    );
    for (const l of loops) {
      l.depth = loops.filter((o) => o.head <= l.head && o.latch >= l.latch).length;
    }
    return loops;
  }

  // ---- figures and mix -----------------------------------------------------

  const SOURCE = { "igc-dump": "IGC's dump", "module-binary": "module binary (IGA)" };

  function figures(k, extra) {
    const rows = [
      ["launches", k.status === "not-launched" ? "0 (compiled, not launched)" : `${k.launches} (${k.appended} appended)`],
      k.launches_by_rank && k.launches_by_rank.length
        ? ["by rank", k.launches_by_rank.map((r) => `${r.rank}: ${r.launches}`).join(", ")]
        : null,
      ["SIMD", fmt(k.simd)],
      ["GRF", fmt(k.grf)],
      ["instructions", fmt(k.instructions)],
      ["spill bytes", fmt(k.spill_bytes)],
      ["spill GRF refs", fmt(k.spill_grf_refs)],
      ["private memory bytes", fmt(k.private_memory_bytes)],
      ["platform", fmt(k.platform)],
      ["RA type", fmt(k.ra_type)],
      ["ISA from", SOURCE[k.isa_source] || "-"],
      ["ISA file", k.asm_copy || k.asm || "-"],
      ["status", k.status + (k.reason ? `: ${k.reason}` : "")],
      ["module", fmt(k.module_sha256)],
      ["API", k.api === "opencl" ? "OpenCL" : "Level Zero"],
      timeRow(k),
      ["processes", k.pids && k.pids.length ? `${k.pids.length} (${k.pids.length === 1 ? "pid" : "pids"} ${k.pids.join(", ")})` : "-"],
    ].concat(extra || []);
    return h("dl", { class: "figures" }, rows.filter(Boolean).map(([t, d]) => [h("dt", { text: t }), h("dd", { text: d })]));
  }

  /** The kernel's device time (--time) in its figures, or why it has none. */
  function timeRow(k) {
    if (k.time_reason) return ["device time", `none: ${k.time_reason}`];
    const t = k.time;
    if (!t) return null;
    const [lo, hi] = t.median_range_ns;
    const median = lo === hi ? `${t.median_ns}` : `${t.median_ns} (${lo} to ${hi})`;
    return ["device time", `${t.estimated_ns} ns over its launches (${t.timed} of ${t.sampled} chosen timed: total ${t.total_ns} ns, min ${t.min_ns}, median ${median}, max ${t.max_ns} ns)`];
  }

  function mixBars(mix) {
    if (!mix) return h("p", { class: "none", text: "no instruction mix (no ISA)" });
    const total = mix.instructions || 0;
    const rows = Object.entries(mix).filter(([n, v]) => n !== "instructions" && v > 0);
    rows.sort((x, y) => y[1] - x[1]);
    const zero = Object.entries(mix).filter(([n, v]) => n !== "instructions" && v === 0).map(([n]) => n);
    return h(
      "div",
      { class: "mix" },
      h("p", { text: `${plural(total, "instruction")}` }),
      rows.map(([n, v]) =>
        h(
          "div",
          { class: `bar c-${n}`, "data-class": n },
          h("span", { class: "name", text: n }),
          h("span", { class: "track" }, h("span", { class: "fill", style: null })),
          h("span", { class: "n", text: `${v} (${total ? ((100 * v) / total).toFixed(1) : 0}%)` })
        )
      ),
      zero.length ? h("p", { class: "none", text: `none: ${zero.join(", ")}` }) : null
    );
  }
  /** Bar widths are set through the CSSOM (the page's policy forbids style attributes). */
  function sizeBars(root, mix) {
    const total = (mix && mix.instructions) || 1;
    for (const b of root.querySelectorAll(".bar")) {
      b.querySelector(".fill").style.width = `${(100 * mix[b.dataset.class]) / total}%`;
    }
  }

  // ---- the control-flow graph ------------------------------------------------

  function cfgView(flow, listing, onBlock) {
    const blocks = flow.blocks;
    const rowH = 26;
    const boxW = 250;
    const loopW = 14 * Math.max(1, ...flow.loops.map((l) => l.depth || 1), 0);
    const x0 = 20 + loopW;
    const span = (i, j) => Math.abs(j - i);
    const maxSpan = Math.max(1, ...blocks.flatMap((b, i) => b.succs.map((j) => span(i, j))));
    const width = x0 + boxW + 40 + Math.min(200, 12 * maxSpan);
    const height = blocks.length * rowH + 10;
    const g = svg("svg", { class: "cfg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "control-flow graph" });
    const y = (i) => 5 + i * rowH;
    const inLoop = new Set(flow.loops.flatMap((l) => l.blocks));
    flow.loops.forEach((l, n) => {
      const lo = Math.min(...l.blocks);
      const hi = Math.max(...l.blocks);
      const x = 6 + 14 * ((l.depth || 1) - 1);
      g.append(svg("rect", { class: "loop", x, y: y(lo), width: x0 + boxW - x + 4, height: y(hi) - y(lo) + rowH - 4, "data-loop": n }));
      g.append(svg("text", { class: "loop-label", x: x + 2, y: y(lo) + 12, text: `L${n + 1}` }));
    });
    blocks.forEach((b, i) => {
      const lines = sourceRange(listing, b);
      const box = svg(
        "g",
        { class: `block${inLoop.has(i) ? " in-loop" : ""}`, "data-block": i, onclick: () => onBlock(b) },
        svg("rect", { x: x0, y: y(i), width: boxW, height: rowH - 6, rx: 3 }),
        svg("text", { x: x0 + 6, y: y(i) + 14, text: `${b.id}  ${plural(b.end - b.start, "instr")}${lines ? "  " + lines : ""}` }),
        svg("title", { text: `${b.id}: instructions ${b.start}-${b.end - 1}${lines ? ", " + lines : ""}` })
      );
      g.append(box);
    });
    blocks.forEach((b, i) =>
      b.succs.forEach((j) => {
        const back = j <= i;
        if (j === i + 1) {
          g.append(svg("line", { class: "edge", x1: x0 + boxW / 2, y1: y(i) + rowH - 6, x2: x0 + boxW / 2, y2: y(j), "marker-end": "url(#arrow)" }));
          return;
        }
        const off = Math.min(200, 12 * span(i, j)) + 10;
        const xr = x0 + boxW;
        const d = `M${xr},${y(i) + 10} C${xr + off},${y(i) + 10} ${xr + off},${y(j) + 10} ${xr},${y(j) + 10}`;
        g.append(svg("path", { class: back ? "edge back" : "edge", d, "marker-end": "url(#arrow)" }));
      })
    );
    g.prepend(
      svg("defs", null, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, svg("path", { d: "M0,0 L8,4 L0,8 z" })))
    );
    return g;
  }

  /** `kernels_a.cl:12-15`: the source lines of a block's instructions. */
  function sourceRange(listing, b) {
    if (!listing) return "";
    const nums = new Set();
    let file = "";
    for (let i = b.start; i < b.end && i < listing.ins.length; i++) {
      const key = listing.ins[i].key;
      if (key == null) continue;
      const [f, n] = key.split("\n");
      file = f;
      nums.add(Number(n));
    }
    if (!nums.size) return "";
    const sorted = [...nums].sort((x, y) => x - y);
    return `${base(file)}:${sorted[0]}${sorted.length > 1 ? "-" + sorted[sorted.length - 1] : ""}`;
  }

  // ---- register pressure -------------------------------------------------------

  function pressureView(flow, marks, onInstruction) {
    const live = flow.live;
    const n = live.length;
    const W = 900;
    const H = 160;
    const pad = 30;
    // Pressure: live registers, and with spilled values those held in scratch.
    const demand = flow.spilled ? live.map((v, i) => v + (Number(flow.spilled[i]) || 0)) : live;
    const peak = flow.peak != null ? flow.peak : Math.max(...demand);
    const peakAt = flow.peakAt != null ? flow.peakAt : demand.indexOf(Math.max(...demand));
    const top = Math.max(peak, flow.budget || 0, 1) * 1.1;
    const x = (i) => pad + ((W - 2 * pad) * i) / Math.max(1, n - 1);
    const y = (v) => H - pad + -((H - 2 * pad) * v) / top;
    const g = svg("svg", { class: "pressure", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "register pressure" });
    // Each loop's instructions, shaded.
    for (const l of flow.loops || []) {
      for (const b of l.blocks.map((i) => flow.blocks[i]).filter(Boolean)) {
        if (b.end > b.start) g.append(svg("rect", { class: "loop-band", x: x(b.start), y: pad / 2, width: Math.max(1, x(b.end - 1) - x(b.start)), height: H - pad - pad / 2 }));
      }
    }
    g.append(svg("line", { class: "axis", x1: pad, y1: H - pad, x2: W - pad, y2: H - pad }));
    g.append(svg("text", { class: "tick", x: 2, y: y(0), text: "0" }));
    if (flow.budget) {
      g.append(svg("line", { class: "budget", x1: pad, y1: y(flow.budget), x2: W - pad, y2: y(flow.budget) }));
      g.append(svg("text", { class: "budget-label", x: W - pad, y: y(flow.budget) - 4, "text-anchor": "end", text: `budget ${flow.budget} GRF` }));
    }
    const pts = live.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    g.append(svg("polyline", { class: "live", points: pts }));
    if (flow.spilled) {
      const dpts = demand.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      g.append(svg("polyline", { class: "demand", points: dpts }));
    }
    for (const [cls, list] of [["spill", marks.spill], ["fill", marks.fill]]) {
      for (const i of list) g.append(svg("line", { class: `site ${cls}`, x1: x(i), y1: H - pad, x2: x(i), y2: pad / 2, "data-instruction": i }));
    }
    g.append(svg("circle", { class: "peak", cx: x(peakAt), cy: y(peak), r: 4 }));
    // Right of the peak in the chart's left half, left of it in the right half: never past an edge.
    const right = x(peakAt) <= W / 2;
    g.append(svg("text", { class: "peak-label", x: right ? x(peakAt) + 6 : x(peakAt) - 6, y: y(peak) - 6, "text-anchor": right ? "start" : "end", text: `peak ${peak} GRF at instruction ${peakAt}${flow.peakSpilled ? ` (${flow.peakLive} live, ${flow.peakSpilled} spilled)` : ""}` }));
    g.addEventListener("click", (ev) => {
      const r = g.getBoundingClientRect();
      const i = Math.round(((ev.clientX - r.left) * (W / r.width) - pad) / ((W - 2 * pad) / Math.max(1, n - 1)));
      onInstruction(Math.max(0, Math.min(n - 1, i)));
    });
    return g;
  }

  // ---- the ISA listing, linked to the source lines -------------------------------

  /** Spill and fill sites: from the analysis, else from each instruction's class. */
  function sitesOf(flow, isaRef, listing) {
    const spill = [];
    const fill = [];
    const classes = (isaRef && isaRef.classes) || "";
    if (flow && Array.isArray(flow.spills) && Array.isArray(flow.fills)) {
      return { spill: flow.spills.map(Number), fill: flow.fills.map(Number), from: "analysis" };
    }
    for (let i = 0; i < classes.length && i < listing.ins.length; i++) {
      const c = CLASSES[classes.charCodeAt(i) - 97];
      if (c === "spill") spill.push(i);
      if (c === "fill") fill.push(i);
    }
    return { spill, fill, from: "classes" };
  }

  /** The listing and the source lines of one kernel, each selecting in the other. */
  function isaView(k, isaRef, listing, flow) {
    const classes = (isaRef && isaRef.classes) || "";
    const marks = sitesOf(flow, isaRef, listing);
    const siteOf = new Map([...marks.spill.map((i) => [i, "spill"]), ...marks.fill.map((i) => [i, "fill"])]);
    const live = flow && flow.live;
    const budget = flow && flow.budget;
    const insRows = [];
    const byKey = new Map();
    const status = h("p", { class: "status", "aria-live": "polite", text: "click a source line to select its instructions, an instruction to see its line" });
    const srcRows = new Map();
    const pane = h("div", { class: "isa", role: "list" });
    const frag = document.createDocumentFragment();
    for (const r of listing.rows) {
      if (r.t === "ins") {
        const c = CLASSES[classes.charCodeAt(r.i) - 97];
        const site = siteOf.get(r.i);
        const row = h(
          "div",
          { class: `ins${c ? " c-" + c : ""}${site ? " site-" + site : ""}`, "data-i": r.i, "data-key": r.key, role: "listitem" },
          h("span", { class: "n", text: String(r.i) }),
          live ? h("span", { class: `live${budget && live[r.i] > budget ? " over" : ""}`, text: fmt(live[r.i]) }) : null,
          h("span", { class: "site", text: site || "" }),
          h("code", null, textNodes(r.text))
        );
        insRows.push(row);
        if (r.key != null) {
          if (!byKey.has(r.key)) byKey.set(r.key, []);
          byKey.get(r.key).push(row);
        }
        frag.append(row);
      } else if (r.t === "line") {
        frag.append(h("div", { class: "src", "data-key": r.key }, `${base(r.file)}:${r.line}  `, textNodes(r.text)));
      } else if (r.t === "file") {
        frag.append(h("div", { class: "file", text: `// File: ${r.file}` }));
      } else if (r.t === "block") {
        frag.append(h("div", { class: "blk", "data-block": r.id, text: `${r.id}  preds ${r.preds.join(",") || "-"}  succs ${r.succs.join(",") || "-"}` }));
      } else if (r.t === "label") {
        frag.append(h("div", { class: "label", text: `${r.label}:` }));
      }
    }
    pane.append(frag);

    let selected = [];
    function select(key, from) {
      for (const e of selected) e.classList.remove("sel");
      selected = [];
      const rows = byKey.get(key) || [];
      for (const e of rows) e.classList.add("sel");
      selected.push(...rows);
      for (const e of pane.querySelectorAll(".src")) if (e.dataset.key === key) (e.classList.add("sel"), selected.push(e));
      const sr = srcRows.get(key);
      if (sr) (sr.classList.add("sel"), selected.push(sr));
      const [f, n] = key.split("\n");
      const s = (k.source && k.source.lines.find((l) => l.file === f && String(l.line) === n)) || null;
      status.textContent = `${base(f)}:${n}${s ? "  " + s.text : ""}: ${plural(rows.length, "instruction")}`;
      pane.dataset.selected = key;
      if (from !== "isa" && rows[0]) rows[0].scrollIntoView({ block: "center" });
      if (from === "isa" && sr) sr.scrollIntoView({ block: "nearest" });
    }
    function showInstruction(i) {
      const row = insRows[i];
      if (!row) return;
      for (const e of pane.querySelectorAll(".ins.cur")) e.classList.remove("cur");
      row.classList.add("cur");
      const key = listing.ins[i].key;
      if (key != null) select(key, "isa");
      else {
        for (const e of selected) e.classList.remove("sel");
        selected = [];
        status.textContent = `instruction ${i}: no source line (IGC's prolog)`;
      }
      row.scrollIntoView({ block: "nearest" });
    }
    pane.addEventListener("click", (ev) => {
      const ins = ev.target.closest(".ins");
      if (ins) return showInstruction(Number(ins.dataset.i));
      const src = ev.target.closest(".src");
      if (src) select(src.dataset.key, "listing");
    });

    let source = null;
    if (k.source && k.source.lines.length) {
      const lines = k.source.lines;
      source = h(
        "table",
        { class: "lines" },
        h("thead", null, h("tr", null, h("th", { text: "line" }), h("th", { text: "source" }), h("th", { text: "instrs" }))),
        h(
          "tbody",
          null,
          lines.map((l) => {
            const key = lineKey(l.file, l.line);
            const tr = h("tr", { "data-key": key, onclick: () => select(key, "source") }, h("td", { text: `${base(l.file)}:${l.line}` }), h("td", null, h("code", null, textNodes(l.text))), h("td", { class: "num", text: String(l.instructions) }));
            srcRows.set(key, tr);
            return tr;
          })
        )
      );
      if (k.source.no_line) source.append(h("caption", { text: `${plural(k.source.no_line, "instruction")} with no source line (IGC's prolog)` }));
    }
    return { pane, source, status, showInstruction, marks, showBlock: (b) => showInstruction(b.start) };
  }

  // ---- one kernel, opened ------------------------------------------------------

  // ---- launch shapes --------------------------------------------------------

  /** `64`, `16x8`, `4x4x4`: trailing dimensions of 1 left out. */
  function dims(v) {
    const n = v[2] !== 1 ? 3 : v[1] !== 1 ? 2 : 1;
    return v.slice(0, n).join("x");
  }

  /** The kernel's launch shapes, most launched first, with their occupancy. */
  /** The launches of shapes not listed, as `show` says them. */
  function otherShapes(o) {
    const parts = [];
    if (o.shapes > 0) parts.push(`${o.shapes} less launched`);
    if (o.unkept_launches > 0) parts.push(`shapes not kept (past ${MAX_SHAPES} per kernel and process): ${o.unkept_launches} launches`);
    return `(other shapes: ${parts.join(", and ")})`;
  }

  function shapesView(k) {
    const shapes = k.shapes || [];
    if (!shapes.length) return null;
    const timed = shapes.some((s) => s.time || s.time_reason);
    const rows = shapes.map((s) => {
      const o = s.occupancy;
      const shape = s.group_size ? `${dims(s.group_size)} x ${s.group_count ? dims(s.group_count) : "? (indirect)"}` : `auto / ${s.global_size ? dims(s.global_size) : "?"}`;
      return h(
        "tr",
        null,
        h("td", { class: "num", text: String(s.launches) }),
        h("td", { text: shape }),
        h("td", { class: "num", text: s.slm_bytes === null || s.slm_bytes === undefined ? "?" : String(s.slm_bytes) }),
        h("td", { class: "num", text: o ? `${o.percent}%` : "-" }),
        h("td", { text: o ? o.limited_by : s.occupancy_reason || "-" }),
        h("td", { class: "num", text: o ? String(o.groups_per_xe_core) : "-" }),
        h("td", { class: "num", text: o ? String(o.threads_per_group) : "-" }),
        h("td", { class: "num", text: o ? `${o.idle_lanes_percent}%` : "-" }),
        timed ? h("td", { class: "num", text: s.time ? `${s.time.estimated_ns} ns` : "-", title: s.time_reason || null }) : null
      );
    });
    if (k.other_shapes) {
      rows.push(h("tr", null, h("td", { class: "num", text: String(k.other_shapes.launches) }), h("td", { text: otherShapes(k.other_shapes) })));
    }
    const head = h("tr", null, ["launches", "group size x count", "SLM bytes", "occupancy", "limited by", "groups per Xe-core", "threads per group", "idle lanes"].concat(timed ? ["device time"] : []).map((t) => h("th", { text: t })));
    const slm = k.slm_static_bytes === null || k.slm_static_bytes === undefined ? "" : ` (static SLM ${k.slm_static_bytes} bytes)`;
    return h("section", { class: "shapesbox" }, h("h3", { text: `launch shapes${slm}` }), h("table", { class: "shapes" }, h("thead", null, head), h("tbody", null, rows)));
  }

  /** Everything about kernel `k` of one capture, into `root`. */
  async function kernelPane(root, k, isaRef, side) {
    root.append(h("div", { class: "top" }, h("section", null, h("h3", { text: "figures" }), figures(k)), h("section", { class: "mixbox" }, h("h3", { text: "instruction mix" }), mixBars(k.mix))));
    const shapes = shapesView(k);
    if (shapes) root.append(shapes);
    sizeBars(root, k.mix);
    if (!isaRef || !isaRef.id) {
      root.append(h("p", { class: "none", text: isaRef && isaRef.note ? `no ISA text in this page: ${isaRef.note}` : "no ISA (not matched)" }));
      return;
    }
    const text = await isaText(isaRef.id);
    const listing = parseIsa(text);
    if (isaRef.classes && isaRef.classes.length !== listing.ins.length) {
      root.append(h("p", { class: "warn", text: `the page counts ${listing.ins.length} instructions, the collector ${isaRef.classes.length}` }));
    }
    const flow = flowOf(k, listing);
    const view = isaView(k, isaRef, listing, flow);
    if (flow && flow.live && flow.live.length) {
      root.append(h("section", { class: "pressurebox" }, h("h3", { text: "register pressure (live GRF per instruction)" }), pressureView(flow, view.marks, view.showInstruction)));
    } else {
      root.append(h("p", { class: "none no-pressure", text: `no register pressure: the report has no flow of this kernel${k.flow_reason ? ": " + k.flow_reason : ""}` }));
    }
    const m = view.marks;
    if (m.spill.length || m.fill.length) {
      const sites = [...m.spill.map((i) => ["spill", i]), ...m.fill.map((i) => ["fill", i])].sort((a, b) => a[1] - b[1]);
      root.append(h("p", { class: "sites" }, `${plural(m.spill.length, "spill")} and ${plural(m.fill.length, "fill")}: `, sites.map(([c, i]) => h("a", { href: "#", class: `site-${c}`, onclick: (e) => (e.preventDefault(), view.showInstruction(i)), text: `${c} @${i}` }))));
    }
    let cfg;
    if (flow && flow.blocks && flow.blocks.length) {
      cfg = h("section", { class: "cfgbox" }, h("h3", { text: `control flow: ${plural(flow.blocks.length, "block")}, ${plural(flow.loops.length, "loop")}` }), h("p", { class: "from", text: `from ${flow.from}` }), cfgView(flow, listing, view.showBlock), loopList(flow, listing));
    } else {
      cfg = h("p", { class: "none no-cfg", text: `no control-flow graph: the ISA text has no block comments and the report no flow of this kernel${k.flow_reason ? ": " + k.flow_reason : ""}` });
    }
    const hdr = h("details", { class: "header" }, h("summary", { text: `the rest of the ISA text: ${plural(listing.header.length, "line")} of header, declarations and statistics` }));
    hdr.addEventListener("toggle", () => hdr.open && hdr.children.length === 1 && hdr.append(h("pre", null, listing.header.map((l, i) => [i ? "\n" : null, textNodes(l)]))));
    root.append(h("div", { class: "code" }, cfg, view.source ? h("section", { class: "linesbox" }, h("h3", { text: "source lines" }), view.source) : null, h("section", { class: "isabox" }, h("h3", { text: `ISA (${side || ""}${plural(listing.ins.length, "instruction")})` }), view.status, view.pane, hdr)));
  }

  function loopList(flow, listing) {
    if (!flow.loops.length) return null;
    return h(
      "ol",
      { class: "loops" },
      flow.loops.map((l, n) => {
        const blocks = l.blocks.map((i) => flow.blocks[i]).filter(Boolean);
        const count = l.instructions != null ? l.instructions : blocks.reduce((s, b) => s + (b.end - b.start), 0);
        const lines = blocks.map((b) => sourceRange(listing, b)).filter(Boolean);
        const extra = [l.spills != null ? `${l.spills} spills` : null, l.fills != null ? `${l.fills} fills` : null, l.peak != null ? `peak ${l.peak} GRF` : null].filter(Boolean).join(", ");
        return h("li", { "data-loop": n, text: `L${n + 1}: depth ${l.depth || 1}, head ${flow.blocks[l.head] ? flow.blocks[l.head].id : "?"}, ${plural(blocks.length, "block")}, ${plural(count, "instruction")}${lines.length ? ", " + [...new Set(lines)].join(" ") : ""}${extra ? ", " + extra : ""}` });
      })
    );
  }

  // ---- the kernels table -----------------------------------------------------------

  /**
   * A sortable, filterable table: `cols` of {label, get, num, title, sort},
   * one row per item, which opens `#kernel-N` with N its `anchorOf` (a
   * capture's rank, as the terminal's table and `show DIR N` number it);
   * `nameOf` is the text the filter searches in (every name of it).
   */
  function table(cols, items, anchorOf, nameOf, sortFirst) {
    const thead = document.querySelector("#kernels thead");
    const tbody = document.querySelector("#kernels tbody");
    const rows = items.map((it, i) => {
      const n = anchorOf(it, i);
      const tr = h("tr", { "data-index": i, "data-kernel": n, tabindex: 0 });
      for (const c of cols) {
        const v = c.get(it);
        const props = { class: c.cls || (c.num ? "num" : null), title: c.title ? c.title(it) : null };
        // A name's cell: its text with what would hide in it marked.
        if (c.nodes) tr.append(h("td", props, c.nodes(it, v == null ? "-" : String(v))));
        else tr.append(h("td", { ...props, text: c.num ? fmt(v) : v == null ? "-" : String(v) }));
      }
      const open = () => (location.hash = `#kernel-${n}`);
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (e) => e.key === "Enter" && open());
      return tr;
    });
    let sortBy = -1;
    let dir = 1;
    const ths = cols.map((c, n) =>
      h("th", { class: c.num ? "num" : null, title: "sort", text: c.label, onclick: () => sort(n) })
    );
    thead.append(h("tr", null, ths));
    function sort(n) {
      dir = sortBy === n ? -dir : c0(n);
      sortBy = n;
      const c = cols[n];
      const keyed = rows.map((r, i) => [c.sort ? c.sort(items[i]) : c.get(items[i]), i]);
      keyed.sort((a, b) => {
        const [x, y] = [a[0], b[0]];
        if (x == null || y == null) return x == null ? (y == null ? a[1] - b[1] : 1) : -1;
        const d = c.num || (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
        return d ? d * dir : a[1] - b[1];
      });
      ths.forEach((t, i) => t.setAttribute("aria-sort", i === n ? (dir > 0 ? "ascending" : "descending") : "none"));
      const frag = document.createDocumentFragment();
      for (const [, i] of keyed) frag.append(rows[i]);
      tbody.append(frag);
    }
    const c0 = (n) => (cols[n].num && cols[n].label !== "#" ? -1 : 1);
    const frag = document.createDocumentFragment();
    rows.forEach((r) => frag.append(r));
    tbody.append(frag);
    // Ranked by that column first (device time, as the terminal's table).
    if (sortFirst != null && sortFirst >= 0) sort(sortFirst);
    const input = document.getElementById("filter");
    const shown = document.getElementById("shown");
    const names = items.map((it) => nameOf(it));
    function filter() {
      const q = input.value.trim();
      let test = (s) => s.toLowerCase().includes(q.toLowerCase());
      const re = /^\/(.*)\/([a-z]*)$/.exec(q);
      if (re) {
        try {
          const r = new RegExp(re[1], re[2]);
          test = (s) => r.test(s);
          input.classList.remove("bad");
        } catch {
          input.classList.add("bad");
        }
      }
      let n = 0;
      rows.forEach((r, i) => {
        const on = !q || test(names[i]);
        r.hidden = !on;
        n += on;
      });
      shown.textContent = `${n} of ${plural(rows.length, "kernel")}`;
    }
    input.addEventListener("input", filter);
    filter();
  }

  /**
   * Each item's name in the table: as the terminal's table names it (what
   * tells it from the others, in `DATA.names`), else its full name.
   */
  function shortNames(items) {
    const shown = new Map(items.map((k, i) => [k, Array.isArray(DATA.names) ? DATA.names[i] : null]));
    return (k) => shown.get(k) ?? readable(k);
  }
  /** `s` as one word of a shell command: as it is when nothing in it needs quoting. */
  const shellWord = (s) => (/^[A-Za-z0-9_.,:/@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);
  /** Says above the kernels table what the page does not hold (--page-kernels). */
  const pageNote = (text) => document.getElementById("kernels").before(h("p", { id: "page-kernels", class: "note", text }));
  /** The full name, for the name's tooltip (escaped: a tooltip holds text only) and the filter. */
  const fullName = (k) => escaped(readable(k));

  // ---- a capture -------------------------------------------------------------------

  function capture() {
    const r = DATA.report;
    const ks = r.kernels;
    const t = r.totals;
    const summary = document.getElementById("summary");
    summary.textContent =
      `${plural(t.kernels, "kernel")} launched ${plural(t.launches, "time")} (${t.appended} appended), ${t.matched} matched to their ISA, ${t.unmatched} not matched` +
      (r.command ? ` · command: ${r.command.join(" ")}` : "") +
      (r.emulate ? ` · emulated device ${r.emulate}: compiled, not executed` : "") +
      ` · ${r.tool}`;
    summary.title = summary.textContent;
    const anyRanks = ks.some((k) => k.ranks && k.ranks.length);
    const display = shortNames(ks);
    const tops = Array.isArray(DATA.tops) ? DATA.tops : [];
    const index = new Map(ks.map((k, i) => [k, i]));
    const top = (k) => tops[index.get(k)] || ["-", "-"];
    // The terminal table's time and share columns (--time), ranked by time as it is.
    const times = Array.isArray(DATA.times) ? DATA.times : [];
    const time = (k) => times[index.get(k)] || ["-", "-"];
    const byTime = (k) => (k.time ? k.time.estimated_ns : null);
    // #kernel-N is kernel #N: its rank, as the terminal's table and `show DIR N` number it.
    const byRank = new Map(ks.map((k, i) => [k.rank, i]));
    const cols = [
      { label: "#", num: true, get: (k) => k.rank },
      { label: "launches", num: true, get: (k) => (k.status === "not-launched" ? 0 : k.launches) },
      times.length ? { label: "time", num: true, get: (k) => time(k)[0], sort: byTime } : null,
      times.length ? { label: "share", num: true, get: (k) => time(k)[1], sort: byTime } : null,
      anyRanks ? { label: "ranks", get: (k) => ranges(k.ranks || []), sort: (k) => (k.ranks && k.ranks.length ? k.ranks[0] : null) } : null,
      { label: "kernel", cls: "name", get: display, title: fullName, nodes: nameNodes },
      { label: "SIMD", num: true, get: (k) => k.simd },
      { label: "GRF", num: true, get: (k) => k.grf },
      { label: "instrs", num: true, get: (k) => k.instructions },
      { label: "spill", num: true, get: (k) => k.spill_bytes },
      // The terminal table's two columns of the most launched shape, when a kernel has shapes.
      tops.length ? { label: "top shape", get: (k) => top(k)[0] } : null,
      tops.length ? { label: "occupancy", get: (k) => top(k)[1], sort: (k) => (k.shapes && k.shapes[0] && k.shapes[0].occupancy ? k.shapes[0].occupancy.percent : null) } : null,
      { label: "source", get: (k) => ({ "igc-dump": "dump", "module-binary": "binary" })[k.isa_source] || "-" },
      { label: "ISA file", cls: "path", get: (k) => k.asm_copy || k.asm || (k.status === "not-launched" ? "-" : `not matched: ${k.status}`) },
    ].filter(Boolean);
    table(cols, ks, (k) => k.rank, (k) => `${k.name}\n${k.demangled}\n${readable(k)}\n${display(k)}`, times.length ? cols.findIndex((c) => c.label === "time") : null);
    const notes = document.getElementById("notes");
    for (const line of DATA.device_time || []) notes.append(h("p", { class: "device-time", text: line }));
    if (r.unlaunched_compiled && !r.unlaunched_listed) notes.append(h("p", { text: `IGC also compiled ${plural(r.unlaunched_compiled, "kernel")} that were never launched (collect --all lists them)` }));
    const incomplete = r.counts_incomplete || [];
    if (incomplete.length) notes.append(h("details", { open: "" }, h("summary", { text: `counts incomplete: launches of ${plural(incomplete.length, "process", "processes")} are missing` }), h("ul", null, incomplete.map((w) => h("li", { text: w })))));
    const kept = r.counts_kept || [];
    const where = { staged: "in node-local memory (staged)", memory: "in the process's memory" };
    if (kept.length) notes.append(h("details", null, h("summary", { text: "counts kept out of the capture during the run" }), h("ul", null, kept.map((k) => h("li", { text: `${plural(k.processes, "process", "processes")}: ${where[k.place] || k.place}: ${k.reason}` })))));
    if (r.warnings.length) notes.append(h("details", null, h("summary", { text: plural(r.warnings.length, "warning") }), h("ul", null, r.warnings.map((w) => h("li", { text: w })))));
    const ranks = r.processes.map((p) => p.rank).filter((x) => x != null).sort((a, b) => a - b);
    if (ranks.length) notes.append(h("p", { text: `ranks ${ranges(ranks)} in ${plural(r.processes.length, "process", "processes")}` }));
    // The page holds the most launched kernels only (--page-kernels): said, with where the others are.
    const left = r.page_kernels ? r.page_kernels.left_out : 0;
    if (left) {
      const here = ks.reduce((s, k) => s + (k.status === "not-launched" ? 0 : k.launches), 0);
      const share = t.launches ? ` (${((100 * here) / t.launches).toFixed(1)}% of the launches)` : "";
      pageNote(`This page holds the ${ks.length === 1 ? "most launched kernel" : `${ks.length} most launched kernels`}${share}, not the other ${left}: report.json lists every one, xpu-asm-run show ${shellWord(DATA.dir)} N prints kernel #N, and xpu-asm-run collect ${shellWord(DATA.dir)} --page-kernels all puts them all on this page.`);
    }
    const last = ks.length ? ks[ks.length - 1].rank : 0;
    return (n, root) => {
      const i = byRank.get(n);
      if (i == null && n > last && n <= last + left) {
        root.append(h("p", { class: "warn", text: `kernel #${n} is not on this page, which holds the ${ks.length} most launched: xpu-asm-run show ${shellWord(DATA.dir)} ${n} prints it` }));
        return Promise.resolve();
      }
      const k = ks[i];
      if (!k) return null;
      root.append(h("h2", null, `#${k.rank} `, nameNodes(k, readable(k))));
      root.append(names(k));
      return kernelPane(root, k, DATA.isa[i]);
    };
  }

  function names(k) {
    return h("div", { class: "names" }, h("code", { class: "demangled" }, nameNodes(k, readable(k))), k.name !== k.demangled ? h("code", { class: "mangled" }, marked(k.name, false)) : null, k.name_hex ? h("code", { text: `bytes: ${k.name_hex}` }) : null);
  }

  // ---- a comparison ------------------------------------------------------------------

  function comparison() {
    const d = DATA.diff;
    const [ra, rb] = [DATA.a, DATA.b];
    const s = d.summary;
    document.getElementById("summary").textContent = `A: ${d.a} · B: ${d.b} · ${plural(s.in_both, "kernel")} in both, ${s.changed} changed; ${s.only_a} only in A, ${s.only_b} only in B` + (d.failed.length ? ` · --fail-on: ${d.failed.length} held` : "");
    const byRank = (r) => new Map(r.kernels.map((k, i) => [k.rank, i]));
    const [ia, ib] = [byRank(ra), byRank(rb)];
    const val = (side, f) => (side ? sideGet(side, f) : null);
    const display = shortNames(d.kernels);
    const timedBoth = Boolean(ra.time && rb.time);
    const cols = [
      { label: "kernel", cls: "name", get: display, title: fullName, nodes: nameNodes },
      { label: "in", get: (k) => (k.a && k.b ? "both" : k.a ? "A only" : "B only") },
      { label: "launches A", num: true, get: (k) => val(k.a, "launches") },
      { label: "launches B", num: true, get: (k) => val(k.b, "launches") },
      { label: "instrs A", num: true, get: (k) => val(k.a, "instructions") },
      { label: "instrs B", num: true, get: (k) => val(k.b, "instructions") },
      { label: "spill A", num: true, get: (k) => val(k.a, "spill_bytes") },
      { label: "spill B", num: true, get: (k) => val(k.b, "spill_bytes") },
      // Device times (ns, --time) when both captures have them.
      timedBoth ? { label: "time A", num: true, get: (k) => val(k.a, "time") } : null,
      timedBoth ? { label: "time B", num: true, get: (k) => val(k.b, "time") } : null,
      { label: "changed", get: (k) => (k.a && k.b ? k.changed.join(", ") || "no change" : "-") },
    ].filter(Boolean);
    // The page holds some of the comparison's kernels only (--page-kernels): said, with where the others are.
    const left = DATA.page_kernels ? DATA.page_kernels.left_out : 0;
    if (left) {
      const ab = `${shellWord(d.a)} ${shellWord(d.b)}`;
      pageNote(`This page holds ${d.kernels.length} of the comparison's ${d.kernels.length + left} kernels (those that changed or are in one capture only first, then the others in A's order), not the other ${left}: xpu-asm-run diff ${ab} --all lists every one, xpu-asm-run diff ${ab} KERNEL compares one's ISA, and --page-kernels all puts them all on the page.`);
    }
    // #kernel-N is the comparison's row N, from 1 as a capture's ranks are.
    table(cols, d.kernels, (k, i) => i + 1, (k) => `${k.name}\n${k.demangled}\n${readable(k)}\n${display(k)}`);
    return (n, root) => {
      const k = d.kernels[n - 1];
      if (!k) return null;
      root.append(h("h2", null, nameNodes(k, readable(k))));
      if (k.pairing) root.append(h("p", { text: k.pairing }));
      if (k.a && k.b) root.append(changeTable(k));
      const cols2 = h("div", { class: "sides" });
      root.append(cols2);
      const jobs = [];
      for (const [tag, side, r, idx, refs] of [["A", k.a, ra, ia, DATA.isa_a], ["B", k.b, rb, ib, DATA.isa_b]]) {
        const pane = h("section", { class: "side", "data-side": tag }, h("h3", { text: `${tag}: ${tag === "A" ? d.a : d.b}` }));
        cols2.append(pane);
        const n = side ? idx.get(side.rank) : undefined;
        if (n == null) {
          pane.append(h("p", { class: "none", text: `not in ${tag}` }));
          continue;
        }
        jobs.push(kernelPane(pane, r.kernels[n], refs[n], `${tag}: `));
      }
      return Promise.all(jobs);
    };
  }

  function sideGet(s, f) {
    if (f.startsWith("mix.")) return s.mix ? s.mix[f.slice(4)] : null;
    return s[f];
  }

  function changeTable(k) {
    if (!k.changed.length) return h("p", { text: "no change in the figures compared" });
    return h(
      "table",
      { class: "changes" },
      h("thead", null, h("tr", null, ["field", "A", "B", "change"].map((t) => h("th", { text: t })))),
      h(
        "tbody",
        null,
        k.changed.map((f) => {
          const [x, y] = [sideGet(k.a, f), sideGet(k.b, f)];
          const dlt = x != null && y != null ? y - x : null;
          const pct = dlt != null && x ? ` (${dlt > 0 ? "+" : ""}${((100 * dlt) / x).toFixed(1)}%)` : "";
          // Growth of a cost is red, as in the terminal (launches and SIMD are not costs).
          const cost = f !== "launches" && f !== "simd";
          return h("tr", { class: !cost ? null : dlt > 0 ? "up" : dlt < 0 ? "down" : null }, h("td", { text: f }), h("td", { class: "num", text: fmt(x) }), h("td", { class: "num", text: fmt(y) }), h("td", { class: "num", text: dlt == null ? "-" : `${dlt > 0 ? "+" : ""}${dlt}${pct}` }));
        })
      )
    );
  }

  // ---- routing: #kernel-N opens a kernel, anything else the table ---------------------

  function main() {
    const open = DATA.kind === "diff" ? comparison() : capture();
    const list = document.getElementById("list");
    const pane = document.getElementById("kernel");
    let shown = null;
    async function route() {
      const m = /^#kernel-(\d+)$/.exec(location.hash);
      if (!m) {
        pane.hidden = true;
        list.hidden = false;
        shown = null;
        return;
      }
      if (shown === m[1]) return;
      shown = m[1];
      pane.replaceChildren(h("p", null, h("a", { href: "#", text: "← all kernels" })));
      delete pane.dataset.ready;
      list.hidden = true;
      pane.hidden = false;
      window.scrollTo(0, 0);
      try {
        const done = open(Number(m[1]), pane);
        if (done == null) pane.append(h("p", { class: "warn", text: `no kernel #${m[1]} in this page` }));
        await done;
      } catch (e) {
        pane.append(h("p", { class: "warn", text: `cannot show this kernel: ${e.message}` }));
        console.error(e);
      }
      if (shown === m[1]) pane.dataset.ready = m[1];
    }
    window.addEventListener("hashchange", route);
    // The ISA elements follow this script: a kernel opens once they are parsed.
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", route);
    else route();
    document.body.dataset.readyMs = performance.now().toFixed(0);
    document.body.dataset.ready = "1";
  }
  main();
})();
