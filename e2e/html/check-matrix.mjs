// check-matrix.mjs drives the HTML capability matrix (acpprobe matrix --format html) in
// Debian's headless Chromium through playwright-core, as a person would: it opens the page from
// file://, sorts by a numeric and a text column (twice each), opens one agent's details, and
// saves a screenshot. Any failure exits 1 with a message that says what was wrong.
//
//   node e2e/html/check-matrix.mjs PAGE.html SHOT.png [--rows=N] [--numeric=KEY] [--text=KEY]
//        [--open=AGENT-ID] [--expect=TEXT]... [--literal=TEXT]...
//
// --rows: the number of agents the table must have. --numeric / --text: the columns (data-key)
// to sort by (startup, agent). --open: the agent whose details are opened; each --expect must
// then be visible in them. --literal: text that must appear as text in the table (markup from
// an agent, shown, never run). The page must load nothing but itself, raise no script error
// and open no dialog.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const CHROMIUM = process.env.ACPPROBE_CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

class CheckError extends Error {}
function fail(msg) { throw new CheckError(msg); }

function parseArgs(argv) {
  const o = { files: [], rows: null, numeric: "startup", text: "agent", open: null, expect: [], literal: [] };
  for (const a of argv) {
    const m = /^--([a-z]+)=(.*)$/s.exec(a);
    if (!m) { o.files.push(a); continue; }
    const [, k, v] = m;
    switch (k) {
      case "rows": o.rows = Number(v); break;
      case "numeric": o.numeric = v; break;
      case "text": o.text = v; break;
      case "open": o.open = v; break;
      case "expect": o.expect.push(v); break;
      case "literal": o.literal.push(v); break;
      default: fail(`unknown option --${k}`);
    }
  }
  if (o.files.length !== 2) fail("usage: node check-matrix.mjs PAGE.html SHOT.png [--rows=N] [--numeric=KEY] [--text=KEY] [--open=ID] [--expect=TEXT]... [--literal=TEXT]...");
  if (o.rows !== null && !(o.rows > 0)) fail("--rows wants a positive number");
  return o;
}

// column returns the cells of one column, in the table's current order.
async function column(page, key) {
  return page.$$eval(`#matrix > tbody.agent > tr.summary > td[data-key="${key}"]`, (tds) =>
    tds.map((td) => ({ text: td.textContent.trim(), sort: td.getAttribute("data-sort") })));
}

async function ariaSort(page, key) {
  return page.getAttribute(`#matrix > thead > tr > th[data-key="${key}"]`, "aria-sort");
}

// checkOrder asserts the column is ordered (dir 1 ascending, -1 descending) with empty cells
// ("-") after all others.
function checkOrder(cells, dir, numeric, what) {
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  let seenEmpty = false;
  let prev = null;
  const values = [];
  for (const c of cells) {
    const empty = c.text === "-" || c.text === "";
    if (empty) { seenEmpty = true; continue; }
    if (seenEmpty) fail(`${what}: "${c.text}" comes after an empty cell: ${JSON.stringify(cells.map((x) => x.text))}`);
    let v = c.text;
    if (numeric) {
      v = Number(c.sort ?? c.text);
      if (Number.isNaN(v)) fail(`${what}: cell "${c.text}" (data-sort ${c.sort}) is not a number`);
      if (Number(c.text) !== v) fail(`${what}: data-sort ${c.sort} disagrees with the text "${c.text}"`);
    }
    if (prev !== null) {
      const cmp = numeric ? v - prev : collator.compare(v, prev);
      if (cmp * dir < 0) fail(`${what}: "${c.text}" is out of order: ${JSON.stringify(cells.map((x) => x.text))}`);
    }
    prev = v;
    values.push(v);
  }
  return values;
}

