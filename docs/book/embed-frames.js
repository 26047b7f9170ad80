// Each embedded experiment (an <iframe> of the playground with ?embed)
// posts its content's height as it changes; its frame follows, so a chart
// or table that appears after Run is never cut off. Only messages from one
// of this page's own frames are taken.
window.addEventListener("message", (event) => {
  const data = event.data;
  if (!data || data.schedlab !== "height" || typeof data.height !== "number") return;
  for (const frame of document.querySelectorAll("iframe.schedlab-embed")) {
    if (frame.contentWindow === event.source) {
      frame.style.height = `${Math.ceil(data.height)}px`;
    }
  }
});
