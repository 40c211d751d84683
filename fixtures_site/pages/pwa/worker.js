// A dedicated worker that logs as soon as it starts, before the page has finished loading.
console.log("worker: started");
postMessage("ready");
