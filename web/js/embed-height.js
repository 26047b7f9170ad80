// In an embed (?embed inside a frame), tells the embedding page how tall
// the content is whenever it changes, so a docs page (the book's
// embed-frames.js) can size the frame to it: results appear after Run and
// would otherwise be cut off or leave a gap.
if (new URLSearchParams(location.search).has("embed") && window.parent !== window) {
  const post = () => {
    const height = document.body.getBoundingClientRect().height;
    window.parent.postMessage({ schedlab: "height", height }, "*");
  };
  const start = () => new ResizeObserver(post).observe(document.body);
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
}
