// A seeded fuzzer for every box of the page that takes text or a file: the
// lscpu / calibrate paste, SLIT distances, the task-language program, an
// rt-app paste, an experiment file, a shared link, and a scheduler trace.
// Each case is a real input (a fixture of the repository) mutated a few
// times; the page must neither panic (the console and the panic hook's
// banner are watched) nor hang (each case's time is bounded), and every
// refusal must be a clear error in words at the box.
//   SCHEDLAB_FUZZ_SEED=N   another seed (the default is fixed, so CI is repeatable)
//   SCHEDLAB_FUZZ_SCALE=K  K times the cases
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import path from 'node:path';
import { useBrowser, openPage, root, screenshot } from './harness.mjs';

const env = useBrowser();
const SEED = Number(process.env.SCHEDLAB_FUZZ_SEED ?? 20261204);
const SCALE = Number(process.env.SCHEDLAB_FUZZ_SCALE ?? 1);
/** Longest a case may take before it counts as a hang (the core's limits
 * bound every input; a case that needs a worker starts one). */
const CASE_LIMIT_MS = 15_000;

/** mulberry32: a small seeded PRNG, so a failing case can be replayed. */
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] };
}

const TOKENS = [
  '0', '-1', '-0', '1e309', '-1e309', '4294967296', '18446744073709551616', '9'.repeat(40), '0.5', '1e-320',
  'NaN', 'null', 'true', '""', '"x"', '[]', '{}', '[[[[[[[[[[[[[[[[', '{"a":'.repeat(64), '\\u0000', '\u0000',
  '\ud800', '🙂', '\u202e', 'é', ',', ':', '"', '\n', '\r\n', '\t', '#', '%', '%zz', '=', '&', '?',
  'x'.repeat(5000), ' '.repeat(300), '\n'.repeat(200),
];
const CHARS = '{}[]",:0123456789-.eE \n\tabcxyz_/#=%&?\u0000é🙂';

/** One to four random edits of `text`: replace, delete, duplicate, insert,
 * truncate, swap lines, or put an extreme where a number was. */
function mutate(r, text) {
  let s = text;
  const edits = 1 + r.int(4);
  for (let e = 0; e < edits; e++) {
    const at = r.int(s.length + 1);
    const len = 1 + r.int(Math.min(64, s.length + 1));
    switch (r.int(8)) {
      case 0: s = s.slice(0, at) + CHARS[r.int(CHARS.length)] + s.slice(at + 1); break;
      case 1: s = s.slice(0, at) + s.slice(at + len); break;
      case 2: s = s.slice(0, at) + s.slice(at, at + len).repeat(2 + r.int(20)) + s.slice(at); break;
      case 3: s = s.slice(0, at) + r.pick(TOKENS) + s.slice(at); break;
      case 4: s = s.slice(0, at); break;
      case 5: {
        const lines = s.split('\n');
        const i = r.int(lines.length), j = r.int(lines.length);
        [lines[i], lines[j]] = [lines[j], lines[i]];
        s = lines.join('\n');
        break;
      }
      default: {
        const numbers = [...s.matchAll(/-?\d+(\.\d+)?/g)];
        if (numbers.length) {
          const m = r.pick(numbers);
          s = s.slice(0, m.index) + r.pick(TOKENS.slice(0, 10)) + s.slice(m.index + m[0].length);
        }
      }
    }
  }
  return s;
}

const read = (...p) => readFileSync(path.join(root, ...p), 'utf8');
const LSCPU = [
  '# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,0,0,0,,0,0,0,0\n3,1,0,0,,1,1,1,0\n',
  '# The following is the parsable format\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n' +
    Array.from({ length: 16 }, (_, c) => `${c},${c % 8},${c >> 3},${c >> 3},,${c % 8},${c % 8},${c % 8},${c >> 3}`).join('\n') + '\n',
  read('web/e2e/fixtures/calibrated-machine.json'),
];
const RTAPP = readdirSync(path.join(root, 'crates/schedlab/tests/rtapp')).map((f) => read('crates/schedlab/tests/rtapp', f));
const EXPERIMENTS = readdirSync(path.join(root, 'presets')).filter((f) => f.endsWith('.json')).map((f) => read('presets', f));
const LINKS = read('crates/schedlab/tests/golden/links-v1.txt').split('\n').filter(Boolean).map((l) => l.split(' ')[1]);
const TRACES = readdirSync(path.join(root, 'crates/schedlab/tests/traces')).filter((f) => f.endsWith('.gz')).flatMap((f) => {
  const lines = gunzipSync(readFileSync(path.join(root, 'crates/schedlab/tests/traces', f))).toString('utf8').split('\n');
  const mid = lines.length >> 1;
  return [lines.slice(0, 400).join('\n'), lines.slice(mid, mid + 400).join('\n')];
});
const DISTANCES = ['10 20\n20 10', '10 21 31\n21 10 21\n31 21 10', ''];

