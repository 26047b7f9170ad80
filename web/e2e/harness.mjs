// Browser-test harness: serves dist/ on 127.0.0.1 under a sub-path (as a
// static host would) and drives Debian's Chromium with playwright-core.
import { before, after } from 'node:test';
import { createServer } from 'node:http';
import { readFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
const dist = path.join(root, 'dist');
const tools = process.env.SCHEDLAB_TOOLS || path.join(root, '.tools');
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');

/** The sub-path the site is served from, to prove dist/ works off the root. */
export const BASE = '/schedlab/';
export const screenshots = path.join(here, 'screenshots');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Starts the static server on a free port; resolves to {url, close}. */
export async function serveDist() {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (!url.pathname.startsWith(BASE)) {
      res.writeHead(404).end('outside the sub-path');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(BASE.length));
    // A directory's index, as every static host serves it (book/ -> book/index.html).
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(dist, rel);
    if (!file.startsWith(dist)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(body);
    } catch {
      // As static hosts do: the site's 404.html for any missing path.
      const notFound = await readFile(path.join(dist, '404.html')).catch(() => 'not found');
      res.writeHead(404, { 'content-type': TYPES['.html'] }).end(notFound);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${BASE}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Launches headless Chromium with the flags this closed network needs
 * (playwright gives each launch a fresh, empty profile). */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(process.env.CHROMIUM_JS_FLAGS ? [`--js-flags=${process.env.CHROMIUM_JS_FLAGS}`] : []),
    ],
  });
}

/** A new page (or `page`, given) that records console errors and uncaught
 * exceptions. */
export async function openPage(browser, url, { viewport = { width: 1366, height: 768 }, cores, context, page: given } = {}) {
  const page = given ?? (context ? await context.newPage() : await browser.newPage({ viewport }));
  if (context || given) await page.setViewportSize(viewport);
  if (cores) {
    // Pretend the machine has `cores` cores, to test the worker pool's size.
    await page.addInitScript((n) => {
      Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n });
    }, cores);
  }
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('response', (res) => {
    if (res.status() >= 400) errors.push(`${res.status()} ${res.url()}`);
  });
  await page.goto(url);
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 30_000 });
  return { page, errors };
}

/** Saves a full-page screenshot to web/e2e/screenshots/NAME.png. */
export async function screenshot(page, name, { fullPage = true } = {}) {
  await mkdir(screenshots, { recursive: true });
  const file = path.join(screenshots, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** Clicks Run and waits until the run is done; returns the results JSON. */
export async function runToEnd(page, { timeout = 120_000, keyboard = false } = {}) {
  const generation = Number(await page.getAttribute('#run-status', 'data-run') ?? 0);
  if (keyboard) await page.keyboard.press('Control+Enter');
  else await page.click('button#run');
  await page.waitForFunction(
    (g) => {
      const status = document.querySelector('#run-status');
      if (document.querySelector('#run-error')) return true;
      return Number(status?.dataset.run) > g && /^done/.test(status.textContent);
    },
    generation,
    { timeout },
  );
  const error = await page.$('#run-error');
  if (error) throw new Error(await error.textContent());
  return JSON.parse(await page.textContent('#results-json'));
}

/** `schedlab ARGS...` from the native CLI (built by cargo test). */
export function cli(args) {
  const bin = path.join(root, 'target', 'debug', 'schedlab');
  if (existsSync(bin)) return execFileSync(bin, args, { encoding: 'utf8' });
  return execFileSync('cargo', ['run', '-q', '-p', 'schedlab-cli', '--', ...args], { cwd: root, encoding: 'utf8' });
}

/** The site's origin, of a URL under it. */
const originOf = (url) => new URL(url).origin;

/** Whether a request leaves the site: any http(s) URL of another origin
 * (data:, blob: and about: never leave the browser). */
export const leavesOrigin = (url, site) => /^(https?|wss?):/.test(url) && originOf(url) !== originOf(site);

/** Starts the server and the browser for a test file; read them after `before`.
 * Every page of every context is watched: a request that leaves the site's
 * origin fails the file (the site must ask nothing of any other host). */
export function useBrowser() {
  const ctx = { offOrigin: [] };
  before(async () => {
    ctx.server = await serveDist();
    ctx.browser = await launchBrowser();
    const watch = (context) => context.on('request', (req) => {
      if (leavesOrigin(req.url(), ctx.server.url)) ctx.offOrigin.push(`${req.url()} (from ${req.frame()?.url() ?? '?'})`);
    });
    const { newContext, newPage } = ctx.browser;
    ctx.browser.newContext = async (...args) => {
      const context = await newContext.apply(ctx.browser, args);
      watch(context);
      return context;
    };
    ctx.browser.newPage = async (...args) => {
      const page = await newPage.apply(ctx.browser, args);
      watch(page.context());
      return page;
    };
  });
  after(async () => {
    await ctx.browser?.close();
    await ctx.server?.close();
    if (ctx.offOrigin.length) throw new Error(`requests left the site's origin:\n${ctx.offOrigin.join('\n')}`);
  });
  return ctx;
}

/** The input bound to an editor field (its `data-field`). */
export const field = (name) => `[data-field="${name}"]`;

/** axe-core's serious and critical violations on the page as it is now
 * (axe-core from .tools/, as locked in tools/package-lock.json). */
export async function axeViolations(page) {
  const axePath = createRequire(path.join(tools, 'package.json')).resolve('axe-core/axe.min.js');
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) {
    // Evaluated, not added as a <script>: the page's CSP refuses inline scripts.
    await page.evaluate(await readFile(axePath, 'utf8'));
  }
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}; at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}
