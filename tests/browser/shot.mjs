// docs/page.png, made from the demo (scripts/docs-examples.py --write):
// opens a capture's report.html in headless Chromium, opens the kernel
// named KERNEL (a click on its row), clicks its source line LINE (the
// text of the lines table's first cell, e.g. `kernels_a.cl:17`) when
// given, and writes the window as OUT.
//
//   node shot.mjs PAGE OUT KERNEL [LINE]
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pagePath, out, kernel, line] = process.argv.slice(2);
if (!pagePath || !out || !kernel) {
  console.error("usage: node shot.mjs PAGE OUT KERNEL [LINE]");
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), "xpu-asm-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  viewport: { width: 1400, height: 900 },
});
try {
  const page = await context.newPage();
  await page.goto(pathToFileURL(resolve(pagePath)).href, { waitUntil: "commit" });
  await page.waitForSelector("body[data-ready]", { timeout: 60000 });
  const row = page.locator("#kernels tbody tr", { has: page.locator("td.name", { hasText: kernel }) }).first();
  await row.click();
  await page.waitForSelector("#kernel[data-ready]", { timeout: 60000 });
  if (line) {
    await page.locator("#kernel table.lines tbody tr", { hasText: line }).first().click();
  }
  // The kernel's view from its heading (the click scrolled to the line).
  await page.locator("#kernel").evaluate((e) => e.scrollIntoView());
  await page.waitForTimeout(300);
  await page.screenshot({ path: out, fullPage: false });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
