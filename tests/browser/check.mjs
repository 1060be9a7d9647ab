// Opens a page of xpu-asm (report.html, or the page of `diff --html`) in
// Debian's headless Chromium and prints, as one JSON document on stdout,
// what the page shows: console errors, requests that left the file, the
// kernels table, the run's device time, and per kernel opened its figures,
// ISA listing, control-flow graph, pressure plot, spill and fill sites, and
// what a click on each source line selects. tests/tests/page.rs runs it and asserts on the result.
//
//   node check.mjs PAGE OUT_DIR [--kernels all|N,M,...] [--click N] [--shot N]
//                  [--filter TEXT] [--anchor N]
//
// N of --kernels, --click and --shot is a row of the table (from 0, its
// data-index); each is opened through the address its row links to
// (#kernel-M, M its data-kernel; past the table's rows, M is N + 1);
// --anchor N (any number of times): the page loaded afresh at PAGE#kernel-N,
// what it opens (its heading), and the address a click on the row that
// names that kernel goes to;
// --filter TEXT (any number of times): the rows the table shows with TEXT
// typed in its filter;
// --click N: click each source line of kernel N (and one instruction);
// --shot N: screenshots of the table and of kernel N, with their pixel
// statistics (OUT_DIR/list.png, OUT_DIR/kernel.png).
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pagePath, outDir, ...rest] = process.argv.slice(2);
if (!pagePath || !outDir) {
  console.error("usage: node check.mjs PAGE OUT_DIR [--kernels all|N,...] [--click N] [--shot N] [--filter TEXT]");
  process.exit(2);
}
const opt = {};
const filters = [];
const anchors = [];
for (let i = 0; i < rest.length; i += 2) {
  const key = rest[i].replace(/^--/, "");
  if (key === "filter") filters.push(rest[i + 1]);
  else if (key === "anchor") anchors.push(Number(rest[i + 1]));
  else opt[key] = rest[i + 1];
}

