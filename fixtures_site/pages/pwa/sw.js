// The fixture PWA's service worker: caches the app shell on install, serves it cache-first
// (so it loads offline too), passes any other request to the network, and logs each step.
const CACHE = "fixture-pwa-v1";
const SHELL = ["./", "./app.js", "./app.css", "./manifest.webmanifest", "./worker.js"];

console.log("sw: script evaluated");

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => console.log(`sw: installed, app shell cached (${SHELL.length} files)`))
      .then(() => self.skipWaiting()),
  );
});

// Logged before claiming: a page that sees its controller change knows this line was logged.
self.addEventListener("activate", (event) => {
  console.log("sw: activated, claiming open pages");
  event.waitUntil(self.clients.claim());
});

self.addEventListener("fetch", (event) => {
  const path = new URL(event.request.url).pathname;
  event.respondWith(
    caches.match(event.request).then((hit) => {
      if (hit) {
        console.log(`sw: served ${path} from the cache`);
        return hit;
      }
      return fetch(event.request).catch((error) => {
        console.warn(`sw: network failed for ${path}: ${error}`);
        throw error;
      });
    }),
  );
});