async function sortCheck(page, key, numeric) {
  const th = page.locator(`#matrix > thead > tr > th[data-key="${key}"]`);
  if ((await th.count()) !== 1) fail(`no single column header th[data-key="${key}"]`);
  const classes = (await th.getAttribute("class")) || "";
  if (numeric !== classes.split(/\s+/).includes("num")) fail(`column ${key}: numeric is ${!numeric}, want ${numeric}`);
  await th.click();
  if ((await ariaSort(page, key)) !== "ascending") fail(`column ${key}: aria-sort is not "ascending" after one click`);
  const asc = await column(page, key);
  const values = checkOrder(asc, 1, numeric, `sorted by ${key} ascending`);
  if (new Set(values.map(String)).size < 2) fail(`column ${key} has fewer than 2 distinct values (${JSON.stringify(asc.map((c) => c.text))}): the sort check would prove nothing`);
  await th.click();
  if ((await ariaSort(page, key)) !== "descending") fail(`column ${key}: aria-sort is not "descending" after a second click`);
  const desc = await column(page, key);
  checkOrder(desc, -1, numeric, `sorted by ${key} descending`);
  const others = await page.$$eval(`#matrix > thead > tr > th[aria-sort="ascending"], #matrix > thead > tr > th[aria-sort="descending"]`, (ths) => ths.length);
  if (others !== 1) fail(`${others} columns show a sort direction, want 1`);
  return { asc: asc.map((c) => c.text), desc: desc.map((c) => c.text) };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const [pagePath, shotPath] = o.files.map((f) => path.resolve(f));
  statSync(pagePath);
  statSync(CHROMIUM);

  const profile = mkdtempSync(path.join(tmpdir(), "acpprobe-chromium-"));
  const problems = [];
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: ARGS,
      viewport: { width: 1600, height: 1100 }, deviceScaleFactor: 1, colorScheme: "light", timeout: 60000,
    });
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(15000);
    page.on("dialog", (d) => { problems.push(`the page opened a ${d.type()} dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
    page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
    page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
    page.on("request", (r) => {
      const u = r.url();
      if (!u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("about:")) problems.push(`the page loaded ${u}: it must be self-contained`);
    });

    await page.goto(pathToFileURL(pagePath).href, { waitUntil: "load" });
    const title = await page.title();
    if (!title.startsWith("ACP capability matrix")) fail(`title is "${title}"`);

    // The table: one header per column, one tbody per agent, every cell keyed.
    const keys = await page.$$eval("#matrix > thead > tr > th", (ths) => ths.map((th) => th.getAttribute("data-key")));
    if (keys.length < 5 || keys.some((k) => !k)) fail(`column headers without data-key: ${JSON.stringify(keys)}`);
    const rows = await page.locator("#matrix > tbody.agent").count();
    if (o.rows !== null && rows !== o.rows) fail(`the table has ${rows} agents, want ${o.rows}`);
    const rowKeys = await page.$$eval("#matrix > tbody.agent > tr.summary", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.getAttribute("data-key")).join(",")));
    for (const rk of rowKeys) if (rk !== keys.join(",")) fail(`a row's cells are keyed ${rk}, want ${keys.join(",")}`);
    if (await page.locator("#matrix > tbody > tr.detail:visible").count()) fail("details are shown before any click");
    for (const text of o.literal) {
      const found = await page.$$eval("#matrix > tbody.agent > tr.summary", (trs, t) => trs.some((tr) => tr.textContent.includes(t)), text);
      if (!found) fail(`the text ${JSON.stringify(text)} is not shown in the table (escaped markup must show as text)`);
    }
    const scripts = await page.$$eval("script", (s) => s.length);
    if (scripts !== 1) fail(`the page has ${scripts} script elements, want its own 1`);

    const numeric = await sortCheck(page, o.numeric, true);
    const text = await sortCheck(page, o.text, false);
    // Leave the table sorted ascending by the text column.
    await page.click(`#matrix > thead > tr > th[data-key="${o.text}"]`);

    // The filter keeps the agents whose row mentions the text, and only those.
    if (o.open !== null) {
      await page.fill("#filter", o.open);
      const kept = await page.$$eval("#matrix > tbody.agent", (tbs) => tbs.filter((tb) => !tb.hidden).map((tb) => tb.getAttribute("data-id")));
      if (!kept.includes(o.open) || kept.length === rows) fail(`filtering on ${JSON.stringify(o.open)} kept ${JSON.stringify(kept)}`);
      const shownCount = await page.textContent("#shown");
      if (shownCount !== String(kept.length)) fail(`the header says ${shownCount} agents shown, ${kept.length} are`);
      await page.fill("#filter", "");
      const back = await page.locator("#matrix > tbody.agent:visible").count();
      if (back !== rows) fail(`clearing the filter shows ${back} agents, want ${rows}`);
    }

    let opened = "";
    if (o.open !== null) {
      const body = page.locator(`#matrix > tbody.agent[data-id="${o.open.replace(/["\\]/g, "\\$&")}"]`);
      if ((await body.count()) !== 1) fail(`no single agent with data-id ${JSON.stringify(o.open)}`);
      const detail = body.locator("tr.detail");
      if (await detail.isVisible()) fail(`the details of ${o.open} are visible before the click`);
      await body.locator("tr.summary button.disclose").click();
      await detail.waitFor({ state: "visible" });
      if ((await body.locator("button.disclose").getAttribute("aria-expanded")) !== "true") fail("aria-expanded is not true on the opened row");
      for (const want of o.expect) {
        const hit = detail.getByText(want, { exact: false }).first();
        if (!(await hit.count()) || !(await hit.isVisible())) fail(`${JSON.stringify(want)} is not visible in the details of ${o.open}`);
      }
      const open = await page.locator("#matrix > tbody > tr.detail:visible").count();
      if (open !== 1) fail(`${open} detail rows are visible, want 1`);
      opened = o.open;
      // The result JSON is there on demand, pretty-printed.
      const json = body.locator("details.json");
      await json.locator("summary").click();
      const pre = await json.locator("pre").textContent();
      let doc;
      try { doc = JSON.parse(pre); } catch (e) { fail(`the result JSON of ${o.open} does not parse: ${e.message}`); }
      if (doc.schema !== "acpprobe.result/v1") fail(`the result JSON of ${o.open} has schema ${doc.schema}`);
      if (!pre.includes("\n  ")) fail("the result JSON is not pretty-printed");
      await json.locator("summary").click(); // fold it again for the screenshot
    }

    // The screenshot shows the opened agent's row at the top of the table, scrolled to the left.
    if (opened) {
      await page.$eval(`#matrix > tbody.agent[data-id="${opened.replace(/["\\]/g, "\\$&")}"]`, (tb) => {
        const wrap = document.getElementById("wrap");
        wrap.scrollLeft = 0;
        wrap.scrollTop = tb.offsetTop - document.querySelector("#matrix > thead").offsetHeight;
      });
    }
    await page.screenshot({ path: shotPath, fullPage: false });
    if (problems.length) fail(problems.join("\n"));
    console.log(`check-matrix: ok: ${rows} agents; ${o.numeric} ascending ${JSON.stringify(numeric.asc)}; ${o.text} ascending ${JSON.stringify(text.asc)}` +
      (opened ? `; opened ${opened}` : "") + `; screenshot ${shotPath}`);
  } finally {
    if (context) await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  const msg = e instanceof CheckError ? e.message : (e && e.stack) || String(e);
  console.error(`check-matrix: FAIL: ${msg}`);
  process.exit(1);
});