/** What a refusal may not look like: internals instead of words. */
const NOT_WORDS = /undefined|\[object|RuntimeError|unreachable|panicked|JsValue|Some\(|Err\(|Ok\(|NaN$/;

/** Checks one box's outcomes; returns counts for the note. */
function judge(box, outcomes) {
  const counts = { cases: outcomes.length, refused: 0, accepted: 0, slowest_ms: 0 };
  for (const o of outcomes) {
    counts.slowest_ms = Math.max(counts.slowest_ms, Math.round(o.ms));
    assert.ok(o.ms < CASE_LIMIT_MS, `${box} case ${o.i} took ${Math.round(o.ms)} ms: ${JSON.stringify(o.input).slice(0, 300)}`);
    assert.equal(o.panic, null, `${box} case ${o.i} panicked: ${JSON.stringify(o.input).slice(0, 300)}`);
    if (o.error === null) {
      counts.accepted++;
      continue;
    }
    counts.refused++;
    const e = o.error.trim();
    assert.ok(/[a-z]{3,}/i.test(e) && e.length >= 12, `${box} case ${o.i}: no words in "${e}"`);
    assert.doesNotMatch(e, NOT_WORDS, `${box} case ${o.i}: "${e.slice(0, 400)}"`);
    assert.ok(e.length <= 1200, `${box} case ${o.i}: an error of ${e.length} chars: ${e.slice(0, 300)}...${e.slice(-200)}`);
  }
  return counts;
}

/** Opens the page on `hash`, watching for panics; `page.panics()` lists them. */
async function fuzzPage(hash) {
  const { page, errors } = await openPage(env.browser, `${env.server.url}${hash}`);
  await page.evaluate(() => {
    window.__terminated = 0;
    const terminate = Worker.prototype.terminate;
    Worker.prototype.terminate = function () {
      window.__terminated++;
      return terminate.call(this);
    };
  });
  page.panics = () => errors.filter((e) => /panicked|RuntimeError|unreachable/.test(e));
  return { page, errors };
}

/** Runs `cases` through a box in the page, a batch at a time. `kind` says
 * how the box takes input: 'input' (typed, applied as typed), 'change'
 * (applied when the text is left), 'import' (typed, then a button),
 * 'file' (a file chosen). `worker`: the answer comes from a worker, done
 * when that worker is let go. Returns each case's outcome. */
async function feed(page, box, cases) {
  const outcomes = [];
  for (let start = 0; start < cases.length; start += 25) {
    const batch = cases.slice(start, start + 25);
    const out = await page.evaluate(async ({ box, batch, start }) => {
      const tick = () => new Promise((r) => setTimeout(r, 0));
      const settle = async (n = 3) => { for (let k = 0; k < n; k++) await tick(); };
      const setText = (el, text) => {
        const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
        Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
      };
      const errorAt = () => {
        const input = document.querySelector(box.input);
        const holder = input?.closest(box.holder ?? 'label, details, .actions, .experiment-json');
        const err = holder?.querySelector('.field-error') ?? (box.error && document.querySelector(box.error));
        return err ? err.textContent : null;
      };
      const results = [];
      for (let k = 0; k < batch.length; k++) {
        const { input, name } = batch[k];
        const t0 = performance.now();
        const el = document.querySelector(box.input);
        if (!el) { results.push({ i: start + k, ms: 0, panic: `the box ${box.input} is gone`, error: null, input }); continue; }
        const before = window.__terminated;
        if (box.kind === 'file') {
          const bytes = typeof input === 'string' ? input : Uint8Array.from(atob(input.b64), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          dt.items.add(new File([bytes], name, { type: 'application/octet-stream' }));
          el.files = dt.files;
          el.dispatchEvent(new Event('change', { bubbles: true }));
        } else {
          setText(el, input);
          el.dispatchEvent(new Event(box.kind === 'change' ? 'change' : 'input', { bubbles: true }));
          if (box.kind === 'import') {
            await settle(1);
            document.querySelector(box.button).click();
          }
        }
        // Blank text imports nothing, without a worker.
        if (box.worker && (typeof input !== 'string' || box.kind === 'file' || input.trim() !== '')) {
          while (window.__terminated === before && performance.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 5));
        }
        await settle(box.kind === 'file' ? 6 : 3);
        const panic = document.querySelector('#panic')?.textContent ?? null;
        results.push({ i: start + k, ms: performance.now() - t0, panic, error: errorAt(), input: typeof input === 'string' ? input.slice(0, 2000) : '(bytes)' });
        if (panic) break;
      }
      return results;
    }, { box, batch, start });
    outcomes.push(...out);
    const panics = page.panics();
    assert.deepEqual(panics, [], `${box.input}: a panic by case ${start + out.length - 1}: ${JSON.stringify(out.at(-1)?.input).slice(0, 400)}`);
    if (out.some((o) => o.panic)) break;
  }
  return outcomes;
}

const cases = (r, seeds, n) => Array.from({ length: Math.round(n * SCALE) }, (_, i) => {
  const seed = seeds[i % seeds.length];
  // Every tenth case is a seed as it is: the box must still take it.
  return i % 10 === 0 ? seed : mutate(r, seed);
});

const totals = {};

test('the machine boxes: lscpu / calibrate paste and SLIT distances', async () => {
  const r = prng(SEED);
  const { page, errors } = await fuzzPage('#preset=retune-lat-ctx');
  // The watch itself: a panic's console line is caught.
  await page.evaluate(() => console.error('schedlab panicked in the editor: a drill'));
  assert.equal(page.panics().length, 1, 'the fuzzer hears a panic');
  errors.length = 0;
  const lscpu = cases(r, LSCPU, 300).map((input) => ({ input }));
  totals.lscpu = judge('lscpu', await feed(page, { input: '#lscpu-text', kind: 'import', button: '#lscpu-import' }, lscpu));
  // An imported machine is custom: its SLIT rows are a box too.
  await feed(page, { input: '#lscpu-text', kind: 'import', button: '#lscpu-import' }, [{ input: LSCPU[1] }]);
  const distances = cases(r, DISTANCES, 100).map((input) => ({ input }));
  totals.distances = judge('distances', await feed(page, { input: '[data-field="machine.distances"]', kind: 'input' }, distances));
  await screenshot(page, 'fuzz-machine');
  await page.close();
});

test('the workload boxes: the program and an rt-app paste', async () => {
  const r = prng(SEED + 1);
  const { page } = await fuzzPage('#preset=rtapp-periodic-desktop');
  if (!(await page.$('#program-text'))) {
    await page.click('#to-custom');
    await page.waitForSelector('#program-text', { timeout: 30_000 });
  }
  const program = await page.inputValue('#program-text');
  totals.program = judge('program', await feed(page, { input: '#program-text', kind: 'change' }, cases(r, [program], 250).map((input) => ({ input }))));
  totals.rtapp = judge('rt-app', await feed(page, { input: '#rtapp-text', kind: 'change', worker: true }, cases(r, RTAPP, 150).map((input) => ({ input }))));
  await screenshot(page, 'fuzz-workload');
  await page.close();
});

test('an experiment file and a trace file', async () => {
  const r = prng(SEED + 2);
  const { page } = await fuzzPage('#preset=kvm-pipe-test-pinning');
  const files = cases(r, EXPERIMENTS, 150).map((input) => ({ input, name: 'experiment.json' }));
  totals.experiment = judge('experiment file', await feed(page, { input: '#experiment-file', kind: 'file', error: '#experiment-file-error' }, files));
  const traces = cases(r, TRACES, 100).map((text, i) =>
    // Some go in gzipped, as perf users send them; a few with their bytes mutated after.
    i % 4 === 1
      ? { input: { b64: gzipSync(text).toString('base64') }, name: 'trace.txt.gz' }
      : i % 4 === 3
        ? { input: { b64: Buffer.from(mutate(r, gzipSync(text).toString('latin1')), 'latin1').toString('base64') }, name: 'trace.txt.gz' }
        : { input: text, name: 'trace.txt' });
  totals.trace = judge('trace', await feed(page, { input: '#trace-file', kind: 'file', worker: true }, traces));
  await page.close();
});

test('shared links: opened with the page, and from the history (Back)', async () => {
  const r = prng(SEED + 3);
  // A URL carries no lone surrogate: the browser would have replaced it.
  const links = cases(r, LINKS, 300).map((l) => l.toWellFormed());
  const outcomes = [];
  // The first few open a fresh page each, as a pasted link does.
  for (let i = 0; i < Math.round(40 * SCALE); i++) {
    const t0 = Date.now();
    const { page, errors } = await openPage(env.browser, `${env.server.url}#x=${encodeURI(links[i])}`);
    const notice = await page.$('.notice');
    outcomes.push({ i, ms: Date.now() - t0, panic: errors.find((e) => /panicked|RuntimeError/.test(e)) ?? null, error: notice && /could not be opened/.test(await notice.textContent()) ? await notice.textContent() : null, input: links[i] });
    await page.close();
  }
  // The rest arrive as Back/Forward would bring them.
  const { page } = await fuzzPage('#preset=retune-lat-ctx');
  for (let i = outcomes.length; i < links.length; i++) {
    const t0 = Date.now();
    await page.evaluate((fragment) => {
      history.pushState(null, '', `#x=${fragment}`);
      dispatchEvent(new PopStateEvent('popstate'));
    }, encodeURI(links[i]));
    await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
    outcomes.push({ i, ms: Date.now() - t0, panic: page.panics()[0] ?? (await page.$('#panic') ? 'banner' : null), error: null, input: links[i] });
  }
  totals.links = judge('links', outcomes);
  await page.close();
});

test('the fuzz counts', () => {
  const all = Object.values(totals).reduce((n, t) => n + t.cases, 0);
  console.log(`fuzz seed ${SEED}: ${all} cases`, JSON.stringify(totals));
  assert.ok(all >= 1000 * SCALE, `${all} cases`);
});
