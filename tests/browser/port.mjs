// Opens the page of `xpu-asm-run port` (DIR/port/index.html) in Debian's
// headless Chromium and prints, as one JSON document on stdout, what it
// shows: console errors, requests that left the file, the products listed,
// the table (each row's kernel and, per device and figure, the cell's text
// and whether it is marked worse), and, with the first kernel's ISA opened,
// its columns (device, position on the screen, the text of its listing).
// tests/tests/shapes.rs runs it and asserts on the result.
//
//   node port.mjs PAGE
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pagePath] = process.argv.slice(2);
if (!pagePath) {
  console.error("usage: node port.mjs PAGE");
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), "xpu-asm-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1600, height: 900 },
});
const result = { errors: [], requests: [], products: [], rows: [], isa: [] };
try {
  const page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && result.errors.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => result.errors.push(`page: ${e.message}`));
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith("file:") && !u.startsWith("data:")) result.requests.push(u);
  });
  await page.goto(pathToFileURL(resolve(pagePath)).href, { waitUntil: "load" });
  result.products = await page.$$eval("#products li", (ls) =>
    ls.map((l) => ({ product: l.dataset.product, links: [...l.querySelectorAll("a")].map((a) => a.getAttribute("href")) })));
  result.rows = await page.$$eval("#kernels tbody tr", (trs) =>
    trs.map((tr) => {
      const cells = {};
      for (const td of tr.querySelectorAll("td[data-device]")) {
        const d = td.dataset.device;
        cells[d] = cells[d] || {};
        cells[d][td.dataset.figure || "not_ported"] = { text: td.textContent, worse: td.classList.contains("worse") };
      }
      return { kernel: tr.dataset.kernel, launches: tr.children[1].textContent, shape: tr.children[2].textContent, cells };
    }));
  const first = page.locator("details").first();
  if ((await first.count()) > 0) {
    await first.locator("summary").click();
    result.isa = await first.evaluate((d) =>
      [...d.querySelectorAll(".isa > div")].map((c) => {
        const r = c.getBoundingClientRect();
        const pre = c.querySelector("pre");
        return { device: c.dataset.device, x: r.x, y: r.y, width: r.width, visible: r.width > 0 && r.height > 0,
          text: pre ? pre.textContent : null };
      }));
    result.isa_kernel = await first.getAttribute("data-kernel");
  }
} catch (e) {
  result.errors.push(`check: ${e.message}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result) + "\n");
