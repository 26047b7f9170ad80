// Puts a Content-Security-Policy <meta> in each page's <head> (after the
// charset, before any script), so the site asks nothing of its host (no
// header to configure): scripts only from the site itself and the inline
// scripts the build wrote (trunk's module loader), each allowed by its
// SHA-256; wasm compiled from what those scripts fetch; nothing fetched,
// framed or posted anywhere else.
//   node tools/csp.mjs PAGE.html...   (run by tools/hash-assets, in dist/)
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

/** The policy for a page whose inline scripts and style sheets hash to
 * `scripts` and `styles`. */
function policy(scripts, styles) {
  return [
    "default-src 'self'",
    // 'wasm-unsafe-eval' lets WebAssembly.instantiate compile; it allows no JS eval.
    `script-src 'self' 'wasm-unsafe-eval'${sources(scripts)}`,
    "worker-src 'self'",
    "connect-src 'self'",
    // The chart export draws its SVG into a canvas through a blob: image.
    "img-src 'self' data: blob:",
    `style-src 'self'${sources(styles)}`,
    // Style attributes only (no <style> element, no script): plotters
    // measures a label's text in a <span> it styles inline.
    "style-src-attr 'unsafe-inline'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
  ].join('; ');
}

const sources = (hashes) => hashes.map((h) => ` 'sha256-${h}'`).join('');
const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('base64');
const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g;
const INLINE_STYLE = /<style[^>]*>([\s\S]*?)<\/style>/g;

for (const file of process.argv.slice(2)) {
  const html = readFileSync(file, 'utf8');
  if (html.includes('http-equiv="Content-Security-Policy"')) {
    console.error(`csp: ${file} already has a policy`);
    process.exit(1);
  }
  const scripts = [...html.matchAll(INLINE_SCRIPT)].map((m) => sha256(m[1]));
  const styles = [...html.matchAll(INLINE_STYLE)].map((m) => sha256(m[1]));
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(scripts, styles)}">`;
  // After the charset (which must come first), before any script.
  const head = html.match(/<meta charset="[^"]*"\s*\/?>/i) || html.match(/<head[^>]*>/);
  if (!head) {
    console.error(`csp: ${file} has no <head>`);
    process.exit(1);
  }
  const at = head.index + head[0].length;
  writeFileSync(file, html.slice(0, at) + meta + html.slice(at));
  console.log(`csp: ${file}: ${scripts.length} inline script(s), ${styles.length} style sheet(s) hashed`);
}
