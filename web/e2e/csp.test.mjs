// The site asks nothing of its host: each page carries its own
// Content-Security-Policy (tools/csp.mjs), the page and the embed run
// under it with no violation, the policy binds (no eval, no injected
// inline script, nothing fetched from elsewhere), and a missing path at
// any depth gets the 404 page, which finds its way back to the playground.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { useBrowser, openPage, runToEnd, root, leavesOrigin, screenshot } from './harness.mjs';

const env = useBrowser();
const dist = path.join(root, 'dist');

/** The policy in a built page's <meta>, as {directive: [sources]}. */
function policyOf(file) {
  const html = readFileSync(path.join(dist, file), 'utf8');
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/);
  assert.ok(meta, `${file} carries a CSP`);
  assert.ok(html.indexOf(meta[0]) < html.indexOf('<script'), `${file}: the CSP comes before any script`);
  return { html, policy: Object.fromEntries(meta[1].split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v])) };
}

/** Records the page's CSP violations in window.__violations. */
async function recordViolations(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.violatedDirective}: ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
}
const violations = (page) => page.evaluate(() => window.__violations);

test('each page has a policy: scripts from the site and its own hashed inline scripts, wasm, nothing else', () => {
  for (const file of ['index.html', 'schedlab-js-example.html', '404.html']) {
    const { html, policy } = policyOf(file);
    const scripts = policy['script-src'];
    assert.ok(scripts.includes("'self'") && scripts.includes("'wasm-unsafe-eval'"), `${file}: ${scripts}`);
    for (const loose of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'blob:']) {
      assert.ok(!scripts.includes(loose), `${file}: script-src has no ${loose}`);
    }
    const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.filter((s) => s.startsWith("'sha256-")).length, inline.length, `${file}: a hash per inline script`);
    for (const [, body] of inline) {
      assert.ok(scripts.includes(`'sha256-${createHash('sha256').update(body).digest('base64')}'`), `${file}: the inline script is hashed as it is`);
    }
    for (const d of ['default-src', 'connect-src', 'worker-src']) assert.deepEqual(policy[d], ["'self'"], `${file}: ${d}`);
    assert.deepEqual(policy['object-src'], ["'none'"]);
    assert.ok(!policy['style-src'].includes("'unsafe-inline'"), `${file}: no inline style sheets but its own, hashed`);
  }
});

test('the page runs under its policy: run, charts, help, the why view; and so does the embed', async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  await recordViolations(page);
  const { errors } = await openPage(env.browser, `${env.server.url}#preset=retune-pipe-test`, { context, page });
  await runToEnd(page);
  await page.waitForSelector('.chart > svg');
  await page.locator('#timeline polygon.wakeup').first().click();
  await page.waitForSelector('#why-tree', { timeout: 60_000 });
  await page.keyboard.press('?');
  await page.waitForSelector('[role="dialog"]');
  await page.keyboard.press('Escape');
  assert.deepEqual(await violations(page), []);

  const embed = await context.newPage();
  await recordViolations(embed);
  const { errors: embedErrors } = await openPage(env.browser, `${env.server.url}?embed#preset=kvm-pipe-test-pinning`, { context, page: embed });
  await embed.click('button#run');
  await embed.waitForSelector('.chart > svg', { timeout: 60_000 });
  assert.deepEqual(await violations(embed), []);
  assert.deepEqual([...errors, ...embedErrors], []);
  await context.close();
});

// (eval is not tried here: a DevTools evaluation is exempt from the page's
// policy; the page's own eval is what the run above would have hit, and
// script-src is checked to have no 'unsafe-eval'.)
test('the policy binds: no injected inline script, no request to another origin', async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  await recordViolations(page);
  await openPage(env.browser, env.server.url, { context, page });
  const outcome = await page.evaluate(async () => {
    const out = {};
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true;';
    document.head.append(s);
    out.injected = window.__injected === true;
    try { await fetch('http://127.0.0.2:9/'); out.fetch = 'fetched'; } catch (e) { out.fetch = e.name; }
    return out;
  });
  assert.deepEqual(outcome, { injected: false, fetch: 'TypeError' });
  const seen = await violations(page);
  assert.ok(seen.some((v) => v.startsWith('script-src')), `an inline-script violation: ${seen}`);
  assert.ok(seen.some((v) => v.startsWith('connect-src') && v.includes('127.0.0.2')), `a connect-src violation: ${seen}`);
  await context.close();
});

test('the JS API example runs under its policy', async () => {
  const page = await env.browser.newPage();
  await recordViolations(page);
  await page.goto(`${env.server.url}schedlab-js-example.html`);
  await page.waitForFunction(() => document.querySelector('#table').textContent !== 'running…', null, { timeout: 60_000 });
  assert.match(await page.textContent('#table'), /usecs\/loop/);
  assert.equal(await page.textContent('#error'), '');
  assert.deepEqual(await violations(page), []);
  await page.close();
});

test('a missing path at any depth gets the 404 page, which leads back to the playground and the book', async () => {
  const page = await env.browser.newPage();
  await recordViolations(page);
  const response = await page.goto(`${env.server.url}book/no/such/page.html`);
  assert.equal(response.status(), 404);
  assert.match(await page.textContent('h1'), /No page here/);
  assert.equal(await page.textContent('#missing'), new URL(page.url()).pathname);
  await page.waitForFunction((home) => document.getElementById('home').href === home, env.server.url, { timeout: 10_000 });
  assert.equal(await page.getAttribute('#book', 'href'), `${new URL(env.server.url).pathname}book/`);
  assert.deepEqual(await violations(page), []);
  await screenshot(page, '404');
  await Promise.all([page.waitForURL(env.server.url), page.click('#home')]);
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 30_000 });
  await page.close();
});

test('a request to another origin is caught by the harness', () => {
  assert.equal(leavesOrigin('https://example.org/x.js', env.server.url), true);
  assert.equal(leavesOrigin(`${env.server.url}book/`, env.server.url), false);
  assert.equal(leavesOrigin('blob:whatever', env.server.url), false);
});