const profile = mkdtempSync(join(tmpdir(), "xpu-asm-chromium-"));
// A new empty profile (--user-data-dir) for each run.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1400, height: 900 },
});
const result = { errors: [], requests: [], kernels: [], opened: [] };
try {
  const page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && result.errors.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => result.errors.push(`page: ${e.message}`));
  page.on("dialog", (d) => (result.errors.push(`dialog: ${d.message()}`), d.dismiss()));
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("blob:")) result.requests.push(u);
  });
  const url = pathToFileURL(resolve(pagePath)).href;
  const t0 = Date.now();
  await page.goto(url, { waitUntil: "commit" });
  await page.waitForSelector("body[data-ready]", { timeout: 60000 });
  result.load_ms = Date.now() - t0;
  // From the start of the navigation to the table built, as the page measured it.
  result.ready_ms = await page.evaluate(() => Number(document.body.dataset.readyMs));
  await page.waitForLoadState("load");
  result.loaded_ms = Date.now() - t0;
  result.kind = await page.evaluate(() => JSON.parse(document.getElementById("data").textContent).kind);
  result.kernels = await page.$$eval("#kernels tbody tr", (rows) =>
    rows.map((r) => {
      const name = r.querySelector("td.name");
      return {
        index: Number(r.dataset.index),
        kernel: Number(r.dataset.kernel),
        cells: [...r.cells].map((c) => c.textContent),
        // The kernel's name cell: its tooltip, and whether it is cut.
        title: name ? name.getAttribute("title") : null,
        clipped: name ? name.scrollWidth > name.clientWidth : null,
        // What the name cell marks (each hidden character's escape), and
        // whether it names the empty name.
        marks: name ? [...name.querySelectorAll(".esc")].map((e) => e.textContent) : [],
        empty: name ? !!name.querySelector(".empty-name") : false,
      };
    })
  );
  result.columns = await page.$$eval("#kernels thead th", (ths) => ths.map((t) => t.textContent));
  // The run's device time (--time), as the page says it under the table.
  result.device_time = await page.$$eval("p.device-time", (ps) => ps.map((p) => p.textContent));
  // What the page says above its table of the kernels it does not hold (--page-kernels).
  result.page_note = await page.evaluate(() => {
    const n = document.getElementById("page-kernels");
    return n ? n.textContent : null;
  });
  // What an injection would leave: a global set, scripts or images added.
  result.injected = await page.evaluate(() => ({
    pwned: window.pwned ?? null,
    scripts: document.scripts.length,
    images: document.images.length,
    iframes: document.querySelectorAll("iframe, object, embed").length,
  }));
  if (opt.shot != null) result.list_shot = await shot(page, join(outDir, "list.png"));
  result.filtered = [];
  for (const text of filters) result.filtered.push(await filtered(page, text));

  const which =
    opt.kernels === "all" ? result.kernels.map((k) => k.index) : (opt.kernels || "").split(",").filter(Boolean).map(Number);
  for (const i of which) result.opened.push(await open(page, i));
  if (opt.click != null) result.clicks = await clicks(page, Number(opt.click));
  if (opt.shot != null) {
    await open(page, Number(opt.shot));
    result.kernel_shot = await shot(page, join(outDir, "kernel.png"));
  }
  result.anchors = [];
  for (const n of anchors) result.anchors.push(await anchor(context, url, n));
} catch (e) {
  result.errors.push(`check.mjs: ${e.stack || e}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result) + "\n");

/**
 * The page loaded afresh at `url#kernel-n`: the heading of what it opens,
 * then back on the table, the address a click on the row of data-kernel n
 * goes to.
 */
async function anchor(context, url, n) {
  const page = await context.newPage();
  try {
    await page.goto(`${url}#kernel-${n}`, { waitUntil: "commit" });
    await page.waitForSelector(`#kernel[data-ready="${n}"]`, { timeout: 60000 });
    const heading = await page.evaluate(() => {
      const h2 = document.querySelector("#kernel h2");
      return h2 ? h2.textContent : null;
    });
    await page.evaluate(() => (location.hash = ""));
    await page.click(`#kernels tbody tr[data-kernel="${n}"]`);
    await page.waitForSelector(`#kernel[data-ready="${n}"]`, { timeout: 60000 });
    return { anchor: n, heading, clicked: await page.evaluate(() => location.hash) };
  } finally {
    await page.close();
  }
}

/**
 * Opens the kernel of row `i` through its address (#kernel-N, N its
 * data-kernel; for a row past the table's, a kernel the page does not
 * hold, N is i + 1: the rank it has) and reads what each of its panes shows.
 */
async function open(page, i) {
  const row = await page.$(`#kernels tbody tr[data-index="${i}"]`);
  const n = row ? await row.evaluate((r) => r.dataset.kernel) : String(i + 1);
  await page.evaluate((k) => (location.hash = `#kernel-${k}`), n);
  await page.waitForSelector(`#kernel[data-ready="${n}"]`, { timeout: 60000 });
  return page.evaluate((n) => {
    const root = document.getElementById("kernel");
    const panes = root.querySelectorAll(".side").length ? [...root.querySelectorAll(".side")] : [root];
    const one = (p) => ({
      side: p.dataset.side || null,
      instructions: p.querySelectorAll(".isa .ins").length,
      cfg_blocks: p.querySelectorAll("svg.cfg .block").length,
      cfg_edges: p.querySelectorAll("svg.cfg .edge").length,
      loops: p.querySelectorAll("svg.cfg rect.loop").length,
      no_cfg: !!p.querySelector(".no-cfg"),
      pressure_points: (() => {
        const l = p.querySelector("svg.pressure polyline.live");
        return l ? l.getAttribute("points").trim().split(/\s+/).length : 0;
      })(),
      pressure_budget: !!p.querySelector("svg.pressure .budget"),
      pressure_peak: !!p.querySelector("svg.pressure .peak"),
      no_pressure: !!p.querySelector(".no-pressure"),
      spill_sites: p.querySelectorAll(".isa .ins.site-spill").length,
      fill_sites: p.querySelectorAll(".isa .ins.site-fill").length,
      mix_bars: p.querySelectorAll(".mix .bar").length,
      // The figures' list: each term and what it says.
      figures: Object.fromEntries([...p.querySelectorAll("dl.figures dt")].map((dt) => [dt.textContent, dt.nextElementSibling ? dt.nextElementSibling.textContent : null])),
      source_lines: p.querySelectorAll("table.lines tbody tr").length,
      warnings: [...p.querySelectorAll(".warn")].map((w) => w.textContent),
      // The listing as text, for small kernels.
      text:
        p.querySelectorAll(".isa > div").length <= 80
          ? [...p.querySelectorAll(".isa > div")].map((d) => d.textContent).join("\n")
          : null,
    });
    const names = [...root.querySelectorAll(".names code")].map((c) => c.textContent);
    const h2 = root.querySelector("h2");
    const marks = h2 ? [...h2.querySelectorAll(".esc")].map((e) => e.textContent) : [];
    return { index: n, title: h2 && h2.textContent, marks, names, panes: panes.map(one) };
  }, i);
}

/** The rows shown with `text` typed in the filter (then cleared), and what the page says of them. */
async function filtered(page, text) {
  await page.fill("#filter", text);
  const out = await page.evaluate((t) => ({
    text: t,
    rows: [...document.querySelectorAll("#kernels tbody tr")].filter((r) => !r.hidden).map((r) => Number(r.dataset.index)),
    shown: document.getElementById("shown").textContent,
  }), text);
  await page.fill("#filter", "");
  return out;
}

/** Clicks each source line of kernel `i`: which instructions are selected. */
async function clicks(page, i) {
  await open(page, i);
  const keys = await page.$$eval("#kernel table.lines tbody tr", (rows) => rows.map((r) => r.dataset.key));
  const out = { lines: [] };
  for (let n = 0; n < keys.length; n++) {
    await page.click(`#kernel table.lines tbody tr:nth-child(${n + 1})`);
    out.lines.push(
      await page.evaluate((k) => {
        const sel = [...document.querySelectorAll("#kernel .isa .ins.sel")];
        const row = [...document.querySelectorAll("#kernel table.lines tbody tr")].find((r) => r.dataset.key === k);
        return {
          key: k,
          selected: sel.length,
          all_of_line: sel.every((e) => e.dataset.key === k),
          of_line: [...document.querySelectorAll("#kernel .isa .ins")].filter((e) => e.dataset.key === k).length,
          row_selected: row.classList.contains("sel"),
        };
      }, keys[n])
    );
  }
  // An instruction shows its line: the last instruction with one.
  const last = await page.$$eval("#kernel .isa .ins[data-key]", (rows) => rows.length && Number(rows[rows.length - 1].dataset.i));
  await page.click(`#kernel .isa .ins[data-i="${last}"]`);
  out.instruction = await page.evaluate((n) => {
    const ins = document.querySelector(`#kernel .isa .ins[data-i="${n}"]`);
    const rows = [...document.querySelectorAll("#kernel table.lines tr.sel")].map((r) => r.dataset.key);
    return { i: n, key: ins.dataset.key, current: ins.classList.contains("cur"), lines_selected: rows };
  }, last);
  return out;
}

/** A screenshot, and how many distinct colours it has (a blank page has one). */
async function shot(page, path) {
  const png = await page.screenshot({ path, fullPage: false });
  const stats = await page.context().newPage();
  try {
    return await stats.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      [c.width, c.height] = [img.width, img.height];
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const colours = new Set();
      for (let i = 0; i < d.length; i += 4 * 7) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return { width: img.width, height: img.height, colours: colours.size, bytes: Math.floor((b64.length * 3) / 4) };
    }, png.toString("base64"));
  } finally {
    await stats.close();
  }
}
