// The fixture PWA's page script: starts a dedicated worker, registers the service worker.
console.log("page: app.js loaded");
const worker = new Worker("worker.js");
worker.onmessage = (event) => { document.body.dataset.worker = event.data; };
const status = document.querySelector("#status");
// Resolves with the active worker's state once the service worker controls this page.
window.controlled = new Promise((resolve) => {
  const done = () => resolve(navigator.serviceWorker.controller.state);
  if (navigator.serviceWorker.controller) done();
  else navigator.serviceWorker.addEventListener("controllerchange", done, { once: true });
});
navigator.serviceWorker.register("sw.js").then(
  () => window.controlled.then(() => { status.textContent = "controlled by sw.js"; }),
  (error) => { status.textContent = `registration failed: ${error}`; },
);
