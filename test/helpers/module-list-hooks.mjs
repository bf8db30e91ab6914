/** The module hooks of module-list.mjs: every URL loaded is posted to the main thread. */
let port;

export function initialize(data) {
  port = data.port;
}

export async function load(url, context, nextLoad) {
  port.postMessage(url);
  return nextLoad(url, context);
}
